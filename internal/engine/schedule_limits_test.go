package engine_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/getratchet/ratchet/field"
	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/internal/store/postgres"
	"github.com/getratchet/ratchet/internal/store/postgres/pgtest"
	"github.com/getratchet/ratchet/wire"
)

// onBothDrivers runs f on a schedule harness over SQLite and over
// PostgreSQL (skipped without RATCHET_TEST_POSTGRES_URL).
func onBothDrivers(t *testing.T, f func(t *testing.T, h *harness)) {
	t.Run("sqlite", func(t *testing.T) { f(t, schedHarness(t)) })
	t.Run("postgres", func(t *testing.T) {
		st, err := postgres.Open(context.Background(), pgtest.URL(t), postgres.Options{})
		if err != nil {
			t.Fatal(err)
		}
		h := newHarnessOn(t, st)
		h.endpoint("stripe", seedEndpoint)
		h.tool(`{"name":"charge","version":"1","endpoint":"stripe"}`)
		f(t, h)
	})
}

// tickBomb is a payload under the 256 KiB limit whose tick times take it
// far past: 26,000 placeholders of 10 bytes become 24-byte times.
var tickBomb = json.RawMessage(`"` + strings.Repeat(wire.TickPlaceholder, 26_000) + `"`)

// TestScheduleTickPayloadLimitAtCreate: a payload that its tick times
// would grow past the limit is refused when the schedule is made, with the
// size it would reach; one that stays within is taken.
func TestScheduleTickPayloadLimitAtCreate(t *testing.T) {
	onBothDrivers(t, func(t *testing.T, h *harness) {
		_, err := h.e.CreateSchedule(h.ctx, h.owner, wire.ScheduleCreate{Name: "bomb", Cron: "* * * * *", Tool: "charge@1", Payload: tickBomb})
		fe, ok := field.As(err)
		if !ok || fe[0].Field != "payload" || !strings.HasPrefix(fe[0].Value, "624002 bytes") || !strings.Contains(fe[0].Allowed, "262144") {
			t.Fatalf("create: %v; want a payload error naming 624002 bytes and the limit 262144", err)
		}
		// 10,000 placeholders: 240,002 bytes once expanded, within the limit.
		fits := json.RawMessage(`"` + strings.Repeat(wire.TickPlaceholder, 10_000) + `"`)
		h.schedule(wire.ScheduleCreate{Name: "fits", Cron: "* * * * *", Payload: fits})
		if n := h.fire(time.Minute); n != 1 {
			t.Fatalf("fired %d jobs, want 1", n)
		}
	})
}

// TestScheduleFiredJobKeepsEnqueueRules: a stored schedule whose tick
// payload breaks an enqueue rule (one stored before the check at create)
// records the tick failed with the reason and stores no job.
func TestScheduleFiredJobKeepsEnqueueRules(t *testing.T) {
	onBothDrivers(t, func(t *testing.T, h *harness) {
		next := t0.Truncate(time.Minute).Add(time.Minute).UnixMilli()
		s := &store.Schedule{ProjectID: h.owner.ProjectID, Name: "bomb", Cron: "* * * * *", TimeZone: "UTC", Tool: "charge@1", Payload: tickBomb,
			Overlap: wire.OverlapAllow, CatchUp: wire.CatchUpLatest, CatchUpLimit: 1, NextTickAt: next, NextFireAt: next,
			CreatedAt: t0.UnixMilli(), UpdatedAt: t0.UnixMilli()}
		if err := h.st.Tx(h.ctx, func(q store.Queries) error { return q.ScheduleCreate(h.ctx, s) }); err != nil {
			t.Fatal(err)
		}
		if n := h.fire(time.Minute); n != 0 {
			t.Fatalf("fired %d jobs, want 0", n)
		}
		d, err := h.e.Schedule(h.ctx, h.owner, "bomb", 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(d.Ticks) != 1 || d.Ticks[0].Outcome != wire.TickFailed || d.Ticks[0].JobID != 0 ||
			!strings.Contains(d.Ticks[0].Error, "payload") || !strings.Contains(d.Ticks[0].Error, "262144") {
			t.Fatalf("ticks %+v; want one failed tick naming the payload limit", d.Ticks)
		}
	})
}
