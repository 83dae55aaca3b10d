package engine

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/robfig/cron/v3"
)

// Five-field expressions are parsed here, by Vixie cron's and cronie's
// rules (src/entry.c of cronie), and matched by robfig/cron's Next:
//   - day-of-week runs 0–7, 0 and 7 both Sunday, so "5-7" is Friday
//     through Sunday;
//   - a day field that starts with "*" (including "*/2") is starred: when
//     either day field is starred a day must match both, otherwise either
//     one (robfig/cron stars only "*" and "*/1", so "0 12 */2 * 1" fired
//     on odd days or Mondays there, Mondays that are odd days in cron).
//
// Checked against cronie's answers in testdata/cronie/table.txt
// (TestCronMatchesCronie).

// cronStarBit is robfig/cron's mark of a starred field (spec.go starBit),
// which its dayMatches reads for the rule above.
const cronStarBit = 1 << 63

// cronField is one of the five fields.
type cronField struct {
	name     string
	min, max int
	names    []string // names[i] is the value min+i
	allowed  string
}

var cronFields = [5]cronField{
	{name: "minute", min: 0, max: 59, allowed: "0-59"},
	{name: "hour", min: 0, max: 23, allowed: "0-23"},
	{name: "day-of-month", min: 1, max: 31, allowed: "1-31"},
	{name: "month", min: 1, max: 12, allowed: "1-12 or JAN-DEC",
		names: []string{"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"}},
	{name: "day-of-week", min: 0, max: 7, allowed: "0-7 (0 and 7 are Sunday) or SUN-SAT",
		names: []string{"sun", "mon", "tue", "wed", "thu", "fri", "sat"}},
}

// parseFiveFields parses "minute hour day-of-month month day-of-week";
// the error text names the field, its value and what is allowed.
func parseFiveFields(expr string) (*cron.SpecSchedule, string) {
	fields := strings.Fields(expr)
	if len(fields) != 5 {
		return nil, fmt.Sprintf("has %d fields; %s", len(fields), cronAllowed)
	}
	var bits [5]uint64
	for i, f := range fields {
		b, msg := cronFields[i].parse(f)
		if msg != "" {
			return nil, fmt.Sprintf("%s field %q: %s", cronFields[i].name, f, msg)
		}
		bits[i] = b
	}
	if bits[4]&(1<<7) != 0 { // Sunday is 0 and 7
		bits[4] = bits[4]&^(1<<7) | 1
	}
	return &cron.SpecSchedule{Second: 1, Minute: bits[0], Hour: bits[1], Dom: bits[2], Month: bits[3], Dow: bits[4]}, ""
}

// parse reads a comma-separated list of "*", "*/n", "a", "a-b", "a-b/n"
// or "a/n" (a through the maximum); the bits, with cronStarBit when the
// field starts with "*" (or "?", robfig/cron's synonym kept for schedules
// made before).
func (c *cronField) parse(f string) (uint64, string) {
	var bits uint64
	for item := range strings.SplitSeq(f, ",") {
		b, msg := c.parseItem(item)
		if msg != "" {
			return 0, msg
		}
		bits |= b
	}
	if strings.HasPrefix(f, "*") || strings.HasPrefix(f, "?") {
		bits |= cronStarBit
	}
	return bits, ""
}

func (c *cronField) parseItem(item string) (uint64, string) {
	rng, stepText, hasStep := strings.Cut(item, "/")
	step := 1
	if hasStep {
		n, err := strconv.Atoi(stepText)
		if err != nil || n < 1 {
			return 0, fmt.Sprintf("step %q must be a whole number of at least 1", stepText)
		}
		step = n
	}
	lo, hi := c.min, c.max
	switch {
	case rng == "*" || rng == "?":
	case strings.Contains(rng, "-"):
		a, b, _ := strings.Cut(rng, "-")
		var msg string
		if lo, msg = c.value(a); msg != "" {
			return 0, msg
		}
		if hi, msg = c.value(b); msg != "" {
			return 0, msg
		}
		if lo > hi {
			return 0, fmt.Sprintf("range %q runs backwards; write it low-high within %s", rng, c.allowed)
		}
	default:
		var msg string
		if lo, msg = c.value(rng); msg != "" {
			return 0, msg
		}
		if !hasStep {
			hi = lo
		}
	}
	var bits uint64
	for v := lo; ; v += step { // no overflow whatever the step
		bits |= 1 << uint(v)
		if hi-v < step {
			break
		}
	}
	return bits, ""
}

// value is a number or a name within the field's range.
func (c *cronField) value(s string) (int, string) {
	for i, n := range c.names {
		if strings.EqualFold(s, n) {
			return c.min + i, ""
		}
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < c.min || n > c.max {
		return 0, fmt.Sprintf("%q must be %s, alone, as a range a-b, with a step (*/n, a-b/n) or in a comma-separated list", s, c.allowed)
	}
	return n, ""
}
