package simulate

import "testing"

// BenchmarkFullSweep runs the study's whole sweep: 19 points (10 to 190
// clients) × 100 runs × the five study modes, on all CPUs.
func BenchmarkFullSweep(b *testing.B) {
	cfg := DefaultConfig()
	for b.Loop() {
		if _, err := Sweep(cfg); err != nil {
			b.Fatal(err)
		}
	}
}
