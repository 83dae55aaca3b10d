package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/getratchet/ratchet/internal/api"
	"github.com/getratchet/ratchet/internal/engine"
	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/wire"
)

func (h *harness) hold(id int64) *engine.Hold {
	h.t.Helper()
	hd, err := h.e.Explain(h.ctx, h.owner, id)
	if err != nil {
		h.t.Fatal(err)
	}
	return hd
}

func TestGateMaxConcurrent(t *testing.T) {
	h := newHarness(t)
	h.endpoint("api", `{"maxConcurrent":2}`)
	h.tool(`{"name":"call","version":"1","endpoint":"api"}`)
	var jobs []*store.Job
	for range 3 {
		jobs = append(jobs, h.enqueue("call@1", nil))
	}
	got := h.claim([]string{"call@1"}, 10)
	if len(got) != 2 {
		t.Fatalf("claimed %d, want 2 (maxConcurrent)", len(got))
	}
	if more := h.claim([]string{"call@1"}, 10); len(more) != 0 {
		t.Fatalf("claimed %d beyond maxConcurrent", len(more))
	}
	third := jobs[2]
	hd := h.hold(third.ID)
	j, _ := h.job(third.ID)
	if hd.Gate != "max_concurrent" || j.Attempt != 0 || j.DueAt != third.DueAt {
		t.Fatalf("held job: %+v attempt %d due %d→%d", hd, j.Attempt, third.DueAt, j.DueAt)
	}
	h.succeed(got[0])
	if c := h.claimOne("call@1"); c.Job.ID != third.ID {
		t.Fatalf("claimed %d, want %d", c.Job.ID, third.ID)
	}
}

func TestGateRateLimit(t *testing.T) {
	h := newHarness(t)
	h.endpoint("api", `{"maxConcurrent":100,"rateLimitPerMinute":3}`)
	h.tool(`{"name":"call","version":"1","endpoint":"api"}`)
	for range 5 {
		h.enqueue("call@1", nil)
	}
	first := h.claim([]string{"call@1"}, 10)
	if len(first) != 3 {
		t.Fatalf("claimed %d, want 3 (rate limit)", len(first))
	}
	for _, c := range first {
		h.succeed(c)
	}
	h.clk.Advance(30 * time.Second)
	if got := h.claim([]string{"call@1"}, 10); len(got) != 0 {
		t.Fatalf("claimed %d inside the window", len(got))
	}
	list, _ := h.e.Jobs(h.ctx, h.owner, store.JobFilter{States: []wire.JobState{wire.JobScheduled}})
	hd := h.hold(list[0].ID)
	if hd.Gate != "rate_limit" || hd.Until != engine.FormatTime(t0.Add(60*time.Second).UnixMilli()) || list[0].Attempt != 0 {
		t.Fatalf("hold %+v (attempt %d)", hd, list[0].Attempt)
	}
	h.clk.Advance(30 * time.Second) // the window slides past the first claims
	if got := h.claim([]string{"call@1"}, 10); len(got) != 2 {
		t.Fatalf("after the window: claimed %d, want 2", len(got))
	}
}

func TestGateAllowlist(t *testing.T) {
	h := newHarness(t)
	h.endpoint("api", `{}`)
	h.tool(`{"name":"call","version":"1","endpoint":"api"}`)
	h.tool(`{"name":"other","version":"1","endpoint":"api"}`)
	_, secret, err := h.e.CreateKey(h.ctx, h.owner, engine.KeySpec{Scope: wire.ScopeWorker, Tools: []string{"other@1"}})
	if err != nil {
		t.Fatal(err)
	}
	w, _ := h.e.Authenticate(h.ctx, secret)
	j := h.enqueue("call@1", nil)
	_, err = h.e.Claim(h.ctx, w, engine.ClaimRequest{WorkerID: "w", Tools: []string{"call@1"}})
	if e := (*engine.Error)(nil); !errors.As(err, &e) || e.Kind != engine.KindForbidden {
		t.Fatalf("claim outside the allowlist: %v", err)
	}
	if got, _ := h.e.Claim(h.ctx, w, engine.ClaimRequest{WorkerID: "w"}); len(got) != 0 {
		t.Fatal("worker claimed a tool outside its allowlist")
	}
	if hd := h.hold(j.ID); hd.Gate != "none" {
		t.Fatalf("hold %+v", hd)
	}
	if jj, _ := h.job(j.ID); jj.Attempt != 0 {
		t.Fatal("attempt spent")
	}
}

// TestCircuit: failures open the circuit, which refuses claims even for a
// CUSTOM policy with short delays, then lets one half-open probe through and
// closes on its success.
func TestCircuit(t *testing.T) {
	h := newHarness(t)
	h.endpoint("flaky", `{"preset":"CUSTOM","maxAttempts":10,"initialDelayMs":1000,"multiplier":1,"maxDelayMs":1000,"jitterPercent":0,
		"circuitFailureThreshold":3,"circuitOpenMs":30000,"maxConcurrent":50}`)
	h.tool(`{"name":"call","version":"1","endpoint":"flaky"}`)
	var ids []int64
	for range 4 {
		ids = append(ids, h.enqueue("call@1", nil).ID)
	}
	cs := h.claim([]string{"call@1"}, 3)
	for _, c := range cs {
		h.fail(c, 503, nil)
	}
	ep, _ := h.e.Endpoint(h.ctx, h.owner, "flaky")
	if ep.CircuitState != wire.CircuitOpen {
		t.Fatalf("after 3 provider failures: circuit %s", ep.CircuitState)
	}
	// 4xx and throttles never count.
	h.clk.Advance(2 * time.Second) // every job is due; the circuit is still open
	if got := h.claim([]string{"call@1"}, 10); len(got) != 0 {
		t.Fatalf("claimed %d through an open circuit", len(got))
	}
	hd := h.hold(ids[3])
	if hd.Gate != "circuit" || hd.Until != engine.FormatTime(t0.Add(30*time.Second).UnixMilli()) {
		t.Fatalf("hold %+v", hd)
	}
	for _, id := range ids {
		if j, _ := h.job(id); j.State != wire.JobScheduled {
			t.Fatalf("job %d is %s", id, j.State)
		}
	}
	h.clk.Set(t0.Add(30 * time.Second))
	probe := h.claim([]string{"call@1"}, 10)
	if len(probe) != 1 {
		t.Fatalf("half-open let %d through, want 1 probe", len(probe))
	}
	if got := h.claim([]string{"call@1"}, 10); len(got) != 0 {
		t.Fatal("a second claim passed while the probe runs")
	}
	ep, _ = h.e.Endpoint(h.ctx, h.owner, "flaky")
	if ep.CircuitState != wire.CircuitHalfOpen || ep.CircuitProbeJob != probe[0].Job.ID {
		t.Fatalf("circuit %s probe %d", ep.CircuitState, ep.CircuitProbeJob)
	}
	h.succeed(probe[0])
	ep, _ = h.e.Endpoint(h.ctx, h.owner, "flaky")
	if ep.CircuitState != wire.CircuitClosed || ep.CircuitFailures != 0 {
		t.Fatalf("after the probe succeeded: %s %d", ep.CircuitState, ep.CircuitFailures)
	}
	if got := h.claim([]string{"call@1"}, 10); len(got) != 3 {
		t.Fatalf("closed circuit: claimed %d, want 3", len(got))
	}
}

func TestCircuitProbeFailureReopens(t *testing.T) {
	h := newHarness(t)
	h.endpoint("flaky", `{"circuitFailureThreshold":1,"circuitOpenMs":10000}`)
	h.tool(`{"name":"call","version":"1","endpoint":"flaky"}`)
	h.enqueue("call@1", ptr(int64(10)))
	h.enqueue("call@1", ptr(int64(10)))
	h.fail(h.claimOne("call@1"), 0, nil)
	// A 429 does not count toward the circuit; a connect error does.
	h.clk.Advance(10 * time.Second)
	p := h.claimOne("call@1")
	r, _ := h.e.Report(h.ctx, h.owner, engine.ReportRequest{JobID: p.Job.ID, LeaseToken: p.LeaseToken, Report: connectError})
	if !r.Decision.CountsTowardCircuit {
		t.Fatalf("connect error not counted: %+v", r.Decision)
	}
	ep, _ := h.e.Endpoint(h.ctx, h.owner, "flaky")
	if ep.CircuitState != wire.CircuitOpen || ep.CircuitOpenedAt != h.clk.Now().UnixMilli() {
		t.Fatalf("probe failed: circuit %s opened %d", ep.CircuitState, ep.CircuitOpenedAt)
	}
}

func TestCancelReplayExplain(t *testing.T) {
	h := newHarness(t)
	h.endpoint("api", `{}`)
	h.tool(`{"name":"call","version":"1","endpoint":"api"}`)
	a := h.enqueue("call@1", nil)
	b := h.enqueue("call@1", nil)
	if j, err := h.e.Cancel(h.ctx, h.owner, a.ID); err != nil || j.State != wire.JobCancelled {
		t.Fatalf("cancel scheduled: %v %v", j, err)
	}
	c := h.claimOne("call@1")
	if c.Job.ID != b.ID {
		t.Fatal("claimed the cancelled job")
	}
	if j, err := h.e.Cancel(h.ctx, h.owner, b.ID); err != nil || j.State != wire.JobRunning || !j.CancelRequested {
		t.Fatalf("cancel running: %+v %v", j, err)
	}
	if j, _ := h.e.Heartbeat(h.ctx, h.owner, b.ID, c.LeaseToken); !j.CancelRequested {
		t.Fatal("heartbeat does not tell the worker about the cancel")
	}
	if r := h.fail(c, 500, nil); r.Job.State != wire.JobCancelled {
		t.Fatalf("report after cancel: %s", r.Job.State)
	}
	if hd := h.hold(a.ID); hd.Gate != "none" || hd.Detail != "the job is cancelled, not waiting to be claimed" {
		t.Fatalf("hold of a cancelled job: %+v", hd)
	}
	nj, err := h.e.Replay(h.ctx, h.owner, a.ID)
	if err != nil || nj.ReplayOf != a.ID || nj.State != wire.JobScheduled || nj.ID == a.ID {
		t.Fatalf("replay: %+v %v", nj, err)
	}
	if _, err := h.e.Replay(h.ctx, h.owner, nj.ID); err == nil {
		t.Fatal("replayed a scheduled job")
	}
	h.u = 0
	r := h.fail(h.claimOne("call@1"), 500, nil)
	if hd := h.hold(nj.ID); hd.Gate != "due_time" || hd.Until != engine.FormatTime(r.Job.DueAt) {
		t.Fatalf("hold %+v due %d", hd, r.Job.DueAt)
	}
	if _, _, hd, err := h.e.Job(h.ctx, h.owner, nj.ID); err != nil || hd == nil || hd.Gate != "due_time" {
		t.Fatalf("job view hold: %+v %v", hd, err)
	}
}

func TestPlanForbidsCustomOnFree(t *testing.T) {
	h := newHarness(t)
	if err := h.e.SetPlan(h.ctx, h.owner.ProjectID, wire.PlanFree); err != nil {
		t.Fatal(err)
	}
	fields := map[string]json.RawMessage{}
	_ = json.Unmarshal([]byte(seedEndpoint), &fields)
	pol, err := api.DecodeEndpointPolicy(fields, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = h.e.CreateEndpoint(h.ctx, h.owner, "x", pol)
	if e := (*engine.Error)(nil); !errors.As(err, &e) || e.Kind != engine.KindForbidden {
		t.Fatalf("FREE saved CUSTOM: %v", err)
	}
	h.endpoint("y", `{"preset":"AGGRESSIVE"}`)
	spec, _ := api.DecodeToolSpec([]byte(`{"name":"t","version":"1","endpoint":"y","retryPreset":"CUSTOM","retryPolicy":{"maxAttempts":3,"initialDelayMs":2000,"multiplier":3,"maxDelayMs":50000,"jitterPercent":0}}`))
	if _, err := h.e.PublishTool(h.ctx, h.owner, spec); err == nil {
		t.Fatal("FREE published a CUSTOM tool policy")
	}
}

// TestConcurrentClaims: many goroutines claiming at once never hand the same
// job to two workers and never exceed maxConcurrent or the rate limit.
func TestConcurrentClaims(t *testing.T) {
	h := newHarness(t)
	h.endpoint("api", `{"maxConcurrent":7,"rateLimitPerMinute":40}`)
	h.tool(`{"name":"call","version":"1","endpoint":"api"}`)
	for range 100 {
		h.enqueue("call@1", nil)
	}
	var mu sync.Mutex
	seen := map[int64]string{}
	running, maxRunning, claims := 0, 0, 0
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			worker := fmt.Sprintf("w%d", w)
			for range 30 {
				cs, err := h.e.Claim(context.Background(), h.owner, engine.ClaimRequest{WorkerID: worker, Tools: []string{"call@1"}, Max: 3})
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				for _, c := range cs {
					if prev, dup := seen[c.Job.ID]; dup {
						t.Errorf("job %d handed to %s and %s", c.Job.ID, prev, worker)
					}
					seen[c.Job.ID] = worker
				}
				running += len(cs)
				claims += len(cs)
				maxRunning = max(maxRunning, running)
				mu.Unlock()
				for _, c := range cs {
					// Counted down before the report commits and up after the
					// claim commits, so the test's count never exceeds the
					// engine's: a count above 7 here is a real violation.
					mu.Lock()
					running--
					mu.Unlock()
					if _, err := h.e.Report(context.Background(), h.owner, engine.ReportRequest{JobID: c.Job.ID, LeaseToken: c.LeaseToken, Report: classifyOK}); err != nil {
						t.Error(err)
					}
				}
			}
		}()
	}
	wg.Wait()
	if maxRunning > 7 {
		t.Errorf("%d running at once, maxConcurrent 7", maxRunning)
	}
	if claims != 40 {
		t.Errorf("%d claims within one minute, rate limit 40", claims)
	}
}
