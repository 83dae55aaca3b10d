package storetest

import (
	"slices"
	"testing"

	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/wire"
)

func testJobsPrune(t *testing.T, s store.Store) {
	ctx := t.Context()
	f := newFixture(t, s)
	var js []*store.Job
	for range 7 {
		js = append(js, job(f.p, f.ep, f.tool, 1))
	}
	f.insert(t, s, js...)
	claim(t, s, "w", "l", 50, js[0].ID, js[1].ID, js[2].ID, js[3].ID, js[4].ID)
	reload := func(j *store.Job) *store.Job { return getJob(t, s, j.ID) }
	setState(t, s, reload(js[0]), wire.JobSucceeded, 100) // pruned
	setState(t, s, reload(js[1]), wire.JobFailed, 200)    // pruned
	setState(t, s, reload(js[2]), wire.JobExhausted, 300) // pruned
	setState(t, s, reload(js[3]), wire.JobCancelled, 1000)
	// js[4] running, js[5] scheduled, js[6] cancelled before it ran.
	setState(t, s, js[6], wire.JobCancelled, 400) // pruned
	var n int64
	tx(t, s, func(q store.Queries) (err error) {
		n, err = q.JobsPrune(ctx, &store.JobsPruneParams{FinishedBefore: 1000, Limit: 2})
		return err
	})
	if n != 2 {
		t.Fatalf("JobsPrune(limit 2) = %d, want 2", n)
	}
	tx(t, s, func(q store.Queries) (err error) {
		n, err = q.JobsPrune(ctx, &store.JobsPruneParams{FinishedBefore: 1000, Limit: 100})
		return err
	})
	if n != 2 {
		t.Fatalf("second JobsPrune = %d, want the remaining 2", n)
	}
	tx(t, s, func(q store.Queries) (err error) {
		n, err = q.JobsPrune(ctx, &store.JobsPruneParams{FinishedBefore: 1000, Limit: 100})
		return err
	})
	if n != 0 {
		t.Fatalf("third JobsPrune = %d, want 0", n)
	}
	read(t, s, func(q store.Queries) error {
		left, err := q.JobList(ctx, store.JobFilter{ProjectID: f.p.ID})
		if err != nil {
			return err
		}
		if want := []int64{js[5].ID, js[4].ID, js[3].ID}; !slices.Equal(ids(left), want) {
			t.Errorf("jobs left after pruning = %v, want %v (scheduled, running, finished at the cutoff)", ids(left), want)
		}
		for _, j := range js[:3] {
			as, err := q.AttemptList(ctx, j.ID)
			if err != nil {
				return err
			}
			if len(as) != 0 {
				t.Errorf("pruned job %d still has attempts %+v", j.ID, as)
			}
		}
		for _, j := range js[3:5] {
			as, err := q.AttemptList(ctx, j.ID)
			if err != nil {
				return err
			}
			if len(as) != 1 {
				t.Errorf("kept job %d has %d attempts, want 1", j.ID, len(as))
			}
		}
		return nil
	})
}
