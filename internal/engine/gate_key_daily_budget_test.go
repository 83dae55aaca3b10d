package engine_test

import (
	"testing"
	"time"

	"github.com/getratchet/ratchet/wire"
)

// The key's daily budget's scenario for TestEveryGateCountsItsHolds: the
// scenario's jobs share key "acct", whose budget is one claim a day.
func init() {
	gateHoldScenarios[wire.GateKeyDailyBudget] = gateHoldScenario{settings: `"maxConcurrent":10,"keyDailyCallBudget":1`}
}

// TestGateKeyDailyBudget: each flow key of an endpoint with a
// keyDailyCallBudget gets that many claims per day of the endpoint's
// budgetTimeZone (Tokyo's midnight is 15:00 UTC); a key that spent its
// budget is held by key_daily_budget until then, which explain names,
// while the other keys go on; at the renewal its jobs go again. On SQLite
// and on PostgreSQL.
func TestGateKeyDailyBudget(t *testing.T) {
	onBothDrivers(t, func(t *testing.T, h *harness) {
		h.endpoint("tenants", `{"maxConcurrent":100,"keyDailyCallBudget":2,"budgetTimeZone":"Asia/Tokyo"}`)
		h.tool(`{"name":"call","version":"1","endpoint":"tenants"}`)
		for range 4 {
			h.enqueueKey("call@1", "a")
		}
		h.enqueueKey("call@1", "b")
		if got := h.claimAndSucceed("call@1", 10); len(got) != 3 {
			t.Fatalf("claimed %d, want 3: two of key a (its budget) and b's one", len(got))
		}
		h.enqueueKey("call@1", "b")
		if got := h.claimAndSucceed("call@1", 10); len(got) != 1 || got[0].Job.FlowKey != "b" {
			t.Fatalf("claimed %d, want key b's second job alone", len(got))
		}
		renews := at("2026-12-02T15:00:00Z") // midnight in Tokyo
		h.clk.Set(renews.Add(-time.Millisecond))
		if got := h.claim([]string{"call@1"}, 10); len(got) != 0 {
			t.Fatalf("claimed %d more the same Tokyo day", len(got))
		}
		j := h.firstScheduled("call@1")
		hd := h.hold(j.ID)
		want := `key "a" used 2 of its 2 calls today (keyDailyCallBudget, Asia/Tokyo); the budget renews at 2026-12-02T15:00:00.000Z`
		if hd.Gate != wire.GateKeyDailyBudget || hd.Until != "2026-12-02T15:00:00.000Z" || hd.Detail != want {
			t.Fatalf("hold = %+v, want key_daily_budget until 2026-12-02T15:00:00.000Z: %s", hd, want)
		}
		if j.Attempt != 0 {
			t.Fatalf("the held job spent %d attempts", j.Attempt)
		}
		h.clk.Set(renews)
		if got := h.claim([]string{"call@1"}, 10); len(got) != 2 {
			t.Fatalf("the next Tokyo day: claimed %d, want key a's 2 left", len(got))
		}
	})
}
