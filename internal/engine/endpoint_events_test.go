package engine_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/wire"
)

// testEndpointEventLog: each transition writes one event in its own
// transaction, with the circuit's arithmetic: failures open the circuit
// (failures counted, threshold, opened at, next probe, jobs held), a claim
// after the open time half-opens it (the probe's job), a failed probe
// opens it again, a succeeded probe closes it; pause and resume, and an
// open and close by hand, name the actor. A report that changes no state
// writes nothing. Listing pages newest first and honours since.
func testEndpointEventLog(t *testing.T, h *harness) {
	h.endpoint("flaky", `{"preset":"STANDARD","circuitFailureThreshold":2,"circuitOpenMs":10000}`)
	h.tool(`{"name":"call","version":"1","endpoint":"flaky"}`)
	for range 5 {
		h.enqueue("call@1", nil)
	}
	start := h.clk.Now().UnixMilli()
	h.fail(h.claimOne("call@1"), 503, nil) // 1 of 2: no event
	if evs := h.events("flaky", 0); len(evs) != 0 {
		t.Fatalf("a failure below the threshold wrote %+v", evs)
	}
	h.fail(h.claimOne("call@1"), 503, nil) // opens
	opened := h.clk.Now().UnixMilli()
	h.clk.Advance(10 * time.Second)
	probe := h.claimOne("call@1") // half-opens
	h.fail(probe, 503, nil)       // opens again
	h.clk.Advance(10 * time.Second)
	probe2 := h.claimOne("call@1")
	h.succeed(probe2) // closes
	if _, err := h.e.PauseEndpoint(h.ctx, h.owner, "flaky", "incident"); err != nil {
		t.Fatal(err)
	}
	h.clk.Advance(time.Minute)
	if _, err := h.e.ResumeEndpoint(h.ctx, h.owner, "flaky"); err != nil {
		t.Fatal(err)
	}
	if _, err := h.e.OpenCircuit(h.ctx, h.owner, "flaky"); err != nil {
		t.Fatal(err)
	}
	if _, err := h.e.CloseCircuit(h.ctx, h.owner, "flaky"); err != nil {
		t.Fatal(err)
	}
	if _, err := h.e.CloseCircuit(h.ctx, h.owner, "flaky"); err != nil { // closed already: no event
		t.Fatal(err)
	}
	evs := h.events("flaky", 0)
	slices.Reverse(evs)
	var kinds []wire.EndpointEventKind
	for _, ev := range evs {
		kinds = append(kinds, ev.Kind)
	}
	want := []wire.EndpointEventKind{wire.EndpointCircuitOpened, wire.EndpointCircuitHalfOpen, wire.EndpointCircuitOpened, wire.EndpointCircuitHalfOpen,
		wire.EndpointCircuitClosed, wire.EndpointRecoveryStarted, wire.EndpointPaused, wire.EndpointResumed, wire.EndpointRecoveryStarted,
		wire.EndpointCircuitOpened, wire.EndpointCircuitClosed, wire.EndpointRecoveryStarted}
	if !slices.Equal(kinds, want) {
		t.Fatalf("events %v, want %v", kinds, want)
	}
	// Held: the three never claimed and the first failure's retry; the
	// job whose report opened the circuit is written after the event.
	o := evs[0]
	if o.Failures != 2 || o.Threshold != 2 || o.OpenedAt != opened || o.NextProbeAt != opened+10_000 || o.HeldJobs != 4 || o.Actor != "" ||
		o.At != opened || !strings.Contains(o.Detail, "after 2 consecutive counted failures (threshold 2)") {
		t.Errorf("circuit_opened: %+v", o)
	}
	if ho := evs[1]; ho.ProbeJob != probe.Job.ID || ho.OpenedAt != 0 || ho.HeldJobs != 4 {
		t.Errorf("circuit_half_open: %+v, want probe job %d, 4 held", ho, probe.Job.ID)
	}
	if re := evs[2]; !strings.Contains(re.Detail, "half-open probe failed") || re.NextProbeAt != re.At+10_000 {
		t.Errorf("reopened: %+v", re)
	}
	if c := evs[4]; c.Failures != 0 || c.Actor != "" {
		t.Errorf("circuit_closed: %+v", c)
	}
	if p, r := evs[6], evs[7]; p.Actor != "bootstrap owner" || !strings.Contains(p.Detail, "incident") || r.Actor != "bootstrap owner" || r.Facts["pausedMs"] != 60_000 {
		t.Errorf("paused %+v, resumed %+v", p, r)
	}
	if bo, bc := evs[9], evs[10]; bo.Actor != "bootstrap owner" || !strings.Contains(bo.Detail, "by hand") || bc.Actor != "bootstrap owner" {
		t.Errorf("by hand: %+v %+v", bo, bc)
	}
	for _, i := range []int{5, 8, 11} { // the closed circuit's, the resume's and the hand close's ramps
		if rs := evs[i]; rs.Facts["ratePerSecondMilli"] == 0 || !strings.Contains(rs.Detail, "started to recover at") {
			t.Errorf("recovery_started %d: %+v", i, rs)
		}
	}
	if got := h.events("flaky", h.clk.Now().UnixMilli()); len(got) != 5 {
		t.Errorf("since now: %d events, want the last 5 (resumed and its ramp, opened and closed by hand and its ramp)", len(got))
	}
	page, err := h.e.EndpointEvents(h.ctx, h.owner, "flaky", start, 0, 3)
	if err != nil || len(page) != 3 || page[0].ID != evs[11].ID {
		t.Fatalf("first page: %v %+v", err, page)
	}
	if next, _ := h.e.EndpointEvents(h.ctx, h.owner, "flaky", 0, page[2].ID, 100); len(next) != 9 || next[0].ID != evs[8].ID {
		t.Errorf("second page: %+v", next)
	}
	if _, err := h.e.EndpointEvents(h.ctx, h.owner, "nope", 0, 0, 10); err == nil {
		t.Error("an unknown endpoint listed events")
	}
}

func (h *harness) events(name string, since int64) []store.EndpointEvent {
	h.t.Helper()
	evs, err := h.e.EndpointEvents(h.ctx, h.owner, name, since, 0, 500)
	if err != nil {
		h.t.Fatal(err)
	}
	return evs
}

func TestEndpointEventLog(t *testing.T)         { testEndpointEventLog(t, newHarness(t)) }
func TestEndpointEventLogPostgres(t *testing.T) { testEndpointEventLog(t, newPGHarnessBare(t)) }

// TestEndpointEventsPruned: the retention prune deletes events older than
// the retention (at least a day) and keeps newer ones.
func TestEndpointEventsPruned(t *testing.T) {
	h := newHarness(t)
	h.endpoint("svc", `{"preset":"STANDARD"}`)
	if _, err := h.e.PauseEndpoint(h.ctx, h.owner, "svc", ""); err != nil {
		t.Fatal(err)
	}
	h.clk.Advance(8 * 24 * time.Hour)
	if _, err := h.e.ResumeEndpoint(h.ctx, h.owner, "svc"); err != nil {
		t.Fatal(err)
	}
	if _, err := h.e.Prune(h.ctx); err != nil {
		t.Fatal(err)
	}
	// Kept: the resume and the ramp it started.
	if evs := h.events("svc", 0); len(evs) != 2 || evs[1].Kind != wire.EndpointResumed || evs[0].Kind != wire.EndpointRecoveryStarted {
		t.Fatalf("after pruning (retention 7 days): %+v", evs)
	}
}
