package backoff_test

import (
	"testing"

	"github.com/getratchet/ratchet/backoff"
)

func BenchmarkDelay(b *testing.B) {
	p, _ := backoff.PresetParams(backoff.Standard)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if _, err := p.Delay(1+i%4, 0.37, 0); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCalculate15(b *testing.B) {
	in := backoff.CalcInput{BaseMs: 100, Multiplier: 2, CapMs: 1e6, Attempts: 15, Jitter: backoff.DecorrelatedJitter, FirstWait: backoff.FirstWaitBase, Seed: 42}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := backoff.Calculate(in); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCalculate15Text(b *testing.B) {
	in := backoff.CalcInput{BaseMs: 100, Multiplier: 2, CapMs: 1e6, Attempts: 15, Jitter: backoff.FullJitter, FirstWait: backoff.FirstWaitBase, Seed: 42}
	b.ReportAllocs()
	for b.Loop() {
		s, _ := backoff.Calculate(in)
		_ = s.Text()
	}
}

func BenchmarkPolicySchedule(b *testing.B) {
	p := backoff.Params{MaxAttempts: 10, InitialDelayMs: 1000, Multiplier: 2, MaxDelayMs: 600000, JitterPercent: 20}
	b.ReportAllocs()
	for b.Loop() {
		_ = p.Schedule()
	}
}
