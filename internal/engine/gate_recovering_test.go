package engine_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/getratchet/ratchet/internal/engine"
	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/internal/store/postgres"
	"github.com/getratchet/ratchet/internal/store/postgres/pgtest"
	"github.com/getratchet/ratchet/wire"
)

// The ramp's scenario for TestEveryGateCountsItsHolds: a pause ends, the
// ramp starts at one claim a second (a tenth of maxConcurrent 10), and
// the second claim in that second is held and counted.
func init() {
	gateHoldScenarios[wire.GateRecovering] = gateHoldScenario{`"maxConcurrent":10`, func(h *harness, _ *engine.Engine, endpoint, _ string) {
		if _, err := h.e.PauseEndpoint(h.ctx, h.owner, endpoint, "incident"); err != nil {
			h.t.Fatal(err)
		}
		if _, err := h.e.ResumeEndpoint(h.ctx, h.owner, endpoint); err != nil {
			h.t.Fatal(err)
		}
		h.clk.Advance(time.Millisecond) // claims come after the resume, as on a real clock
	}}
}

// bothDrivers runs fn on a harness on SQLite and on PostgreSQL.
func bothDrivers(t *testing.T, fn func(t *testing.T, h *harness)) {
	for name, open := range map[string]func(t *testing.T) *harness{
		"sqlite": newHarness,
		"postgres": func(t *testing.T) *harness {
			st, err := postgres.Open(context.Background(), pgtest.URL(t), postgres.Options{})
			if err != nil {
				t.Fatal(err)
			}
			return newHarnessOn(t, st)
		},
	} {
		t.Run(name, func(t *testing.T) { fn(t, open(t)) })
	}
}

// outageFixture is an endpoint whose circuit opens at the first 503 and
// half-opens a second later, with n jobs enqueued; it opens the circuit
// and lets the probe succeed, so the circuit closes and the ramp starts.
func outageFixture(t *testing.T, h *harness, settings string, n int) {
	h.endpoint("api", `{"circuitFailureThreshold":1,"circuitOpenMs":1000,`+settings+`}`)
	h.tool(`{"name":"call","version":"1","endpoint":"api"}`)
	for range n {
		h.enqueue("call@1", nil)
	}
	h.fail(h.claimOne("call@1"), 503, nil)
	h.clk.Advance(time.Second)
	h.succeed(h.claimOne("call@1")) // the probe
	// The ramp reads answers to claims made after it moved: on the fake
	// clock, claims come a millisecond later, as they do on a real one.
	h.clk.Advance(time.Millisecond)
	ep, err := h.e.Endpoint(h.ctx, h.owner, "api")
	if err != nil || ep.CircuitState != wire.CircuitClosed || ep.Recovery.Rate == 0 {
		t.Fatalf("after the probe: %v, circuit %s, recovery %+v", err, ep.CircuitState, ep.Recovery)
	}
}

// claimSecond claims what the endpoint admits now, answers each claim
// with status (200: success), and moves the clock a second on.
func (h *harness) claimSecond(status int) int {
	h.t.Helper()
	got := h.claim([]string{"call@1"}, 1000)
	for _, c := range got {
		if status == 200 {
			h.succeed(c)
		} else {
			h.fail(c, status, nil)
		}
	}
	h.clk.Advance(time.Second)
	return len(got)
}

// TestRecoveryRamp: after the circuit closes, the backlog is not released
// at once: claims a second start at a tenth of maxConcurrent and double
// each second of good answers (slow start); a 429 cuts the rate to 7/10
// and the ramp then grows by a tenth of the cut rate a second; explain
// names the gate, and the ramp ends when claims no longer fill it.
func TestRecoveryRamp(t *testing.T) {
	bothDrivers(t, func(t *testing.T, h *harness) {
		outageFixture(t, h, `"maxConcurrent":100`, 400)
		var got []int
		for range 4 {
			got = append(got, h.claimSecond(200))
		}
		// Each second's answers double what the next allows (the probe,
		// claimed before the ramp started, is not the ramp's).
		if want := []int{10, 10, 20, 40}; !equalInts(got, want) {
			t.Fatalf("claims a second in slow start = %v, want %v", got, want)
		}
		// A second of throttles: the first answer cuts 80 to 56.
		if n := h.claimSecond(429); n != 80 {
			t.Fatalf("throttled second claimed %d, want 80", n)
		}
		ep, _ := h.e.Endpoint(h.ctx, h.owner, "api")
		if ep.Recovery.Rate != 56_000 || ep.Recovery.Ceiling != 56_000 {
			t.Fatalf("after a second of 429s: rate %d ceiling %d, want 56000 and 56000", ep.Recovery.Rate, ep.Recovery.Ceiling)
		}
		// Then it grows by a tenth of the cut rate a second.
		if n := h.claimSecond(200); n != 56 {
			t.Fatalf("claimed %d after the cut, want 56", n)
		}
		ep, _ = h.e.Endpoint(h.ctx, h.owner, "api")
		if ep.Recovery.Rate != 61_600 {
			t.Fatalf("after a good second: rate %d, want 61600", ep.Recovery.Rate)
		}
		// Within this second the ramp allows 62 claims: they are made, and
		// the next due job is held by the ramp, which explain names.
		if n := len(h.claim([]string{"call@1"}, 1000)); n != 62 {
			t.Fatalf("claimed %d in a second of 61.6 allowed, want 62", n)
		}
		list, _ := h.e.Jobs(h.ctx, h.owner, store.JobFilter{States: []wire.JobState{wire.JobScheduled}}) // newest first: never claimed, due
		hd := h.hold(list[0].ID)
		if hd.Gate != wire.GateRecovering || !strings.HasPrefix(hd.Detail, `endpoint "api" is recovering: 62 of the 62 claims a second it allows (a rate of 61.6) were made in the last second, growing by 5.6 a second`) {
			t.Fatalf("hold of the next due job = %+v", hd)
		}
	})
}

// TestRecoveryRampEnds: with a rate limit, the ramp ends when it reaches
// it; the rate limit alone holds then.
func TestRecoveryRampEnds(t *testing.T) {
	bothDrivers(t, func(t *testing.T, h *harness) {
		outageFixture(t, h, `"maxConcurrent":100,"rateLimitPerMinute":1200`, 50) // 20 a second
		ep, _ := h.e.Endpoint(h.ctx, h.owner, "api")
		if ep.Recovery.Rate != 2000 {
			t.Fatalf("start rate %d, want 2000 (a tenth of 20 a second)", ep.Recovery.Rate)
		}
		var got []int
		for range 4 {
			got = append(got, h.claimSecond(200))
		}
		if want := []int{2, 2, 4, 8}; !equalInts(got, want) {
			t.Fatalf("claims a second = %v, want %v", got, want)
		}
		if n := h.claimSecond(200); n != 16 {
			t.Fatalf("claimed %d, want 16", n)
		}
		ep, _ = h.e.Endpoint(h.ctx, h.owner, "api")
		if ep.Recovery.Rate != 0 {
			t.Fatalf("the ramp reached 32 > 20 a second and did not end: %+v", ep.Recovery)
		}
	})
}

// TestThrottlesDoNotExhaust: a 429 or a 503 with Retry-After does not
// spend one of the job's attempts (up to wire.MaxFreeThrottles); the
// attempt says so; a plain 503 does.
func TestThrottlesDoNotExhaust(t *testing.T) {
	bothDrivers(t, func(t *testing.T, h *harness) {
		h.endpoint("api", `{"maxConcurrent":10,"circuitFailureThreshold":1000}`)
		h.tool(`{"name":"call","version":"1","endpoint":"api"}`)
		j := h.enqueue("call@1", ptr(int64(2)))
		for i := range wire.MaxFreeThrottles {
			status, hdr := 429, map[string]string(nil)
			if i%2 == 1 {
				status, hdr = 503, map[string]string{"Retry-After": "1"}
			}
			r := h.fail(h.claimOne("call@1"), status, hdr)
			if r.Job.State != wire.JobScheduled || !r.Attempt.ThrottleFree {
				t.Fatalf("throttle %d: job %s, attempt free %v", i+1, r.Job.State, r.Attempt.ThrottleFree)
			}
			h.clk.Set(time.UnixMilli(r.Job.DueAt))
		}
		// The throttles beyond the free ones count: the first is attempt
		// 1 of 2, the next exhausts the job.
		r := h.fail(h.claimOne("call@1"), 429, nil)
		if r.Job.State != wire.JobScheduled || r.Attempt.ThrottleFree {
			t.Fatalf("throttle %d: job %s, free %v", wire.MaxFreeThrottles+1, r.Job.State, r.Attempt.ThrottleFree)
		}
		h.clk.Set(time.UnixMilli(r.Job.DueAt))
		r = h.fail(h.claimOne("call@1"), 503, nil)
		if r.Job.State != wire.JobExhausted {
			t.Fatalf("after %d throttles and a 503: %s", wire.MaxFreeThrottles+1, r.Job.State)
		}
		got, attempts := h.job(j.ID)
		if got.Throttles != wire.MaxFreeThrottles || len(attempts) != wire.MaxFreeThrottles+2 {
			t.Fatalf("job throttles %d, %d attempts", got.Throttles, len(attempts))
		}
	})
}

// TestRetryAfterSetsTheProbe: the Retry-After of the failure that opens
// the circuit sets the half-open probe's time, later or sooner than
// circuitOpenMs.
func TestRetryAfterSetsTheProbe(t *testing.T) {
	bothDrivers(t, func(t *testing.T, h *harness) {
		h.endpoint("api", `{"maxConcurrent":10,"circuitFailureThreshold":1,"circuitOpenMs":1000}`)
		h.tool(`{"name":"call","version":"1","endpoint":"api"}`)
		h.enqueue("call@1", nil)
		h.enqueue("call@1", nil)
		opened := h.clk.Now()
		h.fail(h.claimOne("call@1"), 503, map[string]string{"Retry-After": "120"})
		ep, _ := h.e.Endpoint(h.ctx, h.owner, "api")
		if ep.CircuitState != wire.CircuitOpen || engine.HalfOpensAt(ep) != opened.Add(120*time.Second).UnixMilli() {
			t.Fatalf("circuit %s half-opens at %d, want open until %d", ep.CircuitState, engine.HalfOpensAt(ep), opened.Add(120*time.Second).UnixMilli())
		}
		h.clk.Advance(119 * time.Second)
		if got := h.claim([]string{"call@1"}, 1); len(got) != 0 {
			t.Fatal("claimed before the provider's Retry-After")
		}
		h.clk.Advance(time.Second)
		if got := h.claim([]string{"call@1"}, 1); len(got) != 1 {
			t.Fatal("no probe at the provider's Retry-After")
		}
		// A Retry-After shorter than circuitOpenMs brings the probe
		// forward: the provider said when to come back.
		h.endpoint("soon", `{"maxConcurrent":10,"circuitFailureThreshold":1,"circuitOpenMs":60000}`)
		h.tool(`{"name":"soon","version":"1","endpoint":"soon"}`)
		h.enqueue("soon@1", nil)
		h.enqueue("soon@1", nil)
		h.fail(h.claimOne("soon@1"), 503, map[string]string{"Retry-After": "5"})
		h.clk.Advance(4999 * time.Millisecond)
		if got := h.claim([]string{"soon@1"}, 1); len(got) != 0 {
			t.Fatal("claimed before the provider's Retry-After of 5 s")
		}
		h.clk.Advance(time.Millisecond)
		if got := h.claim([]string{"soon@1"}, 1); len(got) != 1 {
			t.Fatal("no probe 5 s after a Retry-After of 5 s, with circuitOpenMs 60000")
		}
	})
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestRaisedLimitRamps: raising an endpoint's rate limit starts the ramp
// at the old limit's rate, growing by a tenth of it a second, not at the
// new limit at once.
func TestRaisedLimitRamps(t *testing.T) {
	bothDrivers(t, func(t *testing.T, h *harness) {
		h.endpoint("api", `{"maxConcurrent":100,"rateLimitPerMinute":600}`) // 10 a second
		h.tool(`{"name":"call","version":"1","endpoint":"api"}`)
		for range 100 {
			h.enqueue("call@1", nil)
		}
		ep, _ := h.e.Endpoint(h.ctx, h.owner, "api")
		pol, err := engine.CurrentPolicy(ep)
		if err != nil {
			t.Fatal(err)
		}
		pol.RateLimitPerMinute = ptr(int64(6000)) // 100 a second
		if ep, err = h.e.UpdateEndpointPolicy(h.ctx, h.owner, "api", ep.Version, pol); err != nil {
			t.Fatal(err)
		}
		if ep.Recovery.Rate != 10_000 || ep.Recovery.Ceiling != 10_000 {
			t.Fatalf("after raising the limit: recovery %+v, want from 10 a second", ep.Recovery)
		}
		h.clk.Advance(time.Millisecond)
		if got := []int{h.claimSecond(200), h.claimSecond(200), h.claimSecond(200)}; !equalInts(got, []int{10, 10, 11}) {
			t.Fatalf("claims a second after the raise = %v, want 10, 10, 11", got)
		}
	})
}

// TestRecoveryWaitsForThrottledJobs: the ramp does not end while jobs it
// throttled are due within the minute (they would come back together,
// unpaced); it ends once they are done.
func TestRecoveryWaitsForThrottledJobs(t *testing.T) {
	bothDrivers(t, func(t *testing.T, h *harness) {
		outageFixture(t, h, `"maxConcurrent":100`, 13) // 11 due (the first failure waits out its delay), the ramp at 10 a second
		got := h.claim([]string{"call@1"}, 100)
		if len(got) != 10 {
			t.Fatalf("claimed %d, want 10", len(got))
		}
		for i, c := range got {
			if i < 5 {
				h.succeed(c)
			} else {
				h.fail(c, 429, map[string]string{"Retry-After": "20"})
			}
		}
		h.clk.Advance(time.Second)
		h.succeed(h.claimOne("call@1")) // the 11th: the second of 429s cuts the rate
		h.clk.Advance(time.Second)
		// One new job a second: few claims, but the five throttled jobs are
		// due within the minute, so the ramp holds its rate.
		h.enqueue("call@1", nil)
		h.succeed(h.claimOne("call@1"))
		ep, _ := h.e.Endpoint(h.ctx, h.owner, "api")
		if ep.Recovery.Rate != 7000 {
			t.Fatalf("with 5 throttled jobs due soon the ramp is %+v, want it held at 7 a second", ep.Recovery)
		}
		// They come back, paced by the ramp, and are done; then it ends.
		h.clk.Advance(40 * time.Second)
		back := h.claim([]string{"call@1"}, 100)
		if len(back) != 6 { // and the outage's first failure
			t.Fatalf("claimed %d of the throttled jobs and the first failure, want 6", len(back))
		}
		for _, c := range back {
			h.succeed(c)
		}
		h.clk.Advance(time.Second)
		h.enqueue("call@1", nil)
		h.succeed(h.claimOne("call@1"))
		if ep, _ = h.e.Endpoint(h.ctx, h.owner, "api"); ep.Recovery.Rate != 0 {
			t.Fatalf("nothing due and few claims: the ramp is %+v, want it ended", ep.Recovery)
		}
	})
}
