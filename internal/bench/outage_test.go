package bench

import (
	"bytes"
	"context"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestTokenBucket: a full bucket of 10 a second lets 10 requests through
// at once and refuses the 11th; tokens come back at the rate and never
// beyond the burst; reset is the whole seconds until it is full again.
func TestTokenBucket(t *testing.T) {
	b := newTokenBucket(10)
	for i := range 10 {
		ok, remaining, reset := b.take(0)
		if !ok || remaining != 9-i || reset != 1 {
			t.Fatalf("take %d at 0: ok %v, remaining %d, reset %d; want true, %d, 1", i+1, ok, remaining, reset, 9-i)
		}
	}
	steps := []struct {
		at              time.Duration
		ok              bool
		remaining, rest int
	}{
		{0, false, 0, 1},                     // empty: full again in 1 s
		{50 * time.Millisecond, false, 0, 1}, // half a token
		{100 * time.Millisecond, true, 0, 1}, // one token back, spent
		{350 * time.Millisecond, true, 1, 1}, // 2.5 back, one spent
		{10 * time.Second, true, 9, 1},       // full (10, not 97), one spent
		{5 * time.Second, true, 8, 1},        // a time going back adds nothing
	}
	for i, s := range steps {
		ok, remaining, reset := b.take(s.at)
		if ok != s.ok || remaining != s.remaining || reset != s.rest {
			t.Errorf("step %d at %s: ok %v, remaining %d, reset %d; want %v, %d, %d", i, s.at, ok, remaining, reset, s.ok, s.remaining, s.rest)
		}
	}
	// A bucket of 1 a second: its token spent, it is full in 1 s.
	if ok, remaining, reset := newTokenBucket(1).take(0); !ok || remaining != 0 || reset != 1 {
		t.Errorf("bucket of 1: ok %v remaining %d reset %d, want true 0 1", ok, remaining, reset)
	}
}

// TestRateLimitHeaders: the exact header values of each style.
func TestRateLimitHeaders(t *testing.T) {
	cases := []struct {
		style string
		want  map[string]string
	}{
		{headersDraft, map[string]string{"RateLimit-Limit": "100", "RateLimit-Remaining": "37", "RateLimit-Reset": "1"}},
		{headersIETF, map[string]string{"RateLimit-Limit": "100", "RateLimit-Remaining": "37", "RateLimit-Reset": "1",
			"RateLimit-Policy": `"default";q=100;w=1`, "RateLimit": `"default";r=37;t=1`}},
		{headersNone, map[string]string{}},
	}
	for _, c := range cases {
		h := http.Header{}
		setRateLimitHeaders(h, c.style, 100, 37, 1)
		if len(h) != len(c.want) {
			t.Errorf("%s: %d headers %v, want %d", c.style, len(h), h, len(c.want))
		}
		for k, v := range c.want {
			if got := h.Get(k); got != v {
				t.Errorf("%s: %s is %q, want %q", c.style, k, got, v)
			}
		}
	}
}

// TestProviderPlan: when a plan is up, when it changes next, and the
// ideal drain with and without flapping.
func TestProviderPlan(t *testing.T) {
	s := time.Second
	flap := providerPlan{Outage: 40 * s, Capacity: 100, Flap: 20 * s}
	steady := providerPlan{Outage: 40 * s, Capacity: 100}
	for _, c := range []struct {
		p        providerPlan
		at       time.Duration
		up       bool
		next     time.Duration
		changes  bool
		backlog  int
		drainFor time.Duration
	}{
		{steady, 0, false, 40 * s, true, 5000, 50 * s},
		{steady, 40*s - 1, false, 40 * s, true, 20, 200 * time.Millisecond},
		{steady, 40 * s, true, 0, false, 0, 0},
		{flap, 40 * s, true, 60 * s, true, 5000, 90 * s}, // 50 s of up time: 40–60, 80–100, 120–130
		{flap, 59 * s, true, 60 * s, true, 4000, 60 * s}, // exactly two up phases: 40–60, 80–100
		{flap, 60 * s, false, 80 * s, true, 1000, 10 * s},
		{flap, 80 * s, true, 100 * s, true, 2000, 20 * s},
		{flap, 100 * s, false, 120 * s, true, 0, 0},
	} {
		if got := c.p.up(c.at); got != c.up {
			t.Errorf("flap %s: up(%s) = %v, want %v", c.p.Flap, c.at, got, c.up)
		}
		if next, ok := c.p.nextChange(c.at); next != c.next || ok != c.changes {
			t.Errorf("flap %s: nextChange(%s) = %s %v, want %s %v", c.p.Flap, c.at, next, ok, c.next, c.changes)
		}
		if got := c.p.idealDrain(c.backlog); got != c.drainFor {
			t.Errorf("flap %s: idealDrain(%d) = %s, want %s", c.p.Flap, c.backlog, got, c.drainFor)
		}
	}
}

// TestOutageFigures counts a made-up record: what falls in the outage,
// after the recovery, the busiest second after it, the drain and its
// ratio.
func TestOutageFigures(t *testing.T) {
	ms := time.Millisecond
	plan := providerPlan{Outage: 2 * time.Second, Capacity: 2}
	reqs := []providerRequest{
		{at: 100 * ms, status: 503}, {at: 900 * ms, status: 503}, {at: 1500 * ms, status: 503},
		{at: 2000 * ms, status: 200}, {at: 2100 * ms, status: 200}, {at: 2200 * ms, status: 429}, {at: 2300 * ms, status: 429}, {at: 2400 * ms, status: 429},
		{at: 3500 * ms, status: 200},
		{at: 5000 * ms, status: 200}, {at: 5100 * ms, status: 503},
	}
	f := outageFigures(plan, reqs, 4)
	want := OutageFigures{Requests: 11, DuringOutage: 3, AfterRecovery: 8, Refused: 3, DownAgain: 1, Successes: 4,
		RefusedShare: 3.0 / 8, BusiestSecond: 2, Busiest: 5, BusiestRatio: 2.5, Backlog: 4,
		Drain: 3 * time.Second, Ideal: 2 * time.Second, DrainRatio: 1.5}
	got := f
	got.Seconds = nil
	if !reflect.DeepEqual(got, want) {
		t.Errorf("figures\n got %+v\nwant %+v", got, want)
	}
	wantSecs := []SecondCount{{2, 2}, {1, 1}, {5, 3}, {1, 0}, {0, 0}, {2, 1}}
	if len(f.Seconds) != len(wantSecs) {
		t.Fatalf("seconds %v, want %v", f.Seconds, wantSecs)
	}
	for i := range wantSecs {
		if f.Seconds[i] != wantSecs[i] {
			t.Errorf("second %d: %+v, want %+v", i, f.Seconds[i], wantSecs[i])
		}
	}
}

// TestOutageModeCountsAddUp runs mode outage at a small scale on SQLite
// (200 jobs, a 3 s outage answered 503 with Retry-After, then 50
// requests/s) and checks its arithmetic, never its timing: every job
// finished; the provider's 200s are the jobs succeeded; its requests are
// the attempts Ratchet recorded, but those the dispatcher never sent
// (nothing is refused at connect in this variant); the per-second histogram sums to the requests and its refusals
// to the answers other than 200; every figure and verdict is printed.
func TestOutageModeCountsAddUp(t *testing.T) {
	var out bytes.Buffer
	cfg := Config{Mode: "outage", Jobs: 200, Capacity: 50, OutageFor: 3 * time.Second, TimeLimit: 2 * time.Minute, Synchronous: "NORMAL"}
	res, err := Run(context.Background(), cfg, &out)
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if len(res.Outage) != 1 {
		t.Fatalf("%d variants run, want 1", len(res.Outage))
	}
	r := res.Outage[0]
	f := r.OutageFigures
	if r.TimedOut || r.Unfinished != 0 || r.Succeeded+r.Failed+r.Exhausted != 200 {
		t.Errorf("jobs: %d succeeded, %d failed, %d exhausted, %d unfinished (timed out %v), want 200 finished", r.Succeeded, r.Failed, r.Exhausted, r.Unfinished, r.TimedOut)
	}
	if f.Successes != r.Succeeded {
		t.Errorf("the provider answered 200 %d times for %d jobs succeeded", f.Successes, r.Succeeded)
	}
	// Every attempt reached the provider, or was never sent (a job that
	// waited in the dispatcher's buffer past its lease's margin, which a
	// loaded machine can make happen); none failed to connect.
	if int64(f.Requests+r.NotSent) != r.Attempts || r.NoAnswer != 0 || r.UnseenUnread != 0 || f.Requests != len(r.requests) {
		t.Errorf("the provider received %d requests (%d records), %d attempts never sent, %d without an answer (%d unread); Ratchet recorded %d attempts",
			f.Requests, len(r.requests), r.NotSent, r.NoAnswer, r.UnseenUnread, r.Attempts)
	}
	var arrivals, notOK, non200 int
	for _, s := range f.Seconds {
		arrivals, notOK = arrivals+s.Arrivals, notOK+s.NotOK
	}
	for _, q := range r.requests {
		if q.status != http.StatusOK {
			non200++
		}
	}
	if arrivals != f.Requests || notOK != non200 || f.DuringOutage+f.AfterRecovery != f.Requests || f.Refused+f.DownAgain+f.Successes != f.AfterRecovery {
		t.Errorf("histogram %d requests, %d not 200 (records: %d, %d); outage %d + after %d; after = %d refused + %d down + %d ok",
			arrivals, notOK, f.Requests, non200, f.DuringOutage, f.AfterRecovery, f.Refused, f.DownAgain, f.Successes)
	}
	// No job can succeed while the provider is down, so the whole backlog
	// is left at the recovery; the outage saw requests (how many depends on
	// the circuit: it opens after the threshold's failures and holds the
	// rest).
	if f.DuringOutage == 0 || f.Backlog != 200 {
		t.Errorf("%d requests in the outage, backlog %d at the recovery: want some, and all 200 jobs", f.DuringOutage, f.Backlog)
	}
	for _, want := range []string{"variant retry-after:", "jobs:", "attempts:", "recovery:", "busiest:", "drain:", "circuit:", "per second:", "verdict:    refused ≤ 10 %"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}
