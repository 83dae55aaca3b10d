package engine_test

import (
	"testing"

	"github.com/getratchet/ratchet/wire"
)

// The quiet hours' scenario for TestEveryGateCountsItsHolds: the harness
// starts at 09:00 UTC, inside 08:00-10:00.
func init() {
	gateHoldScenarios[wire.GateDeliveryWindow] = gateHoldScenario{settings: `"maxConcurrent":10,"quietHours":"08:00-10:00"`}
}

// TestGateDeliveryWindow: an endpoint's quietHours hold its claims from the
// window's start, on its budgetTimeZone's clock, until its end (the next
// morning for a window across midnight), which explain names; a held job
// spends no attempt; and on the days daylight saving changes, a window
// starting at a wall time the zone skips starts at the end of the gap,
// one starting at a wall time it repeats at its first occurrence. On
// SQLite and on PostgreSQL.
func TestGateDeliveryWindow(t *testing.T) {
	onBothDrivers(t, func(t *testing.T, h *harness) {
		h.endpoint("night", `{"maxConcurrent":100,"quietHours":"22:00-07:00","budgetTimeZone":"Europe/Paris"}`)
		h.tool(`{"name":"call","version":"1","endpoint":"night"}`)
		h.endpoint("dst", `{"maxConcurrent":100,"quietHours":"02:30-04:00","budgetTimeZone":"Europe/Paris"}`)
		h.tool(`{"name":"dst","version":"1","endpoint":"dst"}`)
		for range 10 {
			h.enqueue("call@1", nil)
			h.enqueue("dst@1", nil)
		}
		claims := func(tool, when string, want int) {
			t.Helper()
			h.clk.Set(at(when))
			if got := h.claimAndSucceed(tool, 1); len(got) != want {
				t.Fatalf("%s at %s: claimed %d, want %d", tool, when, len(got), want)
			}
		}
		claims("call@1", "2026-12-02T20:59:59.999Z", 1) // 21:59:59 in Paris
		claims("call@1", "2026-12-02T21:00:00Z", 0)
		j := h.firstScheduled("call@1")
		hd := h.hold(j.ID)
		want := `endpoint "night" is in its quiet hours 22:00-07:00 (quietHours, Europe/Paris); claims resume at 2026-12-03T06:00:00.000Z`
		if hd.Gate != wire.GateDeliveryWindow || hd.Until != "2026-12-03T06:00:00.000Z" || hd.Detail != want {
			t.Fatalf("hold = %+v, want delivery_window until 2026-12-03T06:00:00.000Z: %s", hd, want)
		}
		if j.Attempt != 0 {
			t.Fatalf("the held job spent %d attempts", j.Attempt)
		}
		claims("call@1", "2026-12-03T05:59:59.999Z", 0) // past midnight, still quiet
		claims("call@1", "2026-12-03T06:00:00Z", 1)

		// Paris skips 02:00-03:00 on 2027-03-28: 02:30 starts at 03:00 CEST.
		claims("dst@1", "2027-03-28T00:59:59.999Z", 1)
		claims("dst@1", "2027-03-28T01:00:00Z", 0)
		if hd := h.hold(h.firstScheduled("dst@1").ID); hd.Gate != wire.GateDeliveryWindow || hd.Until != "2027-03-28T02:00:00.000Z" {
			t.Fatalf("spring forward: hold = %+v, want delivery_window until 04:00 CEST", hd)
		}
		claims("dst@1", "2027-03-28T02:00:00Z", 1)
		// Paris reads 02:00-03:00 twice on 2027-10-31: the first 02:30
		// (CEST) starts the window, which lasts to 04:00 CET.
		claims("dst@1", "2027-10-31T00:29:59.999Z", 1)
		claims("dst@1", "2027-10-31T00:30:00Z", 0)
		claims("dst@1", "2027-10-31T01:30:00Z", 0) // the second 02:30 (CET), still quiet
		if hd := h.hold(h.firstScheduled("dst@1").ID); hd.Until != "2027-10-31T03:00:00.000Z" {
			t.Fatalf("fall back: hold = %+v, want until 04:00 CET", hd)
		}
		claims("dst@1", "2027-10-31T03:00:00Z", 1)
	})
}
