package chaos

import (
	"testing"
	"time"
)

func TestMaxInWindow(t *testing.T) {
	s := time.Second
	for _, tc := range []struct {
		times []time.Duration
		w     time.Duration
		want  int
	}{
		{nil, time.Minute, 0},
		{[]time.Duration{0}, time.Minute, 1},
		// A call exactly 60 s after another is in the next window, as the
		// gate counts claims (since now-60s, exclusive).
		{[]time.Duration{0, 60 * s}, time.Minute, 1},
		{[]time.Duration{0, 60*s - 1}, time.Minute, 2},
		{[]time.Duration{0, 1 * s, 2 * s, 61 * s, 61 * s}, time.Minute, 3},
		{[]time.Duration{0, 0, 0, 30 * s, 59 * s}, time.Minute, 5},
	} {
		if got, _ := maxInWindow(tc.times, tc.w); got != tc.want {
			t.Errorf("maxInWindow(%v, %s) = %d, want %d", tc.times, tc.w, got, tc.want)
		}
	}
}

func TestPeakOverlap(t *testing.T) {
	for _, tc := range []struct {
		as   []attemptRow
		want int
	}{
		{nil, 0},
		// [claimed, finished) is half-open: one ending as another starts
		// is not two at once.
		{[]attemptRow{{claimedAt: 0, finishedAt: 10}, {claimedAt: 10, finishedAt: 20}}, 1},
		{[]attemptRow{{claimedAt: 0, finishedAt: 11}, {claimedAt: 10, finishedAt: 20}}, 2},
		// A running attempt (finished 0) stays open.
		{[]attemptRow{{claimedAt: 0}, {claimedAt: 100, finishedAt: 200}, {claimedAt: 150, finishedAt: 160}}, 3},
	} {
		if got := peakOverlap(tc.as); got != tc.want {
			t.Errorf("peakOverlap(%+v) = %d, want %d", tc.as, got, tc.want)
		}
	}
}

// TestClasses: the provider's classes come out near their shares, and the
// same for the same seed.
func TestClasses(t *testing.T) {
	n := map[class]int{}
	for i := range 100_000 {
		c := classOf(7, i)
		if c != classOf(7, i) {
			t.Fatal("classOf is not a function of seed and number")
		}
		n[c]++
	}
	for c, want := range map[class]int{classOK: 80_000, classFlaky: 15_000, classPermanent: 3000, classHopeless: 2000} {
		if got := n[c]; got < want*9/10 || got > want*11/10 {
			t.Errorf("%s: %d of 100000, want about %d", c, got, want)
		}
	}
}

func TestPlural(t *testing.T) {
	for _, tc := range []struct {
		n          int
		noun, want string
	}{{0, "lease", "0 leases"}, {1, "lease", "1 lease"}, {2, "worker crash", "2 worker crashes"}, {1, "worker crash", "1 worker crash"}} {
		if got := plural(tc.n, tc.noun); got != tc.want {
			t.Errorf("plural(%d, %q) = %q, want %q", tc.n, tc.noun, got, tc.want)
		}
	}
}
