package storetest

import (
	"errors"
	"fmt"
	"maps"
	"sync"
	"testing"

	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/wire"
)

func testJobCountsByState(t *testing.T, s store.Store) {
	ctx := t.Context()
	f := newFixture(t, s)
	other := newProject(t, s, "other")
	oep := newEndpoint(t, s, other.ID, "stripe")
	otool := newTool(t, s, other.ID, oep.ID, "charge", "v1")
	js := []*store.Job{job(f.p, f.ep, f.tool, 1), job(f.p, f.ep, f.tool, 1), job(f.p, f.ep, f.tool, 1), job(f.p, f.ep, f.tool, 1)}
	f.insert(t, s, js...)
	f.insert(t, s, job(other, oep, otool, 1))
	setState(t, s, js[0], wire.JobRunning, 0)
	setState(t, s, js[1], wire.JobExhausted, 10)
	read(t, s, func(q store.Queries) error {
		got, err := q.JobCountsByState(ctx, f.p.ID)
		if err != nil {
			return err
		}
		if want := map[wire.JobState]int64{wire.JobScheduled: 2, wire.JobRunning: 1, wire.JobExhausted: 1}; !maps.Equal(got, want) {
			t.Errorf("JobCountsByState(project) = %v, want %v", got, want)
		}
		got, err = q.JobCountsByState(ctx, 0)
		if err != nil {
			return err
		}
		if want := map[wire.JobState]int64{wire.JobScheduled: 3, wire.JobRunning: 1, wire.JobExhausted: 1}; !maps.Equal(got, want) {
			t.Errorf("JobCountsByState(0) = %v, want %v", got, want)
		}
		got, err = q.JobCountsByState(ctx, other.ID+100)
		if err != nil {
			return err
		}
		if len(got) != 0 {
			t.Errorf("JobCountsByState(no jobs) = %v, want empty", got)
		}
		return nil
	})
}

// testJobCounters: after a mix of every write the engine makes to jobs
// (single and batch inserts, claims both ways, reports that succeed, fail,
// retry and exhaust, cancel, rescue, replay, prune), the counters equal a
// count of the jobs per endpoint and state.
func testJobCounters(t *testing.T, s store.Store) {
	ctx := t.Context()
	f := newFixture(t, s)
	ep2 := newEndpoint(t, s, f.p.ID, "openai")
	chat := newTool(t, s, f.p.ID, ep2.ID, "chat", "v1")
	other := newProject(t, s, "other")
	oep := newEndpoint(t, s, other.ID, "stripe")
	otool := newTool(t, s, other.ID, oep.ID, "charge", "v1")
	checkCounters(t, s, f.p, other)

	// Inserts: one by one (with a repeated idempotency key, which stores
	// nothing) and in batches.
	keyed := job(f.p, f.ep, f.tool, 1)
	keyed.IdempotencyKey = "k-1"
	f.insert(t, s, keyed, job(other, oep, otool, 1))
	again := job(f.p, f.ep, f.tool, 1)
	again.IdempotencyKey = "k-1"
	txErr(t, s, "repeated key", store.ErrConflict, func(q store.Queries) error { return q.JobInsert(ctx, again) })
	var batch []*store.Job
	for i := range 30 {
		if i%3 == 0 {
			batch = append(batch, job(f.p, ep2, chat, 1))
		} else {
			batch = append(batch, job(f.p, f.ep, f.tool, 1))
		}
	}
	tx(t, s, func(q store.Queries) error { return q.JobsInsert(ctx, batch) })
	checkCounters(t, s, f.p, other)

	// Claims: by id and due.
	claim(t, s, "w1", "l1", 10, batch[0].ID, batch[1].ID)
	var claimed []store.Job
	tx(t, s, func(q store.Queries) (err error) {
		claimed, err = q.JobsClaimDue(ctx, &store.JobsClaimDueParams{EndpointID: f.ep.ID, ToolIDs: []int64{f.tool.ID}, Limit: 12, WorkerID: "w2", LeaseToken: "l2", Now: 10})
		return err
	})
	tx(t, s, func(q store.Queries) (err error) {
		more, err := q.JobsClaimDue(ctx, &store.JobsClaimDueParams{EndpointID: ep2.ID, ToolIDs: []int64{chat.ID}, Limit: 5, WorkerID: "w3", LeaseToken: "l3", Now: 10})
		claimed = append(claimed, more...)
		return err
	})
	checkCounters(t, s, f.p, other)

	// Reports in one batch: succeed, fail, retry, exhaust, with guards, as
	// the engine writes them.
	tx(t, s, func(q store.Queries) error {
		var as []*store.Attempt
		var js []*store.Job
		var guards []store.JobGuard
		for i := range claimed {
			j := claimed[i]
			guards = append(guards, store.GuardOf(&j))
			a := store.RunningAttempt(&j)
			a.FinishedAt = 20
			switch i % 4 {
			case 0:
				j.State, a.Outcome, j.FinishedAt, j.LastClassification = wire.JobSucceeded, wire.OutcomeSucceeded, 20, "success"
			case 1:
				j.State, a.Outcome, j.FinishedAt, j.LastError = wire.JobFailed, wire.OutcomeFailed, 20, "boom"
			case 2:
				j.State, a.Outcome, j.DueAt = wire.JobScheduled, wire.OutcomeFailed, 30
			case 3:
				j.State, a.Outcome, j.FinishedAt = wire.JobExhausted, wire.OutcomeFailed, 20
			}
			j.LeaseToken = ""
			as = append(as, &a)
			js = append(js, &j)
		}
		if err := q.AttemptsFinish(ctx, as); err != nil {
			return err
		}
		return q.JobsUpdate(ctx, js, guards)
	})
	checkCounters(t, s, f.p, other)

	// A guarded write that loses (the job changed) writes nothing, so the
	// counters do not move either.
	stale := getJob(t, s, batch[2].ID)
	guard := store.GuardOf(stale)
	guard.LeaseToken = "someone else's"
	stale.State = wire.JobCancelled
	txErr(t, s, "stale guard", store.ErrConflict, func(q store.Queries) error {
		return q.JobsUpdate(ctx, []*store.Job{stale}, []store.JobGuard{guard})
	})
	checkCounters(t, s, f.p, other)

	// Cancel a scheduled job (JobUpdate), and a heartbeat that changes no
	// state.
	cancelled := getJob(t, s, batch[29].ID)
	if cancelled.State != wire.JobScheduled {
		t.Fatalf("job %d is %s, want scheduled", cancelled.ID, cancelled.State)
	}
	tx(t, s, func(q store.Queries) error {
		cancelled.State, cancelled.FinishedAt = wire.JobCancelled, 25
		return q.JobUpdate(ctx, cancelled)
	})
	hb := getJob(t, s, batch[0].ID)
	tx(t, s, func(q store.Queries) error {
		hb.LeaseExpiresAt += 1000
		return q.JobUpdate(ctx, hb)
	})
	checkCounters(t, s, f.p, other)

	// Rescue: the expired leases (w1's claim) go back to scheduled.
	tx(t, s, func(q store.Queries) error {
		expired, err := q.ExpiredLeases(ctx, &store.ExpiredLeasesParams{Now: 1 << 40, Limit: 100})
		if err != nil {
			return err
		}
		var as []*store.Attempt
		var js []*store.Job
		for i := range expired {
			j := expired[i]
			a := store.RunningAttempt(&j)
			a.FinishedAt, a.Outcome = 40, wire.OutcomeTimedOut
			j.State, j.LeaseToken, j.DueAt = wire.JobScheduled, "", 50
			as = append(as, &a)
			js = append(js, &j)
		}
		if len(js) == 0 {
			return errors.New("no expired leases to rescue")
		}
		if err := q.AttemptsFinish(ctx, as); err != nil {
			return err
		}
		return q.JobsUpdate(ctx, js, nil)
	})
	checkCounters(t, s, f.p, other)

	// Replay a failed job as a new one, then prune the finished jobs.
	var failed []store.Job
	read(t, s, func(q store.Queries) (err error) {
		failed, err = q.JobList(ctx, store.JobFilter{ProjectID: f.p.ID, States: []wire.JobState{wire.JobFailed}})
		return err
	})
	if len(failed) == 0 {
		t.Fatal("no failed job to replay")
	}
	replay := job(f.p, f.ep, f.tool, 60)
	replay.ReplayOf = failed[0].ID
	f.insert(t, s, replay)
	checkCounters(t, s, f.p, other)
	var pruned int64
	tx(t, s, func(q store.Queries) (err error) {
		pruned, err = q.JobsPrune(ctx, &store.JobsPruneParams{FinishedBefore: 1 << 40, Limit: 100})
		return err
	})
	if pruned == 0 {
		t.Fatal("nothing pruned")
	}
	checkCounters(t, s, f.p, other)

	// A rolled-back transaction leaves the counters as they were.
	txErr(t, s, "rollback", errRollback, func(q store.Queries) error {
		if err := q.JobsInsert(ctx, []*store.Job{job(f.p, f.ep, f.tool, 1), job(f.p, ep2, chat, 1)}); err != nil {
			return err
		}
		return errRollback
	})
	checkCounters(t, s, f.p, other)

	// By tool: the counters (of the tool, of one version, of the tool on
	// an endpoint) and JobCountGroupByState agree with the jobs.
	read(t, s, func(q store.Queries) error {
		for _, p := range []*store.JobCountsByEndpointParams{{Tool: "charge"}, {Tool: "charge", Version: "v1"}, {Tool: "charge", Version: "v2"},
			{Tool: "charge", EndpointID: f.ep.ID}, {Tool: "charge", EndpointID: ep2.ID}, {Tool: "nope"}} {
			p.ProjectID = f.p.ID
			cs, err := q.JobCountsByEndpoint(ctx, p)
			if err != nil {
				return err
			}
			got := map[wire.JobState]int64{}
			for _, c := range cs {
				got[c.State] += c.Count
			}
			want, err := q.JobCountGroupByState(ctx, store.JobFilter{ProjectID: f.p.ID, Tool: p.Tool, Version: p.Version, EndpointID: p.EndpointID})
			if err != nil {
				return err
			}
			if !maps.Equal(got, want) {
				t.Errorf("counters of %+v: %v, but the jobs count %v", *p, got, want)
			}
		}
		got, err := q.JobCountGroupByState(ctx, store.JobFilter{ProjectID: f.p.ID, Tool: "chat"})
		if err != nil {
			return err
		}
		var want int64
		for _, st := range wire.JobStates() {
			n, err := q.JobCount(ctx, store.JobFilter{ProjectID: f.p.ID, Tool: "chat", States: []wire.JobState{st}})
			if err != nil {
				return err
			}
			if got[st] != n {
				t.Errorf("JobCountGroupByState(tool chat)[%s] = %d, want %d", st, got[st], n)
			}
			want += n
		}
		if want == 0 {
			t.Error("no chat jobs counted")
		}
		return nil
	})
}

var errRollback = errors.New("roll back")

// testConcurrentJobCounters: writers inserting, claiming and reporting at
// once (on PostgreSQL, side by side on several connections) leave the
// counters exact.
func testConcurrentJobCounters(t *testing.T, s store.Store) {
	ctx := t.Context()
	f := newFixture(t, s)
	ep2 := newEndpoint(t, s, f.p.ID, "openai")
	chat := newTool(t, s, f.p.ID, ep2.ID, "chat", "v1")
	const workers, rounds = 6, 15
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ep, tl := f.ep, f.tool
			if w%2 == 1 {
				ep, tl = ep2, chat
			}
			for n := range rounds {
				err := s.Tx(ctx, func(q store.Queries) error {
					js := []*store.Job{job(f.p, ep, tl, 1), job(f.p, f.ep, f.tool, 1), job(f.p, ep2, chat, 1)}
					return q.JobsInsert(ctx, js)
				})
				if err == nil {
					err = s.Tx(ctx, func(q store.Queries) error {
						got, err := q.JobsClaimDue(ctx, &store.JobsClaimDueParams{EndpointID: ep.ID, ToolIDs: []int64{tl.ID}, Limit: 3,
							WorkerID: fmt.Sprintf("w%d", w), LeaseToken: fmt.Sprintf("l%d-%d", w, n), Now: 10})
						if err != nil || len(got) == 0 {
							return err
						}
						var as []*store.Attempt
						var js []*store.Job
						var guards []store.JobGuard
						for i := range got {
							j := got[i]
							guards = append(guards, store.GuardOf(&j))
							a := store.RunningAttempt(&j)
							a.FinishedAt, a.Outcome = 20, wire.OutcomeSucceeded
							j.State, j.LeaseToken, j.FinishedAt = wire.JobSucceeded, "", 20
							if (i+n)%3 == 0 {
								a.Outcome = wire.OutcomeFailed
								j.State, j.DueAt, j.FinishedAt = wire.JobScheduled, 15, 0
							}
							as = append(as, &a)
							js = append(js, &j)
						}
						if err := q.AttemptsFinish(ctx, as); err != nil {
							return err
						}
						return q.JobsUpdate(ctx, js, guards)
					})
				}
				if err != nil {
					errs <- fmt.Errorf("worker %d round %d: %w", w, n, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	checkCounters(t, s, f.p)
	var total int64
	read(t, s, func(q store.Queries) error {
		m, err := q.JobCountsByState(ctx, f.p.ID)
		for _, n := range m {
			total += n
		}
		return err
	})
	if total != workers*rounds*3 {
		t.Errorf("counters hold %d jobs, want %d", total, workers*rounds*3)
	}
}
