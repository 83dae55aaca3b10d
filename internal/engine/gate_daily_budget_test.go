package engine_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getratchet/ratchet/internal/engine"
	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/internal/store/postgres"
	"github.com/getratchet/ratchet/internal/store/postgres/pgtest"
	"github.com/getratchet/ratchet/wire"
)

// The budget's scenario for TestEveryGateCountsItsHolds: with a budget of
// one claim, the second claim of the day is held and counted.
func init() {
	gateHoldScenarios[wire.GateDailyBudget] = gateHoldScenario{settings: `"maxConcurrent":10,"dailyCallBudget":1`}
}

// TestGateDailyBudget: an endpoint with a dailyCallBudget admits that many
// claims per UTC day; the next job is held by daily_budget until the next
// midnight UTC, which explain names, and the next day admits again. On
// SQLite and on PostgreSQL.
func TestGateDailyBudget(t *testing.T) {
	for name, open := range map[string]func(t *testing.T) *harness{
		"sqlite": newHarness,
		"postgres": func(t *testing.T) *harness {
			st, err := postgres.Open(context.Background(), pgtest.URL(t), postgres.Options{})
			if err != nil {
				t.Fatal(err)
			}
			return newHarnessOn(t, st)
		},
	} {
		t.Run(name, func(t *testing.T) {
			h := open(t)
			ep := h.endpoint("api", `{"maxConcurrent":100,"dailyCallBudget":3}`)
			if ep.DailyCallBudget == nil || *ep.DailyCallBudget != 3 {
				t.Fatalf("stored dailyCallBudget %v, want 3", ep.DailyCallBudget)
			}
			h.tool(`{"name":"call","version":"1","endpoint":"api"}`)
			for range 5 {
				h.enqueue("call@1", nil)
			}
			first := h.claim([]string{"call@1"}, 10)
			if len(first) != 3 {
				t.Fatalf("claimed %d, want 3 (the day's budget)", len(first))
			}
			for _, c := range first {
				h.succeed(c)
			}
			h.clk.Advance(2 * time.Hour) // 11:00 UTC: still the same day
			if got := h.claim([]string{"call@1"}, 10); len(got) != 0 {
				t.Fatalf("claimed %d more the same day", len(got))
			}
			list, _ := h.e.Jobs(h.ctx, h.owner, store.JobFilter{States: []wire.JobState{wire.JobScheduled}})
			hd := h.hold(list[0].ID)
			midnight := time.Date(2026, 12, 3, 0, 0, 0, 0, time.UTC)
			wantDetail := `endpoint "api" used 3 of its 3 calls today (dailyCallBudget, UTC); the budget renews at 2026-12-03T00:00:00.000Z`
			if hd.Gate != wire.GateDailyBudget || hd.Until != engine.FormatTime(midnight.UnixMilli()) || hd.Detail != wantDetail {
				t.Fatalf("hold = %+v, want daily_budget until %s: %s", hd, engine.FormatTime(midnight.UnixMilli()), wantDetail)
			}
			h.clk.Advance(midnight.Sub(h.clk.Now()) - time.Millisecond) // 23:59:59.999
			if got := h.claim([]string{"call@1"}, 10); len(got) != 0 {
				t.Fatalf("claimed %d a millisecond before midnight", len(got))
			}
			h.clk.Advance(time.Millisecond) // midnight UTC: a new day
			if got := h.claim([]string{"call@1"}, 10); len(got) != 2 {
				t.Fatalf("the next day: claimed %d, want the 2 left", len(got))
			}
		})
	}
}

// TestOptimisticClaimsHoldDailyBudgetPostgres: claimers racing on
// PostgreSQL, where the optimistic path claims without the endpoint's lock
// and confirms under it, never claim more than the day's budget.
func TestOptimisticClaimsHoldDailyBudgetPostgres(t *testing.T) {
	h := newPGHarness(t)
	h.endpoint("metered", `{"preset":"STANDARD","maxConcurrent":1000,"dailyCallBudget":40}`)
	h.tool(`{"name":"call","version":"v1","endpoint":"metered"}`)
	const n = 200
	for range n {
		h.enqueue("call@v1", nil)
	}
	var mu sync.Mutex
	seen := map[int64]int{}
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for range 20 {
				cs, err := h.e.Claim(h.ctx, h.owner, engine.ClaimRequest{WorkerID: fmt.Sprintf("w%d", w), Tools: []string{"call@v1"}, Max: 5})
				if err != nil {
					t.Errorf("claim: %v", err)
					return
				}
				mu.Lock()
				for _, c := range cs {
					seen[c.Job.ID]++
				}
				mu.Unlock()
				if len(cs) == 0 {
					continue
				}
				if _, err := h.e.ReportBatch(h.ctx, h.owner, reports(cs, classifyOK)); err != nil {
					t.Errorf("report: %v", err)
					return
				}
			}
		})
	}
	wg.Wait()
	if len(seen) != 40 {
		t.Errorf("%d jobs claimed in one day, dailyCallBudget 40", len(seen))
	}
	for id, k := range seen {
		if k != 1 {
			t.Errorf("job %d was handed out %d times", id, k)
		}
	}
	list, _ := h.e.Jobs(h.ctx, h.owner, store.JobFilter{States: []wire.JobState{wire.JobScheduled}})
	if len(list) == 0 || !strings.HasPrefix(h.hold(list[0].ID).Detail, `endpoint "metered" used 40 of its 40 calls today`) {
		t.Errorf("the rest are not held by the budget: %d scheduled", len(list))
	}
}
