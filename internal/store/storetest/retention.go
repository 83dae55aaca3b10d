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

// testPrunedClaims: JobsPrune keeps the count of the claims whose
// attempts it deletes, per endpoint, key and quarter hour of the claim,
// so PrunedClaimsCount and FlowKeysPrunedClaims (which budgets add to the
// attempts they count) still see them; counts older than the keep before
// the cutoff are forgotten.
func testPrunedClaims(t *testing.T, s store.Store) {
	ctx := t.Context()
	f := newFixture(t, s)
	const q1, q2 = 10 * store.PrunedClaimsBucketMs, 11 * store.PrunedClaimsBucketMs // two quarter hours
	var js []*store.Job
	for i := range 4 {
		j := job(f.p, f.ep, f.tool, 1)
		j.FlowKey = []string{"a", "a", "b", ""}[i]
		js = append(js, j)
	}
	f.insert(t, s, js...)
	claim(t, s, "w", "l", q1+5, js[0].ID, js[2].ID, js[3].ID)
	claim(t, s, "w", "l", q2+7, js[1].ID)
	for _, j := range js {
		setState(t, s, getJob(t, s, j.ID), wire.JobSucceeded, q2+100)
	}
	counts := func(since int64) (int64, map[string]int64) {
		t.Helper()
		var n int64
		var keys map[string]int64
		read(t, s, func(q store.Queries) (err error) {
			if n, err = q.PrunedClaimsCount(ctx, &store.PrunedClaimsCountParams{EndpointID: f.ep.ID, Since: since}); err != nil {
				return err
			}
			keys, err = q.FlowKeysPrunedClaims(ctx, f.ep.ID, []string{"a", "b", "c"}, since)
			return err
		})
		return n, keys
	}
	if n, keys := counts(0); n != 0 || len(keys) != 0 {
		t.Fatalf("before pruning: %d, %v", n, keys)
	}
	tx(t, s, func(q store.Queries) error {
		_, err := q.JobsPrune(ctx, &store.JobsPruneParams{FinishedBefore: q2 + 101, Limit: 100})
		return err
	})
	if n, keys := counts(q1); n != 4 || keys["a"] != 2 || keys["b"] != 1 || len(keys) != 2 {
		t.Errorf("since the first quarter hour: %d, %v; want 4, a 2 and b 1", n, keys)
	}
	if n, keys := counts(q2); n != 1 || keys["a"] != 1 || len(keys) != 1 {
		t.Errorf("since the second quarter hour: %d, %v; want 1, a 1", n, keys)
	}
	// A later prune adds to the counts, and forgets those older than the
	// keep before its cutoff.
	late := job(f.p, f.ep, f.tool, 1)
	late.FlowKey = "a"
	f.insert(t, s, late)
	claim(t, s, "w", "l", q2+9, late.ID)
	setState(t, s, getJob(t, s, late.ID), wire.JobSucceeded, q2+200)
	tx(t, s, func(q store.Queries) error {
		_, err := q.JobsPrune(ctx, &store.JobsPruneParams{FinishedBefore: q2 + 201, Limit: 100})
		return err
	})
	if n, keys := counts(q2); n != 2 || keys["a"] != 2 {
		t.Errorf("after a second prune: %d, %v; want 2, a 2", n, keys)
	}
	tx(t, s, func(q store.Queries) error {
		_, err := q.JobsPrune(ctx, &store.JobsPruneParams{FinishedBefore: q2 + store.PrunedClaimsKeepMs, Limit: 100})
		return err
	})
	if n, _ := counts(0); n != 2 {
		t.Errorf("after the keep: %d, want the second quarter hour's 2 (the first's forgotten)", n)
	}
}
