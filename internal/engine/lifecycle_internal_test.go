package engine

import (
	"strconv"
	"testing"

	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/wire"
)

func TestMoveJob(t *testing.T) {
	j := &store.Job{ID: 7, State: wire.JobRunning}
	if err := moveJob(j, wire.EventRetry, 1000); err != nil || j.State != wire.JobScheduled || j.UpdatedAt != 1000 || j.FinishedAt != 0 {
		t.Fatalf("retry: %v %+v", err, j)
	}
	if err := moveJob(j, wire.EventSucceed, 2000); err == nil {
		t.Fatal("a scheduled job must not succeed without a claim")
	}
	if j.State != wire.JobScheduled || j.UpdatedAt != 1000 {
		t.Fatalf("a refused transition changed the job: %+v", j)
	}
	if err := moveJob(j, wire.EventCancel, 3000); err != nil || j.State != wire.JobCancelled || j.FinishedAt != 3000 {
		t.Fatalf("cancel: %v %+v", err, j)
	}
	if err := moveJob(j, wire.EventCancel, 4000); err == nil {
		t.Fatal("a cancelled job is final")
	}
}

// TestWorkersNotedAreBounded: a key that claims under a new workerId every
// call cannot grow one node's notes past maxWorkersNoted between flushes;
// workers already noted keep being updated.
func TestWorkersNotedAreBounded(t *testing.T) {
	var e Engine
	for i := range maxWorkersNoted + 50 {
		e.noteWorker(1, "w-"+strconv.Itoa(i), seenClaim, int64(i+1))
	}
	if got := len(e.workers.m); got != maxWorkersNoted {
		t.Fatalf("%d workers noted, want the bound %d", got, maxWorkersNoted)
	}
	e.noteWorker(1, "w-0", seenHeartbeat, 99)
	if w := e.workers.m[workerKey{1, "w-0"}]; w.HeartbeatAt != 99 || w.ClaimAt != 1 {
		t.Fatalf("a noted worker was not updated: %+v", w)
	}
}
