package storetest

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/getratchet/ratchet/internal/store"
)

func testJobsInsert(t *testing.T, s store.Store) {
	ctx := t.Context()
	f := newFixture(t, s)
	first := job(f.p, f.ep, f.tool, 1)
	f.insert(t, s, first)
	var js []*store.Job
	for i := range 1200 {
		j := job(f.p, f.ep, f.tool, int64(2000+i))
		j.Payload = json.RawMessage(fmt.Sprintf(`{"n":%d}`, i))
		if i%3 != 0 { // keyed and key-less jobs side by side in one statement
			j.FlowKey = fmt.Sprintf("acct_%d", i%7)
		}
		if i%4 == 0 { // with and without a trace context in one statement
			j.Traceparent = fmt.Sprintf("00-4bf92f3577b34da6a3ce929d0e0e%04x-00f067aa0ba902b7-01", i)
			j.Tracestate = "rojo=00f067aa0ba902b7"
		}
		js = append(js, j)
	}
	tx(t, s, func(q store.Queries) error { return q.JobsInsert(ctx, js) })
	tx(t, s, func(q store.Queries) error { return q.JobsInsert(ctx, nil) })
	for i, j := range js {
		if j.ID <= first.ID || (i > 0 && j.ID <= js[i-1].ID) {
			t.Fatalf("JobsInsert ids not ascending after %d: job %d has id %d", first.ID, i, j.ID)
		}
	}
	for _, i := range []int{0, 1, 2, 599, 1199} {
		sameJob(t, fmt.Sprintf("job %d of JobsInsert", i), getJob(t, s, js[i].ID), js[i])
	}
	keyed := job(f.p, f.ep, f.tool, 1)
	keyed.IdempotencyKey = "k"
	tx(t, s, func(q store.Queries) error {
		if err := q.JobsInsert(ctx, []*store.Job{keyed}); err == nil {
			t.Error("JobsInsert stored a job with an idempotency key")
		}
		return nil
	})
}

func testJobInsert(t *testing.T, s store.Store) {
	ctx := t.Context()
	f := newFixture(t, s)
	other := newProject(t, s, "other")
	r := &store.Run{ProjectID: f.p.ID, CreatedAt: 1000}
	tx(t, s, func(q store.Queries) error { return q.RunCreate(ctx, r) })
	j := job(f.p, f.ep, f.tool, 5000)
	j.RunID, j.IdempotencyKey, j.ReplayOf, j.Attempt = r.ID, "order-1", 42, 0
	j.FlowKey = "acct_42 ünïcode"
	j.Traceparent, j.Tracestate = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "rojo=00f067aa0ba902b7,congo=t61rcWkgMzE"
	f.insert(t, s, j)
	if j.ID == 0 {
		t.Fatal("JobInsert set no id")
	}
	// Reads inside Read and inside Tx agree with what was written.
	read(t, s, func(q store.Queries) error {
		got, err := q.JobGetInProject(ctx, &store.JobGetInProjectParams{ProjectID: f.p.ID, ID: j.ID})
		if err != nil {
			return err
		}
		sameJob(t, "JobGetInProject", got, j)
		got, err = q.JobGetAnyProject(ctx, j.ID)
		if err != nil {
			return err
		}
		sameJob(t, "JobGetAnyProject", got, j)
		got, err = q.JobByIdempotencyKey(ctx, f.p.ID, "order-1")
		if err != nil {
			return err
		}
		sameJob(t, "JobByIdempotencyKey", got, j)
		_, err = q.JobGetInProject(ctx, &store.JobGetInProjectParams{ProjectID: other.ID, ID: j.ID})
		wantErr(t, "JobGetInProject from another project", err, store.ErrNotFound)
		_, err = q.JobGetAnyProject(ctx, j.ID+100)
		wantErr(t, "JobGetAnyProject missing", err, store.ErrNotFound)
		_, err = q.JobByIdempotencyKey(ctx, other.ID, "order-1")
		wantErr(t, "JobByIdempotencyKey from another project", err, store.ErrNotFound)
		return nil
	})
	tx(t, s, func(q store.Queries) error {
		got, err := q.JobGetInProject(ctx, &store.JobGetInProjectParams{ProjectID: f.p.ID, ID: j.ID})
		if err != nil {
			return err
		}
		sameJob(t, "JobGetInProject in Tx", got, j)
		return nil
	})
}

func testJobIdempotency(t *testing.T, s store.Store) {
	ctx := t.Context()
	f := newFixture(t, s)
	other := newProject(t, s, "other")
	oep := newEndpoint(t, s, other.ID, "stripe")
	otool := newTool(t, s, other.ID, oep.ID, "charge", "v1")
	first := job(f.p, f.ep, f.tool, 5000)
	first.IdempotencyKey = "k"
	f.insert(t, s, first)
	// A repeated key is a conflict, stores nothing and leaves the
	// transaction usable: the engine reads the existing job next.
	tx(t, s, func(q store.Queries) error {
		dup := job(f.p, f.ep, f.tool, 9000)
		dup.IdempotencyKey = "k"
		wantErr(t, "JobInsert with a used idempotency key", q.JobInsert(ctx, dup), store.ErrConflict)
		got, err := q.JobByIdempotencyKey(ctx, f.p.ID, "k")
		if err != nil {
			return fmt.Errorf("read after conflict: %w", err)
		}
		if got.ID != first.ID || got.DueAt != 5000 {
			t.Errorf("after conflict the key names job %d due %d, want %d due 5000", got.ID, got.DueAt, first.ID)
		}
		// The transaction still writes.
		return q.JobInsert(ctx, job(f.p, f.ep, f.tool, 6000))
	})
	// Two jobs with the same new key in one transaction: the second conflicts.
	tx(t, s, func(q store.Queries) error {
		a, b := job(f.p, f.ep, f.tool, 7000), job(f.p, f.ep, f.tool, 7000)
		a.IdempotencyKey, b.IdempotencyKey = "batch", "batch"
		if err := q.JobInsert(ctx, a); err != nil {
			return err
		}
		wantErr(t, "second JobInsert of a key in one transaction", q.JobInsert(ctx, b), store.ErrConflict)
		return nil
	})
	// Jobs without a key never conflict; the same key in another project is
	// another job.
	f.insert(t, s, job(f.p, f.ep, f.tool, 1), job(f.p, f.ep, f.tool, 1))
	oj := job(other, oep, otool, 1)
	oj.IdempotencyKey = "k"
	f.insert(t, s, oj)
	read(t, s, func(q store.Queries) error {
		n, err := q.JobCount(ctx, store.JobFilter{ProjectID: f.p.ID})
		if err != nil {
			return err
		}
		if n != 5 {
			t.Errorf("project holds %d jobs, want 5 (k, one unkeyed in the conflict tx, batch, two unkeyed)", n)
		}
		n, err = q.JobCount(ctx, store.JobFilter{ProjectID: other.ID})
		if err != nil {
			return err
		}
		if n != 1 {
			t.Errorf("other project holds %d jobs, want 1", n)
		}
		return nil
	})
}
