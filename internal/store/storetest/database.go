package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/getratchet/ratchet/internal/store"
)

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
