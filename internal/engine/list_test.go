package engine_test

import (
	"testing"
	"time"

	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/wire"
)

// TestListJobsHoldsAndLastColumns: a list says what holds each scheduled
// job, as explain does for one job, and carries the last attempt's
// classification and the last failure's message, kept on the job row.
func TestListJobsHoldsAndLastColumns(t *testing.T) {
	h := newHarness(t)
	h.endpoint("api", `{"maxConcurrent":1}`)
	h.endpoint("free", `{"maxConcurrent":5}`)
	h.tool(`{"name":"call","version":"1","endpoint":"api"}`)
	h.tool(`{"name":"other","version":"1","endpoint":"free"}`)
	first := h.enqueue("call@1", nil)
	second := h.enqueue("call@1", nil)
	free := h.enqueue("other@1", nil)

	// The first job fails with a 503 and is retried later.
	c := h.claimOne("call@1")
	if c.Job.ID != first.ID {
		t.Fatalf("claimed %d, want %d", c.Job.ID, first.ID)
	}
	h.fail(c, 503, nil)
	// The second is claimed: api is at maxConcurrent now.
	running := h.claimOne("call@1")
	if running.Job.ID != second.ID {
		t.Fatalf("claimed %d, want %d", running.Job.ID, second.ID)
	}

	jobs, holds, _, err := h.e.ListJobs(h.ctx, h.owner, store.JobFilter{})
	if err != nil {
		t.Fatal(err)
	}
	byID := map[int64]int{}
	for i, j := range jobs {
		byID[j.ID] = i
	}
	for _, tc := range []struct {
		id   int64
		gate wire.Gate // "" for no hold (not scheduled)
	}{{first.ID, wire.GateDueTime}, {second.ID, ""}, {free.ID, wire.GateNone}} {
		i, ok := byID[tc.id]
		if !ok {
			t.Fatalf("job %d not listed", tc.id)
		}
		got := wire.Gate("")
		if holds[i] != nil {
			got = holds[i].Gate
		}
		if got != tc.gate {
			t.Errorf("job %d (%s): held by %q, want %q", tc.id, jobs[i].State, got, tc.gate)
		}
		if want := h.hold(tc.id); holds[i] != nil && *holds[i] != *want {
			t.Errorf("job %d: list says %+v, explain %+v", tc.id, *holds[i], *want)
		}
	}
	f := jobs[byID[first.ID]]
	if f.LastClassification != "server_error" || f.LastError == "" {
		t.Errorf("failed job: lastClassification %q, lastError %q; want server_error and a message", f.LastClassification, f.LastError)
	}
	if s := jobs[byID[second.ID]]; s.LastClassification != "" || s.LastError != "" {
		t.Errorf("running job without a finished attempt: lastClassification %q, lastError %q", s.LastClassification, s.LastError)
	}

	// Once due, the retried job is held by maxConcurrent, like explain says.
	h.clk.Advance(time.Hour)
	jobs, holds, _, err = h.e.ListJobs(h.ctx, h.owner, store.JobFilter{States: []wire.JobState{wire.JobScheduled}})
	if err != nil {
		t.Fatal(err)
	}
	for i, j := range jobs {
		want := h.hold(j.ID)
		if holds[i] == nil || *holds[i] != *want {
			t.Errorf("job %d: list says %+v, explain %+v", j.ID, holds[i], *want)
		}
		if j.ID == first.ID && holds[i].Gate != wire.GateMaxConcurrent {
			t.Errorf("job %d: held by %s, want max_concurrent", j.ID, holds[i].Gate)
		}
	}

	// A success keeps the last failure's message and sets the
	// classification.
	h.succeed(running)
	c = h.claimOne("call@1")
	h.succeed(c)
	j, _ := h.job(first.ID)
	if j.State != wire.JobSucceeded || j.LastClassification != "success" || j.LastError != f.LastError {
		t.Errorf("after success: %s, lastClassification %q, lastError %q (was %q)", j.State, j.LastClassification, j.LastError, f.LastError)
	}
}
