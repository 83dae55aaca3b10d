package classify_test

import (
	"strings"
	"testing"
	"time"

	"github.com/getratchet/ratchet/internal/classify"
)

// now is fixed so every date test is exact.
var now = time.Date(2026, time.March, 14, 12, 0, 0, 0, time.UTC)

func TestParseRetryAfter(t *testing.T) {
	t.Parallel()
	rfc1994 := time.Date(1994, time.November, 6, 8, 49, 37, 0, time.UTC)
	future := now.Add(90 * time.Second)
	tests := []struct {
		name   string
		value  string
		now    time.Time
		wantMs int64
		wantOK bool
	}{
		// delta-seconds
		{"rfc example 120", "120", now, 120_000, true},
		{"zero", "0", now, 0, true},
		{"one", "1", now, 1_000, true},
		{"leading zeros", "0007", now, 7_000, true},
		{"surrounding spaces and tabs", " \t 120\t ", now, 120_000, true},
		{"exactly the cap", "86400", now, classify.MaxRetryAfterMs, true},
		{"just over the cap", "86401", now, classify.MaxRetryAfterMs, true},
		{"huge saturates", "999999999999999999999999999999", now, classify.MaxRetryAfterMs, true},
		{"max int64 seconds", "9223372036854775807", now, classify.MaxRetryAfterMs, true},
		{"many leading zeros", strings.Repeat("0", 100) + "5", now, 5_000, true},

		// the three HTTP-date forms, RFC 9110 §5.6.7 examples: in the past
		{"imf-fixdate past", "Sun, 06 Nov 1994 08:49:37 GMT", now, 0, true},
		{"rfc850 past", "Sunday, 06-Nov-94 08:49:37 GMT", now, 0, true},
		{"asctime past", "Sun Nov  6 08:49:37 1994", now, 0, true},
		// the same instant one second and one nanosecond before it
		{"imf-fixdate 1s ahead", "Sun, 06 Nov 1994 08:49:37 GMT", rfc1994.Add(-time.Second), 1_000, true},
		{"rfc850 1s ahead", "Sunday, 06-Nov-94 08:49:37 GMT", rfc1994.Add(-time.Second), 1_000, true},
		{"asctime 1s ahead", "Sun Nov  6 08:49:37 1994", rfc1994.Add(-time.Second), 1_000, true},
		{"rounds up to the ms", "Sun, 06 Nov 1994 08:49:37 GMT", rfc1994.Add(-time.Nanosecond), 1, true},
		{"date equal to now", "Sun, 06 Nov 1994 08:49:37 GMT", rfc1994, 0, true},
		{"imf-fixdate future", future.Format("Mon, 02 Jan 2006 15:04:05 GMT"), now, 90_000, true},
		{"rfc850 future", future.Format("Monday, 02-Jan-06 15:04:05 GMT"), now, 90_000, true},
		{"asctime future", future.Format("Mon Jan _2 15:04:05 2006"), now, 90_000, true},
		{"asctime two-digit day", "Sun Mar 15 11:00:00 2026", now, 23 * 3_600_000, true},
		{"far future date capped", "Fri, 31 Dec 9999 23:59:59 GMT", now, classify.MaxRetryAfterMs, true},
		{"now in another zone", "Sat, 14 Mar 2026 12:00:10 GMT", now.In(time.FixedZone("X", 5*3600)), 10_000, true},
		{"wrong weekday still read", "Mon, 14 Mar 2026 12:00:10 GMT", now, 10_000, true},
		{"month name any case", "Sat, 14 MAR 2026 12:00:10 GMT", now, 10_000, true},

		// RFC 850 two-digit years: the latest year with those digits not more
		// than 50 years after now (2026 → window up to 2076).
		{"rfc850 year 76 is 2076", "Saturday, 14-Mar-76 11:00:00 GMT", now, classify.MaxRetryAfterMs, true},
		{"rfc850 year 77 is 1977", "Monday, 14-Mar-77 12:00:00 GMT", now, 0, true},
		{"rfc850 year 26 is 2026", "Saturday, 14-Mar-26 12:00:05 GMT", now, 5_000, true},
		{"rfc850 year 00 in 2080 is 2100, no 29 Feb", "Tuesday, 29-Feb-00 12:00:00 GMT", time.Date(2080, 1, 1, 0, 0, 0, 0, time.UTC), 0, false},
		{"rfc850 year 00 in 2026 is 2000, has 29 Feb", "Tuesday, 29-Feb-00 12:00:00 GMT", now, 0, true},

		// invalid: ignored
		{"empty", "", now, 0, false},
		{"blank", "  \t", now, 0, false},
		{"negative", "-1", now, 0, false},
		{"plus sign", "+5", now, 0, false},
		{"fraction", "1.5", now, 0, false},
		{"exponent", "1e3", now, 0, false},
		{"hex", "0x10", now, 0, false},
		{"unit", "120s", now, 0, false},
		{"inner space", "1 20", now, 0, false},
		{"list", "120, 120", now, 0, false},
		{"newline", "120\n", now, 0, false},
		{"non-ascii digits", "١٢٠", now, 0, false},
		{"word", "soon", now, 0, false},
		{"date without zone", "Sun, 06 Nov 1994 08:49:37", now, 0, false},
		{"date in another zone", "Sun, 06 Nov 1994 08:49:37 PST", now, 0, false},
		{"date with offset", "Sun, 06 Nov 1994 08:49:37 +0000", now, 0, false},
		{"RFC 3339", "1994-11-06T08:49:37Z", now, 0, false},
		{"bad day", "Sun, 32 Nov 1994 08:49:37 GMT", now, 0, false},
		{"bad hour", "Sun, 06 Nov 1994 25:49:37 GMT", now, 0, false},
		{"29 Feb of a common year", "Sun, 29 Feb 2025 08:49:37 GMT", now, 0, false},
		{"asctime with zone", "Sun Nov  6 08:49:37 1994 GMT", now, 0, false},
		{"very long", strings.Repeat("Sun, ", 100), now, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ms, ok := classify.ParseRetryAfter(tt.value, tt.now)
			if ms != tt.wantMs || ok != tt.wantOK {
				t.Errorf("ParseRetryAfter(%q) = %d, %v; want %d, %v", tt.value, ms, ok, tt.wantMs, tt.wantOK)
			}
		})
	}
}

// Every instant written in each of the three forms reads back as the same
// wait, rounded up to the millisecond and capped.
func TestParseRetryAfterRoundTrip(t *testing.T) {
	t.Parallel()
	layouts := []string{
		"Mon, 02 Jan 2006 15:04:05 GMT",
		"Monday, 02-Jan-06 15:04:05 GMT",
		"Mon Jan _2 15:04:05 2006",
	}
	base := now.Add(123 * time.Millisecond) // now is not on a whole second
	for _, offset := range []time.Duration{-48 * time.Hour, -time.Second, 0, time.Second, 59 * time.Minute, 23 * time.Hour, 25 * time.Hour, 40 * 365 * 24 * time.Hour} {
		target := base.Add(offset).Truncate(time.Second)
		want := max(int64(0), int64((target.Sub(base)+time.Millisecond-1)/time.Millisecond))
		want = min(want, classify.MaxRetryAfterMs)
		for _, layout := range layouts {
			v := target.UTC().Format(layout)
			ms, ok := classify.ParseRetryAfter(v, base)
			if !ok || ms != want {
				t.Errorf("ParseRetryAfter(%q) at %v = %d, %v; want %d, true", v, base, ms, ok, want)
			}
		}
	}
}
