package engine_test

import (
	"strings"
	"testing"
	"time"

	"github.com/getratchet/ratchet/wire"
)

// The monthly budget's scenario for TestEveryGateCountsItsHolds: with a
// budget of one claim, the second claim of the month is held and counted.
func init() {
	gateHoldScenarios[wire.GateMonthlyBudget] = gateHoldScenario{settings: `"maxConcurrent":10,"monthlyCallBudget":1`}
}

// TestGateMonthlyBudget: an endpoint with a monthlyCallBudget admits that
// many claims per calendar month of its budgetTimeZone; the next job is
// held by monthly_budget until midnight of the 1st there (23:00 UTC the
// day before, for Paris in winter), which explain names, and the held job
// spends no attempt. On SQLite and on PostgreSQL.
func TestGateMonthlyBudget(t *testing.T) {
	onBothDrivers(t, func(t *testing.T, h *harness) {
		ep := h.endpoint("metered", `{"maxConcurrent":100,"monthlyCallBudget":3,"budgetTimeZone":"Europe/Paris"}`)
		if ep.MonthlyCallBudget == nil || *ep.MonthlyCallBudget != 3 || ep.BudgetTimeZone != "Europe/Paris" {
			t.Fatalf("stored monthlyCallBudget %v in %q, want 3 in Europe/Paris", ep.MonthlyCallBudget, ep.BudgetTimeZone)
		}
		h.tool(`{"name":"call","version":"1","endpoint":"metered"}`)
		for range 5 {
			h.enqueue("call@1", nil)
		}
		if got := h.claimAndSucceed("call@1", 10); len(got) != 3 {
			t.Fatalf("claimed %d, want 3 (the month's budget)", len(got))
		}
		renews := at("2026-12-31T23:00:00Z") // midnight, January 1st, in Paris
		h.clk.Set(renews.Add(-time.Millisecond))
		if got := h.claim([]string{"call@1"}, 10); len(got) != 0 {
			t.Fatalf("claimed %d more in the same month", len(got))
		}
		j := h.firstScheduled("call@1")
		hd := h.hold(j.ID)
		want := `endpoint "metered" used 3 of its 3 calls this month (monthlyCallBudget, Europe/Paris); the budget renews at 2026-12-31T23:00:00.000Z`
		if hd.Gate != wire.GateMonthlyBudget || hd.Until != "2026-12-31T23:00:00.000Z" || hd.Detail != want {
			t.Fatalf("hold = %+v, want monthly_budget until 2026-12-31T23:00:00.000Z: %s", hd, want)
		}
		if j.Attempt != 0 {
			t.Fatalf("the held job spent %d attempts", j.Attempt)
		}
		h.clk.Set(renews)
		if got := h.claim([]string{"call@1"}, 10); len(got) != 2 {
			t.Fatalf("the next month: claimed %d, want the 2 left", len(got))
		}
	})
}

// TestMonthlyBudgetsOutliveRetention: retention (7 days by default)
// deletes the month's finished jobs with their attempts, and the monthly
// budgets, the endpoint's and a key's, still count their claims. On
// SQLite and on PostgreSQL.
func TestMonthlyBudgetsOutliveRetention(t *testing.T) {
	onBothDrivers(t, func(t *testing.T, h *harness) {
		h.endpoint("metered", `{"maxConcurrent":100,"monthlyCallBudget":3}`)
		h.tool(`{"name":"call","version":"1","endpoint":"metered"}`)
		h.endpoint("tenants", `{"maxConcurrent":100,"keyMonthlyCallBudget":2}`)
		h.tool(`{"name":"tenant","version":"1","endpoint":"tenants"}`)
		for range 5 {
			h.enqueue("call@1", nil)
			h.enqueueKey("tenant@1", "a")
		}
		if got := h.claimAndSucceed("call@1", 10); len(got) != 3 {
			t.Fatalf("claimed %d, want the month's 3", len(got))
		}
		if got := h.claimAndSucceed("tenant@1", 10); len(got) != 2 {
			t.Fatalf("key a: claimed %d, want its month's 2", len(got))
		}
		h.clk.Set(at("2026-12-20T09:00:00Z"))
		if n, err := h.e.Prune(h.ctx); err != nil || n != 5 {
			t.Fatalf("pruned %d jobs (%v), want the 5 finished 18 days ago", n, err)
		}
		if got := h.claim([]string{"call@1", "tenant@1"}, 10); len(got) != 0 {
			t.Fatalf("claimed %d after retention deleted the month's attempts", len(got))
		}
		if hd := h.hold(h.firstScheduled("call@1").ID); hd.Gate != wire.GateMonthlyBudget || !strings.Contains(hd.Detail, "used 3 of its 3 calls this month") {
			t.Errorf("the endpoint's hold: %+v", hd)
		}
		if hd := h.hold(h.firstScheduled("tenant@1").ID); hd.Gate != wire.GateKeyMonthlyBudget || !strings.Contains(hd.Detail, `key "a" used 2 of its 2 calls this month`) {
			t.Errorf("the key's hold: %+v", hd)
		}
		if _, use, err := h.e.EndpointUse(h.ctx, h.owner, "metered"); err != nil || use.Monthly.Used != 3 {
			t.Errorf("use: %+v, %v", use, err)
		}
		h.clk.Set(at("2027-01-01T00:00:00Z"))
		if got := h.claim([]string{"call@1", "tenant@1"}, 10); len(got) != 4 {
			t.Fatalf("the next month: claimed %d, want 2 of the endpoint and 2 of key a", len(got))
		}
	})
}
