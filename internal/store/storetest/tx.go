package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/wire"
)

// testConcurrentWriters holds the store to what ConcurrentWriters reports:
// with it, a second write transaction on other rows commits while the
// first is open; without, it waits for the first to end.
func testConcurrentWriters(t *testing.T, s store.Store) {
	ctx := t.Context()
	a, b := newProject(t, s, "a"), newProject(t, s, "b")
	var holdOnce, releaseOnce sync.Once
	holding, release := make(chan struct{}), make(chan struct{})
	defer releaseOnce.Do(func() { close(release) })
	first, second := make(chan error, 1), make(chan error, 1)
	go func() {
		first <- s.Tx(ctx, func(q store.Queries) error {
			if err := q.ProjectSetPlan(ctx, a.ID, wire.PlanBasic); err != nil {
				return err
			}
			holdOnce.Do(func() { close(holding) })
			<-release
			return nil
		})
	}()
	select {
	case <-holding:
	case err := <-first:
		t.Fatalf("first transaction ended before it held: %v", err)
	}
	go func() {
		second <- s.Tx(ctx, func(q store.Queries) error { return q.ProjectSetPlan(ctx, b.ID, wire.PlanFree) })
	}()
	if s.ConcurrentWriters() {
		select {
		case err := <-second:
			if err != nil {
				t.Fatalf("second transaction: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("ConcurrentWriters, but a second write transaction waited 10s for the first")
		}
		releaseOnce.Do(func() { close(release) })
	} else {
		select {
		case err := <-second:
			t.Fatalf("not ConcurrentWriters, but a second write transaction ended (%v) while the first was open", err)
		case <-time.After(300 * time.Millisecond):
		}
		releaseOnce.Do(func() { close(release) })
		if err := <-second; err != nil {
			t.Fatalf("second transaction: %v", err)
		}
	}
	if err := <-first; err != nil {
		t.Fatalf("first transaction: %v", err)
	}
	read(t, s, func(q store.Queries) error {
		for id, want := range map[int64]wire.Plan{a.ID: wire.PlanBasic, b.ID: wire.PlanFree} {
			p, err := q.ProjectGet(ctx, id)
			if err != nil {
				return err
			}
			if p.Plan != want {
				t.Errorf("project %d plan = %s, want %s (both transactions committed)", id, p.Plan, want)
			}
		}
		return nil
	})
}

func testTxRollback(t *testing.T, s store.Store) {
	ctx := t.Context()
	f := newFixture(t, s)
	boom := errors.New("boom")
	err := s.Tx(ctx, func(q store.Queries) error {
		if err := q.ProjectCreate(ctx, &store.Project{Name: "ghost", Plan: wire.PlanFree, CreatedAt: 1}); err != nil {
			return err
		}
		if err := q.JobInsert(ctx, job(f.p, f.ep, f.tool, 1)); err != nil {
			return err
		}
		f.ep.CircuitState = wire.CircuitOpen
		if err := q.EndpointUpdateCircuit(ctx, f.ep); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Tx returned %v, want the function's error", err)
	}
	read(t, s, func(q store.Queries) error {
		n, err := q.ProjectCount(ctx)
		if err != nil {
			return err
		}
		if n != 1 {
			t.Errorf("projects after rollback = %d, want 1", n)
		}
		jn, err := q.JobCount(ctx, store.JobFilter{ProjectID: f.p.ID})
		if err != nil {
			return err
		}
		if jn != 0 {
			t.Errorf("jobs after rollback = %d, want 0", jn)
		}
		ep, err := q.EndpointGetAnyProject(ctx, &store.EndpointGetAnyProjectParams{ID: f.ep.ID})
		if err != nil {
			return err
		}
		if ep.CircuitState != wire.CircuitClosed {
			t.Errorf("circuit after rollback = %s, want closed", ep.CircuitState)
		}
		return nil
	})
	// A failed statement rolls back too, and the store stays usable.
	txErr(t, s, "Tx with a conflict", store.ErrConflict, func(q store.Queries) error {
		if err := q.JobInsert(ctx, job(f.p, f.ep, f.tool, 1)); err != nil {
			return err
		}
		return q.EndpointCreate(ctx, &store.Endpoint{ProjectID: f.p.ID, Name: f.ep.Name, Policy: json.RawMessage(`{}`), Version: 1})
	})
	read(t, s, func(q store.Queries) error {
		jn, err := q.JobCount(ctx, store.JobFilter{ProjectID: f.p.ID})
		if err != nil {
			return err
		}
		if jn != 0 {
			t.Errorf("jobs after a failed Tx = %d, want 0", jn)
		}
		return nil
	})
	// A cancelled context fails the transaction and persists nothing.
	cctx, cancel := context.WithCancel(ctx)
	err = s.Tx(cctx, func(q store.Queries) error {
		if err := q.JobInsert(cctx, job(f.p, f.ep, f.tool, 1)); err != nil {
			return err
		}
		cancel()
		return nil
	})
	if err == nil {
		// The commit may win the race with the cancellation; then the job
		// must really be there.
		if n := countJobs(t, s, f.p.ID); n != 1 {
			t.Errorf("Tx committed but %d jobs are stored", n)
		}
	} else if n := countJobs(t, s, f.p.ID); n != 0 {
		t.Errorf("Tx failed (%v) but %d jobs are stored", err, n)
	}
}

func countJobs(t *testing.T, s store.Store, projectID int64) int64 {
	t.Helper()
	var n int64
	read(t, s, func(q store.Queries) (err error) {
		n, err = q.JobCount(t.Context(), store.JobFilter{ProjectID: projectID})
		return err
	})
	return n
}

func testRead(t *testing.T, s store.Store) {
	ctx := t.Context()
	f := newFixture(t, s)
	j := job(f.p, f.ep, f.tool, 1)
	f.insert(t, s, j)
	// Read sees committed writes and returns fn's error.
	boom := errors.New("boom")
	err := s.Read(ctx, func(q store.Queries) error {
		if _, err := q.JobGetInProject(ctx, &store.JobGetInProjectParams{ProjectID: f.p.ID, ID: j.ID}); err != nil {
			return err
		}
		if _, err := q.EndpointGetInProject(ctx, &store.EndpointGetInProjectParams{ProjectID: f.p.ID, Name: f.ep.Name}); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Read returned %v, want the function's error", err)
	}
	// Reads run while a write transaction is open elsewhere.
	started, release := make(chan struct{}), make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		_ = s.Tx(ctx, func(q store.Queries) error {
			if _, err := q.EndpointGetAnyProject(ctx, &store.EndpointGetAnyProjectParams{ID: f.ep.ID, Lock: true}); err != nil {
				return err
			}
			close(started)
			<-release
			return nil
		})
	}()
	<-started
	read(t, s, func(q store.Queries) error {
		_, err := q.EndpointGetAnyProject(ctx, &store.EndpointGetAnyProjectParams{ID: f.ep.ID})
		return err
	})
	close(release)
	wg.Wait()
}

// testTxContextEnded: a transaction whose context ends before it commits is
// rolled back, and Tx says why with the context's error (database/sql's
// own rollback made Commit answer only sql.ErrTxDone, which the API
// answered as a server error to a client that had gone).
func testTxContextEnded(t *testing.T, s store.Store) {
	for range 20 {
		ctx, cancel := context.WithCancel(t.Context())
		name := "gone-" + time.Now().Format("150405.000000000")
		err := s.Tx(ctx, func(q store.Queries) error {
			if err := q.ProjectCreate(ctx, &store.Project{Name: name, Plan: wire.PlanFree, CreatedAt: 1000}); err != nil {
				return err
			}
			cancel()
			time.Sleep(time.Millisecond) // database/sql rolls back on its own goroutine
			return nil
		})
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Tx whose context ended before its commit = %v; want context.Canceled", err)
		}
	}
}
