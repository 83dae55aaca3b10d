package postgres_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/internal/store/postgres/pgtest"
	"github.com/getratchet/ratchet/wire"
)

// TestServerRestart stops and starts a private PostgreSQL under an open
// store: while the server is down every request fails promptly with
// ErrUnavailable, afterwards the same store serves requests again without
// being reopened, committed rows are all there, and the wake-up listener
// reconnects by itself.
func TestServerRestart(t *testing.T) {
	t.Parallel()
	srv := pgtest.NewServer(t)
	db := openURL(t, srv.URL())
	ctx := t.Context()
	if _, err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	p := &store.Project{Name: "acme", Plan: wire.PlanPro, CreatedAt: 1}
	ep := &store.Endpoint{Name: "stripe", Policy: json.RawMessage(`{}`), EndpointSettings: wire.EndpointSettings{DefaultTimeoutMs: 1000, MaxConcurrent: 1}, Version: 1}
	tl := &store.Tool{Name: "charge", Version: "v1"}
	insertJobs := func(n int) error {
		return db.Tx(ctx, func(q store.Queries) error {
			for range n {
				j := &store.Job{ProjectID: p.ID, ToolID: tl.ID, Tool: "charge", Version: "v1", EndpointID: ep.ID, Endpoint: "stripe",
					Payload: json.RawMessage(`{}`), Policy: json.RawMessage(`{}`), MaxAttempts: 1, TimeoutMs: 1000, State: wire.JobScheduled, DueAt: 1}
				if err := q.JobInsert(ctx, j); err != nil {
					return err
				}
			}
			return nil
		})
	}
	if err := db.Tx(ctx, func(q store.Queries) error {
		if err := q.ProjectCreate(ctx, p); err != nil {
			return err
		}
		ep.ProjectID = p.ID
		if err := q.EndpointCreate(ctx, ep); err != nil {
			return err
		}
		tl.ProjectID, tl.EndpointID = p.ID, ep.ID
		return q.ToolCreate(ctx, tl)
	}); err != nil {
		t.Fatal(err)
	}
	if err := insertJobs(25); err != nil {
		t.Fatal(err)
	}

	srv.Stop(t)
	down := []struct {
		name string
		call func(ctx context.Context) error
	}{
		{"Ping", db.Ping},
		{"Tx", func(ctx context.Context) error { return insertJobs(1) }},
		{"Read", func(ctx context.Context) error {
			return db.Read(ctx, func(q store.Queries) error { _, err := q.ProjectCount(ctx); return err })
		}},
		{"Migrations", func(ctx context.Context) error { _, err := db.Migrations(ctx); return err }},
	}
	for _, c := range down {
		// Twice: the first call may meet a pooled connection the server cut,
		// the second must dial and be refused.
		for range 2 {
			start := time.Now()
			err := c.call(ctx)
			if !errors.Is(err, store.ErrUnavailable) {
				t.Errorf("%s while the server is down = %v, want ErrUnavailable", c.name, err)
			}
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("%s while down took %s, want a prompt failure", c.name, d)
			}
		}
	}
	if err := db.Notify(ctx); err != nil {
		t.Errorf("Notify while down = %v; it must not fail the caller", err)
	}

	srv.Start(t)
	// The pool may still hold connections from before the stop; the store
	// must get past them on its own within a few requests.
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := db.Ping(ctx)
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("store did not recover within 30s of the restart: %v", err)
		}
		time.Sleep(50 * time.Millisecond) // polling a real server coming back; nothing to signal on
	}
	var err error
	for range 3 { // stale pooled connections fail once each at most
		if err = insertJobs(5); err == nil {
			break
		}
		if !errors.Is(err, store.ErrUnavailable) {
			t.Fatalf("Tx after restart = %v", err)
		}
	}
	if err != nil {
		t.Fatalf("Tx after restart still failing: %v", err)
	}
	var n int64
	if err := db.Read(ctx, func(q store.Queries) (err error) {
		n, err = q.JobCount(ctx, store.JobFilter{ProjectID: p.ID})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if n != 30 {
		t.Errorf("after the restart %d jobs are stored, want the 25 committed before plus 5 after", n)
	}

	// The listener reconnected: a notice from another node arrives. Two
	// round trips in a row, since the reconnect itself signals once.
	other := openURL(t, srv.URL())
	got := 0
	for got < 2 {
		if time.Now().After(deadline.Add(30 * time.Second)) {
			t.Fatal("wake-ups from another node never arrived after the restart")
		}
		for len(db.Wakeups()) > 0 {
			<-db.Wakeups()
		}
		if err := other.Notify(ctx); err != nil {
			t.Fatal(err)
		}
		select {
		case <-db.Wakeups():
			got++
		case <-time.After(500 * time.Millisecond):
			got = 0
		}
	}
}
