package engine_test

import (
	"testing"
	"time"

	"github.com/getratchet/ratchet/internal/store"
)

func TestRetentionPrunesFinishedJobs(t *testing.T) {
	h := newHarness(t)
	h.endpoint("api", `{}`)
	h.tool(`{"name":"call","version":"1","endpoint":"api"}`)
	old := h.enqueue("call@1", nil)
	h.succeed(h.claimOne("call@1"))
	h.clk.Advance(8 * 24 * time.Hour)
	keep := h.enqueue("call@1", nil) // scheduled: never pruned
	recent := h.enqueue("call@1", ptr(int64(1)))
	if _, err := h.e.Cancel(h.ctx, h.owner, recent.ID); err != nil {
		t.Fatal(err)
	}
	n, err := h.e.Prune(h.ctx)
	if err != nil || n != 1 {
		t.Fatalf("pruned %d (%v), want 1", n, err)
	}
	if _, _, _, err := h.e.Job(h.ctx, h.owner, old.ID); err == nil {
		t.Error("the week-old finished job is still there")
	}
	for _, id := range []int64{keep.ID, recent.ID} {
		if _, _, _, err := h.e.Job(h.ctx, h.owner, id); err != nil {
			t.Errorf("job %d was pruned: %v", id, err)
		}
	}
	var none []store.Attempt
	err = h.st.Read(h.ctx, func(q store.Queries) (err error) {
		none, err = q.AttemptList(h.ctx, old.ID)
		return err
	})
	if err != nil || len(none) != 0 {
		t.Errorf("attempts of the pruned job remain: %d (%v)", len(none), err)
	}
}
