package chaos

import (
	"strings"
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

// TestKeyFigures: the check of keyMaxConcurrent passes a run whose keys
// stayed within the limit, and breaks on a key over it at the provider or
// in the database, or on a call whose worker named another key.
func TestKeyFigures(t *testing.T) {
	r := &run{cfg: Config{Keys: 2, KeyMaxConcurrent: 2}, plan: []jobPlan{
		{key: "chaos-0", endpoint: mainEndpoint, flowKey: "key-0"},
		{key: "chaos-1", endpoint: mainEndpoint, flowKey: "key-0"},
		{key: "chaos-2", endpoint: mainEndpoint, flowKey: "key-0"},
		{key: "chaos-3", endpoint: mainEndpoint, flowKey: "key-1"},
		{key: "chaos-4", endpoint: meteredEndpoint},
	}}
	jobs := map[string]jobRow{"chaos-0": {id: 10}, "chaos-1": {id: 11}, "chaos-2": {id: 12}, "chaos-3": {id: 13}, "chaos-4": {id: 14}}
	calls := []call{{key: "chaos-0", flowKey: "key-0"}, {key: "chaos-3", flowKey: "key-1"}, {key: "chaos-4"}}
	// Jobs 10 and 11 of key-0 overlap, 12 starts as 11 ends; 13 and 14
	// (another key, no key) overlap them all.
	as := []attemptRow{{job: 10, claimedAt: 0, finishedAt: 100}, {job: 11, claimedAt: 50, finishedAt: 150}, {job: 12, claimedAt: 150, finishedAt: 200},
		{job: 13, claimedAt: 0, finishedAt: 200}, {job: 14, claimedAt: 0, finishedAt: 200}}
	peaks := func(k0, k1 int64) {
		r.prov = &provider{byKey: map[string]*gauge{"key-0": {}, "key-1": {}}}
		r.prov.byKey["key-0"].peak.Store(k0)
		r.prov.byKey["key-1"].peak.Store(k1)
	}
	decide := func() (*KeyFigures, []string) {
		rep := &Report{Keys: r.keyFigures(jobs, calls, as)}
		rep.decide()
		return rep.Keys, rep.Violations
	}
	peaks(2, 1)
	if f, v := decide(); len(v) != 0 || f.PeakAtProvider != 2 || f.PeakKey != "key-0" || f.PeakInDatabase != 2 || f.AtLimit != 1 || f.WrongKey != 0 {
		t.Fatalf("within the limit: %+v, violations %q", f, v)
	}
	peaks(3, 1)
	if _, v := decide(); len(v) != 1 || !strings.Contains(v[0], "keyMaxConcurrent holds at the provider: key key-0") {
		t.Errorf("3 calls of key-0 at once at the provider: violations %q", v)
	}
	peaks(2, 1)
	as[2].claimedAt = 99
	if f, v := decide(); f.PeakInDatabase != 3 || len(v) != 1 || !strings.Contains(v[0], "keyMaxConcurrent holds in the database") {
		t.Errorf("3 attempts of key-0 running at once: %+v, violations %q", f, v)
	}
	as[2].claimedAt = 150
	calls[1].flowKey = "key-0"
	if f, v := decide(); f.WrongKey != 1 || len(v) != 1 || !strings.Contains(v[0], "every job carries its flow key") {
		t.Errorf("a call of key-1's job named key-0: %+v, violations %q", f, v)
	}
}
