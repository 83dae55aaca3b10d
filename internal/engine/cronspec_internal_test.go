package engine

import (
	"testing"
	"time"

	"github.com/robfig/cron/v3"
)

// ticksAfter lists n ticks of expr in zone after from, as UTC times.
func ticksAfter(t *testing.T, expr, zone string, from time.Time, n int) []string {
	t.Helper()
	spec, errs := parseCron(expr, zone)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	var out []string
	for at := from; len(out) < n; {
		at = spec.next(at)
		out = append(out, at.UTC().Format("01-02 15:04Z"))
	}
	return out
}

// TestCronDaylightSaving is the rule of docs/schedules.md: a wall time the
// zone skips fires once at the end of the gap; a repeated one fires once,
// at its first occurrence.
func TestCronDaylightSaving(t *testing.T) {
	for _, c := range []struct {
		name, expr, zone, from string
		want                   []string
	}{
		// New York springs forward on 8 March 2026: 02:00 EST → 03:00 EDT.
		{"NY skipped daily", "30 2 * * *", "America/New_York", "2026-03-07T00:00:00Z",
			[]string{"03-07 07:30Z", "03-08 07:00Z", "03-09 06:30Z"}},
		{"NY skipped quarter hours", "*/15 * * * *", "America/New_York", "2026-03-08T06:40:00Z",
			[]string{"03-08 06:45Z", "03-08 07:00Z", "03-08 07:15Z"}},
		// New York falls back on 1 November 2026: 02:00 EDT → 01:00 EST.
		{"NY repeated daily", "30 1 * * *", "America/New_York", "2026-10-31T00:00:00Z",
			[]string{"10-31 05:30Z", "11-01 05:30Z", "11-02 06:30Z"}},
		{"NY repeated half hours", "*/30 * * * *", "America/New_York", "2026-11-01T04:00:00Z",
			[]string{"11-01 04:30Z", "11-01 05:00Z", "11-01 05:30Z", "11-01 07:00Z"}},
		// London: 29 March 2026 01:00 GMT → 02:00 BST; 25 October 02:00 BST → 01:00 GMT.
		{"London skipped", "30 1 * * *", "Europe/London", "2026-03-28T00:00:00Z",
			[]string{"03-28 01:30Z", "03-29 01:00Z", "03-30 00:30Z"}},
		{"London repeated", "30 1 * * *", "Europe/London", "2026-10-24T12:00:00Z",
			[]string{"10-25 00:30Z", "10-26 01:30Z"}},
		{"every is absolute", "@every 90m", "America/New_York", "2026-11-01T04:00:00Z",
			[]string{"11-01 04:30Z", "11-01 06:00Z", "11-01 07:30Z"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			from, _ := time.Parse(time.RFC3339, c.from)
			got := ticksAfter(t, c.expr, c.zone, from, len(c.want))
			for i := range c.want {
				if got[i] != c.want[i] {
					t.Fatalf("ticks %v, want %v", got, c.want)
				}
			}
		})
	}
}

// TestCronNextFromInsideRepeatedHour: a schedule looked at during the
// second (standard-time) pass of the repeated hour does not fire that
// hour's wall times again.
func TestCronNextFromInsideRepeatedHour(t *testing.T) {
	from, _ := time.Parse(time.RFC3339, "2026-11-01T06:20:00Z") // 01:20 EST
	if got := ticksAfter(t, "*/15 * * * *", "America/New_York", from, 1); got[0] != "11-01 07:00Z" {
		t.Fatalf("next %v, want 11-01 07:00Z (02:00 EST)", got)
	}
}

// FuzzScheduleSpec: any expression and zone either parse, giving ticks
// that only move forward, or are refused with field errors.
func FuzzScheduleSpec(f *testing.F) {
	for _, s := range []string{"*/5 * * * *", "@every 10s", "@hourly", "30 2 * * *", "0 0 30 2 *", "TZ=UTC * * * * *", "@every 1h30m", "1-5/2 * * * MON-FRI", "@every -1s", "0 12 */2 * 1", "0 9 * * 5-7", "0 9 1,15 jan-mar 7", "*/1000 * ?/3 * 0-7/2", "0 0 1 1 */9223372036854775807", "0 9 * * 8", "5/10 1-2 3 4 5-1"} {
		f.Add(s, "America/New_York")
	}
	f.Add("* * * * *", "Europe/London")
	f.Add("* * * * *", "../../etc/passwd")
	from := time.Date(2026, 3, 8, 5, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, expr, zone string) {
		spec, errs := parseCron(expr, zone)
		if len(errs) > 0 {
			for _, e := range errs {
				if e.Field != "cron" && e.Field != "timeZone" || e.Allowed == "" {
					t.Fatalf("error %+v", e)
				}
			}
			return
		}
		if spec.sched != nil && spec.sched.(*cron.SpecSchedule).Dow&(1<<7) != 0 {
			t.Fatalf("%q: day-of-week bit 7 is set; Sunday is bit 0", expr)
		}
		at := from
		for range 5 {
			n := spec.next(at)
			if n.IsZero() {
				return
			}
			if !n.After(at) {
				t.Fatalf("%q in %q: next after %s is %s", expr, zone, at, n)
			}
			at = n
		}
		if spec.minInterval(from) < 0 {
			t.Fatalf("negative interval")
		}
	})
}
