package engine

import (
	"crypto/sha256"
	"encoding/binary"
	"strconv"
	"strings"
	"time"

	"github.com/getratchet/ratchet/field"
	"github.com/getratchet/ratchet/wire"
	"github.com/robfig/cron/v3"
)

// cronSpec is a parsed schedule expression in its time zone.
//
// Cron fields are matched on the wall clock of the zone, and a wall time
// becomes an instant by one rule (docs/schedules.md, Daylight saving time):
//   - a wall time the zone skips (spring forward) fires once, at the first
//     instant after the gap (02:30 on the night New York skips 02:00–03:00
//     fires at 03:00 EDT); several skipped wall times make one tick;
//   - a wall time the zone repeats (fall back) fires once, at its first
//     occurrence (01:30 EDT, not 01:30 EST).
//
// Five fields are parsed by cron's rules (cronfield.go), the @ names by
// robfig/cron; robfig's own Next walks the zone's instants an hour at a
// time, so it skips a day's tick in the gap and fires twice in the repeated
// hour. The schedule therefore runs robfig's Next on the wall clock written
// as UTC (where no hour is skipped or repeated) and maps each wall time to
// an instant itself (wallInstant).
//
// "@every <d>" ticks at the multiples of d since the Unix epoch, the same
// instants on every node whatever the zone.
type cronSpec struct {
	every time.Duration
	sched cron.Schedule
	loc   *time.Location
}

// maxEvery is the longest "@every" interval.
const maxEvery = 366 * 24 * time.Hour

// parseCron parses a schedule's expression and zone; the field errors name
// "cron" and "timeZone".
func parseCron(expr, zone string) (*cronSpec, field.Errors) {
	var errs field.Errors
	if zone == "" {
		zone = "UTC"
	}
	loc, err := time.LoadLocation(zone)
	if err != nil || zone == "Local" || strings.HasPrefix(zone, "/") {
		errs.Add("timeZone", strconv.Quote(zone), `must be an IANA time zone name, e.g. "Europe/London" or "UTC"`)
	}
	s := &cronSpec{loc: loc}
	if msg := s.parseExpr(expr); msg != "" {
		errs.Add("cron", strconv.Quote(expr), msg)
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return s, nil
}

const cronAllowed = `must be five cron fields (minute hour day-of-month month day-of-week, e.g. "*/5 * * * *"), @yearly, @monthly, @weekly, @daily, @hourly, or "@every <duration>"`

// parseExpr fills the expression in; the allowed text of the error, or "".
func (s *cronSpec) parseExpr(expr string) string {
	expr = strings.TrimSpace(expr)
	if len(expr) > wire.MaxCronLen || strings.HasPrefix(expr, "TZ=") || strings.HasPrefix(expr, "CRON_TZ=") {
		return cronAllowed + ` of at most 200 bytes, without a TZ= prefix (the zone is timeZone)`
	}
	if rest, ok := strings.CutPrefix(expr, "@every "); ok {
		d, err := time.ParseDuration(strings.TrimSpace(rest))
		if err != nil || d%time.Second != 0 || d < wire.MinEverySeconds*time.Second || d > maxEvery {
			return `"@every <duration>" must be whole seconds from 10s through 8784h, e.g. "@every 5m"`
		}
		s.every = d
		return ""
	}
	var spec *cron.SpecSchedule
	if strings.HasPrefix(expr, "@") {
		sched, err := cron.ParseStandard(expr)
		if spec, _ = sched.(*cron.SpecSchedule); err != nil || spec == nil {
			return cronAllowed
		}
	} else if sp, msg := parseFiveFields(expr); msg != "" {
		return msg
	} else {
		spec = sp
	}
	spec.Location = time.UTC // matched on the wall clock written as UTC
	s.sched = spec
	return ""
}

// next is the first tick strictly after t; the zero time when the
// expression never fires again (e.g. February 30).
func (s *cronSpec) next(t time.Time) time.Time {
	if s.every > 0 {
		d := s.every.Milliseconds()
		return time.UnixMilli((t.UnixMilli()/d + 1) * d).UTC()
	}
	w := t.In(s.loc)
	wall := time.Date(w.Year(), w.Month(), w.Day(), w.Hour(), w.Minute(), w.Second(), w.Nanosecond(), time.UTC)
	for range 1000 { // a few rounds at most: wall times that map before t
		wall = s.sched.Next(wall)
		if wall.IsZero() {
			return wall
		}
		if at := wallInstant(wall, s.loc); at.After(t) {
			return at.UTC()
		}
	}
	return time.Time{}
}

// wallInstant is the instant at which the zone's clock reads wall (given
// as UTC): the first one when it reads so twice, the end of the gap when
// never.
func wallInstant(wall time.Time, loc *time.Location) time.Time {
	var best time.Time
	for _, probe := range []time.Time{wall.Add(-36 * time.Hour), wall.Add(36 * time.Hour)} {
		_, off := probe.In(loc).Zone()
		at := wall.Add(-time.Duration(off) * time.Second)
		if _, o := at.In(loc).Zone(); o == off && (best.IsZero() || at.Before(best)) {
			best = at
		}
	}
	if !best.IsZero() {
		return best
	}
	// In a gap: read with the offset before it, wall is an instant after
	// the change; the zone in effect then started at the gap's end.
	_, off := wall.Add(-36 * time.Hour).In(loc).Zone()
	at := wall.Add(-time.Duration(off) * time.Second)
	if start, _ := at.In(loc).ZoneBounds(); !start.IsZero() && start.Before(at) {
		return start
	}
	return at
}

// minInterval is the shortest time between consecutive wall-clock ticks
// over the next 500 ticks after from (the nominal interval; daylight
// saving time may shorten one).
func (s *cronSpec) minInterval(from time.Time) time.Duration {
	if s.every > 0 {
		return s.every
	}
	shortest := time.Duration(0)
	w := from.UTC()
	for range 500 {
		n := s.sched.Next(w)
		if n.IsZero() {
			break
		}
		if d := n.Sub(w); w != from.UTC() && (shortest == 0 || d < shortest) {
			shortest = d
		}
		w = n
	}
	return shortest
}

// spreadOffset is where in its spread window a schedule fires: a hash of
// the project and the name, so the same offset every tick and on every
// node, and different schedules spread evenly across the window.
func spreadOffset(projectID int64, name string, spreadMs int64) int64 {
	if spreadMs <= 0 {
		return 0
	}
	h := sha256.Sum256([]byte(strconv.FormatInt(projectID, 10) + "/" + name))
	return int64(binary.BigEndian.Uint64(h[:8]) % uint64(spreadMs))
}
