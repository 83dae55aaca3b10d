package engine_test

import (
	"errors"
	"testing"

	"github.com/getratchet/ratchet/internal/classify"
	"github.com/getratchet/ratchet/internal/engine"
	"github.com/getratchet/ratchet/wire"
)

// TestReportBatchInOrder checks that a batch decides its reports in order,
// each seeing what the ones before it did, as separate reports would: a
// repeated report is a harmless duplicate, a contradicting one a conflict,
// and an unknown job or stale lease fails alone.
func TestReportBatchInOrder(t *testing.T) {
	h := newHarness(t)
	h.endpoint("stripe", seedEndpoint)
	h.tool(`{"name":"charge","version":"1","endpoint":"stripe"}`)
	for range 3 {
		h.enqueue("charge@1", nil)
	}
	cs := h.claim([]string{"charge@1"}, 3)
	if len(cs) != 3 {
		t.Fatalf("claimed %d jobs, want 3", len(cs))
	}
	ok, retry := classifyOK, classify.Report{HTTPStatus: 503}
	rs := []engine.ReportRequest{
		{JobID: cs[0].Job.ID, LeaseToken: cs[0].LeaseToken, Report: ok},
		{JobID: cs[1].Job.ID, LeaseToken: cs[1].LeaseToken, Report: retry},
		{JobID: cs[0].Job.ID, LeaseToken: cs[0].LeaseToken, Report: ok},    // duplicate
		{JobID: cs[1].Job.ID, LeaseToken: cs[1].LeaseToken, Report: retry}, // duplicate of a retry
		{JobID: cs[0].Job.ID, LeaseToken: cs[0].LeaseToken, Report: retry}, // contradicts
		{JobID: cs[2].Job.ID, LeaseToken: "stale", Report: ok},
		{JobID: cs[2].Job.ID + 100, LeaseToken: cs[2].LeaseToken, Report: ok},
		{JobID: cs[2].Job.ID, LeaseToken: cs[2].LeaseToken, Report: ok},
	}
	out, err := h.e.ReportBatch(h.ctx, h.owner, rs)
	if err != nil {
		t.Fatal(err)
	}
	kind := func(err error) engine.Kind {
		var ee *engine.Error
		if errors.As(err, &ee) {
			return ee.Kind
		}
		return 0
	}
	want := []struct {
		kind      engine.Kind
		duplicate bool
		state     wire.JobState
	}{
		{0, false, wire.JobSucceeded},
		{0, false, wire.JobScheduled},
		{0, true, wire.JobSucceeded},
		{0, true, wire.JobScheduled},
		{engine.KindConflict, false, ""},
		{engine.KindConflict, false, ""},
		{engine.KindNotFound, false, ""},
		{0, false, wire.JobSucceeded},
	}
	for i, w := range want {
		it := out[i]
		if kind(it.Err) != w.kind || (it.Err != nil) != (w.kind != 0) {
			t.Errorf("report %d: error %v, want kind %d", i, it.Err, w.kind)
			continue
		}
		if it.Err == nil && (it.Duplicate != w.duplicate || it.Job.State != w.state) {
			t.Errorf("report %d: duplicate %v state %s, want %v %s", i, it.Duplicate, it.Job.State, w.duplicate, w.state)
		}
	}
	// What was stored is what the results say.
	for i, state := range []wire.JobState{wire.JobSucceeded, wire.JobScheduled, wire.JobSucceeded} {
		j, as := h.job(cs[i].Job.ID)
		if j.State != state || len(as) != 1 || as[0].FinishedAt == 0 {
			t.Errorf("job %d: %s with attempts %+v, want %s with one finished attempt", i, j.State, as, state)
		}
	}
	if _, as := h.job(cs[1].Job.ID); as[0].Outcome != "failed" || as[0].NextDueAt == 0 {
		t.Errorf("retried attempt %+v", as[0])
	}
}
