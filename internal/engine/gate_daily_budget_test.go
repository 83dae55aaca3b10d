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

// TestGateDailyBudgetAcrossDaylightSaving: a daily budget in a named zone
// renews at that zone's midnights, so the day New York springs forward
// (2027-03-14) lasts 23 hours and the day it falls back (2027-11-07) 25:
// the budget renews neither an hour early nor an hour late, as it would
// counting 24 hours or UTC days. On SQLite and on PostgreSQL.
func TestGateDailyBudgetAcrossDaylightSaving(t *testing.T) {
	onBothDrivers(t, func(t *testing.T, h *harness) {
		h.endpoint("ny", `{"maxConcurrent":100,"dailyCallBudget":2,"budgetTimeZone":"America/New_York"}`)
		h.tool(`{"name":"call","version":"1","endpoint":"ny"}`)
		for range 10 {
			h.enqueue("call@1", nil)
		}
		claims := func(when string, want int) {
			t.Helper()
			h.clk.Set(at(when))
			if got := h.claimAndSucceed("call@1", 10); len(got) != want {
				t.Fatalf("at %s: claimed %d, want %d", when, len(got), want)
			}
		}
		claims("2027-03-14T05:00:00Z", 2) // midnight EST, the day of the change
		if hd := h.hold(h.firstScheduled("call@1").ID); hd.Gate != wire.GateDailyBudget || hd.Until != "2027-03-15T04:00:00.000Z" ||
			!strings.Contains(hd.Detail, "(dailyCallBudget, America/New_York); the budget renews at 2027-03-15T04:00:00.000Z") {
			t.Fatalf("spring forward: hold = %+v, want daily_budget until midnight EDT, 23 hours on", hd)
		}
		claims("2027-03-15T03:59:59.999Z", 0)
		claims("2027-03-15T04:00:00Z", 2)
		claims("2027-11-07T04:00:00Z", 2) // midnight EDT, the day it falls back
		claims("2027-11-08T04:00:00Z", 0) // 24 hours on: 23:00 EST, the same day
		if hd := h.hold(h.firstScheduled("call@1").ID); hd.Until != "2027-11-08T05:00:00.000Z" {
			t.Fatalf("fall back: hold = %+v, want until midnight EST, 25 hours on", hd)
		}
		claims("2027-11-08T05:00:00Z", 2)
	})
}

// TestEndpointUseForecast: GET of one endpoint (EndpointUse) shows each
// budget's use, its period and, at the pace of the last hour (or of the
// period so far when shorter), when it runs out if before it renews; and
// the quiet hours' next start. On SQLite and on PostgreSQL.
func TestEndpointUseForecast(t *testing.T) {
	onBothDrivers(t, func(t *testing.T, h *harness) {
		h.endpoint("metered", `{"maxConcurrent":100,"dailyCallBudget":100,"monthlyCallBudget":1000,"quietHours":"22:00-07:00"}`)
		h.tool(`{"name":"call","version":"1","endpoint":"metered"}`)
		for range 40 {
			h.enqueue("call@1", nil)
		}
		h.clk.Set(at("2026-12-02T09:00:00Z"))
		h.claimAndSucceed("call@1", 10)
		h.clk.Set(at("2026-12-02T09:30:00Z"))
		h.claimAndSucceed("call@1", 10)
		_, use, err := h.e.EndpointUse(h.ctx, h.owner, "metered")
		if err != nil {
			t.Fatal(err)
		}
		// 20 claims in the last hour: 80 left of the day at 20 an hour
		// run out in 4 hours; 980 of the month in 49.
		if d := use.Daily; d == nil || d.Used != 20 || d.PacePerHour != 20 || d.RunsOutAt != "2026-12-02T13:30:00.000Z" ||
			d.StartedAt != "2026-12-02T00:00:00.000Z" || d.RenewsAt != "2026-12-03T00:00:00.000Z" {
			t.Errorf("daily = %+v", d)
		}
		if m := use.Monthly; m == nil || m.Used != 20 || m.RunsOutAt != "2026-12-04T10:30:00.000Z" || m.RenewsAt != "2027-01-01T00:00:00.000Z" {
			t.Errorf("monthly = %+v", m)
		}
		if q := use.QuietHours; use.TimeZone != "UTC" || q == nil || q.Quiet || q.StartsAt != "2026-12-02T22:00:00.000Z" {
			t.Errorf("zone %q, quiet hours %+v", use.TimeZone, q)
		}
		// Half an hour into the next day (claims held until 07:00 by the
		// quiet hours): the pace is the day's so far, none yet.
		h.clk.Set(at("2026-12-03T00:30:00Z"))
		if _, use, err = h.e.EndpointUse(h.ctx, h.owner, "metered"); err != nil {
			t.Fatal(err)
		}
		if d := use.Daily; d.Used != 0 || d.PacePerHour != 0 || d.RunsOutAt != "" {
			t.Errorf("the next day: daily = %+v", d)
		}
		if q := use.QuietHours; !q.Quiet || q.EndsAt != "2026-12-03T07:00:00.000Z" {
			t.Errorf("the next night: quiet hours %+v", q)
		}
		// An endpoint without quiet hours claims 5 in the day's first half
		// hour: the pace is 10 an hour, not 5 (the last hour's).
		h.endpoint("fresh", `{"maxConcurrent":100,"dailyCallBudget":100}`)
		h.tool(`{"name":"fresh","version":"1","endpoint":"fresh"}`)
		for range 5 {
			h.enqueue("fresh@1", nil)
		}
		h.claimAndSucceed("fresh@1", 10)
		if _, use, err = h.e.EndpointUse(h.ctx, h.owner, "fresh"); err != nil {
			t.Fatal(err)
		}
		if d := use.Daily; d.Used != 5 || d.PacePerHour != 10 || d.RunsOutAt != "2026-12-03T10:00:00.000Z" || use.Monthly != nil || use.QuietHours != nil {
			t.Errorf("fresh: %+v, daily %+v", use, d)
		}
	})
}
