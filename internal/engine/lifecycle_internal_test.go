package engine

import (
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
