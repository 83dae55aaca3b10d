package engine_test

import (
	"errors"
	"testing"
	"time"

	"github.com/getratchet/ratchet/internal/engine"
	"github.com/getratchet/ratchet/wire"
)

// TestSeedPolicyEndToEnd walks the documentation's example: six attempts of
// the 10 s / ×2 / 600 s / 20 % policy give five waits inside the documented
// ranges, then the job is exhausted and there is no attempt 7.
func TestSeedPolicyEndToEnd(t *testing.T) {
	h := newHarness(t)
	h.endpoint("stripe", seedEndpoint)
	h.tool(`{"name":"charge","version":"1","endpoint":"stripe"}`)
	j := h.enqueue("charge@1", nil)
	ranges := [][2]int64{{8000, 12000}, {16000, 24000}, {32000, 48000}, {64000, 96000}, {128000, 192000}}
	samples := []float64{0, 1, 0.5, 0.25, 0.999}
	for n := 1; n <= 6; n++ {
		c := h.claimOne("charge@1")
		if c.Job.Attempt != int64(n) {
			t.Fatalf("claim %d has attempt %d", n, c.Job.Attempt)
		}
		if n <= 5 {
			h.u = samples[n-1]
		}
		r := h.fail(c, 503, nil)
		if n == 6 {
			if r.Job.State != wire.JobExhausted {
				t.Fatalf("after attempt 6: state %s, want exhausted", r.Job.State)
			}
			break
		}
		a := r.Attempt
		lo, hi := ranges[n-1][0], ranges[n-1][1]
		if a.MinDelayMs != lo || a.MaxDelayMs != hi || a.SelectedMs < lo || a.SelectedMs > hi {
			t.Fatalf("attempt %d: range %d–%d selected %d, want within %d–%d", n, a.MinDelayMs, a.MaxDelayMs, a.SelectedMs, lo, hi)
		}
		want := lo + int64(float64(hi-lo)*samples[n-1]+0.5)
		if a.SelectedMs != want {
			t.Errorf("attempt %d at u=%v: selected %d, want %d", n, samples[n-1], a.SelectedMs, want)
		}
		if r.Job.State != wire.JobScheduled || r.Job.DueAt != h.clk.Now().UnixMilli()+a.SelectedMs || a.NextDueAt != r.Job.DueAt {
			t.Fatalf("attempt %d: job %+v attempt %+v", n, r.Job, a)
		}
		// Not claimable a millisecond early; claimable when due.
		h.clk.Advance(time.Duration(a.SelectedMs-1) * time.Millisecond)
		if got := h.claim([]string{"charge@1"}, 1); len(got) != 0 {
			t.Fatalf("attempt %d: claimed before due", n)
		}
		h.clk.Advance(time.Millisecond)
	}
	// No attempt 7.
	h.clk.Advance(24 * time.Hour)
	if got := h.claim([]string{"charge@1"}, 1); len(got) != 0 {
		t.Fatal("an exhausted job was claimed again")
	}
	got, attempts := h.job(j.ID)
	if got.State != wire.JobExhausted || len(attempts) != 6 || got.Attempt != 6 {
		t.Errorf("final job %s with %d attempts", got.State, len(attempts))
	}
}

func TestRetryAfterHint(t *testing.T) {
	h := newHarness(t)
	h.endpoint("stripe", seedEndpoint)
	h.tool(`{"name":"charge","version":"1","endpoint":"stripe"}`)
	h.enqueue("charge@1", nil)
	h.u = 1
	// A 60 s hint after attempt 1 beats the 8–12 s delay.
	r := h.fail(h.claimOne("charge@1"), 429, map[string]string{"Retry-After": "60"})
	if r.Attempt.SelectedMs != 60_000 || r.Attempt.RetryAfterMs != 60_000 || r.Attempt.Classification != "retry_after" && r.Attempt.Classification != "throttled" {
		t.Fatalf("attempt 1 with 60 s hint: %+v", r.Attempt)
	}
	for n := 2; n <= 4; n++ {
		h.clk.Set(time.UnixMilli(r.Job.DueAt))
		r = h.fail(h.claimOne("charge@1"), 503, nil)
	}
	// After attempt 5 the same hint loses to the 128–192 s delay.
	h.clk.Set(time.UnixMilli(r.Job.DueAt))
	h.u = 0
	r = h.fail(h.claimOne("charge@1"), 503, map[string]string{"Retry-After": "60"})
	if r.Attempt.SelectedMs != 128_000 || r.Attempt.RetryAfterMs != 60_000 {
		t.Fatalf("attempt 5 with 60 s hint: selected %d hint %d", r.Attempt.SelectedMs, r.Attempt.RetryAfterMs)
	}
}

func TestSnapshotSurvivesEndpointEdit(t *testing.T) {
	h := newHarness(t)
	ep := h.endpoint("stripe", seedEndpoint)
	h.tool(`{"name":"charge","version":"1","endpoint":"stripe"}`)
	j := h.enqueue("charge@1", nil)
	h.u = 0.5
	r := h.fail(h.claimOne("charge@1"), 500, nil)
	due := r.Job.DueAt
	cur, _ := engine.CurrentPolicy(ep)
	cur.Policy.Custom.MaxAttempts = 2
	cur.Policy.Custom.InitialDelayMs = 1_800_000
	cur.Policy.Custom.MaxDelayMs = 1_800_000
	if _, err := h.e.UpdateEndpointPolicy(h.ctx, h.owner, "stripe", ep.Version, cur); err != nil {
		t.Fatal(err)
	}
	got, _ := h.job(j.ID)
	if got.DueAt != due || string(got.Policy) != string(r.Job.Policy) || got.MaxAttempts != 6 {
		t.Fatalf("endpoint edit changed the queued job: due %d→%d policy %s→%s", due, got.DueAt, r.Job.Policy, got.Policy)
	}
	// The next failure still follows the snapshot (20 s base after attempt 2).
	h.clk.Set(time.UnixMilli(due))
	r = h.fail(h.claimOne("charge@1"), 500, nil)
	if r.Attempt.BaseDelayMs != 20_000 || r.Job.State != wire.JobScheduled {
		t.Fatalf("attempt 2 after edit: base %v state %s", r.Attempt.BaseDelayMs, r.Job.State)
	}
	// A stale version is a conflict and changes nothing.
	_, err := h.e.UpdateEndpointPolicy(h.ctx, h.owner, "stripe", ep.Version, cur)
	var ee *engine.Error
	if !errors.As(err, &ee) || ee.Kind != engine.KindConflict || ee.Current == nil {
		t.Fatalf("stale version: %v", err)
	}
}

func TestPolicyPrecedence(t *testing.T) {
	h := newHarness(t)
	h.endpoint("stripe", seedEndpoint)
	h.tool(`{"name":"plain","version":"1","endpoint":"stripe"}`)
	h.tool(`{"name":"own","version":"1","endpoint":"stripe","retryPreset":"CUSTOM","retryPolicy":{"preset":"CUSTOM","maxAttempts":3,"initialDelayMs":2000,"multiplier":3,"maxDelayMs":50000,"jitterPercent":0}}`)
	h.tool(`{"name":"relaxed","version":"1","endpoint":"stripe","retryPreset":"RELAXED"}`)
	h.endpoint("bare", `{}`)
	h.tool(`{"name":"dflt","version":"1","endpoint":"bare"}`)
	cases := []struct {
		tool   string
		max    *int64
		source string
		params [5]float64
	}{
		{"plain@1", nil, "endpoint", [5]float64{6, 10000, 2, 600000, 20}},
		{"own@1", nil, "tool", [5]float64{3, 2000, 3, 50000, 0}},
		{"relaxed@1", nil, "tool", [5]float64{3, 120000, 2, 1800000, 20}},
		{"dflt@1", nil, "endpoint", [5]float64{5, 30000, 2, 900000, 20}},
		{"own@1", ptr(int64(9)), "tool", [5]float64{9, 2000, 3, 50000, 0}},
		{"plain@1", ptr(int64(1)), "endpoint", [5]float64{1, 10000, 2, 600000, 20}},
	}
	for _, c := range cases {
		j := h.enqueue(c.tool, c.max)
		s, err := engine.ParseSnapshot(j.Policy)
		if err != nil {
			t.Fatal(err)
		}
		got := [5]float64{float64(s.MaxAttempts), float64(s.InitialDelayMs), s.Multiplier, float64(s.MaxDelayMs), s.JitterPercent}
		if got != c.params || s.Source != c.source || s.MaxAttemptsOverridden != (c.max != nil) || j.MaxAttempts != int64(got[0]) {
			t.Errorf("%s max=%v: %+v, want %v from %s", c.tool, c.max, s, c.params, c.source)
		}
	}
	// maxAttempts 1: the first failure exhausts.
	h2 := h.enqueue("plain@1", ptr(int64(1)))
	var c engine.Claimed
	for _, x := range h.claim([]string{"plain@1"}, 10) {
		if x.Job.ID == h2.ID {
			c = x
		}
	}
	if r := h.fail(c, 500, nil); r.Job.State != wire.JobExhausted {
		t.Errorf("maxAttempts 1 after a failure: %s", r.Job.State)
	}
}

func TestIdempotencyAndLeases(t *testing.T) {
	h := newHarness(t)
	h.endpoint("stripe", seedEndpoint)
	h.tool(`{"name":"charge","version":"1","endpoint":"stripe","payloadSchema":{"type":"object","required":["amount"],"properties":{"amount":{"type":"integer"}}}}`)
	r1, err := h.e.Enqueue(h.ctx, h.owner, engine.EnqueueRequest{Tool: "charge@1", Payload: []byte(`{"amount":5}`), IdempotencyKey: "order-1"})
	if err != nil || !r1.Created {
		t.Fatal(r1, err)
	}
	r2, err := h.e.Enqueue(h.ctx, h.owner, engine.EnqueueRequest{Tool: "charge@1", Payload: []byte(`{"amount":5}`), IdempotencyKey: "order-1"})
	if err != nil || r2.Created || r2.Job.ID != r1.Job.ID {
		t.Fatalf("repeated key: %+v %v", r2, err)
	}
	_, err = h.e.Enqueue(h.ctx, h.owner, engine.EnqueueRequest{Tool: "charge@1", Payload: []byte(`{"amount":"5"}`)})
	var ee *engine.Error
	if !errors.As(err, &ee) || ee.Kind != engine.KindInvalid || ee.Fields[0].Field != "payload.amount" {
		t.Fatalf("schema violation: %v", err)
	}
	c := h.claimOne("charge@1")
	if c.IdempotencyKey != "order-1" {
		t.Errorf("claim carries key %q", c.IdempotencyKey)
	}
	// A stale token is refused and changes nothing.
	_, err = h.e.Report(h.ctx, h.owner, engine.ReportRequest{JobID: c.Job.ID, LeaseToken: "stale"})
	if !errors.As(err, &ee) || ee.Kind != engine.KindConflict {
		t.Fatalf("stale token: %v", err)
	}
	// The lease expires: a timed_out attempt, retried by the policy.
	h.clk.Advance(30 * time.Second)
	if n, err := h.e.Rescue(h.ctx); err != nil || n != 1 {
		t.Fatalf("rescue: %d %v", n, err)
	}
	j, as := h.job(c.Job.ID)
	if j.State != wire.JobScheduled || as[0].Outcome != "timed_out" || as[0].Classification != "timed_out" || !as[0].Counted {
		t.Fatalf("after lease expiry: %s %+v", j.State, as[0])
	}
	// The late report of the expired lease is refused.
	_, err = h.e.Report(h.ctx, h.owner, engine.ReportRequest{JobID: c.Job.ID, LeaseToken: c.LeaseToken, Report: classifyOK})
	if err == nil {
		t.Fatal("report on a rescued lease was accepted")
	}
	h.clk.Set(time.UnixMilli(j.DueAt))
	c2 := h.claimOne("charge@1")
	if _, err := h.e.Heartbeat(h.ctx, h.owner, c2.Job.ID, c2.LeaseToken); err != nil {
		t.Fatal(err)
	}
	first := h.succeed(c2)
	again := h.succeed(c2) // the same report repeated is harmless
	if first.Job.State != wire.JobSucceeded || !again.Duplicate || again.Job.State != wire.JobSucceeded {
		t.Fatalf("repeat report: %+v / %+v", first, again)
	}
}
