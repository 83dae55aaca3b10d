package storetest

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/wire"
)

func testJobUpdate(t *testing.T, s store.Store) {
	ctx := t.Context()
	f := newFixture(t, s)
	j := job(f.p, f.ep, f.tool, 5000)
	f.insert(t, s, j)
	j.Attempt, j.State, j.DueAt, j.LeaseToken, j.LeaseExpiresAt, j.WorkerID = 3, wire.JobRunning, 6000, "lease-x", 9000, "w-1"
	j.CancelRequested, j.UpdatedAt, j.FinishedAt = true, 6500, 0
	tx(t, s, func(q store.Queries) error { return q.JobUpdate(ctx, j) })
	sameJob(t, "after JobUpdate", getJob(t, s, j.ID), j)
	j.State, j.CancelRequested, j.FinishedAt, j.LeaseToken = wire.JobCancelled, false, 7000, ""
	tx(t, s, func(q store.Queries) error { return q.JobUpdate(ctx, j) })
	sameJob(t, "after second JobUpdate", getJob(t, s, j.ID), j)
	txErr(t, s, "JobUpdate of a missing job", store.ErrNotFound, func(q store.Queries) error {
		missing := *j
		missing.ID += 100
		return q.JobUpdate(ctx, &missing)
	})
}

// testJobsBatch holds JobsGetInProject and JobsUpdate to JobGetInProject and
// JobUpdate, row for row, including batches longer than one statement takes.
func testJobsBatch(t *testing.T, s store.Store) {
	ctx := t.Context()
	f := newFixture(t, s)
	other := newProject(t, s, "other")
	oep := newEndpoint(t, s, other.ID, "stripe")
	oj := job(other, oep, newTool(t, s, other.ID, oep.ID, "charge", "v1"), 1)
	var js []*store.Job
	for i := range 1100 {
		j := job(f.p, f.ep, f.tool, int64(1000+i))
		if i%7 == 0 {
			j.IdempotencyKey = fmt.Sprintf("k-%d", i)
		}
		js = append(js, j)
	}
	f.insert(t, s, js...)
	f.insert(t, s, oj)
	// Asked out of order, with a missing id, another project's job and more
	// ids than one statement takes: the project's jobs come back in id order.
	var want, asked []int64
	for i := len(js) - 1; i >= 0; i -= 2 {
		asked = append(asked, js[i].ID)
	}
	for i := 1 - len(js)%2; i < len(js); i += 2 {
		want = append(want, js[i].ID)
	}
	asked = append(asked, oj.ID, oj.ID+1000)
	tx(t, s, func(q store.Queries) error {
		got, err := q.JobsGetInProject(ctx, &store.JobsGetInProjectParams{ProjectID: f.p.ID, IDs: asked, Lock: true})
		if err != nil {
			return err
		}
		if !slices.Equal(ids(got), want) {
			t.Errorf("JobsGetInProject = %d jobs %v..., want %d %v...", len(got), ids(got)[:min(3, len(got))], len(want), want[:3])
		}
		for i := range got {
			if w := js[got[i].ID-js[0].ID]; w.ID == got[i].ID {
				want := *w
				want.Payload = json.RawMessage{} // not read
				sameJob(t, "JobsGetInProject", &got[i], &want)
			}
		}
		none, err := q.JobsGetInProject(ctx, &store.JobsGetInProjectParams{ProjectID: f.p.ID, IDs: nil})
		if err != nil || len(none) != 0 {
			t.Errorf("JobsGetInProject(no ids) = %v, %v", none, err)
		}
		none, err = q.JobsGetInProject(ctx, &store.JobsGetInProjectParams{ProjectID: other.ID + 100, IDs: asked})
		if err != nil || len(none) != 0 {
			t.Errorf("JobsGetInProject(another project) = %d jobs, %v", len(none), err)
		}
		return nil
	})
	// JobsUpdate writes what JobUpdate writes, for every job of the batch,
	// and nothing of the jobs outside it.
	var upd []*store.Job
	for i, j := range js[:1050] {
		c := *j
		c.Attempt, c.State, c.DueAt, c.LeaseToken, c.LeaseExpiresAt, c.WorkerID = int64(i%5), wire.JobRunning, int64(7000+i), fmt.Sprintf("lease-%d", i), int64(9000+i), "w-1"
		c.CancelRequested, c.UpdatedAt, c.FinishedAt = i%3 == 0, int64(6500+i), int64(i%2)
		if i%4 == 0 {
			c.State, c.LeaseToken, c.WorkerID = wire.JobSucceeded, "", ""
		}
		upd = append(upd, &c)
	}
	tx(t, s, func(q store.Queries) error { return q.JobsUpdate(ctx, upd, nil) })
	tx(t, s, func(q store.Queries) error { return q.JobsUpdate(ctx, nil, nil) })
	read(t, s, func(q store.Queries) error {
		for i, j := range js {
			w := j
			if i < len(upd) {
				w = upd[i]
			}
			got, err := q.JobGetInProject(ctx, &store.JobGetInProjectParams{ProjectID: f.p.ID, ID: j.ID})
			if err != nil {
				return err
			}
			sameJob(t, fmt.Sprintf("job %d after JobsUpdate", i), got, w)
		}
		return nil
	})
	// A missing job fails the batch, and the failed transaction changes
	// nothing.
	txErr(t, s, "JobsUpdate with a missing job", store.ErrNotFound, func(q store.Queries) error {
		a, missing := *upd[0], *upd[1]
		a.State, missing.ID = wire.JobFailed, oj.ID+1000
		return q.JobsUpdate(ctx, []*store.Job{&a, &missing}, nil)
	})
	sameJob(t, "job after a refused JobsUpdate", getJob(t, s, upd[0].ID), upd[0])
	// Guarded: written while the row holds the guard; a row that no longer
	// does (another lease, a cancel request, another state) refuses the
	// whole batch with ErrConflict.
	running := upd[1] // running, lease-1, cancel requested false
	if running.State != wire.JobRunning || running.CancelRequested {
		t.Fatalf("fixture: job %+v", running)
	}
	next := *running
	next.State, next.FinishedAt, next.LeaseExpiresAt = wire.JobSucceeded, 8000, 0
	for _, g := range []store.JobGuard{
		{State: wire.JobRunning, LeaseToken: "lease-2", CancelRequested: false},
		{State: wire.JobRunning, LeaseToken: "lease-1", CancelRequested: true},
		{State: wire.JobScheduled, LeaseToken: "lease-1", CancelRequested: false},
	} {
		txErr(t, s, fmt.Sprintf("JobsUpdate guarded by %+v", g), store.ErrConflict, func(q store.Queries) error {
			b := *upd[2]
			return q.JobsUpdate(ctx, []*store.Job{&b, &next}, []store.JobGuard{store.GuardOf(upd[2]), g})
		})
		sameJob(t, "job after a refused guarded JobsUpdate", getJob(t, s, running.ID), running)
	}
	tx(t, s, func(q store.Queries) error {
		return q.JobsUpdate(ctx, []*store.Job{&next}, []store.JobGuard{store.GuardOf(running)})
	})
	sameJob(t, "job after a guarded JobsUpdate", getJob(t, s, running.ID), &next)
}
