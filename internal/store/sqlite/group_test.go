package sqlite

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/internal/store/sqlstore"
	"github.com/getratchet/ratchet/wire"
)

// openGrouped opens a migrated store at FULL durability, the default.
func openGrouped(t *testing.T) *DB {
	t.Helper()
	db, err := Open(t.Context(), filepath.Join(t.TempDir(), "ratchet.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := db.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	return db
}

// holdWriter runs a transaction that keeps the writer until release is
// called, so that the transactions started meanwhile queue and are then
// taken as one group. It returns once the writer is held.
func holdWriter(t *testing.T, db *DB) (release func()) {
	t.Helper()
	held, gate, done := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	go func() {
		done <- db.Tx(context.Background(), func(store.Queries) error {
			close(held)
			<-gate
			return nil
		})
	}()
	<-held
	return func() {
		close(gate)
		if err := <-done; err != nil {
			t.Errorf("the holding transaction: %v", err)
		}
	}
}

// queueTxs starts n transactions, fn(i) each, once the writer is held, and
// waits until all n wait for it; wait returns their results.
func queueTxs(t *testing.T, db *DB, n int, fn func(i int) func(store.Queries) error) (wait func() []error) {
	t.Helper()
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { errs[i] = db.Tx(context.Background(), fn(i)) })
	}
	deadline := time.Now().Add(10 * time.Second)
	for db.waiting.Load() < int64(n) {
		if time.Now().After(deadline) {
			t.Fatalf("only %d of %d transactions queued", db.waiting.Load(), n)
		}
		time.Sleep(time.Millisecond)
	}
	return func() []error { wg.Wait(); return errs }
}

func createProject(name string) func(store.Queries) error {
	return func(q store.Queries) error {
		return q.ProjectCreate(context.Background(), &store.Project{Name: name, Plan: wire.PlanFree, CreatedAt: 1000})
	}
}

func projectExists(t *testing.T, db *DB, name string) bool {
	t.Helper()
	var n int
	if err := db.reader.QueryRow(`SELECT count(*) FROM projects WHERE name = ?`, name).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n == 1
}

var errRefused = errors.New("refused by the test")

// TestGroupCommitKeepsEachTransactionApart: transactions that queued while
// the writer was busy commit as one group, and the work of each one that
// failed (half of them, after writing) is undone alone.
func TestGroupCommitKeepsEachTransactionApart(t *testing.T) {
	db := openGrouped(t)
	release := holdWriter(t, db)
	const n = 20
	wait := queueTxs(t, db, n, func(i int) func(store.Queries) error {
		return func(q store.Queries) error {
			if err := createProject(fmt.Sprintf("p%d", i))(q); err != nil {
				return err
			}
			if i%2 == 1 {
				return errRefused
			}
			return nil
		}
	})
	release()
	errs := wait()
	for i, err := range errs {
		if want := i%2 == 1; errors.Is(err, errRefused) != want || (!want && err != nil) {
			t.Errorf("transaction %d: %v", i, err)
		}
		if got, want := projectExists(t, db, fmt.Sprintf("p%d", i)), i%2 == 0; got != want {
			t.Errorf("project p%d stored %v, want %v", i, got, want)
		}
	}
	if g := db.largestGroup.Load(); g < 2 {
		t.Errorf("largest group %d: the queued transactions were not committed together", g)
	}
}

// TestGroupCommitLostTransaction: when one function's failure takes the
// whole SQLite transaction with it (as a full disk does), the others of
// its group, before and after it, are run again alone and kept, and it is
// answered with its own error.
func TestGroupCommitLostTransaction(t *testing.T) {
	db := openGrouped(t)
	release := holdWriter(t, db)
	const n, breaker = 9, 4
	var runs [n]int
	var mu sync.Mutex
	wait := queueTxs(t, db, n, func(i int) func(store.Queries) error {
		return func(q store.Queries) error {
			mu.Lock()
			runs[i]++
			mu.Unlock()
			if err := createProject(fmt.Sprintf("p%d", i))(q); err != nil {
				return err
			}
			if i == breaker {
				if _, err := q.(*sqlstore.Queries).Tx.Exec(`ROLLBACK`); err != nil {
					t.Errorf("rollback: %v", err)
				}
				return errRefused
			}
			return nil
		}
	})
	release()
	errs := wait()
	for i, err := range errs {
		if i == breaker {
			if !errors.Is(err, errRefused) || runs[i] != 1 || projectExists(t, db, "p4") {
				t.Errorf("the breaking transaction: %v after %d runs, stored %v", err, runs[i], projectExists(t, db, "p4"))
			}
			continue
		}
		if err != nil || !projectExists(t, db, fmt.Sprintf("p%d", i)) {
			t.Errorf("transaction %d: %v, stored %v", i, err, projectExists(t, db, fmt.Sprintf("p%d", i)))
		}
	}
	if g := db.largestGroup.Load(); g < 2 {
		t.Errorf("largest group %d: no group formed", g)
	}
}

// TestGroupCommitContextEnded: a caller whose context ends while it waits
// for the writer is answered at once and its function never runs; one
// whose context ends inside its function, in a group, is rolled back alone
// and told so.
func TestGroupCommitContextEnded(t *testing.T) {
	db := openGrouped(t)
	release := holdWriter(t, db)
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan struct{}, 1)
	waited := make(chan error, 1)
	go func() {
		waited <- db.Tx(ctx, func(store.Queries) error { ran <- struct{}{}; return nil })
	}()
	for db.waiting.Load() < 1 {
		time.Sleep(time.Millisecond)
	}
	cancel()
	if err := <-waited; !errors.Is(err, context.Canceled) {
		t.Errorf("a transaction whose context ended while it waited = %v, want context.Canceled", err)
	}
	ctx2, cancel2 := context.WithCancel(context.Background())
	defer cancel2()
	gone := make(chan error, 1)
	go func() {
		gone <- db.Tx(ctx2, func(q store.Queries) error {
			if err := createProject("gone")(q); err != nil {
				return err
			}
			cancel2()
			return nil
		})
	}()
	for db.waiting.Load() < 1 { // queued before the others, so it runs in their group
		time.Sleep(time.Millisecond)
	}
	wait := queueTxs(t, db, 3, func(i int) func(store.Queries) error { return createProject(fmt.Sprintf("kept%d", i)) })
	release()
	if err := <-gone; !errors.Is(err, context.Canceled) || projectExists(t, db, "gone") {
		t.Errorf("a transaction whose context ended inside it = %v, stored %v", err, projectExists(t, db, "gone"))
	}
	for i, err := range wait() {
		if err != nil || !projectExists(t, db, fmt.Sprintf("kept%d", i)) {
			t.Errorf("transaction kept%d: %v", i, err)
		}
	}
	select {
	case <-ran:
		t.Error("the function of a transaction whose context ended while it waited ran")
	default:
	}
}

// TestGroupCommitPanic: a function that panics panics its caller, on the
// caller's goroutine, with its work undone, and the writer goes on.
func TestGroupCommitPanic(t *testing.T) {
	db := openGrouped(t)
	got := func() (v any) {
		defer func() { v = recover() }()
		_ = db.Tx(t.Context(), func(q store.Queries) error {
			if err := createProject("panicked")(q); err != nil {
				return err
			}
			panic("boom")
		})
		return nil
	}()
	if got != "boom" || projectExists(t, db, "panicked") {
		t.Errorf("recovered %v, stored %v; want boom and nothing stored", got, projectExists(t, db, "panicked"))
	}
	if err := db.Tx(t.Context(), createProject("after")); err != nil || !projectExists(t, db, "after") {
		t.Errorf("the writer after a panic: %v", err)
	}
}
