package classify

import (
	"strings"
	"time"
)

// MaxRetryAfterMs bounds every hint Classify returns and every value
// ParseRetryAfter returns: 24 hours, the backoff package's safety limit on a
// selected delay. A larger hint could not change a schedule (the selected delay
// is capped there anyway), and the bound keeps arithmetic on hints far from
// int64 overflow whatever a provider or worker sends.
const MaxRetryAfterMs int64 = 86_400_000

// The three HTTP-date forms of RFC 9110 §5.6.7, as Go layouts. All are GMT;
// the literal "GMT" makes time.Parse return UTC.
const (
	imfFixdate = "Mon, 02 Jan 2006 15:04:05 GMT"          // Sun, 06 Nov 1994 08:49:37 GMT
	rfc850Date = "Monday, 02-Jan-06 15:04:05 GMT"         // Sunday, 06-Nov-94 08:49:37 GMT
	asctimeDat = "Mon Jan _2 15:04:05 2006"               // Sun Nov  6 08:49:37 1994
	maxDateLen = len("Wednesday, 09-Sep-09 09:09:09 GMT") // the longest valid form
)

// ParseRetryAfter reads a Retry-After field value (RFC 9110 §10.2.3) and
// returns the wait it asks for in milliseconds, measured from now.
//
// Accepted: delta-seconds (one or more ASCII digits, leading zeros allowed)
// and the three HTTP-date forms (IMF-fixdate, the obsolete RFC 850 form and
// ANSI C asctime). Leading and trailing spaces and tabs are ignored. A date at
// or before now gives 0, ok. A date in the future gives the time until it,
// rounded up to the next millisecond so a retry is never early. Every result
// is capped at MaxRetryAfterMs; huge delta-seconds saturate rather than
// overflow.
//
// Rejected (0, false): anything else, including an empty value, a sign ("+5",
// "-1"), fractional seconds ("1.5": RFC 9110 allows only 1*DIGIT and a
// fraction is as likely milliseconds as seconds, so guessing is worse than
// falling through to the status rule), exponents, a list of several values
// ("120, 120") and dates in another zone.
//
// A two-digit RFC 850 year is read as RFC 9110 requires: the latest year
// with those two digits that is not more than 50 years after now.
func ParseRetryAfter(value string, now time.Time) (ms int64, ok bool) {
	ms, ok, _ = parseRetryAfter(value, now)
	return ms, ok
}

// parseRetryAfter is ParseRetryAfter that also says whether the value was
// capped, so a Reason can say so.
func parseRetryAfter(value string, now time.Time) (ms int64, ok, capped bool) {
	v := strings.Trim(value, " \t")
	if v == "" {
		return 0, false, false
	}
	if isDigits(v) {
		return deltaSeconds(v)
	}
	t, ok := parseHTTPDate(v, now)
	if !ok {
		return 0, false, false
	}
	d := t.Sub(now) // saturates at the Duration bounds, never wraps
	if d <= 0 {
		return 0, true, false
	}
	// Round up without adding first: d may be the saturated maximum.
	ms = int64(d / time.Millisecond)
	if d%time.Millisecond != 0 {
		ms++
	}
	if ms > MaxRetryAfterMs {
		return MaxRetryAfterMs, true, true
	}
	return ms, true, false
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return len(s) > 0
}

// deltaSeconds converts a string of ASCII digits to milliseconds, saturating
// at MaxRetryAfterMs. It stops accumulating once the value is over the bound,
// so any number of digits is safe.
func deltaSeconds(digits string) (ms int64, ok, capped bool) {
	const maxSeconds = MaxRetryAfterMs / 1000
	var n int64
	for i := 0; i < len(digits); i++ {
		n = n*10 + int64(digits[i]-'0')
		if n > maxSeconds {
			return MaxRetryAfterMs, true, true
		}
	}
	return n * 1000, true, false
}

// parseHTTPDate accepts the three forms of HTTP-date. Like Go's time.Parse it
// does not check the weekday against the date: a provider with a wrong weekday
// still means the date it wrote.
func parseHTTPDate(v string, now time.Time) (time.Time, bool) {
	if len(v) > maxDateLen {
		return time.Time{}, false
	}
	if t, err := time.Parse(imfFixdate, v); err == nil {
		return t, true
	}
	if t, err := time.Parse(asctimeDat, v); err == nil {
		return t, true
	}
	if t, err := time.Parse(rfc850Date, v); err == nil {
		return rfc850Year(t, now)
	}
	return time.Time{}, false
}

// rfc850Year re-reads the two-digit year Go parsed (Go pivots at 69) by the
// RFC 9110 rule: a date that appears to be more than 50 years in the future
// means the most recent past year with the same last two digits. It picks the
// latest year with those digits that is not more than 50 years after now.
func rfc850Year(t, now time.Time) (time.Time, bool) {
	yy := t.Year() % 100
	limit := now.UTC().AddDate(50, 0, 0)
	year := now.UTC().Year() - now.UTC().Year()%100 + 100 + yy
	for i := 0; i < 3; i++ {
		c := time.Date(year, t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), time.UTC)
		if c.After(limit) {
			year -= 100
			continue
		}
		if c.Day() != t.Day() {
			// 29 February of a century year that is not a leap year.
			return time.Time{}, false
		}
		return c, true
	}
	return time.Time{}, false // unreachable: one of three centuries is in range
}
