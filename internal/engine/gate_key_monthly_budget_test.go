package engine_test

import (
	"testing"

	"github.com/getratchet/ratchet/wire"
)

// The key's monthly budget's scenario for TestEveryGateCountsItsHolds.
func init() {
	gateHoldScenarios[wire.GateKeyMonthlyBudget] = gateHoldScenario{settings: `"maxConcurrent":10,"keyMonthlyCallBudget":1`}
}

// TestGateKeyMonthlyBudget: a key's monthly budget holds it past the day's
// renewal (its daily budget has room) until the 1st of the next month in
// the endpoint's budgetTimeZone (UTC by default). On SQLite and on
// PostgreSQL.
func TestGateKeyMonthlyBudget(t *testing.T) {
	onBothDrivers(t, func(t *testing.T, h *harness) {
		h.endpoint("tenants", `{"maxConcurrent":100,"keyDailyCallBudget":5,"keyMonthlyCallBudget":2}`)
		h.tool(`{"name":"call","version":"1","endpoint":"tenants"}`)
		for range 4 {
			h.enqueueKey("call@1", "a")
		}
		if got := h.claimAndSucceed("call@1", 10); len(got) != 2 {
			t.Fatalf("claimed %d, want 2 (the key's month)", len(got))
		}
		h.clk.Set(at("2026-12-31T12:00:00Z"))
		if got := h.claim([]string{"call@1"}, 10); len(got) != 0 {
			t.Fatalf("claimed %d more in the same month", len(got))
		}
		hd := h.hold(h.firstScheduled("call@1").ID)
		want := `key "a" used 2 of its 2 calls this month (keyMonthlyCallBudget, UTC); the budget renews at 2027-01-01T00:00:00.000Z`
		if hd.Gate != wire.GateKeyMonthlyBudget || hd.Until != "2027-01-01T00:00:00.000Z" || hd.Detail != want {
			t.Fatalf("hold = %+v, want key_monthly_budget until 2027-01-01: %s", hd, want)
		}
		h.clk.Set(at("2027-01-01T00:00:00Z"))
		if got := h.claim([]string{"call@1"}, 10); len(got) != 2 {
			t.Fatalf("the next month: claimed %d, want 2", len(got))
		}
	})
}
