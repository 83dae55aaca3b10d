package engine_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/getratchet/ratchet/internal/engine"
	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/internal/store/postgres"
	"github.com/getratchet/ratchet/internal/store/postgres/pgtest"
	"github.com/getratchet/ratchet/wire"
)

func wantKind(t *testing.T, what string, err error, kind engine.Kind) {
	t.Helper()
	var ee *engine.Error
	if !errors.As(err, &ee) || ee.Kind != kind {
		t.Fatalf("%s: %v, want kind %d", what, err, kind)
	}
}

// testPauseHoldsClaims: a paused endpoint's due job is not claimed and no
// attempt is spent; the job, explain and overview say who paused it, when
// and why; a second pause keeps the first; resume makes it claimable; every
// action is in the audit log.
func testPauseHoldsClaims(t *testing.T, h *harness) {
	h.endpoint("payments", seedEndpoint)
	h.tool(`{"name":"pay","version":"1","endpoint":"payments"}`)
	j := h.enqueue("pay@1", nil)
	ep, err := h.e.PauseEndpoint(h.ctx, h.owner, "payments", "provider incident #12")
	if err != nil || ep.PausedAt == 0 || ep.PausedBy != "bootstrap owner" || ep.PausedReason != "provider incident #12" {
		t.Fatalf("pause: %v %+v", err, ep)
	}
	if c := h.claim([]string{"pay@1"}, 10); len(c) != 0 {
		t.Fatalf("a paused endpoint's job was claimed: %+v", c)
	}
	got, as := h.job(j.ID)
	if got.State != wire.JobScheduled || got.Attempt != 0 || len(as) != 0 {
		t.Fatalf("a held job spent an attempt: %+v %+v", got, as)
	}
	want := "endpoint payments was paused by bootstrap owner at " + engine.FormatTime(ep.PausedAt) + ": provider incident #12"
	hold, err := h.e.Explain(h.ctx, h.owner, j.ID)
	if err != nil || hold.Gate != wire.GatePaused || hold.Detail != want {
		t.Fatalf("explain: %v %+v, want detail %q", err, hold, want)
	}
	if _, _, hold, _ := h.e.Job(h.ctx, h.owner, j.ID); hold == nil || hold.Gate != wire.GatePaused {
		t.Fatalf("job hold: %+v", hold)
	}
	ov, err := h.e.Overview(h.ctx, h.owner)
	if err != nil || len(ov) != 1 || ov[0].HeldBy != wire.GatePaused || ov[0].HeldDetail != want {
		t.Fatalf("overview: %v %+v", err, ov)
	}
	held, err := h.e.HeldJobs(h.ctx, h.owner, "payments", 0, 100)
	if err != nil || len(held.Jobs) != 1 || held.Jobs[0].ID != j.ID || held.Hold.Gate != wire.GatePaused || held.Held != 1 {
		t.Fatalf("held: %v %+v", err, held)
	}
	// A job not due yet is held by its due time, not listed as held.
	later, err := h.e.Enqueue(h.ctx, h.owner, engine.EnqueueRequest{Tool: "pay@1", RunAt: ptr(h.clk.Now().Add(time.Hour))})
	if err != nil {
		t.Fatal(err)
	}
	if held, _ := h.e.HeldJobs(h.ctx, h.owner, "payments", 0, 100); len(held.Jobs) != 1 || held.Held != 1 {
		t.Fatalf("held lists %d jobs (count %d), want only the due one", len(held.Jobs), held.Held)
	}
	if hold, _ := h.e.Explain(h.ctx, h.owner, later.Job.ID); hold.Gate != wire.GateDueTime {
		t.Fatalf("a job not due on a paused endpoint: %+v", hold)
	}

	h.clk.Advance(time.Minute)
	again, err := h.e.PauseEndpoint(h.ctx, h.owner, "payments", "second")
	if err != nil || again.PausedAt != ep.PausedAt || again.PausedReason != "provider incident #12" {
		t.Fatalf("a second pause changed the first: %v %+v", err, again)
	}
	res, err := h.e.ResumeEndpoint(h.ctx, h.owner, "payments")
	if err != nil || res.PausedAt != 0 {
		t.Fatalf("resume: %v %+v", err, res)
	}
	if held, _ := h.e.HeldJobs(h.ctx, h.owner, "payments", 0, 100); len(held.Jobs) != 0 || held.Held != 0 {
		t.Fatalf("held after resume: %+v", held)
	}
	c := h.claimOne("pay@1")
	if c.Job.ID != j.ID || c.Job.Attempt != 1 {
		t.Fatalf("claim after resume: %+v", c.Job)
	}
	entries, err := h.e.Audit(h.ctx, h.owner, "endpoint:payments", 0, 100)
	if err != nil || len(entries) != 3 || entries[0].Action != "endpoint.resume" || entries[2].Action != "endpoint.pause" ||
		entries[2].Actor != "bootstrap owner" || !strings.Contains(entries[2].Detail, "provider incident #12") || entries[1].Detail == entries[2].Detail {
		t.Fatalf("audit: %v %+v", err, entries)
	}
	_, err = h.e.PauseEndpoint(h.ctx, h.owner, "payments", strings.Repeat("x", 501))
	wantKind(t, "a reason of 501 characters", err, engine.KindInvalid)
	_, err = h.e.PauseEndpoint(h.ctx, h.owner, "nope", "")
	wantKind(t, "pause of a missing endpoint", err, engine.KindNotFound)
}

// testCircuitByHand: opened by hand the circuit holds the endpoint's jobs
// (heldBy circuit, naming who), closed by hand it releases them at once.
func testCircuitByHand(t *testing.T, h *harness) {
	h.endpoint("mail", seedEndpoint)
	h.tool(`{"name":"send","version":"1","endpoint":"mail"}`)
	j := h.enqueue("send@1", nil)
	ep, err := h.e.OpenCircuit(h.ctx, h.owner, "mail")
	if err != nil || ep.CircuitState != wire.CircuitOpen || ep.CircuitOpenedBy != "bootstrap owner" {
		t.Fatalf("open: %v %+v", err, ep)
	}
	if c := h.claim([]string{"send@1"}, 10); len(c) != 0 {
		t.Fatalf("claimed through a circuit opened by hand: %+v", c)
	}
	hold, _ := h.e.Explain(h.ctx, h.owner, j.ID)
	if hold.Gate != wire.GateCircuit || !strings.Contains(hold.Detail, "opened by hand by bootstrap owner") || hold.Until != engine.FormatTime(ep.CircuitOpenedAt+ep.CircuitOpenMs) {
		t.Fatalf("explain: %+v", hold)
	}
	page, _ := h.e.HeldJobs(h.ctx, h.owner, "mail", 0, 100)
	held := page.Jobs
	if len(held) != 1 || held[0].ID != j.ID {
		t.Fatalf("held: %+v", held)
	}
	ep, err = h.e.CloseCircuit(h.ctx, h.owner, "mail")
	if err != nil || ep.CircuitState != wire.CircuitClosed || ep.CircuitFailures != 0 {
		t.Fatalf("close: %v %+v", err, ep)
	}
	if c := h.claimOne("send@1"); c.Job.ID != j.ID {
		t.Fatalf("claim after close: %+v", c.Job)
	}
	entries, _ := h.e.Audit(h.ctx, h.owner, "endpoint:mail", 0, 100)
	if len(entries) != 2 || entries[0].Action != "circuit.close" || entries[1].Action != "circuit.open" {
		t.Fatalf("audit: %+v", entries)
	}
}

func TestPauseHoldsClaims(t *testing.T) { testPauseHoldsClaims(t, newHarness(t)) }
func TestCircuitByHand(t *testing.T)    { testCircuitByHand(t, newHarness(t)) }
func TestPauseHoldsClaimsPostgres(t *testing.T) {
	testPauseHoldsClaims(t, newPGHarnessBare(t))
}
func TestCircuitByHandPostgres(t *testing.T) { testCircuitByHand(t, newPGHarnessBare(t)) }

func newPGHarnessBare(t *testing.T) *harness {
	t.Helper()
	st, err := postgres.Open(context.Background(), pgtest.URL(t), postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return newHarnessOn(t, st)
}

// TestPauseHoldsOnEveryNodePostgres: two engines on one PostgreSQL schema
// stand for two nodes. A pause made through one holds the claims of the
// other (the gate reads the endpoint's row, not a node's memory), on the
// optimistic path too; a resume through the other releases them.
func TestPauseHoldsOnEveryNodePostgres(t *testing.T) {
	url := pgtest.URL(t)
	stA, err := postgres.Open(context.Background(), url, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	a := newHarnessOn(t, stA)
	a.endpoint("payments", seedEndpoint)
	a.tool(`{"name":"pay","version":"1","endpoint":"payments"}`)
	stB, err := postgres.Open(context.Background(), url, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stB.Close() })
	b, err := engine.New(engine.Config{Store: stB, Clock: a.clk})
	if err != nil {
		t.Fatal(err)
	}
	if !stB.ConcurrentWriters() {
		t.Fatal("PostgreSQL should claim optimistically")
	}
	_, secret, err := a.e.CreateKey(a.ctx, a.owner, engine.KeySpec{Name: "node-b worker", Scope: wire.ScopeWorker, Tools: []string{"pay@1"}})
	if err != nil {
		t.Fatal(err)
	}
	wb, err := b.Authenticate(a.ctx, secret)
	if err != nil {
		t.Fatal(err)
	}
	claimB := func() []engine.Claimed {
		t.Helper()
		c, err := b.Claim(a.ctx, wb, engine.ClaimRequest{WorkerID: "b", Max: 10})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	j := a.enqueue("pay@1", nil)
	if _, err := a.e.PauseEndpoint(a.ctx, a.owner, "payments", "node A paused"); err != nil {
		t.Fatal(err)
	}
	if c := claimB(); len(c) != 0 {
		t.Fatalf("node B claimed from an endpoint node A paused: %+v", c)
	}
	var n int64
	_ = stB.Read(a.ctx, func(q store.Queries) (err error) {
		n, err = q.CountRunning(a.ctx, &store.CountRunningParams{EndpointID: j.EndpointID, Limit: 100})
		return err
	})
	if n != 0 {
		t.Fatalf("%d jobs running on a paused endpoint", n)
	}
	ob, err := b.Authenticate(a.ctx, mustOwnerSecret(t, a))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.ResumeEndpoint(a.ctx, ob, "payments"); err != nil {
		t.Fatal(err)
	}
	if c := claimB(); len(c) != 1 || c[0].Job.ID != j.ID {
		t.Fatalf("node B after the resume: %+v", c)
	}
}

func mustOwnerSecret(t *testing.T, h *harness) string {
	t.Helper()
	_, secret, err := h.e.CreateKey(h.ctx, h.owner, engine.KeySpec{Name: "ops", Scope: wire.ScopeOwner})
	if err != nil {
		t.Fatal(err)
	}
	return secret
}

// TestRunNowAndBulkAudit: run-now keeps the attempt count and the gates;
// a bulk action writes one audit entry naming its jobs; the producer scope
// may not run now.
func TestRunNowAndBulkAudit(t *testing.T) {
	h := newHarness(t)
	h.endpoint("payments", seedEndpoint)
	h.tool(`{"name":"pay","version":"1","endpoint":"payments"}`)
	r, err := h.e.Enqueue(h.ctx, h.owner, engine.EnqueueRequest{Tool: "pay@1", RunAt: ptr(h.clk.Now().Add(time.Hour))})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.e.PauseEndpoint(h.ctx, h.owner, "payments", ""); err != nil {
		t.Fatal(err)
	}
	j, err := h.e.RunNow(h.ctx, h.owner, r.Job.ID)
	if err != nil || j.DueAt != h.clk.Now().UnixMilli() || j.Attempt != 0 {
		t.Fatalf("run-now: %v %+v", err, j)
	}
	if c := h.claim([]string{"pay@1"}, 1); len(c) != 0 {
		t.Fatal("run-now went through a pause")
	}
	if hold, _ := h.e.Explain(h.ctx, h.owner, j.ID); hold.Gate != wire.GatePaused || hold.Detail != "endpoint payments was paused by bootstrap owner at "+engine.FormatTime(h.clk.Now().UnixMilli()) {
		t.Fatalf("explain after run-now on a paused endpoint: %+v", hold)
	}
	producer := &engine.Principal{ProjectID: h.owner.ProjectID, Scope: wire.ScopeProducer, KeyPrefix: "rk_p"}
	_, err = h.e.RunNow(h.ctx, producer, j.ID)
	wantKind(t, "producer run-now", err, engine.KindForbidden)
	_, err = h.e.Bulk(h.ctx, producer, "run_now", []int64{j.ID})
	wantKind(t, "producer bulk run_now", err, engine.KindForbidden)
	res, err := h.e.Bulk(h.ctx, h.owner, "cancel", []int64{j.ID, 404})
	if err != nil || len(res.Done) != 1 || len(res.Failed) != 1 || res.Failed[0].ID != 404 || res.Failed[0].Err.Kind != engine.KindNotFound {
		t.Fatalf("bulk cancel: %v %+v", err, res)
	}
	all, _ := h.e.Audit(h.ctx, h.owner, "", 0, 100)
	if len(all) != 3 || all[0].Action != "bulk.cancel" || all[0].Target != "jobs" || !strings.Contains(all[0].Detail, "not acted on: 404") ||
		all[1].Action != "job.run_now" || all[1].Target != "job:"+itoa(j.ID) || all[2].Action != "endpoint.pause" {
		t.Fatalf("audit: %+v", all)
	}
	page, _ := h.e.Audit(h.ctx, h.owner, "", 0, 2)
	rest, _ := h.e.Audit(h.ctx, h.owner, "", page[1].ID, 2)
	if len(page) != 2 || len(rest) != 1 || rest[0].ID != all[2].ID {
		t.Fatalf("audit pages: %+v %+v", page, rest)
	}
	_, err = h.e.Audit(h.ctx, producer, "", 0, 10)
	wantKind(t, "producer audit", err, engine.KindForbidden)
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
