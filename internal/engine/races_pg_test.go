package engine_test

import (
	"context"
	"sync"
	"testing"

	"github.com/getratchet/ratchet/internal/classify"
	"github.com/getratchet/ratchet/internal/engine"
	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/internal/store/postgres"
	"github.com/getratchet/ratchet/internal/store/postgres/pgtest"
	"github.com/getratchet/ratchet/wire"
)

// Report batches read their jobs without locks and write them only if
// unchanged since (store.JobGuard); a batch that loses a race runs again.
// These tests race reports against each other and against cancels on a
// real PostgreSQL, where transactions do run at once.

func newPGHarness(t *testing.T) *harness {
	t.Helper()
	st, err := postgres.Open(context.Background(), pgtest.URL(t), postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	h := newHarnessOn(t, st)
	h.endpoint("stripe", `{"preset":"STANDARD","maxConcurrent":1000}`)
	h.tool(`{"name":"charge","version":"v1","endpoint":"stripe"}`)
	return h
}

func (h *harness) claimAll(n int) []engine.Claimed {
	h.t.Helper()
	for range n {
		h.enqueue("charge@v1", nil)
	}
	cs := h.claim([]string{"charge@v1"}, n)
	if len(cs) != n {
		h.t.Fatalf("claimed %d jobs, want %d", len(cs), n)
	}
	return cs
}

func reports(cs []engine.Claimed, r classify.Report) []engine.ReportRequest {
	out := make([]engine.ReportRequest, len(cs))
	for i, c := range cs {
		out[i] = engine.ReportRequest{JobID: c.Job.ID, LeaseToken: c.LeaseToken, Report: r}
	}
	return out
}

// TestDuplicateReportsRacePostgres reports the same leases from two
// workers at once: each attempt is finished once, by one of them; the
// other sees a duplicate.
func TestDuplicateReportsRacePostgres(t *testing.T) {
	h := newPGHarness(t)
	for round := range 5 {
		cs := h.claimAll(200)
		// Half the batch in each order, so the two overlap in both.
		a := reports(cs, classifyOK)
		b := make([]engine.ReportRequest, len(a))
		for i := range a {
			b[len(a)-1-i] = a[i]
		}
		var wg sync.WaitGroup
		results := make([][]engine.BatchItem, 2)
		errs := make([]error, 2)
		for w, batch := range [][]engine.ReportRequest{a, b} {
			wg.Go(func() { results[w], errs[w] = h.e.ReportBatch(h.ctx, h.owner, batch) })
		}
		wg.Wait()
		firsts := map[int64]int{}
		for w := range 2 {
			if errs[w] != nil {
				t.Fatalf("round %d: report %d: %v", round, w, errs[w])
			}
			for _, it := range results[w] {
				if it.Err != nil {
					t.Fatalf("round %d: report %d item: %v", round, w, it.Err)
				}
				if !it.Duplicate {
					firsts[it.Job.ID]++
				}
			}
		}
		for _, c := range cs {
			if firsts[c.Job.ID] != 1 {
				t.Errorf("round %d: job %d was first reported %d times, want once", round, c.Job.ID, firsts[c.Job.ID])
			}
			j, as := h.job(c.Job.ID)
			if j.State != wire.JobSucceeded || len(as) != 1 || as[0].Outcome != "succeeded" {
				t.Errorf("round %d: job %d is %s with attempts %+v, want succeeded with one attempt", round, c.Job.ID, j.State, as)
			}
		}
	}
}

// TestReportCancelRacePostgres reports retryable failures (429, which leaves the circuit alone) while the same
// jobs are cancelled: whichever commits first, no cancel is lost (a report
// that wrote over the cancel request would schedule the job again).
func TestReportCancelRacePostgres(t *testing.T) {
	h := newPGHarness(t)
	for round := range 5 {
		cs := h.claimAll(100)
		var wg sync.WaitGroup
		var reportErr error
		wg.Go(func() {
			items, err := h.e.ReportBatch(h.ctx, h.owner, reports(cs, classify.Report{HTTPStatus: 429}))
			for _, it := range items {
				if it.Err != nil && err == nil {
					err = it.Err
				}
			}
			reportErr = err
		})
		wg.Go(func() {
			for _, c := range cs {
				if _, err := h.e.Cancel(h.ctx, h.owner, c.Job.ID); err != nil {
					t.Errorf("cancel job %d: %v", c.Job.ID, err)
				}
			}
		})
		wg.Wait()
		if reportErr != nil {
			t.Fatalf("round %d: report: %v", round, reportErr)
		}
		for _, c := range cs {
			j, as := h.job(c.Job.ID)
			if j.State != wire.JobCancelled || len(as) != 1 || as[0].FinishedAt == 0 {
				t.Errorf("round %d: job %d is %s (cancel requested %v) with attempts %+v, want cancelled with its attempt finished",
					round, c.Job.ID, j.State, j.CancelRequested, as)
			}
		}
	}
}

// TestOptimisticClaimsHoldMaxConcurrentPostgres has eight claimers take
// jobs of an endpoint with room for seven at once, on PostgreSQL, where
// claims go optimistic (claim, then lock the endpoint and confirm). After
// every claim the committed running count of the endpoint must be within
// maxConcurrent, and every job is handed out exactly once.
func TestOptimisticClaimsHoldMaxConcurrentPostgres(t *testing.T) {
	h := newPGHarness(t)
	ep := h.endpoint("narrow", `{"preset":"STANDARD","maxConcurrent":7}`)
	h.tool(`{"name":"slow","version":"v1","endpoint":"narrow"}`)
	const n = 300
	for range n {
		h.enqueue("slow@v1", nil)
	}
	var mu sync.Mutex
	seen := map[int64]int{}
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			idle := 0
			for idle < 50 {
				cs, err := h.e.Claim(h.ctx, h.owner, engine.ClaimRequest{WorkerID: "w" + string(rune('a'+w)), Tools: []string{"slow@v1"}, Max: 5})
				if err != nil {
					t.Errorf("claim: %v", err)
					return
				}
				if len(cs) == 0 {
					idle++
					continue
				}
				idle = 0
				err = h.st.Read(h.ctx, func(q store.Queries) error {
					running, err := q.CountRunning(h.ctx, &store.CountRunningParams{EndpointID: ep.ID, Limit: 1000})
					if err == nil && running > ep.MaxConcurrent {
						t.Errorf("%d jobs of the endpoint running after a claim, maxConcurrent %d", running, ep.MaxConcurrent)
					}
					return err
				})
				if err != nil {
					t.Errorf("count: %v", err)
				}
				mu.Lock()
				for _, c := range cs {
					seen[c.Job.ID]++
				}
				mu.Unlock()
				items, err := h.e.ReportBatch(h.ctx, h.owner, reports(cs, classifyOK))
				if err != nil {
					t.Errorf("report: %v", err)
					return
				}
				for _, it := range items {
					if it.Err != nil {
						t.Errorf("report item: %v", it.Err)
					}
				}
			}
		})
	}
	wg.Wait()
	if len(seen) != n {
		t.Errorf("%d of %d jobs were claimed", len(seen), n)
	}
	for id, k := range seen {
		if k != 1 {
			t.Errorf("job %d was handed out %d times", id, k)
		}
	}
}

// TestConcurrentReplaysReplayOncePostgres is TestConcurrentReplaysReplayOnce
// on PostgreSQL.
func TestConcurrentReplaysReplayOncePostgres(t *testing.T) {
	st, err := postgres.Open(context.Background(), pgtest.URL(t), postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	concurrentReplays(t, failureFixtureOn(t, newHarnessOn(t, st)))
}
