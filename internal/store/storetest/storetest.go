// Package storetest is the conformance suite every store driver must pass.
// It is written against store.Store and store.Queries only, never against a
// driver, so SQLite and PostgreSQL are held to the very same semantics. A
// semantic change to the store lands here first.
//
// Every time the suite passes is a plain unix-millisecond number chosen by the
// test; drivers must never read a clock of their own, except in Queries.Now,
// which reads the database's clock when asked.
package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/wire"
)

// Opener returns a new, empty, not yet migrated store that nothing else
// uses, and arranges for it to be closed when the test ends.
type Opener func(t *testing.T) store.Store

// Run runs the conformance suite. Every subtest opens its own store with
// open, so subtests run in parallel.
func Run(t *testing.T, open Opener) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s store.Store)
	}{
		{"Projects", testProjects},
		{"ProjectWrites", testProjectWrites},
		{"Keys", testKeys},
		{"EnumsStored", testEnumsStored},
		{"Endpoints", testEndpoints},
		{"EndpointUpdatePolicy", testEndpointUpdatePolicy},
		{"EndpointCircuit", testEndpointCircuit},
		{"EndpointPause", testEndpointPause},
		{"Audit", testAudit},
		{"Tools", testTools},
		{"Runs", testRuns},
		{"JobInsert", testJobInsert},
		{"JobsInsert", testJobsInsert},
		{"JobIdempotency", testJobIdempotency},
		{"JobUpdate", testJobUpdate},
		{"JobsBatch", testJobsBatch},
		{"JobList", testJobList},
		{"JobSearch", testJobSearch},
		{"JobCounters", testJobCounters},
		{"ConcurrentJobCounters", testConcurrentJobCounters},
		{"CountDue", testCountDue},
		{"JobCountsByState", testJobCountsByState},
		{"DueEndpoints", testDueEndpoints},
		{"JobsClaimable", testJobsClaimable},
		{"JobsClaim", testJobsClaim},
		{"JobsClaimDue", testJobsClaimDue},
		{"CountRunning", testCountRunning},
		{"CountScheduled", testCountScheduled},
		{"AttemptsFinishedSince", testAttemptsFinishedSince},
		{"ClaimsSince", testClaimsSince},
		{"NextDueAt", testNextDueAt},
		{"ExpiredLeases", testExpiredLeases},
		{"JobsPrune", testJobsPrune},
		{"Attempts", testAttempts},
		{"AttemptsBatch", testAttemptsBatch},
		{"AttemptOutcomes", testAttemptOutcomes},
		{"Workers", testWorkers},
		{"HistoryCursor", testHistoryCursor},
		{"HistoryRollUp", testHistoryRollUp},
		{"Now", testNow},
		{"TxRollback", testTxRollback},
		{"Read", testRead},
		{"ConcurrentWriters", testConcurrentWriters},
		{"ConcurrentClaims", testConcurrentClaims},
		{"ConcurrentClaimsDue", testConcurrentClaimsDue},
		{"Notify", testNotify},
		{"Ping", testPing},
		{"Close", testClose},
	}
	t.Run("Migrate", func(t *testing.T) {
		t.Parallel()
		testMigrate(t, open(t))
	})
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := open(t)
			if _, err := s.Migrate(t.Context()); err != nil {
				t.Fatalf("migrate: %v", err)
			}
			tc.fn(t, s)
		})
	}
}

// testProjectWrites: ProjectNoteWrite counts a project's operator writes,
// only in transactions that commit, every one of concurrent writers, and
// never another project's.
func testProjectWrites(t *testing.T, s store.Store) {
	ctx := t.Context()
	a := newProject(t, s, "a")
	b := newProject(t, s, "b")
	writes := func(id int64) (n int64) {
		t.Helper()
		read(t, s, func(q store.Queries) (err error) {
			n, err = q.ProjectWrites(ctx, id)
			return err
		})
		return n
	}
	if n := writes(a.ID); n != 0 {
		t.Errorf("a new project has %d writes, want 0", n)
	}
	tx(t, s, func(q store.Queries) error { return q.ProjectNoteWrite(ctx, a.ID) })
	tx(t, s, func(q store.Queries) error {
		if err := q.ProjectNoteWrite(ctx, a.ID); err != nil {
			return err
		}
		// The transaction's own read sees its write.
		n, err := q.ProjectWrites(ctx, a.ID)
		if err == nil && n != 2 {
			t.Errorf("ProjectWrites inside the writing transaction = %d, want 2", n)
		}
		return err
	})
	rollback := errors.New("roll back")
	if err := s.Tx(ctx, func(q store.Queries) error {
		if err := q.ProjectNoteWrite(ctx, a.ID); err != nil {
			return err
		}
		return rollback
	}); !errors.Is(err, rollback) {
		t.Fatalf("Tx = %v, want the rollback error", err)
	}
	if n := writes(a.ID); n != 2 {
		t.Errorf("after two committed writes and one rolled back, ProjectWrites = %d, want 2", n)
	}
	const writers = 8
	var wg sync.WaitGroup
	for range writers {
		wg.Go(func() {
			if err := s.Tx(ctx, func(q store.Queries) error { return q.ProjectNoteWrite(ctx, a.ID) }); err != nil {
				t.Errorf("concurrent ProjectNoteWrite: %v", err)
			}
		})
	}
	wg.Wait()
	if n := writes(a.ID); n != 2+writers {
		t.Errorf("after %d concurrent writes, ProjectWrites = %d, want %d", writers, n, 2+writers)
	}
	if n := writes(b.ID); n != 0 {
		t.Errorf("project b has %d writes after a's, want 0", n)
	}
	txErr(t, s, "ProjectNoteWrite of a missing id", store.ErrNotFound, func(q store.Queries) error {
		return q.ProjectNoteWrite(ctx, b.ID+100)
	})
	read(t, s, func(q store.Queries) error {
		_, err := q.ProjectWrites(ctx, b.ID+100)
		wantErr(t, "ProjectWrites of a missing id", err, store.ErrNotFound)
		return nil
	})
}

// testNow: Queries.Now reads the database's clock at the moment of the
// call, in a write transaction and in a read. Both test databases run on
// this machine, so it reads within a minute of this process's clock; and
// a read some milliseconds later inside the same transaction reads later
// (PostgreSQL's now() would not: it is the transaction's start).
func testNow(t *testing.T, s store.Store) {
	before := time.Now().UnixMilli()
	var a, b, c int64
	tx(t, s, func(q store.Queries) (err error) {
		if a, err = q.Now(t.Context()); err != nil {
			return err
		}
		// Real time must pass for the clock to move; this is the clock
		// under test, so no fake one will do.
		time.Sleep(20 * time.Millisecond)
		b, err = q.Now(t.Context())
		return err
	})
	read(t, s, func(q store.Queries) (err error) {
		c, err = q.Now(t.Context())
		return err
	})
	after := time.Now().UnixMilli()
	for _, v := range []int64{a, b, c} {
		if v < before-60_000 || v > after+60_000 {
			t.Errorf("Now read %d; this process read %d before and %d after", v, before, after)
		}
	}
	if b-a < 10 {
		t.Errorf("Now read %d and then, 20 ms later in the same transaction, %d: it must read the time of the call", a, b)
	}
	if c < b {
		t.Errorf("Now went back from %d to %d", b, c)
	}
}

// --- helpers ---

// tx runs fn in a write transaction and fails the test on error.
func tx(t *testing.T, s store.Store, fn func(q store.Queries) error) {
	t.Helper()
	if err := s.Tx(t.Context(), fn); err != nil {
		t.Fatalf("tx: %v", err)
	}
}

// read runs fn in a read transaction and fails the test on error.
func read(t *testing.T, s store.Store, fn func(q store.Queries) error) {
	t.Helper()
	if err := s.Read(t.Context(), fn); err != nil {
		t.Fatalf("read: %v", err)
	}
}

// wantErr fails unless err matches target.
func wantErr(t *testing.T, what string, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("%s: got error %v, want %v", what, err, target)
	}
}

// txErr runs fn in its own transaction and expects it to fail with target.
func txErr(t *testing.T, s store.Store, what string, target error, fn func(q store.Queries) error) {
	t.Helper()
	wantErr(t, what, s.Tx(t.Context(), fn), target)
}

func ptr(v int64) *int64 { return &v }

// fixture is a project with one endpoint and one tool bound to it.
type fixture struct {
	p    *store.Project
	ep   *store.Endpoint
	tool *store.Tool
}

func newProject(t *testing.T, s store.Store, name string) *store.Project {
	t.Helper()
	p := &store.Project{Name: name, Plan: wire.PlanPro, CreatedAt: 1000}
	tx(t, s, func(q store.Queries) error { return q.ProjectCreate(t.Context(), p) })
	return p
}

func newEndpoint(t *testing.T, s store.Store, projectID int64, name string) *store.Endpoint {
	t.Helper()
	ep := &store.Endpoint{ProjectID: projectID, Name: name, Policy: json.RawMessage(`{"preset":"STANDARD"}`), DefaultTimeoutMs: 30_000,
		MaxConcurrent: 10, CircuitThreshold: 5, CircuitOpenMs: 60_000, Version: 1, CreatedAt: 1000, UpdatedAt: 1000, CircuitState: wire.CircuitClosed}
	tx(t, s, func(q store.Queries) error { return q.EndpointCreate(t.Context(), ep) })
	return ep
}

func newTool(t *testing.T, s store.Store, projectID, endpointID int64, name, version string) *store.Tool {
	t.Helper()
	tl := &store.Tool{ProjectID: projectID, Name: name, Version: version, EndpointID: endpointID, Description: "d", CreatedAt: 1000}
	tx(t, s, func(q store.Queries) error { return q.ToolCreate(t.Context(), tl) })
	return tl
}

func newFixture(t *testing.T, s store.Store) *fixture {
	t.Helper()
	f := &fixture{p: newProject(t, s, "acme")}
	f.ep = newEndpoint(t, s, f.p.ID, "stripe")
	f.tool = newTool(t, s, f.p.ID, f.ep.ID, "charge", "v1")
	return f
}

// job returns a scheduled job of the tool, not yet inserted.
func job(p *store.Project, ep *store.Endpoint, tl *store.Tool, dueAt int64) *store.Job {
	return &store.Job{ProjectID: p.ID, ToolID: tl.ID, Tool: tl.Name, Version: tl.Version, EndpointID: ep.ID, Endpoint: ep.Name,
		Payload: json.RawMessage(`{"amount":100}`), Policy: json.RawMessage(`{"preset":"STANDARD","maxAttempts":5}`), MaxAttempts: 5,
		TimeoutMs: 30_000, State: wire.JobScheduled, DueAt: dueAt, CreatedAt: 1000, UpdatedAt: 1000}
}

func (f *fixture) insert(t *testing.T, s store.Store, jobs ...*store.Job) {
	t.Helper()
	tx(t, s, func(q store.Queries) error {
		for _, j := range jobs {
			if err := q.JobInsert(t.Context(), j); err != nil {
				return err
			}
		}
		return nil
	})
}

// setState writes a job's state (and finish time for finished states).
// setState moves a job to a state. A running job's attempt is finished
// first (as failed, at finishedAt), as the engine always does: an attempt
// is stored when it ends, and until then it is the running job's.
func setState(t *testing.T, s store.Store, j *store.Job, state wire.JobState, finishedAt int64) {
	t.Helper()
	tx(t, s, func(q store.Queries) error {
		if err := endAttempt(t.Context(), q, j.ID, state, finishedAt); err != nil {
			return err
		}
		j.State, j.FinishedAt = state, finishedAt
		return q.JobUpdate(t.Context(), j)
	})
}

// endAttempt finishes the running attempt of a job that is leaving
// running for state.
func endAttempt(ctx context.Context, q store.Queries, id int64, state wire.JobState, at int64) error {
	cur, err := q.JobGetAnyProject(ctx, id)
	if err != nil || cur.State != wire.JobRunning || state == wire.JobRunning || cur.Attempt == 0 {
		return err
	}
	a := store.RunningAttempt(cur)
	a.FinishedAt, a.Outcome = max(at, cur.ClaimedAt), "failed"
	return q.AttemptFinish(ctx, &a)
}

// reschedule finishes a running job's attempt and schedules the job again.
func reschedule(t *testing.T, s store.Store, id, dueAt int64) {
	t.Helper()
	tx(t, s, func(q store.Queries) error {
		if err := endAttempt(t.Context(), q, id, wire.JobScheduled, dueAt); err != nil {
			return err
		}
		j, err := q.JobGetAnyProject(t.Context(), id)
		if err != nil {
			return err
		}
		j.State, j.DueAt, j.LeaseToken = wire.JobScheduled, dueAt, ""
		return q.JobUpdate(t.Context(), j)
	})
}

func claim(t *testing.T, s store.Store, workerID, lease string, now int64, ids ...int64) {
	t.Helper()
	tx(t, s, func(q store.Queries) error {
		return q.JobsClaim(t.Context(), &store.JobsClaimParams{IDs: ids, WorkerID: workerID, LeaseToken: lease, Now: now})
	})
}

func ids(jobs []store.Job) []int64 {
	out := make([]int64, len(jobs))
	for i := range jobs {
		out[i] = jobs[i].ID
	}
	return out
}

func getJob(t *testing.T, s store.Store, id int64) *store.Job {
	t.Helper()
	var j *store.Job
	read(t, s, func(q store.Queries) (err error) {
		j, err = q.JobGetAnyProject(t.Context(), id)
		return err
	})
	return j
}

// --- migrations and health ---

func testMigrate(t *testing.T, s store.Store) {
	ctx := t.Context()
	before, err := s.Migrations(ctx)
	if err != nil {
		t.Fatalf("migrations before migrate: %v", err)
	}
	if len(before) == 0 {
		t.Fatal("driver has no migrations")
	}
	for i, m := range before {
		if m.Version != i+1 || m.Name == "" || m.Applied {
			t.Fatalf("migration %d before migrate = %+v, want version %d, a name, not applied", i, m, i+1)
		}
	}
	if before[0].Name != "initial" {
		t.Errorf("first migration is %q, want \"initial\"", before[0].Name)
	}
	applied, err := s.Migrate(ctx)
	if err != nil {
		t.Fatalf("migrate: %v", err)
	}
	if len(applied) != len(before) || applied[0] != "0001_initial" {
		t.Fatalf("migrate applied %v, want all %d migrations starting with 0001_initial", applied, len(before))
	}
	again, err := s.Migrate(ctx)
	if err != nil || len(again) != 0 {
		t.Fatalf("second migrate applied %v (err %v), want nothing", again, err)
	}
	after, err := s.Migrations(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range after {
		if !m.Applied {
			t.Errorf("migration %04d_%s not marked applied", m.Version, m.Name)
		}
	}
	if d := s.Driver(); d != "sqlite" && d != "postgres" {
		t.Errorf("Driver() = %q", d)
	}
	// The schema works: a project round trips.
	newProject(t, s, "after-migrate")
	// A failed read of the migrations is an error, never a list that
	// reports every migration unapplied.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if ms, err := s.Migrations(cctx); err == nil {
		t.Errorf("Migrations with a cancelled context = %+v, want an error", ms)
	}
}

// testClose: a closed store refuses work with errors (Migrations too: it
// must not report the migrations unapplied), and closing again is
// harmless.
func testClose(t *testing.T, s store.Store) {
	ctx := t.Context()
	newProject(t, s, "before-close")
	if err := s.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	if err := s.Ping(ctx); err == nil {
		t.Error("Ping of a closed store succeeded")
	}
	ran := false
	if err := s.Tx(ctx, func(store.Queries) error { ran = true; return nil }); err == nil || ran {
		t.Errorf("Tx of a closed store = %v (fn ran: %v), want an error before fn", err, ran)
	}
	ran = false
	if err := s.Read(ctx, func(store.Queries) error { ran = true; return nil }); err == nil || ran {
		t.Errorf("Read of a closed store = %v (fn ran: %v), want an error before fn", err, ran)
	}
	if ms, err := s.Migrations(ctx); err == nil {
		t.Errorf("Migrations of a closed store = %+v, want an error", ms)
	}
	if applied, err := s.Migrate(ctx); err == nil {
		t.Errorf("Migrate of a closed store applied %v, want an error", applied)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second close: %v", err)
	}
}

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

func testPing(t *testing.T, s store.Store) {
	if err := s.Ping(t.Context()); err != nil {
		t.Fatalf("ping: %v", err)
	}
}

func testNotify(t *testing.T, s store.Store) {
	// Drain anything pending, then one Notify must produce a wake-up.
	for len(s.Wakeups()) > 0 {
		<-s.Wakeups()
	}
	if err := s.Notify(t.Context()); err != nil {
		t.Fatalf("notify: %v", err)
	}
	select {
	case <-s.Wakeups():
	case <-time.After(10 * time.Second):
		t.Fatal("no wake-up within 10s of Notify")
	}
	// Many notices may coalesce but never block the notifier.
	for range 100 {
		if err := s.Notify(t.Context()); err != nil {
			t.Fatalf("notify: %v", err)
		}
	}
}

// --- projects and keys ---

func testProjects(t *testing.T, s store.Store) {
	ctx := t.Context()
	a := newProject(t, s, "a")
	b := newProject(t, s, "b")
	if a.ID == 0 || b.ID == 0 || a.ID == b.ID {
		t.Fatalf("project ids %d, %d: want distinct non-zero", a.ID, b.ID)
	}
	tx(t, s, func(q store.Queries) error { return q.ProjectSetPlan(ctx, b.ID, wire.PlanBasic) })
	read(t, s, func(q store.Queries) error {
		got, err := q.ProjectGet(ctx, b.ID)
		if err != nil {
			return err
		}
		if want := (store.Project{ID: b.ID, Name: "b", Plan: wire.PlanBasic, CreatedAt: 1000}); *got != want {
			t.Errorf("ProjectGet = %+v, want %+v", *got, want)
		}
		n, err := q.ProjectCount(ctx)
		if err != nil {
			return err
		}
		if n != 2 {
			t.Errorf("ProjectCount = %d, want 2", n)
		}
		_, err = q.ProjectGet(ctx, b.ID+100)
		wantErr(t, "ProjectGet of a missing id", err, store.ErrNotFound)
		return nil
	})
	txErr(t, s, "ProjectSetPlan of a missing id", store.ErrNotFound, func(q store.Queries) error {
		return q.ProjectSetPlan(ctx, b.ID+100, wire.PlanFree)
	})
}

func testKeys(t *testing.T, s store.Store) {
	ctx := t.Context()
	p := newProject(t, s, "a")
	other := newProject(t, s, "b")
	owner := &store.APIKey{ProjectID: p.ID, Name: "ci", Scope: wire.ScopeOwner, Hash: "h-owner", Prefix: "rk_own", CreatedAt: 2000}
	worker := &store.APIKey{ProjectID: p.ID, Scope: wire.ScopeWorker, Hash: "h-worker", Prefix: "rk_wrk", Tools: []string{"charge@v1", "refund@v2"}, CreatedAt: 2001}
	tx(t, s, func(q store.Queries) error {
		if err := q.KeyCreate(ctx, owner); err != nil {
			return err
		}
		return q.KeyCreate(ctx, worker)
	})
	if owner.ID == 0 || worker.ID == 0 || owner.ID == worker.ID {
		t.Fatalf("key ids %d, %d", owner.ID, worker.ID)
	}
	txErr(t, s, "KeyCreate with a used hash", store.ErrConflict, func(q store.Queries) error {
		return q.KeyCreate(ctx, &store.APIKey{ProjectID: other.ID, Scope: wire.ScopeProducer, Hash: "h-owner", Prefix: "x", CreatedAt: 3000})
	})
	read(t, s, func(q store.Queries) error {
		got, err := q.KeyByHash(ctx, "h-worker")
		if err != nil {
			return err
		}
		if got.ID != worker.ID || got.ProjectID != p.ID || got.Scope != wire.ScopeWorker || got.Prefix != "rk_wrk" || got.CreatedAt != 2001 ||
			got.RevokedAt != 0 || !slices.Equal(got.Tools, worker.Tools) {
			t.Errorf("KeyByHash = %+v, want %+v", got, worker)
		}
		got, err = q.KeyByHash(ctx, "h-owner")
		if err != nil {
			return err
		}
		if got.Name != "ci" || len(got.Tools) != 0 {
			t.Errorf("owner key = %+v, want name ci and no tools", got)
		}
		_, err = q.KeyByHash(ctx, "nope")
		wantErr(t, "KeyByHash unknown", err, store.ErrNotFound)
		list, err := q.KeyList(ctx, p.ID)
		if err != nil {
			return err
		}
		if len(list) != 2 || list[0].ID != owner.ID || list[1].ID != worker.ID {
			t.Errorf("KeyList = %+v, want owner then worker", list)
		}
		list, err = q.KeyList(ctx, other.ID)
		if err != nil {
			return err
		}
		if len(list) != 0 {
			t.Errorf("KeyList of the other project = %+v, want none (the conflicting key was not stored)", list)
		}
		return nil
	})
	txErr(t, s, "KeyRevoke from another project", store.ErrNotFound, func(q store.Queries) error {
		return q.KeyRevoke(ctx, &store.KeyRevokeParams{ProjectID: other.ID, ID: owner.ID, Now: 5000})
	})
	tx(t, s, func(q store.Queries) error {
		return q.KeyRevoke(ctx, &store.KeyRevokeParams{ProjectID: p.ID, ID: owner.ID, Now: 5000})
	})
	txErr(t, s, "KeyRevoke twice", store.ErrNotFound, func(q store.Queries) error {
		return q.KeyRevoke(ctx, &store.KeyRevokeParams{ProjectID: p.ID, ID: owner.ID, Now: 6000})
	})
	read(t, s, func(q store.Queries) error {
		got, err := q.KeyByHash(ctx, "h-owner")
		if err != nil {
			return err
		}
		if got.RevokedAt != 5000 {
			t.Errorf("revoked key RevokedAt = %d, want 5000 (the first revocation)", got.RevokedAt)
		}
		return nil
	})
}

// --- endpoints ---

func testEndpoints(t *testing.T, s store.Store) {
	ctx := t.Context()
	p := newProject(t, s, "a")
	other := newProject(t, s, "b")
	stripe := &store.Endpoint{ProjectID: p.ID, Name: "stripe", Policy: json.RawMessage(`{"preset":"AGGRESSIVE"}`), DefaultTimeoutMs: 15_000,
		MaxConcurrent: 4, RateLimitPerMinute: ptr(120), CircuitThreshold: 3, CircuitOpenMs: 30_000, Version: 1, CreatedAt: 1000, UpdatedAt: 1001}
	tx(t, s, func(q store.Queries) error { return q.EndpointCreate(ctx, stripe) })
	if stripe.ID == 0 || stripe.CircuitState != wire.CircuitClosed {
		t.Fatalf("created endpoint id %d circuit %q: want an id and closed", stripe.ID, stripe.CircuitState)
	}
	openai := newEndpoint(t, s, p.ID, "openai") // nil rate limit
	otherStripe := newEndpoint(t, s, other.ID, "stripe")
	txErr(t, s, "EndpointCreate with a used name", store.ErrConflict, func(q store.Queries) error {
		return q.EndpointCreate(ctx, &store.Endpoint{ProjectID: p.ID, Name: "stripe", Policy: json.RawMessage(`{}`), Version: 1})
	})
	check := func(what string, got *store.Endpoint, want *store.Endpoint) {
		t.Helper()
		if got.ID != want.ID || got.ProjectID != want.ProjectID || got.Name != want.Name || string(got.Policy) != string(want.Policy) ||
			got.DefaultTimeoutMs != want.DefaultTimeoutMs || got.MaxConcurrent != want.MaxConcurrent || !eqPtr(got.RateLimitPerMinute, want.RateLimitPerMinute) ||
			got.CircuitThreshold != want.CircuitThreshold || got.CircuitOpenMs != want.CircuitOpenMs || got.Version != want.Version ||
			got.CreatedAt != want.CreatedAt || got.UpdatedAt != want.UpdatedAt || got.CircuitState != want.CircuitState ||
			got.CircuitFailures != want.CircuitFailures || got.CircuitOpenedAt != want.CircuitOpenedAt || got.CircuitProbeJob != want.CircuitProbeJob {
			t.Errorf("%s = %s, want %s", what, fmtEndpoint(got), fmtEndpoint(want))
		}
	}
	read(t, s, func(q store.Queries) error {
		got, err := q.EndpointGetInProject(ctx, &store.EndpointGetInProjectParams{ProjectID: p.ID, Name: "stripe"})
		if err != nil {
			return err
		}
		check("EndpointGetInProject", got, stripe)
		got, err = q.EndpointGetAnyProject(ctx, &store.EndpointGetAnyProjectParams{ID: openai.ID})
		if err != nil {
			return err
		}
		check("EndpointGetAnyProject (nil rate limit)", got, openai)
		_, err = q.EndpointGetInProject(ctx, &store.EndpointGetInProjectParams{ProjectID: p.ID, Name: "missing"})
		wantErr(t, "EndpointGetInProject missing", err, store.ErrNotFound)
		_, err = q.EndpointGetAnyProject(ctx, &store.EndpointGetAnyProjectParams{ID: otherStripe.ID + 100})
		wantErr(t, "EndpointGetAnyProject missing", err, store.ErrNotFound)
		// The name is the project's: each project finds its own endpoint;
		// by id, any project's is found.
		got, err = q.EndpointGetInProject(ctx, &store.EndpointGetInProjectParams{ProjectID: other.ID, Name: "stripe"})
		if err != nil {
			return err
		}
		check("EndpointGetInProject of the other project", got, otherStripe)
		_, err = q.EndpointGetInProject(ctx, &store.EndpointGetInProjectParams{ProjectID: other.ID, Name: "openai"})
		wantErr(t, "EndpointGetInProject of another project's name", err, store.ErrNotFound)
		got, err = q.EndpointGetAnyProject(ctx, &store.EndpointGetAnyProjectParams{ID: otherStripe.ID})
		if err != nil {
			return err
		}
		check("EndpointGetAnyProject of the other project's endpoint", got, otherStripe)
		list, err := q.EndpointList(ctx, p.ID)
		if err != nil {
			return err
		}
		if len(list) != 2 || list[0].Name != "openai" || list[1].Name != "stripe" {
			t.Errorf("EndpointList = %v, want openai, stripe", names(list))
		}
		all, err := q.EndpointList(ctx, 0)
		if err != nil {
			return err
		}
		if len(all) != 3 {
			t.Errorf("EndpointList(0) = %d endpoints, want every project's 3", len(all))
		}
		return nil
	})
	// Lock inside a write transaction reads the same row.
	tx(t, s, func(q store.Queries) error {
		got, err := q.EndpointGetAnyProject(ctx, &store.EndpointGetAnyProjectParams{ID: stripe.ID, Lock: true})
		if err != nil {
			return err
		}
		check("EndpointGetAnyProject with Lock", got, stripe)
		return nil
	})
}

func eqPtr(a, b *int64) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return *a == *b
}

func fmtEndpoint(e *store.Endpoint) string {
	rate := "nil"
	if e.RateLimitPerMinute != nil {
		rate = fmt.Sprint(*e.RateLimitPerMinute)
	}
	return fmt.Sprintf("{id %d project %d %q policy %s timeout %d max %d rate %s circuit %d/%d v%d at %d/%d state %s failures %d opened %d probe %d}",
		e.ID, e.ProjectID, e.Name, e.Policy, e.DefaultTimeoutMs, e.MaxConcurrent, rate, e.CircuitThreshold, e.CircuitOpenMs, e.Version,
		e.CreatedAt, e.UpdatedAt, e.CircuitState, e.CircuitFailures, e.CircuitOpenedAt, e.CircuitProbeJob)
}

func names(eps []store.Endpoint) []string {
	var out []string
	for _, e := range eps {
		out = append(out, e.Name)
	}
	return out
}

func testEndpointUpdatePolicy(t *testing.T, s store.Store) {
	ctx := t.Context()
	p := newProject(t, s, "a")
	ep := newEndpoint(t, s, p.ID, "stripe")
	upd := *ep
	upd.Policy = json.RawMessage(`{"preset":"CUSTOM","maxAttempts":3}`)
	upd.DefaultTimeoutMs, upd.MaxConcurrent, upd.RateLimitPerMinute = 5000, 2, ptr(60)
	upd.CircuitThreshold, upd.CircuitOpenMs, upd.UpdatedAt = 9, 1234, 7000
	tx(t, s, func(q store.Queries) error {
		return q.EndpointUpdatePolicy(ctx, &store.EndpointUpdatePolicyParams{Endpoint: &upd, ExpectedVersion: 1})
	})
	if upd.Version != 2 {
		t.Fatalf("version after update = %d, want 2", upd.Version)
	}
	// A stale version is a conflict and changes nothing; the transaction
	// stays usable so the caller can read the current row.
	stale := upd
	stale.Policy, stale.MaxConcurrent, stale.RateLimitPerMinute, stale.UpdatedAt = json.RawMessage(`{"preset":"NONE"}`), 99, nil, 9000
	tx(t, s, func(q store.Queries) error {
		wantErr(t, "EndpointUpdatePolicy with a stale version", q.EndpointUpdatePolicy(ctx, &store.EndpointUpdatePolicyParams{Endpoint: &stale, ExpectedVersion: 1}), store.ErrConflict)
		cur, err := q.EndpointGetAnyProject(ctx, &store.EndpointGetAnyProjectParams{ID: ep.ID, Lock: true})
		if err != nil {
			return fmt.Errorf("read after conflict: %w", err)
		}
		if cur.Version != 2 {
			t.Errorf("version after stale update = %d, want 2", cur.Version)
		}
		return nil
	})
	read(t, s, func(q store.Queries) error {
		got, err := q.EndpointGetAnyProject(ctx, &store.EndpointGetAnyProjectParams{ID: ep.ID})
		if err != nil {
			return err
		}
		if got.Version != 2 || string(got.Policy) != string(upd.Policy) || got.DefaultTimeoutMs != 5000 || got.MaxConcurrent != 2 ||
			!eqPtr(got.RateLimitPerMinute, ptr(60)) || got.CircuitThreshold != 9 || got.CircuitOpenMs != 1234 || got.UpdatedAt != 7000 || got.CreatedAt != 1000 {
			t.Errorf("after update and stale update: %s", fmtEndpoint(got))
		}
		return nil
	})
	// Back to unlimited: a nil rate limit is written as NULL.
	upd.RateLimitPerMinute = nil
	tx(t, s, func(q store.Queries) error {
		return q.EndpointUpdatePolicy(ctx, &store.EndpointUpdatePolicyParams{Endpoint: &upd, ExpectedVersion: 2})
	})
	read(t, s, func(q store.Queries) error {
		got, err := q.EndpointGetInProject(ctx, &store.EndpointGetInProjectParams{ProjectID: p.ID, Name: "stripe"})
		if err != nil {
			return err
		}
		if got.RateLimitPerMinute != nil || got.Version != 3 {
			t.Errorf("after clearing the rate limit: %s", fmtEndpoint(got))
		}
		return nil
	})
	txErr(t, s, "EndpointUpdatePolicy of a missing endpoint", store.ErrConflict, func(q store.Queries) error {
		missing := upd
		missing.ID += 100
		return q.EndpointUpdatePolicy(ctx, &store.EndpointUpdatePolicyParams{Endpoint: &missing, ExpectedVersion: 3})
	})
}

func testEndpointCircuit(t *testing.T, s store.Store) {
	ctx := t.Context()
	p := newProject(t, s, "a")
	ep := newEndpoint(t, s, p.ID, "stripe")
	ep.CircuitState, ep.CircuitFailures, ep.CircuitOpenedAt, ep.CircuitProbeJob = wire.CircuitHalfOpen, 4, 8000, 77
	ep.CircuitOpenedBy = "ops-key"
	ep.MaxConcurrent = 999 // not a circuit field: must not be written
	ep.PausedAt = 5        // nor a pause field
	tx(t, s, func(q store.Queries) error { return q.EndpointUpdateCircuit(ctx, ep) })
	read(t, s, func(q store.Queries) error {
		got, err := q.EndpointGetAnyProject(ctx, &store.EndpointGetAnyProjectParams{ID: ep.ID})
		if err != nil {
			return err
		}
		if got.CircuitState != wire.CircuitHalfOpen || got.CircuitFailures != 4 || got.CircuitOpenedAt != 8000 || got.CircuitProbeJob != 77 ||
			got.CircuitOpenedBy != "ops-key" || got.MaxConcurrent != 10 || got.Version != 1 || got.PausedAt != 0 {
			t.Errorf("after EndpointUpdateCircuit: %s", fmtEndpoint(got))
		}
		return nil
	})
	txErr(t, s, "EndpointUpdateCircuit of a missing endpoint", store.ErrNotFound, func(q store.Queries) error {
		missing := *ep
		missing.ID += 100
		return q.EndpointUpdateCircuit(ctx, &missing)
	})
}

// --- tools and runs ---

func testTools(t *testing.T, s store.Store) {
	ctx := t.Context()
	p := newProject(t, s, "a")
	other := newProject(t, s, "b")
	ep := newEndpoint(t, s, p.ID, "stripe")
	oep := newEndpoint(t, s, other.ID, "stripe")
	full := &store.Tool{ProjectID: p.ID, Name: "charge", Version: "v2", EndpointID: ep.ID, Description: "Charge a card",
		Schema: json.RawMessage(`{"type":"object","required":["amount"]}`), TimeoutMs: ptr(12_000),
		RetryPolicy: json.RawMessage(`{"preset":"CUSTOM","maxAttempts":4}`), CreatedAt: 3000}
	bare := &store.Tool{ProjectID: p.ID, Name: "charge", Version: "v1", EndpointID: ep.ID, CreatedAt: 3001}
	refund := &store.Tool{ProjectID: p.ID, Name: "refund", Version: "v1", EndpointID: ep.ID, Schema: json.RawMessage("null"), CreatedAt: 3002}
	hook := &store.Tool{ProjectID: p.ID, Name: "hook", Version: "v1", EndpointID: ep.ID, CreatedAt: 3003,
		Delivery: json.RawMessage(`{"method":"POST","url":"https://example.com/{id}"}`), DeliverySecret: "whsec_abc"}
	tx(t, s, func(q store.Queries) error {
		for _, tl := range []*store.Tool{full, bare, refund, hook} {
			if err := q.ToolCreate(ctx, tl); err != nil {
				return err
			}
		}
		return nil
	})
	otool := newTool(t, s, other.ID, oep.ID, "charge", "v1") // same name@version, other project
	txErr(t, s, "ToolCreate of a published name@version", store.ErrConflict, func(q store.Queries) error {
		return q.ToolCreate(ctx, &store.Tool{ProjectID: p.ID, Name: "charge", Version: "v2", EndpointID: ep.ID, CreatedAt: 4000})
	})
	read(t, s, func(q store.Queries) error {
		got, err := q.ToolGetInProject(ctx, &store.ToolGetInProjectParams{ProjectID: p.ID, Name: "charge", Version: "v2"})
		if err != nil {
			return err
		}
		if got.ID != full.ID || got.EndpointID != ep.ID || got.Description != "Charge a card" || string(got.Schema) != string(full.Schema) ||
			!eqPtr(got.TimeoutMs, ptr(12_000)) || string(got.RetryPolicy) != string(full.RetryPolicy) || got.CreatedAt != 3000 {
			t.Errorf("ToolGetInProject full = %+v", got)
		}
		got, err = q.ToolGetAnyProject(ctx, bare.ID)
		if err != nil {
			return err
		}
		if got.Name != "charge" || got.Version != "v1" || got.Schema != nil || got.TimeoutMs != nil || got.RetryPolicy != nil || got.Delivery != nil || got.DeliverySecret != "" {
			t.Errorf("ToolGetAnyProject bare = %+v, want nil schema, timeout, policy and delivery", got)
		}
		got, err = q.ToolGetAnyProject(ctx, hook.ID)
		if err != nil {
			return err
		}
		if string(got.Delivery) != string(hook.Delivery) || got.DeliverySecret != "whsec_abc" {
			t.Errorf("ToolGetAnyProject hook = %+v, want its delivery and secret", got)
		}
		hooks, err := q.ToolListDelivery(ctx)
		if err != nil {
			return err
		}
		if len(hooks) != 1 || hooks[0].ID != hook.ID {
			t.Errorf("ToolListDelivery = %+v, want only tool %d", hooks, hook.ID)
		}
		got, err = q.ToolGetAnyProject(ctx, refund.ID)
		if err != nil {
			return err
		}
		if got.Schema != nil {
			t.Errorf("a JSON null schema reads back as %q, want nil", got.Schema)
		}
		_, err = q.ToolGetInProject(ctx, &store.ToolGetInProjectParams{ProjectID: p.ID, Name: "charge", Version: "v3"})
		wantErr(t, "ToolGetInProject missing", err, store.ErrNotFound)
		_, err = q.ToolGetAnyProject(ctx, refund.ID+100)
		wantErr(t, "ToolGetAnyProject missing", err, store.ErrNotFound)
		// name@version is the project's: each project finds its own tool;
		// by id, any project's is found.
		got, err = q.ToolGetInProject(ctx, &store.ToolGetInProjectParams{ProjectID: other.ID, Name: "charge", Version: "v1"})
		if err != nil {
			return err
		}
		if got.ID != otool.ID || got.ProjectID != other.ID || got.EndpointID != oep.ID {
			t.Errorf("ToolGetInProject of the other project's charge@v1 = %+v, want tool %d", got, otool.ID)
		}
		_, err = q.ToolGetInProject(ctx, &store.ToolGetInProjectParams{ProjectID: other.ID, Name: "charge", Version: "v2"})
		wantErr(t, "ToolGetInProject of another project's name@version", err, store.ErrNotFound)
		got, err = q.ToolGetAnyProject(ctx, otool.ID)
		if err != nil {
			return err
		}
		if got.ID != otool.ID || got.ProjectID != other.ID || got.Name != "charge" || got.Version != "v1" {
			t.Errorf("ToolGetAnyProject of the other project's tool = %+v, want tool %d", got, otool.ID)
		}
		list, err := q.ToolList(ctx, p.ID)
		if err != nil {
			return err
		}
		var refs []string
		for _, tl := range list {
			refs = append(refs, tl.Name+"@"+tl.Version)
		}
		if want := []string{"charge@v1", "charge@v2", "hook@v1", "refund@v1"}; !slices.Equal(refs, want) {
			t.Errorf("ToolList = %v, want %v", refs, want)
		}
		return nil
	})
}

func testRuns(t *testing.T, s store.Store) {
	ctx := t.Context()
	p := newProject(t, s, "a")
	other := newProject(t, s, "b")
	r := &store.Run{ProjectID: p.ID, Name: "nightly", CreatedAt: 2000}
	tx(t, s, func(q store.Queries) error { return q.RunCreate(ctx, r) })
	if r.ID == 0 || r.State != "open" {
		t.Fatalf("created run %+v, want an id and state open", r)
	}
	txErr(t, s, "RunFinish from another project", store.ErrNotFound, func(q store.Queries) error {
		return q.RunFinish(ctx, &store.RunFinishParams{ProjectID: other.ID, ID: r.ID, Now: 3000})
	})
	tx(t, s, func(q store.Queries) error {
		return q.RunFinish(ctx, &store.RunFinishParams{ProjectID: p.ID, ID: r.ID, Now: 3000})
	})
	txErr(t, s, "RunFinish twice", store.ErrNotFound, func(q store.Queries) error {
		return q.RunFinish(ctx, &store.RunFinishParams{ProjectID: p.ID, ID: r.ID, Now: 4000})
	})
	read(t, s, func(q store.Queries) error {
		got, err := q.RunGetInProject(ctx, &store.RunGetInProjectParams{ProjectID: p.ID, ID: r.ID})
		if err != nil {
			return err
		}
		if want := (store.Run{ID: r.ID, ProjectID: p.ID, Name: "nightly", State: "finished", CreatedAt: 2000, FinishedAt: 3000}); *got != want {
			t.Errorf("RunGetInProject = %+v, want %+v", *got, want)
		}
		_, err = q.RunGetInProject(ctx, &store.RunGetInProjectParams{ProjectID: other.ID, ID: r.ID})
		wantErr(t, "RunGetInProject from another project", err, store.ErrNotFound)
		return nil
	})
}

// --- jobs ---

func sameJob(t *testing.T, what string, got, want *store.Job) {
	t.Helper()
	g, w := *got, *want
	if string(g.Payload) != string(w.Payload) || string(g.Policy) != string(w.Policy) {
		t.Errorf("%s: payload %s policy %s, want %s and %s", what, g.Payload, g.Policy, w.Payload, w.Policy)
	}
	g.Payload, g.Policy, w.Payload, w.Policy = nil, nil, nil, nil
	if fmt.Sprintf("%+v", g) != fmt.Sprintf("%+v", w) {
		t.Errorf("%s:\n got %+v\nwant %+v", what, g, w)
	}
}

func testJobsInsert(t *testing.T, s store.Store) {
	ctx := t.Context()
	f := newFixture(t, s)
	first := job(f.p, f.ep, f.tool, 1)
	f.insert(t, s, first)
	var js []*store.Job
	for i := range 1200 {
		j := job(f.p, f.ep, f.tool, int64(2000+i))
		j.Payload = json.RawMessage(fmt.Sprintf(`{"n":%d}`, i))
		js = append(js, j)
	}
	tx(t, s, func(q store.Queries) error { return q.JobsInsert(ctx, js) })
	tx(t, s, func(q store.Queries) error { return q.JobsInsert(ctx, nil) })
	for i, j := range js {
		if j.ID <= first.ID || (i > 0 && j.ID <= js[i-1].ID) {
			t.Fatalf("JobsInsert ids not ascending after %d: job %d has id %d", first.ID, i, j.ID)
		}
	}
	for _, i := range []int{0, 1, 599, 1199} {
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

func testJobList(t *testing.T, s store.Store) {
	ctx := t.Context()
	f := newFixture(t, s)
	ep2 := newEndpoint(t, s, f.p.ID, "openai")
	chat := newTool(t, s, f.p.ID, ep2.ID, "chat", "v1")
	chargeV2 := newTool(t, s, f.p.ID, f.ep.ID, "charge", "v2")
	other := newProject(t, s, "other")
	oep := newEndpoint(t, s, other.ID, "stripe")
	otool := newTool(t, s, other.ID, oep.ID, "charge", "v1")
	r := &store.Run{ProjectID: f.p.ID, CreatedAt: 1000}
	tx(t, s, func(q store.Queries) error { return q.RunCreate(ctx, r) })

	// Ten jobs created at 100, 200, ... with a mix of tools and states.
	var all []*store.Job
	for i := range 10 {
		var j *store.Job
		switch i % 3 {
		case 0:
			j = job(f.p, f.ep, f.tool, 1)
		case 1:
			j = job(f.p, ep2, chat, 1)
		case 2:
			j = job(f.p, f.ep, chargeV2, 1)
		}
		j.CreatedAt = int64(100 * (i + 1))
		if i%2 == 0 {
			j.RunID = r.ID
		}
		all = append(all, j)
	}
	f.insert(t, s, all...)
	f.insert(t, s, job(other, oep, otool, 1))
	setState(t, s, all[1], wire.JobSucceeded, 5000)
	setState(t, s, all[4], wire.JobFailed, 5000)

	// want lists the indexes of all matching, newest first.
	want := func(match func(i int, j *store.Job) bool) []int64 {
		var out []int64
		for i := len(all) - 1; i >= 0; i-- {
			if match(i, all[i]) {
				out = append(out, all[i].ID)
			}
		}
		return out
	}
	cases := []struct {
		name string
		f    store.JobFilter
		want []int64
	}{
		{"project", store.JobFilter{}, want(func(int, *store.Job) bool { return true })},
		{"states", store.JobFilter{States: []wire.JobState{wire.JobSucceeded, wire.JobFailed}}, []int64{all[4].ID, all[1].ID}},
		{"tool", store.JobFilter{Tool: "charge"}, want(func(_ int, j *store.Job) bool { return j.Tool == "charge" })},
		{"tool and version", store.JobFilter{Tool: "charge", Version: "v2"}, want(func(_ int, j *store.Job) bool { return j.ToolID == chargeV2.ID })},
		{"endpoint", store.JobFilter{EndpointID: ep2.ID}, want(func(_ int, j *store.Job) bool { return j.EndpointID == ep2.ID })},
		{"run", store.JobFilter{RunID: r.ID}, want(func(i int, _ *store.Job) bool { return i%2 == 0 })},
		{"created window", store.JobFilter{CreatedAfter: 300, CreatedBefore: 600}, want(func(_ int, j *store.Job) bool { return j.CreatedAt >= 300 && j.CreatedAt < 600 })},
		{"limit", store.JobFilter{Limit: 3}, []int64{all[9].ID, all[8].ID, all[7].ID}},
		{"cursor", store.JobFilter{AfterID: all[7].ID, Limit: 3}, []int64{all[6].ID, all[5].ID, all[4].ID}},
		{"cursor with filter", store.JobFilter{AfterID: all[6].ID, Tool: "charge", Version: "v1"}, []int64{all[3].ID, all[0].ID}},
		{"nothing", store.JobFilter{States: []wire.JobState{wire.JobExhausted}}, nil},
	}
	read(t, s, func(q store.Queries) error {
		for _, c := range cases {
			c.f.ProjectID = f.p.ID
			got, err := q.JobList(ctx, c.f)
			if err != nil {
				return fmt.Errorf("%s: %w", c.name, err)
			}
			if !slices.Equal(ids(got), c.want) {
				t.Errorf("JobList %s = %v, want %v", c.name, ids(got), c.want)
			}
			if c.f.Limit != 0 { // JobCount ignores the limit
				continue
			}
			n, err := q.JobCount(ctx, c.f)
			if err != nil {
				return fmt.Errorf("count %s: %w", c.name, err)
			}
			if n != int64(len(c.want)) {
				t.Errorf("JobCount %s = %d, want %d", c.name, n, len(c.want))
			}
		}
		return nil
	})
	// Walking the cursor page by page visits every job once.
	var seen []int64
	cursor := int64(0)
	for {
		var page []store.Job
		read(t, s, func(q store.Queries) (err error) {
			page, err = q.JobList(ctx, store.JobFilter{ProjectID: f.p.ID, AfterID: cursor, Limit: 4})
			return err
		})
		if len(page) == 0 {
			break
		}
		seen = append(seen, ids(page)...)
		cursor = page[len(page)-1].ID
	}
	if w := want(func(int, *store.Job) bool { return true }); !slices.Equal(seen, w) {
		t.Errorf("paging = %v, want %v", seen, w)
	}
}

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

// --- claiming ---

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

func testCountRunning(t *testing.T, s store.Store) {
	ctx := t.Context()
	f := newFixture(t, s)
	ep2 := newEndpoint(t, s, f.p.ID, "openai")
	chat := newTool(t, s, f.p.ID, ep2.ID, "chat", "v1")
	var js []*store.Job
	for range 4 {
		js = append(js, job(f.p, f.ep, f.tool, 1))
	}
	other := job(f.p, ep2, chat, 1)
	f.insert(t, s, append(js, other)...)
	claim(t, s, "w", "l", 10, js[0].ID, js[1].ID, js[2].ID)
	claim(t, s, "w", "l", 10, other.ID)
	read(t, s, func(q store.Queries) error {
		for _, c := range []struct{ limit, want int64 }{{10, 3}, {3, 3}, {2, 2}, {1, 1}} {
			n, err := q.CountRunning(ctx, &store.CountRunningParams{EndpointID: f.ep.ID, Limit: c.limit})
			if err != nil {
				return err
			}
			if n != c.want {
				t.Errorf("CountRunning(limit %d) = %d, want %d", c.limit, n, c.want)
			}
		}
		n, err := q.CountRunning(ctx, &store.CountRunningParams{EndpointID: ep2.ID + 100, Limit: 10})
		if err != nil {
			return err
		}
		if n != 0 {
			t.Errorf("CountRunning of an idle endpoint = %d", n)
		}
		return nil
	})
}

func testCountScheduled(t *testing.T, s store.Store) {
	ctx := t.Context()
	f := newFixture(t, s)
	v2 := newTool(t, s, f.p.ID, f.ep.ID, "charge", "v2")
	ep2 := newEndpoint(t, s, f.p.ID, "openai")
	chat := newTool(t, s, f.p.ID, ep2.ID, "chat", "v1")
	// Scheduled due at 1000, 2000 (two tools), 3000; one running; one elsewhere.
	a, b, c, d := job(f.p, f.ep, f.tool, 1000), job(f.p, f.ep, v2, 2000), job(f.p, f.ep, f.tool, 3000), job(f.p, f.ep, f.tool, 500)
	other := job(f.p, ep2, chat, 1)
	f.insert(t, s, a, b, c, d, other)
	claim(t, s, "w", "l", 600, d.ID)
	read(t, s, func(q store.Queries) error {
		for _, c := range []struct{ dueBy, n, due int64 }{{999, 3, 0}, {1000, 3, 1}, {2500, 3, 2}, {3000, 3, 3}} {
			n, due, err := q.CountScheduled(ctx, &store.CountScheduledParams{EndpointID: f.ep.ID, DueBy: c.dueBy})
			if err != nil {
				return err
			}
			if n != c.n || due != c.due {
				t.Errorf("CountScheduled(due by %d) = %d, %d; want %d, %d", c.dueBy, n, due, c.n, c.due)
			}
		}
		n, due, err := q.CountScheduled(ctx, &store.CountScheduledParams{EndpointID: ep2.ID + 100, DueBy: 5000})
		if err != nil || n != 0 || due != 0 {
			t.Errorf("CountScheduled of an endpoint without jobs = %d, %d, %v", n, due, err)
		}
		return nil
	})
}

func testAttemptsFinishedSince(t *testing.T, s store.Store) {
	ctx := t.Context()
	f := newFixture(t, s)
	ep2 := newEndpoint(t, s, f.p.ID, "openai")
	chat := newTool(t, s, f.p.ID, ep2.ID, "chat", "v1")
	js := []*store.Job{job(f.p, f.ep, f.tool, 1), job(f.p, f.ep, f.tool, 1), job(f.p, f.ep, f.tool, 1), job(f.p, f.ep, f.tool, 1)}
	other := job(f.p, ep2, chat, 1)
	f.insert(t, s, append(js, other)...)
	claim(t, s, "w", "l", 10, js[0].ID, js[1].ID, js[2].ID, js[3].ID, other.ID)
	// Finished at 100, 200, 300; js[3] still running; one elsewhere at 200.
	for i, j := range js[:3] {
		setState(t, s, getJob(t, s, j.ID), wire.JobFailed, int64(100*(i+1)))
	}
	setState(t, s, getJob(t, s, other.ID), wire.JobFailed, 200)
	read(t, s, func(q store.Queries) error {
		for _, c := range []struct{ since, limit, want int64 }{{0, 10, 3}, {100, 10, 3}, {101, 10, 2}, {300, 10, 1}, {301, 10, 0}, {0, 2, 2}} {
			n, err := q.AttemptsFinishedSince(ctx, &store.AttemptsFinishedSinceParams{EndpointID: f.ep.ID, Since: c.since, Limit: c.limit})
			if err != nil {
				return err
			}
			if n != c.want {
				t.Errorf("AttemptsFinishedSince(since %d, limit %d) = %d, want %d", c.since, c.limit, n, c.want)
			}
		}
		return nil
	})
}

func testClaimsSince(t *testing.T, s store.Store) {
	ctx := t.Context()
	f := newFixture(t, s)
	ep2 := newEndpoint(t, s, f.p.ID, "openai")
	chat := newTool(t, s, f.p.ID, ep2.ID, "chat", "v1")
	js := []*store.Job{job(f.p, f.ep, f.tool, 1), job(f.p, f.ep, f.tool, 1), job(f.p, f.ep, f.tool, 1)}
	other := job(f.p, ep2, chat, 1)
	f.insert(t, s, append(js, other)...)
	// Claims at 3000, 1000, 2000 (not in time order) and one elsewhere at 1500.
	claim(t, s, "w", "l", 3000, js[0].ID)
	claim(t, s, "w", "l", 1000, js[1].ID)
	claim(t, s, "w", "l", 2000, js[2].ID)
	claim(t, s, "w", "l", 1500, other.ID)
	cases := []struct {
		since, limit, n, earliest int64
	}{
		{0, 10, 3, 1000},
		{1000, 10, 3, 1000}, // since is inclusive
		{1001, 10, 2, 2000},
		{2000, 10, 2, 2000},
		{3000, 10, 1, 3000},
		{3001, 10, 0, 0},
		{0, 2, 2, 1000}, // stops at limit, still reports the earliest
		{1001, 1, 1, 2000},
	}
	read(t, s, func(q store.Queries) error {
		for _, c := range cases {
			n, earliest, err := q.ClaimsSince(ctx, &store.ClaimsSinceParams{EndpointID: f.ep.ID, Since: c.since, Limit: c.limit})
			if err != nil {
				return err
			}
			if n != c.n || earliest != c.earliest {
				t.Errorf("ClaimsSince(since %d, limit %d) = %d, %d; want %d, %d", c.since, c.limit, n, earliest, c.n, c.earliest)
			}
		}
		return nil
	})
}

func testNextDueAt(t *testing.T, s store.Store) {
	ctx := t.Context()
	f := newFixture(t, s)
	v2 := newTool(t, s, f.p.ID, f.ep.ID, "charge", "v2")
	early := job(f.p, f.ep, f.tool, 100)
	f.insert(t, s, early, job(f.p, f.ep, f.tool, 3000), job(f.p, f.ep, v2, 2000))
	check := func(what string, tools []int64, want int64) {
		t.Helper()
		read(t, s, func(q store.Queries) error {
			got, err := q.NextDueAt(ctx, tools)
			if err != nil {
				return err
			}
			if got != want {
				t.Errorf("NextDueAt %s = %d, want %d", what, got, want)
			}
			return nil
		})
	}
	check("all", []int64{f.tool.ID, v2.ID}, 100)
	check("v2", []int64{v2.ID}, 2000)
	check("no tools", nil, 0)
	check("unknown tool", []int64{v2.ID + 100}, 0)
	setState(t, s, early, wire.JobRunning, 0) // only scheduled jobs count
	check("after the earliest runs", []int64{f.tool.ID, v2.ID}, 2000)
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

func testAttempts(t *testing.T, s store.Store) {
	ctx := t.Context()
	f := newFixture(t, s)
	j := job(f.p, f.ep, f.tool, 1)
	f.insert(t, s, j)
	claim(t, s, "w-1", "lease-1", 1000, j.ID)
	done := &store.Attempt{JobID: j.ID, Number: 1, EndpointID: f.ep.ID, WorkerID: "w-1", LeaseToken: "lease-1", ClaimedAt: 1000,
		FinishedAt: 1500, Outcome: "failed", Classification: "http_status", HTTPStatus: 503, RetryAfterMs: 60_000, Message: "upstream \"down\"",
		BaseDelayMs: 10_000.5, JitterSample: 0.123456789, MinDelayMs: 8000, MaxDelayMs: 12_000, SelectedMs: 60_000, NextDueAt: 61_500, Counted: true,
		RequestMs: 412, ResponseHeaders: `{"Retry-After":"60"}`, ResponseExcerpt: "{\"error\":\"down\"} é"}
	tx(t, s, func(q store.Queries) error {
		if err := q.AttemptFinish(ctx, done); err != nil {
			return err
		}
		jj, err := q.JobGetAnyProject(ctx, j.ID)
		if err != nil {
			return err
		}
		jj.State, jj.DueAt = wire.JobScheduled, 61_500
		return q.JobUpdate(ctx, jj)
	})
	claim(t, s, "w-2", "lease-2", 62_000, j.ID)
	read(t, s, func(q store.Queries) error {
		got, err := q.AttemptGet(ctx, &store.AttemptGetParams{JobID: j.ID, Number: 1})
		if err != nil {
			return err
		}
		if *got != *done {
			t.Errorf("AttemptGet after finish:\n got %+v\nwant %+v", *got, *done)
		}
		_, err = q.AttemptGet(ctx, &store.AttemptGetParams{JobID: j.ID, Number: 3})
		wantErr(t, "AttemptGet missing", err, store.ErrNotFound)
		list, err := q.AttemptList(ctx, j.ID)
		if err != nil {
			return err
		}
		if len(list) != 2 || list[0] != *done || list[1].Number != 2 || list[1].FinishedAt != 0 || list[1].Counted {
			t.Errorf("AttemptList = %+v", list)
		}
		return nil
	})
	txErr(t, s, "AttemptFinish of a missing attempt", store.ErrNotFound, func(q store.Queries) error {
		missing := *done
		missing.Number = 9
		return q.AttemptFinish(ctx, &missing)
	})
}

// testAttemptsBatch holds AttemptsByKeys and AttemptsFinish to AttemptGet
// and AttemptFinish.
func testAttemptsBatch(t *testing.T, s store.Store) {
	ctx := t.Context()
	f := newFixture(t, s)
	var js []*store.Job
	for range 600 {
		js = append(js, job(f.p, f.ep, f.tool, 1))
	}
	f.insert(t, s, js...)
	claim(t, s, "w-1", "lease-1", 1000, ids(derefJobs(js))...)
	// A second attempt for the first ten jobs: attempt 1 finished (failed
	// at 1500), attempt 2 running. Of those, AttemptsByKeys reads attempt 1
	// of the odd ones and attempt 2 of the even ones; AttemptsFinish
	// finishes the running attempts read.
	for _, j := range js[:10] {
		reschedule(t, s, j.ID, 1500)
	}
	claim(t, s, "w-2", "lease-2", 2000, ids(derefJobs(js[:10]))...)
	var keys []store.AttemptKey
	var fin []*store.Attempt
	for i, j := range js {
		n := int64(1)
		if i < 10 && i%2 == 0 {
			n = 2
		}
		keys = append(keys, store.AttemptKey{JobID: j.ID, Number: n})
		if i < 10 && n == 1 {
			continue // finished already; only read
		}
		a := &store.Attempt{JobID: j.ID, Number: n, EndpointID: f.ep.ID, WorkerID: "w-1", LeaseToken: "lease-1", ClaimedAt: 1000,
			FinishedAt: int64(1500 + i), Outcome: "failed", Classification: "http_status", HTTPStatus: 503, RetryAfterMs: int64(i), Message: fmt.Sprintf("m %d \"q\"", i),
			BaseDelayMs: 10_000.5 + float64(i), JitterSample: 0.123456789, MinDelayMs: 8000, MaxDelayMs: 12_000, SelectedMs: 60_000, NextDueAt: 61_500, Counted: i%2 == 0}
		if n == 2 {
			a.WorkerID, a.LeaseToken, a.ClaimedAt = "w-2", "lease-2", 2000
		}
		if i%3 == 0 {
			a.Outcome, a.Classification, a.HTTPStatus, a.Message, a.Counted = "succeeded", "success", 200, "", false
		}
		fin = append(fin, a)
	}
	missingKeys := append(slices.Clone(keys), store.AttemptKey{JobID: js[20].ID, Number: 2}, store.AttemptKey{JobID: js[0].ID + 10_000, Number: 1})
	tx(t, s, func(q store.Queries) error {
		got, err := q.AttemptsByKeys(ctx, missingKeys)
		if err != nil {
			return err
		}
		if len(got) != len(keys) {
			t.Errorf("AttemptsByKeys = %d attempts, want %d", len(got), len(keys))
		}
		for i := range got {
			want, err := q.AttemptGet(ctx, &store.AttemptGetParams{JobID: got[i].JobID, Number: got[i].Number})
			if err != nil {
				return err
			}
			if got[i] != *want {
				t.Errorf("AttemptsByKeys row %+v, AttemptGet %+v", got[i], *want)
			}
		}
		if none, err := q.AttemptsByKeys(ctx, nil); err != nil || len(none) != 0 {
			t.Errorf("AttemptsByKeys(no keys) = %v, %v", none, err)
		}
		if err := q.AttemptsFinish(ctx, fin); err != nil {
			return err
		}
		return q.AttemptsFinish(ctx, nil)
	})
	read(t, s, func(q store.Queries) error {
		for _, a := range fin {
			got, err := q.AttemptGet(ctx, &store.AttemptGetParams{JobID: a.JobID, Number: a.Number})
			if err != nil {
				return err
			}
			if *got != *a {
				t.Errorf("after AttemptsFinish:\n got %+v\nwant %+v", *got, *a)
			}
		}
		// The other attempt of the first ten jobs is untouched.
		got, err := q.AttemptGet(ctx, &store.AttemptGetParams{JobID: js[0].ID, Number: 1})
		if err != nil {
			return err
		}
		if want := (store.Attempt{JobID: js[0].ID, Number: 1, EndpointID: f.ep.ID, WorkerID: "w-1", LeaseToken: "lease-1", ClaimedAt: 1000,
			FinishedAt: 1500, Outcome: "failed"}); *got != want {
			t.Errorf("attempt 1 of job %d = %+v, want %+v", js[0].ID, *got, want)
		}
		return nil
	})
	// A finished attempt is not finished again, even while its job is
	// still running (here it is: nothing moved it on).
	txErr(t, s, "AttemptFinish of a finished attempt", store.ErrNotFound, func(q store.Queries) error {
		again := *fin[0]
		again.Outcome = "timed_out"
		return q.AttemptFinish(ctx, &again)
	})
	txErr(t, s, "AttemptsFinish with a missing attempt", store.ErrNotFound, func(q store.Queries) error {
		a, missing := *fin[0], *fin[1]
		a.Outcome, missing.Number = "timed_out", 9
		return q.AttemptsFinish(ctx, []*store.Attempt{&a, &missing})
	})
	read(t, s, func(q store.Queries) error {
		got, err := q.AttemptGet(ctx, &store.AttemptGetParams{JobID: fin[0].JobID, Number: fin[0].Number})
		if err == nil && *got != *fin[0] {
			t.Errorf("attempt changed by a refused AttemptsFinish: %+v", got)
		}
		return err
	})
}

// testAttemptOutcomes counts an endpoint's finished attempts by outcome
// from a time on: each attempt of a job counts, running attempts and other
// endpoints' do not, and the time is inclusive.
func testAttemptOutcomes(t *testing.T, s store.Store) {
	ctx := t.Context()
	f := newFixture(t, s)
	ep2 := newEndpoint(t, s, f.p.ID, "openai")
	chat := newTool(t, s, f.p.ID, ep2.ID, "chat", "v1")
	js := []*store.Job{job(f.p, f.ep, f.tool, 1), job(f.p, f.ep, f.tool, 1), job(f.p, f.ep, f.tool, 1), job(f.p, f.ep, f.tool, 1), job(f.p, f.ep, f.tool, 1)}
	other := job(f.p, ep2, chat, 1)
	f.insert(t, s, append(js, other)...)
	claim(t, s, "w", "l", 10, js[0].ID, js[1].ID, js[2].ID, js[3].ID, js[4].ID, other.ID)
	// finish ends the running attempt of job id with outcome at time at,
	// and schedules the job again.
	finish := func(id int64, outcome wire.AttemptOutcome, at int64) {
		t.Helper()
		tx(t, s, func(q store.Queries) error {
			j, err := q.JobGetAnyProject(ctx, id)
			if err != nil {
				return err
			}
			a := store.RunningAttempt(j)
			a.FinishedAt, a.Outcome = at, outcome
			if err := q.AttemptFinish(ctx, &a); err != nil {
				return err
			}
			j.State, j.DueAt, j.LeaseToken, j.UpdatedAt = wire.JobScheduled, at, "", at
			return q.JobUpdate(ctx, j)
		})
	}
	// On f.ep: succeeded at 100; failed at 200, then its second attempt
	// succeeded at 350; failed at 300; timed out at 400; js[4] running.
	// On ep2: succeeded at 300.
	finish(js[0].ID, wire.OutcomeSucceeded, 100)
	finish(js[1].ID, wire.OutcomeFailed, 200)
	claim(t, s, "w", "l2", 250, js[1].ID)
	finish(js[1].ID, wire.OutcomeSucceeded, 350)
	finish(js[2].ID, wire.OutcomeFailed, 300)
	finish(js[3].ID, wire.OutcomeTimedOut, 400)
	finish(other.ID, wire.OutcomeSucceeded, 300)
	type counts = map[wire.AttemptOutcome]int64
	cases := []struct {
		name     string
		endpoint int64
		since    int64
		want     counts
	}{
		{"every attempt", f.ep.ID, 0, counts{wire.OutcomeSucceeded: 2, wire.OutcomeFailed: 2, wire.OutcomeTimedOut: 1}},
		{"since is inclusive", f.ep.ID, 200, counts{wire.OutcomeSucceeded: 1, wire.OutcomeFailed: 2, wire.OutcomeTimedOut: 1}},
		{"after the first failure", f.ep.ID, 201, counts{wire.OutcomeSucceeded: 1, wire.OutcomeFailed: 1, wire.OutcomeTimedOut: 1}},
		{"the last one", f.ep.ID, 400, counts{wire.OutcomeTimedOut: 1}},
		{"none since", f.ep.ID, 401, counts{}},
		{"another endpoint", ep2.ID, 0, counts{wire.OutcomeSucceeded: 1}},
		{"an endpoint without attempts", ep2.ID + 100, 0, counts{}},
	}
	read(t, s, func(q store.Queries) error {
		for _, c := range cases {
			got, err := q.AttemptOutcomes(ctx, &store.AttemptOutcomesParams{EndpointID: c.endpoint, Since: c.since})
			if err != nil {
				return fmt.Errorf("%s: %w", c.name, err)
			}
			if !maps.Equal(got, c.want) {
				t.Errorf("AttemptOutcomes %s (since %d) = %v, want %v", c.name, c.since, got, c.want)
			}
		}
		return nil
	})
}

func derefJobs(js []*store.Job) []store.Job {
	out := make([]store.Job, len(js))
	for i, j := range js {
		out[i] = *j
	}
	return out
}

// --- transactions ---

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

// testJobSearch: JobFilter.Q matches an id exactly, or an exact
// idempotency key, tool or endpoint name, or a substring of the payload or
// the last error, ASCII case-insensitively, with LIKE's wildcards literal;
// LastClassification and LastError are stored and read back.
func testJobSearch(t *testing.T, s store.Store) {
	ctx := t.Context()
	f := newFixture(t, s)
	ep2 := newEndpoint(t, s, f.p.ID, "openai")
	chat := newTool(t, s, f.p.ID, ep2.ID, "chat", "v1")
	other := newProject(t, s, "other")
	oep := newEndpoint(t, s, other.ID, "stripe")
	otool := newTool(t, s, other.ID, oep.ID, "charge", "v1")

	a := job(f.p, f.ep, f.tool, 1)
	a.Payload, a.IdempotencyKey = json.RawMessage(`{"customer":"Alice-42","note":"100% off_now"}`), "order-7"
	b := job(f.p, ep2, chat, 1)
	b.Payload = json.RawMessage(`{"prompt":"hello"}`)
	c := job(f.p, f.ep, f.tool, 1)
	c.Payload = json.RawMessage(`{"customer":"bob"}`)
	o := job(other, oep, otool, 1)
	o.Payload = json.RawMessage(`{"customer":"alice-42"}`)
	f.insert(t, s, a, b, c, o)
	tx(t, s, func(q store.Queries) error {
		c.State, c.LastClassification, c.LastError = wire.JobFailed, "http_503", "Upstream said: Service Unavailable"
		c.FinishedAt = 2000
		return q.JobsUpdate(ctx, []*store.Job{c}, nil)
	})
	if got := getJob(t, s, c.ID); got.LastClassification != "http_503" || got.LastError != "Upstream said: Service Unavailable" {
		t.Fatalf("last classification and error = %q, %q; want them stored", got.LastClassification, got.LastError)
	}
	tx(t, s, func(q store.Queries) error {
		b.LastClassification, b.LastError = "succeeded", ""
		return q.JobUpdate(ctx, b)
	})
	if got := getJob(t, s, b.ID); got.LastClassification != "succeeded" || got.LastError != "" {
		t.Fatalf("JobUpdate: last classification and error = %q, %q", got.LastClassification, got.LastError)
	}

	cases := []struct {
		q    string
		want []int64
	}{
		{strconv.FormatInt(b.ID, 10), []int64{b.ID}},
		{strconv.FormatInt(o.ID, 10), nil}, // another project's id
		{"order-7", []int64{a.ID}},
		{"order", nil}, // keys match exactly
		{"chat", []int64{b.ID}},
		{"openai", []int64{b.ID}},
		{"stripe", []int64{c.ID, a.ID}},
		{"ALICE", []int64{a.ID}},
		{"100%", []int64{a.ID}},
		{"0%", []int64{a.ID}},
		{"o_f", nil}, // _ is literal: "off" does not match
		{"off_now", []int64{a.ID}},
		{"service unavail", []int64{c.ID}},
		{"nothing like it", nil},
	}
	for _, tc := range cases {
		var got []store.Job
		var n int64
		read(t, s, func(q store.Queries) (err error) {
			if got, err = q.JobList(ctx, store.JobFilter{ProjectID: f.p.ID, Q: tc.q}); err != nil {
				return err
			}
			n, err = q.JobCount(ctx, store.JobFilter{ProjectID: f.p.ID, Q: tc.q})
			return err
		})
		if !slices.Equal(ids(got), tc.want) || n != int64(len(tc.want)) {
			t.Errorf("q %q: got %v (count %d), want %v", tc.q, ids(got), n, tc.want)
		}
	}
	// A bounded search reads the newest ScanLimit jobs of the other
	// filters only, and JobScanEnd says where it stopped.
	read(t, s, func(q store.Queries) error {
		f := store.JobFilter{ProjectID: f.p.ID, Q: "stripe", ScanLimit: 2}
		got, err := q.JobList(ctx, f) // newest two: c and b; c matches
		if err != nil {
			return err
		}
		end, err := q.JobScanEnd(ctx, f)
		if err != nil {
			return err
		}
		if !slices.Equal(ids(got), []int64{c.ID}) || end != b.ID {
			t.Errorf("bounded search: got %v, scan end %d; want [%d] and %d", ids(got), end, c.ID, b.ID)
		}
		// Counts read the same window: c only, not a below it.
		n, err := q.JobCount(ctx, f)
		if err != nil {
			return err
		}
		byState, err := q.JobCountGroupByState(ctx, f)
		if err != nil {
			return err
		}
		var sum int64
		for _, v := range byState {
			sum += v
		}
		all, err := q.JobCount(ctx, store.JobFilter{ProjectID: f.ProjectID, Q: "stripe"})
		if err != nil {
			return err
		}
		if n != 1 || sum != 1 || byState[c.State] != 1 || all != 2 {
			t.Errorf("bounded counts: JobCount %d, by state %v, unbounded %d; want 1, {%s:1}, 2", n, byState, all, c.State)
		}
		f.AfterID = end
		if got, err = q.JobList(ctx, f); err != nil {
			return err
		}
		if end, err = q.JobScanEnd(ctx, f); err != nil {
			return err
		}
		if !slices.Equal(ids(got), []int64{a.ID}) || end != 0 {
			t.Errorf("bounded search, next window: got %v, scan end %d; want [%d] and 0", ids(got), end, a.ID)
		}
		for _, nf := range []store.JobFilter{{ProjectID: f.ProjectID, ScanLimit: 2}, {ProjectID: f.ProjectID, Q: strconv.FormatInt(a.ID, 10), ScanLimit: 1}} {
			if end, err := q.JobScanEnd(ctx, nf); err != nil || end != 0 {
				t.Errorf("JobScanEnd(%+v) = %d, %v; want 0 without a text search", nf, end, err)
			}
		}
		return nil
	})

	// Search narrows the other filters.
	var got []store.Job
	read(t, s, func(q store.Queries) (err error) {
		got, err = q.JobList(ctx, store.JobFilter{ProjectID: f.p.ID, Q: "stripe", States: []wire.JobState{wire.JobFailed}})
		return err
	})
	if !slices.Equal(ids(got), []int64{c.ID}) {
		t.Errorf("q stripe, state failed: got %v, want [%d]", ids(got), c.ID)
	}
}

// checkCounters compares the counters (JobCountsByEndpoint,
// JobCountsByState) with counts of the jobs themselves, per endpoint and
// state, in every project given.
func checkCounters(t *testing.T, s store.Store, projects ...*store.Project) {
	t.Helper()
	ctx := t.Context()
	read(t, s, func(q store.Queries) error {
		for _, p := range projects {
			eps, err := q.EndpointList(ctx, p.ID)
			if err != nil {
				return err
			}
			counters, err := q.JobCountsByEndpoint(ctx, &store.JobCountsByEndpointParams{ProjectID: p.ID})
			if err != nil {
				return err
			}
			got := map[string]int64{}
			for _, c := range counters {
				got[fmt.Sprintf("endpoint %d %s", c.EndpointID, c.State)] = c.Count
			}
			want := map[string]int64{}
			total := map[wire.JobState]int64{}
			for _, ep := range eps {
				for _, st := range wire.JobStates() {
					n, err := q.JobCount(ctx, store.JobFilter{ProjectID: p.ID, EndpointID: ep.ID, States: []wire.JobState{st}})
					if err != nil {
						return err
					}
					if n != 0 {
						want[fmt.Sprintf("endpoint %d %s", ep.ID, st)] = n
						total[st] += n
					}
				}
				one, err := q.JobCountsByEndpoint(ctx, &store.JobCountsByEndpointParams{ProjectID: p.ID, EndpointID: ep.ID})
				if err != nil {
					return err
				}
				for _, c := range one {
					if c.EndpointID != ep.ID || got[fmt.Sprintf("endpoint %d %s", c.EndpointID, c.State)] != c.Count {
						t.Errorf("project %d: counters of endpoint %d alone: %+v, not as in the project's", p.ID, ep.ID, c)
					}
				}
			}
			if !maps.Equal(got, want) {
				t.Errorf("project %d: counters %v, but the jobs count %v", p.ID, got, want)
			}
			byState, err := q.JobCountsByState(ctx, p.ID)
			if err != nil {
				return err
			}
			if !maps.Equal(byState, total) {
				t.Errorf("project %d: JobCountsByState %v, want %v", p.ID, byState, total)
			}
			grouped, err := q.JobCountGroupByState(ctx, store.JobFilter{ProjectID: p.ID})
			if err != nil {
				return err
			}
			if !maps.Equal(grouped, total) {
				t.Errorf("project %d: JobCountGroupByState %v, want %v", p.ID, grouped, total)
			}
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

// testCountDue: only scheduled jobs due by Now count, across the
// endpoint's tools, up to the limit.
func testCountDue(t *testing.T, s store.Store) {
	ctx := t.Context()
	f := newFixture(t, s)
	v2 := newTool(t, s, f.p.ID, f.ep.ID, "charge", "v2")
	ep2 := newEndpoint(t, s, f.p.ID, "openai")
	chat := newTool(t, s, f.p.ID, ep2.ID, "chat", "v1")
	f.insert(t, s, job(f.p, f.ep, f.tool, 10), job(f.p, f.ep, v2, 20), job(f.p, f.ep, v2, 30), job(f.p, f.ep, f.tool, 100), job(f.p, ep2, chat, 10))
	running := job(f.p, f.ep, f.tool, 5)
	f.insert(t, s, running)
	claim(t, s, "w", "l", 6, running.ID)
	for _, tc := range []struct{ now, limit, want int64 }{{30, 100, 3}, {9, 100, 0}, {1000, 100, 4}, {1000, 2, 2}} {
		var n int64
		read(t, s, func(q store.Queries) (err error) {
			n, err = q.CountDue(ctx, &store.CountDueParams{EndpointID: f.ep.ID, Now: tc.now, Limit: tc.limit})
			return err
		})
		if n != tc.want {
			t.Errorf("CountDue(now %d, limit %d) = %d, want %d", tc.now, tc.limit, n, tc.want)
		}
	}
}
