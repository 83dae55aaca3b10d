package engine_test

import (
	"testing"
	"time"

	"github.com/getratchet/ratchet/wire"
)

// alertKinds lists the kinds of the project's queued and sent alerts,
// newest first.
func (h *harness) alertKinds() []wire.AlertKind {
	h.t.Helper()
	ds, err := h.e.AlertDeliveries(h.ctx, h.owner, 100)
	if err != nil {
		h.t.Fatal(err)
	}
	var out []wire.AlertKind
	for _, d := range ds {
		out = append(out, d.Alert.Kind)
	}
	return out
}

// testAlertChecks: a pause alerts once it lasts pausedAfterMs, once per
// pause; the jobs exhausted in a closed window alert once, counted; a
// failure rate at the threshold of enough attempts alerts once; a
// project without sinks gets nothing queued.
func testAlertChecks(t *testing.T, h *harness) {
	h.clk.Set(h.clk.Now().Truncate(10 * time.Minute))
	h.endpoint("svc", `{"preset":"CUSTOM","maxAttempts":1,"initialDelayMs":1000,"multiplier":2,"maxDelayMs":60000,"jitterPercent":0,"circuitFailureThreshold":100}`)
	h.tool(`{"name":"call","version":"1","endpoint":"svc"}`)
	if _, err := h.e.PauseEndpoint(h.ctx, h.owner, "svc", "maintenance"); err != nil {
		t.Fatal(err)
	}
	h.clk.Advance(20 * time.Minute)
	if err := h.e.CheckAlerts(h.ctx); err != nil {
		t.Fatal(err)
	}
	if k := h.alertKinds(); len(k) != 0 {
		t.Fatalf("a project without sinks got alerts %v", k)
	}
	if _, err := h.e.CreateAlertSink(h.ctx, h.owner, wire.AlertSinkCreate{Name: "pager", Kind: wire.SinkSlack, URL: "https://hooks.example.com/x"}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.e.SetAlertSettings(h.ctx, h.owner, wire.AlertSettings{PausedAfterMs: 30 * 60_000, FailureRatePercent: 50, FailureRateMin: 3,
		WindowMs: 10 * 60_000, MaxPerWindow: 5}); err != nil {
		t.Fatal(err)
	}
	if err := h.e.CheckAlerts(h.ctx); err != nil {
		t.Fatal(err)
	}
	if k := h.alertKinds(); len(k) != 0 {
		t.Fatalf("a pause of 20 minutes alerted (pausedAfterMs 30 minutes): %v", k)
	}
	h.clk.Advance(11 * time.Minute)
	for range 2 {
		if err := h.e.CheckAlerts(h.ctx); err != nil {
			t.Fatal(err)
		}
	}
	if k := h.alertKinds(); len(k) != 1 || k[0] != wire.AlertPausedLong {
		t.Fatalf("after 31 minutes paused: %v, want one paused_long", k)
	}
	if _, err := h.e.ResumeEndpoint(h.ctx, h.owner, "svc"); err != nil {
		t.Fatal(err)
	}
	h.clk.Set(h.clk.Now().Truncate(10 * time.Minute).Add(10 * time.Minute)) // a new window
	for range 3 {
		h.clk.Advance(time.Second) // the resume started the recovery ramp: a claim a second
		h.enqueue("call@1", nil)
		h.fail(h.claimOne("call@1"), 500, nil) // exhausted: one attempt
	}
	h.clk.Advance(10*time.Minute + 2*time.Minute) // the window closed and its minutes rolled up
	if _, err := h.e.RollUpHistory(h.ctx); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := h.e.CheckAlerts(h.ctx); err != nil {
			t.Fatal(err)
		}
	}
	ds, err := h.e.AlertDeliveries(h.ctx, h.owner, 100)
	if err != nil {
		t.Fatal(err)
	}
	got := map[wire.AlertKind]int64{}
	for _, d := range ds {
		got[d.Alert.Kind] = d.Alert.Count
	}
	if len(ds) != 3 || got[wire.AlertJobsExhausted] != 3 || got[wire.AlertFailureRate] != 3 {
		t.Fatalf("alerts %v, want paused_long, and jobs_exhausted and failure_rate counting 3", got)
	}
}

func TestAlertChecks(t *testing.T)         { testAlertChecks(t, newHarness(t)) }
func TestAlertChecksPostgres(t *testing.T) { testAlertChecks(t, newPGHarnessBare(t)) }

// TestAlertsPruned: the retention prune deletes alerts older than the
// retention whose deliveries are done, and keeps one still pending.
func TestAlertsPruned(t *testing.T) {
	h := newHarness(t)
	if _, err := h.e.CreateAlertSink(h.ctx, h.owner, wire.AlertSinkCreate{Name: "pager", Kind: wire.SinkSlack, URL: "https://hooks.example.com/x"}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.e.TestAlert(h.ctx, h.owner, "pager"); err != nil {
		t.Fatal(err)
	}
	reqs, err := h.e.DueAlerts(h.ctx, 10)
	if err != nil || len(reqs) != 1 {
		t.Fatalf("due: %v %d", err, len(reqs))
	}
	if err := h.e.AlertSent(h.ctx, &reqs[0], 200, "", 0); err != nil {
		t.Fatal(err)
	}
	if _, err := h.e.TestAlert(h.ctx, h.owner, "pager"); err != nil { // stays pending
		t.Fatal(err)
	}
	h.clk.Advance(8 * 24 * time.Hour)
	if _, err := h.e.Prune(h.ctx); err != nil {
		t.Fatal(err)
	}
	if k := h.alertKinds(); len(k) != 1 {
		t.Fatalf("after pruning: %v, want the pending test alert only", k)
	}
}
