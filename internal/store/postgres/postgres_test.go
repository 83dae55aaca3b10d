package postgres_test

import (
	"context"
	"database/sql"
	"errors"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/internal/store/postgres"
	"github.com/getratchet/ratchet/internal/store/postgres/pgtest"
	"github.com/getratchet/ratchet/internal/store/sqlite"
	"github.com/getratchet/ratchet/internal/store/storetest"
)

// open opens the driver on a fresh schema of the test server.
func open(t *testing.T) *postgres.DB {
	t.Helper()
	return openURL(t, pgtest.URL(t))
}

func openURL(t *testing.T, url string) *postgres.DB {
	t.Helper()
	db, err := postgres.Open(t.Context(), url, postgres.Options{MaxConns: 4})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// TestUpgrade0003 runs migration 0003 over a database an earlier Ratchet
// left at 0002 with an attempt running.
func TestUpgrade0003(t *testing.T) {
	url := pgtest.URL(t)
	db, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	files, err := postgres.Migrations()
	if err != nil {
		t.Fatal(err)
	}
	storetest.Upgrade0003(t, db, files, func() store.Store { return openURL(t, url) })
}

// TestUpgrade0009 runs migration 0009 over a database an earlier Ratchet
// left at 0008 with jobs and a tool.
func TestUpgrade0009(t *testing.T) {
	url := pgtest.URL(t)
	db, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	files, err := postgres.Migrations()
	if err != nil {
		t.Fatal(err)
	}
	storetest.Upgrade0009(t, db, files, func() store.Store { return openURL(t, url) })
}

// TestUpgrade0006 runs migration 0006 over a database an earlier Ratchet
// left at 0005 with jobs and attempts.
func TestUpgrade0006(t *testing.T) {
	url := pgtest.URL(t)
	db, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	files, err := postgres.Migrations()
	if err != nil {
		t.Fatal(err)
	}
	storetest.Upgrade0006(t, db, files, func() store.Store { return openURL(t, url) })
}

// TestConformance runs the shared store suite, one schema per subtest.
func TestConformance(t *testing.T) {
	t.Parallel()
	pgtest.ServerURL(t)
	storetest.Run(t, func(t *testing.T) store.Store { return open(t) })
}

func TestIsURL(t *testing.T) {
	t.Parallel()
	for url, want := range map[string]bool{
		"postgres://u@h/db": true, "postgresql://h/db": true, "ratchet.db": false, "file:x.db": false, "": false,
	} {
		if got := postgres.IsURL(url); got != want {
			t.Errorf("IsURL(%q) = %v, want %v", url, got, want)
		}
	}
}

// TestWakeupsAcrossNodes: a Notify on one node wakes a claimer on another.
func TestWakeupsAcrossNodes(t *testing.T) {
	t.Parallel()
	url := pgtest.URL(t)
	a, b := openURL(t, url), openURL(t, url)
	for len(b.Wakeups()) > 0 {
		<-b.Wakeups()
	}
	if err := a.Notify(t.Context()); err != nil {
		t.Fatal(err)
	}
	select {
	case <-b.Wakeups():
	case <-time.After(10 * time.Second):
		t.Fatal("node b got no wake-up within 10s of node a's Notify")
	}
}

// TestMigrateConcurrently: nodes starting together apply each migration once.
func TestMigrateConcurrently(t *testing.T) {
	t.Parallel()
	url := pgtest.URL(t)
	nodes := []*postgres.DB{openURL(t, url), openURL(t, url), openURL(t, url)}
	var wg sync.WaitGroup
	applied := make([][]string, len(nodes))
	errs := make([]error, len(nodes))
	for i, db := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			applied[i], errs[i] = db.Migrate(t.Context())
		}()
	}
	wg.Wait()
	total := 0
	for i := range nodes {
		if errs[i] != nil {
			t.Fatalf("node %d: %v", i, errs[i])
		}
		total += len(applied[i])
	}
	files, err := postgres.Migrations()
	if err != nil {
		t.Fatal(err)
	}
	if total != len(files) {
		t.Errorf("three nodes applied %v in all, want each of the %d migrations once", applied, len(files))
	}
}

// TestMigrationsMatchSQLite: both drivers carry the same numbers and names.
func TestMigrationsMatchSQLite(t *testing.T) {
	t.Parallel()
	pg, err := postgres.Migrations()
	if err != nil {
		t.Fatal(err)
	}
	lite, err := sqlite.Migrations()
	if err != nil {
		t.Fatal(err)
	}
	if len(pg) != len(lite) {
		t.Fatalf("postgres has %d migrations, sqlite %d", len(pg), len(lite))
	}
	for i := range pg {
		if pg[i].Version != lite[i].Version || pg[i].Name != lite[i].Name {
			t.Errorf("migration %d: postgres %04d_%s, sqlite %04d_%s", i, pg[i].Version, pg[i].Name, lite[i].Version, lite[i].Name)
		}
	}
}

// TestUnreachable: a server that does not answer is ErrUnavailable.
func TestUnreachable(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	_, err = postgres.Open(ctx, "postgres://ratchet@"+addr+"/ratchet?sslmode=disable", postgres.Options{})
	if !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("Open of a closed port = %v, want ErrUnavailable", err)
	}
}

func TestOptionsValidate(t *testing.T) {
	t.Parallel()
	_, err := postgres.Open(t.Context(), "postgres://h/db", postgres.Options{MaxConns: -1})
	if err == nil || !strings.Contains(err.Error(), "MaxConns") {
		t.Fatalf("Open with MaxConns -1 = %v, want an error naming MaxConns", err)
	}
}
