package wire

import (
	"fmt"
	"strings"
	"time"
)

// A quiet window (quietHours) is "HH:MM-HH:MM" in 24-hour time, read on
// the wall clock of the endpoint's budgetTimeZone: claims are held from
// the start through the minute before the end, every day. An end at or
// before the start crosses midnight ("22:00-07:00" holds from 22:00 to
// 07:00 the next morning). docs/flow-control.md says how daylight saving
// moves it.

// WindowAllowed is what a quietHours value may be, for field errors.
const WindowAllowed = `must be "HH:MM-HH:MM" in 24-hour time with different start and end, e.g. "22:00-07:00", or "" for none`

// ZoneAllowed is what a budgetTimeZone may be, for field errors.
const ZoneAllowed = `must be an IANA time zone name, e.g. "Europe/Paris" or "UTC"`

// Window is a parsed quiet window: its start and end as minutes after
// midnight (0–1439), never equal.
type Window struct{ Start, End int }

// ParseWindow parses "HH:MM-HH:MM"; ok is false for anything else,
// including equal start and end (a window of no time, or of all day, is
// better said with no window or a pause).
func ParseWindow(s string) (w Window, ok bool) {
	from, to, found := strings.Cut(s, "-")
	if !found || len(s) != 11 {
		return Window{}, false
	}
	var okFrom, okTo bool
	w.Start, okFrom = parseClock(from)
	w.End, okTo = parseClock(to)
	return w, okFrom && okTo && w.Start != w.End
}

// parseClock reads "HH:MM" (00:00–23:59) as minutes after midnight.
func parseClock(s string) (int, bool) {
	if len(s) != 5 || s[2] != ':' {
		return 0, false
	}
	digits := []byte{s[0], s[1], s[3], s[4]}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	h, m := int(s[0]-'0')*10+int(s[1]-'0'), int(s[3]-'0')*10+int(s[4]-'0')
	if h > 23 || m > 59 {
		return 0, false
	}
	return h*60 + m, true
}

// String writes the window as ParseWindow reads it.
func (w Window) String() string {
	return fmt.Sprintf("%02d:%02d-%02d:%02d", w.Start/60, w.Start%60, w.End/60, w.End%60)
}

// LoadZone loads an IANA time zone by name, refusing "Local" and paths
// (a zone must mean the same on every node); ok is false when it is not
// one.
func LoadZone(name string) (*time.Location, bool) {
	if name == "" || name == "Local" || strings.HasPrefix(name, "/") || len(name) > MaxTimeZoneLen {
		return nil, false
	}
	loc, err := time.LoadLocation(name)
	return loc, err == nil
}

// textChecks are the text kinds of endpoint settings (the text tag): how
// each is checked and what it allows. An empty value is checked too.
var textChecks = map[string]struct {
	valid   func(string) bool
	allowed string
}{
	"zone":   {func(s string) bool { _, ok := LoadZone(s); return ok }, ZoneAllowed},
	"window": {func(s string) bool { _, ok := ParseWindow(s); return s == "" || ok }, WindowAllowed},
}

// CheckText says whether v is a valid value of text setting f, and if not
// what is allowed.
func (f SettingField) CheckText(v string) (ok bool, allowed string) {
	c := textChecks[f.Text]
	if len(v) > int(f.Range.Max) {
		return false, fmt.Sprintf("must be at most %d bytes; %s", int(f.Range.Max), c.allowed)
	}
	return c.valid(v), c.allowed
}
