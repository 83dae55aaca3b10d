package engine_test

import (
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
