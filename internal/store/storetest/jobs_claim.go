package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/wire"
)

func testDueEndpoints(t *testing.T, s store.Store) {
	ctx := t.Context()
	f := newFixture(t, s)
	ep2 := newEndpoint(t, s, f.p.ID, "openai")
	ep3 := newEndpoint(t, s, f.p.ID, "slack")
	chat := newTool(t, s, f.p.ID, ep2.ID, "chat", "v1")
	post := newTool(t, s, f.p.ID, ep3.ID, "post", "v1")
	running := job(f.p, f.ep, f.tool, 100)
	f.insert(t, s, job(f.p, ep2, chat, 1000), job(f.p, ep3, post, 5000), running)
	setState(t, s, running, wire.JobRunning, 0)
	cases := []struct {
		name  string
		tools []int64
		now   int64
		want  []int64
	}{
		{"due at now is due", []int64{f.tool.ID, chat.ID, post.ID}, 1000, []int64{ep2.ID}},
		{"all due", []int64{f.tool.ID, chat.ID, post.ID}, 5000, []int64{ep2.ID, ep3.ID}},
		{"tool filter", []int64{f.tool.ID, post.ID}, 9000, []int64{ep3.ID}},
		{"none due", []int64{chat.ID, post.ID}, 999, nil},
		{"no tools", nil, 9000, nil},
	}
	read(t, s, func(q store.Queries) error {
		for _, c := range cases {
			got, err := q.DueEndpoints(ctx, &store.DueEndpointsParams{ToolIDs: c.tools, Now: c.now})
			if err != nil {
				return err
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("DueEndpoints %s = %v, want %v", c.name, got, c.want)
			}
		}
		return nil
	})
}

func testJobsClaimable(t *testing.T, s store.Store) {
	ctx := t.Context()
	f := newFixture(t, s)
	v2 := newTool(t, s, f.p.ID, f.ep.ID, "charge", "v2")
	ep2 := newEndpoint(t, s, f.p.ID, "openai")
	chat := newTool(t, s, f.p.ID, ep2.ID, "chat", "v1")
	// Inserted out of due order; b and c tie on due time (id breaks it).
	a, b, c, d := job(f.p, f.ep, f.tool, 3000), job(f.p, f.ep, v2, 1000), job(f.p, f.ep, f.tool, 1000), job(f.p, f.ep, f.tool, 2000)
	future, elsewhere, running := job(f.p, f.ep, f.tool, 9000), job(f.p, ep2, chat, 1), job(f.p, f.ep, f.tool, 1)
	f.insert(t, s, a, b, c, d, future, elsewhere, running)
	setState(t, s, running, wire.JobRunning, 0)
	all := []int64{f.tool.ID, v2.ID, chat.ID}
	cases := []struct {
		name  string
		tools []int64
		now   int64
		limit int
		want  []int64
	}{
		{"due order then id", all, 5000, 10, []int64{b.ID, c.ID, d.ID, a.ID}},
		{"limit", all, 5000, 2, []int64{b.ID, c.ID}},
		{"due at now", all, 2000, 10, []int64{b.ID, c.ID, d.ID}},
		{"tool filter", []int64{f.tool.ID}, 5000, 10, []int64{c.ID, d.ID, a.ID}},
		{"limit zero", all, 5000, 0, nil},
		{"no tools", nil, 5000, 10, nil},
	}
	tx(t, s, func(q store.Queries) error {
		for _, cs := range cases {
			got, err := q.JobsClaimable(ctx, &store.JobsClaimableParams{EndpointID: f.ep.ID, ToolIDs: cs.tools, Now: cs.now, Limit: cs.limit})
			if err != nil {
				return err
			}
			if !slices.Equal(ids(got), cs.want) {
				t.Errorf("JobsClaimable %s = %v, want %v", cs.name, ids(got), cs.want)
			}
		}
		got, err := q.JobsClaimable(ctx, &store.JobsClaimableParams{EndpointID: f.ep.ID, ToolIDs: all, Now: 5000, Limit: 1})
		if err != nil {
			return err
		}
		if len(got) == 1 {
			sameJob(t, "claimable job", &got[0], b)
		}
		return nil
	})
}

func testJobsClaim(t *testing.T, s store.Store) {
	ctx := t.Context()
	f := newFixture(t, s)
	a, b, c := job(f.p, f.ep, f.tool, 1000), job(f.p, f.ep, f.tool, 1000), job(f.p, f.ep, f.tool, 1000)
	b.TimeoutMs = 5000
	f.insert(t, s, a, b, c)
	claim(t, s, "w-1", "lease-1", 2000, a.ID, b.ID)
	for _, want := range []struct {
		j      *store.Job
		expiry int64
	}{{a, 32_000}, {b, 7000}} {
		got := getJob(t, s, want.j.ID)
		if got.State != wire.JobRunning || got.Attempt != 1 || got.LeaseToken != "lease-1" || got.LeaseExpiresAt != want.expiry ||
			got.WorkerID != "w-1" || got.UpdatedAt != 2000 || got.DueAt != 1000 {
			t.Errorf("claimed job %d = state %s attempt %d lease %q until %d worker %q updated %d due %d; want running, 1, lease-1, %d, w-1, 2000, 1000",
				got.ID, got.State, got.Attempt, got.LeaseToken, got.LeaseExpiresAt, got.WorkerID, got.UpdatedAt, got.DueAt, want.expiry)
		}
	}
	if got := getJob(t, s, c.ID); got.State != wire.JobScheduled || got.Attempt != 0 {
		t.Errorf("unclaimed job changed: %+v", got)
	}
	read(t, s, func(q store.Queries) error {
		as, err := q.AttemptList(ctx, a.ID)
		if err != nil {
			return err
		}
		if len(as) != 1 {
			t.Fatalf("attempts of a claimed job = %d, want 1", len(as))
		}
		if want := (store.Attempt{JobID: a.ID, Number: 1, EndpointID: f.ep.ID, WorkerID: "w-1", LeaseToken: "lease-1", ClaimedAt: 2000}); as[0] != want {
			t.Errorf("attempt row = %+v, want %+v", as[0], want)
		}
		as, err = q.AttemptList(ctx, c.ID)
		if err != nil {
			return err
		}
		if len(as) != 0 {
			t.Errorf("unclaimed job has attempts %+v", as)
		}
		return nil
	})
	// Claiming a job that is no longer scheduled is a conflict, and the
	// whole claim is refused.
	txErr(t, s, "JobsClaim of a running job", store.ErrConflict, func(q store.Queries) error {
		return q.JobsClaim(ctx, &store.JobsClaimParams{IDs: []int64{c.ID, a.ID}, WorkerID: "w-2", LeaseToken: "lease-2", Now: 3000})
	})
	if got := getJob(t, s, c.ID); got.State != wire.JobScheduled {
		t.Errorf("job %d was claimed by a refused claim: %+v", c.ID, got)
	}
	// Its attempt finished, rescheduled and claimed again: attempt 2 is
	// another row.
	reschedule(t, s, a.ID, 4000)
	claim(t, s, "w-3", "lease-3", 4000, a.ID)
	read(t, s, func(q store.Queries) error {
		as, err := q.AttemptList(ctx, a.ID)
		if err != nil {
			return err
		}
		if len(as) != 2 || as[0].Number != 1 || as[1].Number != 2 || as[1].WorkerID != "w-3" || as[1].ClaimedAt != 4000 {
			t.Errorf("attempts after a second claim = %+v", as)
		}
		return nil
	})
	// An empty claim is a no-op.
	tx(t, s, func(q store.Queries) error {
		return q.JobsClaim(ctx, &store.JobsClaimParams{WorkerID: "w", LeaseToken: "l", Now: 1})
	})
}

// testJobsClaimDue holds JobsClaimDue to what JobsClaimable followed by
// JobsClaim do.
func testJobsClaimDue(t *testing.T, s store.Store) {
	ctx := t.Context()
	f := newFixture(t, s)
	v2 := newTool(t, s, f.p.ID, f.ep.ID, "charge", "v2")
	ep2 := newEndpoint(t, s, f.p.ID, "openai")
	chat := newTool(t, s, f.p.ID, ep2.ID, "chat", "v1")
	all := []int64{f.tool.ID, v2.ID, chat.ID}
	// Inserted out of due order; b and c tie on due time (id breaks it).
	a, b, c, d := job(f.p, f.ep, f.tool, 3000), job(f.p, f.ep, v2, 1000), job(f.p, f.ep, f.tool, 1000), job(f.p, f.ep, f.tool, 2000)
	future, elsewhere, running := job(f.p, f.ep, f.tool, 9000), job(f.p, ep2, chat, 1), job(f.p, f.ep, f.tool, 1)
	b.TimeoutMs = 5000
	d.Traceparent, d.Tracestate = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "rojo=1" // handed to the worker with the claim
	f.insert(t, s, a, b, c, d, future, elsewhere, running)
	setState(t, s, running, wire.JobRunning, 0)
	claimDue := func(p *store.JobsClaimDueParams) []store.Job {
		t.Helper()
		p.EndpointID = f.ep.ID
		var got []store.Job
		tx(t, s, func(q store.Queries) (err error) {
			got, err = q.JobsClaimDue(ctx, p)
			return err
		})
		return got
	}
	// Nothing to do: no tools, no room, nothing due yet, another tool.
	for _, p := range []*store.JobsClaimDueParams{{ToolIDs: nil, Limit: 10, Now: 5000}, {ToolIDs: all, Limit: 0, Now: 5000},
		{ToolIDs: all, Limit: 10, Now: 999}, {ToolIDs: []int64{chat.ID}, Limit: 10, Now: 5000}} {
		if got := claimDue(p); len(got) != 0 {
			t.Errorf("JobsClaimDue(%+v) = %v, want none", p, ids(got))
		}
	}
	// Due order then id, up to the limit, of the requested tools only.
	got := claimDue(&store.JobsClaimDueParams{ToolIDs: []int64{f.tool.ID}, Limit: 1, WorkerID: "w-1", LeaseToken: "lease-1", Now: 2000})
	if want := []int64{c.ID}; !slices.Equal(ids(got), want) {
		t.Errorf("JobsClaimDue(tool filter, limit 1) = %v, want %v", ids(got), want)
	}
	got = append(got, claimDue(&store.JobsClaimDueParams{ToolIDs: all, Limit: 3, WorkerID: "w-2", LeaseToken: "lease-2", Now: 4000})...)
	if want := []int64{c.ID, b.ID, d.ID, a.ID}; !slices.Equal(ids(got), want) {
		t.Errorf("JobsClaimDue = %v, want %v", ids(got), want)
	}
	// What it returns is what is stored: running, attempt 1, the lease
	// until now + the job's timeout; and each has its attempt row.
	for i, w := range []struct {
		j              *store.Job
		worker, lease  string
		now, expiresAt int64
	}{{c, "w-1", "lease-1", 2000, 32_000}, {b, "w-2", "lease-2", 4000, 9000}, {d, "w-2", "lease-2", 4000, 34_000}, {a, "w-2", "lease-2", 4000, 34_000}} {
		want := *w.j
		want.State, want.Attempt, want.LeaseToken, want.LeaseExpiresAt, want.WorkerID, want.UpdatedAt, want.ClaimedAt = wire.JobRunning, 1, w.lease, w.expiresAt, w.worker, w.now, w.now
		returned := want
		returned.Policy = json.RawMessage{} // not read
		sameJob(t, fmt.Sprintf("returned job %d", i), &got[i], &returned)
		sameJob(t, fmt.Sprintf("stored job %d", i), getJob(t, s, w.j.ID), &want)
		read(t, s, func(q store.Queries) error {
			as, err := q.AttemptList(ctx, w.j.ID)
			if err != nil {
				return err
			}
			if wa := (store.Attempt{JobID: w.j.ID, Number: 1, EndpointID: f.ep.ID, WorkerID: w.worker, LeaseToken: w.lease, ClaimedAt: w.now}); len(as) != 1 || as[0] != wa {
				t.Errorf("attempts of claimed job %d = %+v, want [%+v]", i, as, wa)
			}
			return nil
		})
	}
	for _, j := range []*store.Job{future, elsewhere} {
		if got := getJob(t, s, j.ID); got.State != wire.JobScheduled || got.Attempt != 0 {
			t.Errorf("job %d not due or of another endpoint was claimed: %+v", j.ID, got)
		}
	}
	// Its attempt finished, rescheduled and claimed again: attempt 2 is
	// another row.
	reschedule(t, s, a.ID, 6000)
	got = claimDue(&store.JobsClaimDueParams{ToolIDs: all, Limit: 10, WorkerID: "w-3", LeaseToken: "lease-3", Now: 6000})
	if len(got) != 1 || got[0].ID != a.ID || got[0].Attempt != 2 {
		t.Fatalf("second claim = %+v", got)
	}
	read(t, s, func(q store.Queries) error {
		as, err := q.AttemptList(ctx, a.ID)
		if err != nil {
			return err
		}
		if len(as) != 2 || as[1].Number != 2 || as[1].WorkerID != "w-3" || as[1].ClaimedAt != 6000 {
			t.Errorf("attempts after a second claim = %+v", as)
		}
		return nil
	})
	// More than one statement's worth of attempt rows.
	var many []*store.Job
	for range 700 {
		many = append(many, job(f.p, ep2, chat, 1))
	}
	f.insert(t, s, many...)
	var n int
	tx(t, s, func(q store.Queries) error {
		got, err := q.JobsClaimDue(ctx, &store.JobsClaimDueParams{EndpointID: ep2.ID, ToolIDs: all, Limit: 1000, WorkerID: "w", LeaseToken: "l", Now: 10})
		n = len(got)
		return err
	})
	read(t, s, func(q store.Queries) error {
		running, err := q.CountRunning(ctx, &store.CountRunningParams{EndpointID: ep2.ID, Limit: 10_000})
		if err == nil && (n != 701 || running != 701) {
			t.Errorf("claimed %d of 701 jobs, %d running", n, running)
		}
		return err
	})
}

func testExpiredLeases(t *testing.T, s store.Store) {
	ctx := t.Context()
	f := newFixture(t, s)
	a, b, c, d := job(f.p, f.ep, f.tool, 1), job(f.p, f.ep, f.tool, 1), job(f.p, f.ep, f.tool, 1), job(f.p, f.ep, f.tool, 1)
	a.TimeoutMs, b.TimeoutMs, c.TimeoutMs = 3000, 1000, 2000
	f.insert(t, s, a, b, c, d)
	claim(t, s, "w", "l", 10_000, a.ID, b.ID, c.ID) // leases end at 13000, 11000, 12000
	check := func(now int64, limit int, want []int64) {
		t.Helper()
		tx(t, s, func(q store.Queries) error {
			got, err := q.ExpiredLeases(ctx, &store.ExpiredLeasesParams{Now: now, Limit: limit})
			if err != nil {
				return err
			}
			if !slices.Equal(ids(got), want) {
				t.Errorf("ExpiredLeases(now %d, limit %d) = %v, want %v", now, limit, ids(got), want)
			}
			return nil
		})
	}
	check(10_999, 10, nil)
	check(11_000, 10, []int64{b.ID}) // a lease ending at now has expired
	check(20_000, 10, []int64{b.ID, c.ID, a.ID})
	check(20_000, 2, []int64{b.ID, c.ID})
}

// testConcurrentClaims claims from many goroutines the way the engine does:
// lock the endpoint row, count running jobs against maxConcurrent, take
// claimable jobs, claim them. No job may go to two workers and the endpoint
// may never run more than maxConcurrent jobs.
func testConcurrentClaims(t *testing.T, s store.Store) {
	concurrentClaims(t, s, func(ctx context.Context, q store.Queries, endpointID, toolID int64, limit int, worker, lease string) ([]int64, error) {
		ready, err := q.JobsClaimable(ctx, &store.JobsClaimableParams{EndpointID: endpointID, ToolIDs: []int64{toolID}, Now: 100, Limit: limit})
		if err != nil || len(ready) == 0 {
			return nil, err
		}
		return ids(ready), q.JobsClaim(ctx, &store.JobsClaimParams{IDs: ids(ready), WorkerID: worker, LeaseToken: lease, Now: 100})
	})
}

func testConcurrentClaimsDue(t *testing.T, s store.Store) {
	concurrentClaims(t, s, func(ctx context.Context, q store.Queries, endpointID, toolID int64, limit int, worker, lease string) ([]int64, error) {
		got, err := q.JobsClaimDue(ctx, &store.JobsClaimDueParams{EndpointID: endpointID, ToolIDs: []int64{toolID}, Limit: limit, WorkerID: worker, LeaseToken: lease, Now: 100})
		return ids(got), err
	})
}

// concurrentClaims has many workers claim at once through claim, as the
// engine does (endpoint row locked, running jobs counted), and checks no job
// goes to two of them and maxConcurrent holds.
func concurrentClaims(t *testing.T, s store.Store, claim func(ctx context.Context, q store.Queries, endpointID, toolID int64, limit int, worker, lease string) ([]int64, error)) {
	ctx := t.Context()
	f := newFixture(t, s)
	const jobs, workers, maxConcurrent = 40, 8, 5
	var js []*store.Job
	for range jobs {
		js = append(js, job(f.p, f.ep, f.tool, 1))
	}
	f.insert(t, s, js...)
	var (
		mu      sync.Mutex
		claimed = map[int64]string{}
		peak    int64
		wg      sync.WaitGroup
		errs    = make(chan error, workers)
	)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			worker := fmt.Sprintf("w-%d", w)
			for n := 0; ; n++ {
				var got []int64
				err := s.Tx(ctx, func(q store.Queries) error {
					got = nil
					ep, err := q.EndpointGetAnyProject(ctx, &store.EndpointGetAnyProjectParams{ID: f.ep.ID, Lock: true})
					if err != nil {
						return err
					}
					running, err := q.CountRunning(ctx, &store.CountRunningParams{EndpointID: ep.ID, Limit: maxConcurrent})
					if err != nil {
						return err
					}
					if running >= maxConcurrent {
						return nil
					}
					got, err = claim(ctx, q, ep.ID, f.tool.ID, int(min(2, maxConcurrent-running)), worker, fmt.Sprintf("%s-%d", worker, n))
					if err != nil || len(got) == 0 {
						return err
					}
					after, err := q.CountRunning(ctx, &store.CountRunningParams{EndpointID: ep.ID, Limit: 1000})
					if err != nil {
						return err
					}
					mu.Lock()
					peak = max(peak, after)
					mu.Unlock()
					return nil
				})
				if err != nil {
					errs <- fmt.Errorf("%s: %w", worker, err)
					return
				}
				mu.Lock()
				for _, id := range got {
					if prev, dup := claimed[id]; dup {
						mu.Unlock()
						errs <- fmt.Errorf("job %d claimed by %s and %s", id, prev, worker)
						return
					}
					claimed[id] = worker
				}
				done := len(claimed) == jobs
				mu.Unlock()
				if done {
					return
				}
				// Finish what we hold so capacity frees up.
				for _, id := range got {
					if err := s.Tx(ctx, func(q store.Queries) error {
						j, err := q.JobGetAnyProject(ctx, id)
						if err != nil {
							return err
						}
						j.State, j.FinishedAt = wire.JobSucceeded, 200
						return q.JobUpdate(ctx, j)
					}); err != nil {
						errs <- fmt.Errorf("%s finish %d: %w", worker, id, err)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if len(claimed) != jobs {
		t.Errorf("%d of %d jobs claimed", len(claimed), jobs)
	}
	if peak > maxConcurrent {
		t.Errorf("peak running = %d, want at most %d", peak, maxConcurrent)
	}
}
