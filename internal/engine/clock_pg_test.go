package engine_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/getratchet/ratchet/internal/clock"
	"github.com/getratchet/ratchet/internal/engine"
	"github.com/getratchet/ratchet/internal/store/postgres"
	"github.com/getratchet/ratchet/internal/store/postgres/pgtest"
)

// TestDatabaseClockPostgres: two engines share one PostgreSQL database and
// their clocks disagree by two hours, one an hour behind the machine's and
// one an hour ahead. With DatabaseClock both take the time of their
// decisions from the database: a job enqueued through the one ahead is due
// now for the one behind; the lease the one behind hands out ends a
// timeout after the database's now; the one ahead does not rescue it; and
// the holder's report is taken.
func TestDatabaseClockPostgres(t *testing.T) {
	url := pgtest.URL(t)
	ctx := context.Background()
	const key = "rk_clock_owner_key_0123456789abcdef"
	open := func(clk clock.Clock) (*engine.Engine, *engine.Principal) {
		st, err := postgres.Open(ctx, url, postgres.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		if _, err := st.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		e, err := engine.New(engine.Config{Store: st, Clock: clk, DatabaseClock: true})
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := e.Bootstrap(ctx, key); err != nil {
			t.Fatal(err)
		}
		p, err := e.Authenticate(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		return e, p
	}
	behind, pb := open(clock.NewFake(time.Now().Add(-time.Hour)))
	ahead, pa := open(clock.NewFake(time.Now().Add(time.Hour)))
	h := &harness{t: t, ctx: ctx, e: behind, owner: pb}
	h.endpoint("api", `{"preset":"STANDARD","defaultTimeoutMs":30000,"maxConcurrent":10}`)
	h.tool(`{"name":"call","version":"1","endpoint":"api"}`)

	enq, err := ahead.Enqueue(ctx, pa, engine.EnqueueRequest{Tool: "call@1", Payload: json.RawMessage(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	before := time.Now().UnixMilli()
	cs, err := behind.Claim(ctx, pb, engine.ClaimRequest{WorkerID: "w", Tools: []string{"call@1"}, Max: 1})
	if err != nil {
		t.Fatal(err)
	}
	after := time.Now().UnixMilli()
	if len(cs) != 1 || cs[0].Job.ID != enq.Job.ID {
		t.Fatalf("the engine an hour behind claimed %d jobs, want job %d, enqueued through the engine an hour ahead and due at once (due at %s)",
			len(cs), enq.Job.ID, engine.FormatTime(enq.Job.DueAt))
	}
	// The database runs on this machine: its now is this process's.
	if exp := cs[0].LeaseExpiresAt; exp < before+30_000-1000 || exp > after+30_000+1000 {
		t.Errorf("the lease ends at %s, want 30 s after the claim by the database's clock (%s)", engine.FormatTime(exp), engine.FormatTime(before+30_000))
	}
	n, err := ahead.Rescue(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("the engine an hour ahead rescued %d leases that end in 30 s", n)
	}
	if _, err := behind.Report(ctx, pb, engine.ReportRequest{JobID: cs[0].Job.ID, LeaseToken: cs[0].LeaseToken, Report: classifyOK}); err != nil {
		t.Errorf("the holder's report was refused: %v", err)
	}
}
