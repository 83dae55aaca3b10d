package engine

import (
	"testing"
	"time"

	"github.com/getratchet/ratchet/wire"
)

func zone(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

func utc(s string) int64 {
	at, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return at.UnixMilli()
}

// TestBudgetPeriods: a budget's day runs from one midnight of its zone to
// the next, 23 hours on the day daylight saving starts and 25 on the day
// it ends (Santiago's clock goes back from midnight to 23:00: its Saturday
// has 25 hours); a month from midnight of the 1st.
func TestBudgetPeriods(t *testing.T) {
	for _, c := range []struct {
		name, zone, at, start, end string
		month                      bool
	}{
		{"a UTC day", "UTC", "2026-12-02T09:00:00Z", "2026-12-02T00:00:00Z", "2026-12-03T00:00:00Z", false},
		{"New York springs forward: 23 hours", "America/New_York", "2027-03-14T12:00:00Z", "2027-03-14T05:00:00Z", "2027-03-15T04:00:00Z", false},
		{"New York springs forward in 2026", "America/New_York", "2026-03-08T06:59:00Z", "2026-03-08T05:00:00Z", "2026-03-09T04:00:00Z", false},
		{"New York falls back in 2026", "America/New_York", "2026-11-01T05:30:00Z", "2026-11-01T04:00:00Z", "2026-11-02T05:00:00Z", false},
		{"New York falls back: 25 hours", "America/New_York", "2027-11-07T12:00:00Z", "2027-11-07T04:00:00Z", "2027-11-08T05:00:00Z", false},
		{"Paris springs forward", "Europe/Paris", "2027-03-28T01:30:00Z", "2027-03-27T23:00:00Z", "2027-03-28T22:00:00Z", false},
		{"Paris falls back", "Europe/Paris", "2027-10-31T01:30:00Z", "2027-10-30T22:00:00Z", "2027-10-31T23:00:00Z", false},
		{"a Paris day starts before midnight UTC", "Europe/Paris", "2026-12-02T23:30:00Z", "2026-12-02T23:00:00Z", "2026-12-03T23:00:00Z", false},
		{"Santiago falls back at midnight: a 25-hour Saturday", "America/Santiago", "2027-04-04T03:30:00Z", "2027-04-03T03:00:00Z", "2027-04-04T04:00:00Z", false},
		{"Paris's March, across the change", "Europe/Paris", "2027-03-28T12:00:00Z", "2027-02-28T23:00:00Z", "2027-03-31T22:00:00Z", true},
		{"New York's December", "America/New_York", "2026-12-31T23:00:00Z", "2026-12-01T05:00:00Z", "2027-01-01T05:00:00Z", true},
		{"UTC's February", "UTC", "2027-02-28T23:59:59Z", "2027-02-01T00:00:00Z", "2027-03-01T00:00:00Z", true},
	} {
		of := dayOf
		if c.month {
			of = monthOf
		}
		got := of(utc(c.at), zone(t, c.zone))
		if got.start != utc(c.start) || got.end != utc(c.end) {
			t.Errorf("%s: period of %s = %s–%s, want %s–%s", c.name, c.at, FormatTime(got.start), FormatTime(got.end), c.start, c.end)
		}
	}
}

// TestQuietAt: the quiet window on the zone's clock, across midnight and
// across daylight saving: a window starting at a wall time the zone skips
// starts at the first minute after the gap; one starting at a wall time
// it repeats starts at the first occurrence.
func TestQuietAt(t *testing.T) {
	for _, c := range []struct {
		name, zone, window, at string
		quiet                  bool
		next                   string // the end while quiet, the next start otherwise
	}{
		{"before the window", "Europe/Paris", "22:00-07:00", "2026-12-02T20:59:00Z", false, "2026-12-02T21:00:00Z"},
		{"at its start", "Europe/Paris", "22:00-07:00", "2026-12-02T21:00:00Z", true, "2026-12-03T06:00:00Z"},
		{"after midnight, in yesterday's window", "Europe/Paris", "22:00-07:00", "2026-12-03T03:00:00Z", true, "2026-12-03T06:00:00Z"},
		{"at its end", "Europe/Paris", "22:00-07:00", "2026-12-03T06:00:00Z", false, "2026-12-03T21:00:00Z"},
		{"a daytime window", "UTC", "09:00-17:00", "2026-12-02T12:00:00Z", true, "2026-12-02T17:00:00Z"},
		{"across New York's spring forward: 8 hours", "America/New_York", "22:00-07:00", "2027-03-14T10:59:00Z", true, "2027-03-14T11:00:00Z"},
		{"a start New York skips (2026-03-08)", "America/New_York", "02:30-05:00", "2026-03-08T06:59:00Z", false, "2026-03-08T07:00:00Z"},
		{"a start New York repeats (2026-11-01) is the first", "America/New_York", "01:30-05:00", "2026-11-01T05:30:00Z", true, "2026-11-01T10:00:00Z"},
		{"and not before it", "America/New_York", "01:30-05:00", "2026-11-01T05:29:00Z", false, "2026-11-01T05:30:00Z"},
		{"across New York's fall back: 10 hours", "America/New_York", "22:00-07:00", "2027-11-07T02:00:00Z", true, "2027-11-07T12:00:00Z"},
		{"a start Paris skips waits for the gap's end", "Europe/Paris", "02:30-04:00", "2027-03-28T00:59:00Z", false, "2027-03-28T01:00:00Z"},
		{"and starts there", "Europe/Paris", "02:30-04:00", "2027-03-28T01:00:00Z", true, "2027-03-28T02:00:00Z"},
		{"a start Paris repeats is the first", "Europe/Paris", "02:30-04:00", "2027-10-31T00:30:00Z", true, "2027-10-31T03:00:00Z"},
		{"not before it", "Europe/Paris", "02:30-04:00", "2027-10-31T00:29:00Z", false, "2027-10-31T00:30:00Z"},
		{"a window inside the gap is empty that day", "Europe/Paris", "02:10-02:50", "2027-03-28T01:00:00Z", false, "2027-03-29T00:10:00Z"},
	} {
		w, ok := wire.ParseWindow(c.window)
		if !ok {
			t.Fatalf("%s: window %q", c.name, c.window)
		}
		quiet, at := quietAt(w, zone(t, c.zone), utc(c.at))
		if quiet != c.quiet || at != utc(c.next) {
			t.Errorf("%s: %s %s at %s = quiet %v, %s; want %v, %s", c.name, c.window, c.zone, c.at, quiet, FormatTime(at), c.quiet, c.next)
		}
	}
}
