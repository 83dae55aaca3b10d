package engine_test

import (
	"strings"
	"testing"

	"github.com/getratchet/ratchet/internal/engine"
	"github.com/getratchet/ratchet/wire"
)

// TestSchedulePreviewFollowsCron: the preview of a schedule made through
// the engine gives cron's days (docs/schedules.md, Cron fields): a starred
// day field makes the days AND, 7 and ranges through 7 are Sunday.
func TestSchedulePreviewFollowsCron(t *testing.T) {
	onBothDrivers(t, func(t *testing.T, h *harness) {
		for name, c := range map[string]struct{ cron, want string }{
			// t0 is Wednesday 2 December 2026.
			"odd-mondays": {"0 12 */2 * 1", "12-07 12:00 12-21 12:00 01-11 12:00 01-25 12:00"},
			"sundays":     {"0 9 * * 7", "12-06 09:00 12-13 09:00 12-20 09:00 12-27 09:00"},
			"weekends":    {"0 9 * * 6-7", "12-05 09:00 12-06 09:00 12-12 09:00 12-13 09:00"},
			"either":      {"0 9 15 * 7", "12-06 09:00 12-13 09:00 12-15 09:00 12-20 09:00"},
		} {
			h.schedule(wire.ScheduleCreate{Name: name, Cron: c.cron})
			ticks, _, err := h.e.PreviewSchedule(h.ctx, h.owner, name, 4)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, tk := range ticks {
				got = append(got, engine.FormatTime(tk)[5:16])
			}
			if g := strings.ReplaceAll(strings.Join(got, " "), "T", " "); g != c.want {
				t.Errorf("%s %q: preview %s, want %s", name, c.cron, g, c.want)
			}
		}
	})
}
