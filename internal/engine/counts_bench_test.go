package engine_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/internal/store/postgres"
	"github.com/getratchet/ratchet/internal/store/postgres/pgtest"
	"github.com/getratchet/ratchet/wire"
)

// BenchmarkHeldCount counts a paused endpoint's held jobs, the overview's
// and the held list's one count (engine.dueCount), with 200,000 due and
// 1,000 scheduled later: past 10,000 due it reads the later ones and
// takes the rest from the scheduled counter, so the count is exact and
// costs about 11,000 index entries, not 200,000. BenchmarkHeldCountAll
// reads every due entry instead, for comparison (docs/dashboard.md).
func BenchmarkHeldCount(b *testing.B) {
	h, _ := seedDue(b, newHarness(&testing.T{}), 200_000, 1_000)
	benchHeld(b, h)
}

// BenchmarkHeldCountPostgres is BenchmarkHeldCount on PostgreSQL
// (RATCHET_TEST_POSTGRES_URL).
func BenchmarkHeldCountPostgres(b *testing.B) {
	st, err := postgres.Open(context.Background(), pgtest.URL(b), postgres.Options{})
	if err != nil {
		b.Fatal(err)
	}
	h, _ := seedDue(b, newHarnessOn(&testing.T{}, st), 200_000, 1_000)
	benchHeld(b, h)
}

func benchHeld(b *testing.B, h *harness) {
	b.ResetTimer()
	for b.Loop() {
		p, err := h.e.HeldJobs(h.ctx, h.owner, "payments", 0, 1)
		if err != nil || p.Held != 200_000 || p.Capped {
			b.Fatalf("%v %+v", err, p)
		}
	}
}

// BenchmarkHeldCountAll counts the same due jobs by reading each.
func BenchmarkHeldCountAll(b *testing.B) {
	h, ep := seedDue(b, newHarness(&testing.T{}), 200_000, 1_000)
	now := h.clk.Now().UnixMilli()
	b.ResetTimer()
	for b.Loop() {
		err := h.st.Read(h.ctx, func(q store.Queries) error {
			n, err := q.CountDue(h.ctx, &store.CountDueParams{EndpointID: ep.ID, Now: now, Limit: 1 << 40})
			if err == nil && n != 200_000 {
				b.Fatalf("counted %d", n)
			}
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}

// seedDue makes a paused endpoint with due jobs due now and later jobs
// due in an hour.
func seedDue(b *testing.B, h *harness, due, later int) (*harness, *store.Endpoint) {
	ep := h.endpoint("payments", `{"maxConcurrent":3}`)
	tl := h.tool(`{"name":"pay","version":"1","endpoint":"payments"}`)
	if _, err := h.e.PauseEndpoint(h.ctx, h.owner, "payments", ""); err != nil {
		b.Fatal(err)
	}
	now := h.clk.Now().UnixMilli()
	for start := 0; start < due+later; start += 1000 {
		err := h.st.Tx(h.ctx, func(q store.Queries) error {
			js := make([]*store.Job, 0, 1000)
			for i := start; i < min(start+1000, due+later); i++ {
				at := now - 1000
				if i >= due {
					at = now + 3_600_000
				}
				js = append(js, &store.Job{ProjectID: h.owner.ProjectID, ToolID: tl.ID, Tool: tl.Name, Version: tl.Version, EndpointID: ep.ID, Endpoint: ep.Name,
					Payload: json.RawMessage(`{}`), Policy: json.RawMessage(`{"preset":"STANDARD"}`), MaxAttempts: 5, TimeoutMs: 30_000,
					State: wire.JobScheduled, DueAt: at, CreatedAt: now, UpdatedAt: now})
			}
			return q.JobsInsert(h.ctx, js)
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	return h, ep
}
