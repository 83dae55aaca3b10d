package classify

import "time"

// This file reads the two families of separate fields: RateLimit-Limit,
// -Remaining and -Reset of the draft's earlier revisions (Structured Field
// Items), and X-RateLimit-* as GitHub, X (Twitter) and Discord send them
// (plain numbers), and holds the bounds every family shares.

// readRateLimit reads RateLimit-Limit (a List of Integers: the first is the
// limit; a member equal to it may carry the window as w), RateLimit-Remaining
// and RateLimit-Reset (Integers; the reset by the epoch rule).
func (r *quotaReading) readRateLimit(f *quotaFields) (Quota, bool) {
	lim, rem, rst := f[hRLLimit], f[hRLRemaining], f[hRLReset]
	if !lim.ok && !rem.ok && !rst.ok {
		return noQuota, false
	}
	q, bad := noQuota, false
	if lim.ok {
		var reason string
		q.Limit, q.WindowMs, reason = rlLimit(lim.v)
		bad = r.refused(reason)
	}
	if rem.ok {
		n, reason := sfIntegerItem(rem.v)
		if reason == "" {
			q.Remaining, reason = n, remainingReason(n)
		}
		bad = r.refused(reason) || bad
	}
	if rst.ok {
		n, reason := sfIntegerItem(rst.v)
		if reason == "" {
			q.ResetMs, reason = r.resetMs(number{whole: max(n, -n), neg: n < 0})
		}
		bad = r.refused(reason) || bad
	}
	if bad {
		return noQuota, false
	}
	if q.WindowMs == 0 {
		q.WindowMs = r.windowFor(q.Limit)
	}
	q.Source = QuotaSourceRateLimit
	return r.checked(q)
}

// rlLimit reads RateLimit-Limit: `100`, or `100, 100;w=60, 1000;w=3600`
// (draft 3's quota policies), every member an Integer.
func rlLimit(v string) (limit, windowMs int64, reason string) {
	items, reason := sfListOf(v)
	if reason != "" {
		return 0, 0, reason
	}
	for _, it := range items {
		if it.kind != sfInteger {
			return 0, 0, QuotaMalformed
		}
	}
	limit = items[0].n
	if reason := limitReason(limit); reason != "" {
		return 0, 0, reason
	}
	for _, it := range items {
		if w, ok := it.param("w"); ok && it.n == limit {
			if w.kind != sfInteger {
				return 0, 0, QuotaMalformed
			}
			if reason := windowReason(w.n); reason != "" {
				return 0, 0, reason
			}
			return limit, w.n * 1000, ""
		}
	}
	return limit, 0, ""
}

// sfIntegerItem reads a field that is one Integer Item (its parameters are
// comments).
func sfIntegerItem(v string) (int64, string) {
	items, reason := sfListOf(v)
	switch {
	case reason != "":
		return 0, reason
	case len(items) != 1 || items[0].kind != sfInteger:
		return 0, QuotaMalformed
	}
	return items[0].n, ""
}

// readXRateLimit reads X-RateLimit-Limit and -Remaining (integers),
// -Reset (a number by the epoch rule, a fraction allowed as Discord sends
// it) and -Reset-After (decimal delta-seconds, read before -Reset). The
// X-Rate-Limit-* spelling is read when X-RateLimit-* is absent.
func (r *quotaReading) readXRateLimit(f *quotaFields) (Quota, bool) {
	lim, rem, rst, after := either(f[hXLimit], f[hXAltLimit]), either(f[hXRemaining], f[hXAltRemaining]),
		either(f[hXReset], f[hXAltReset]), f[hXResetAfter]
	if !lim.ok && !rem.ok && !rst.ok && !after.ok {
		return noQuota, false
	}
	q, bad := noQuota, false
	if lim.ok {
		n, reason := plainInteger(lim.v)
		if reason == "" {
			q.Limit, reason = n, limitReason(n)
		}
		bad = r.refused(reason)
	}
	if rem.ok {
		n, reason := plainInteger(rem.v)
		if reason == "" {
			q.Remaining, reason = n, remainingReason(n)
		}
		bad = r.refused(reason) || bad
	}
	if rst.ok {
		n, reason := plainNumber(rst.v)
		if reason == "" {
			q.ResetMs, reason = r.resetMs(n)
		}
		bad = r.refused(reason) || bad
	}
	if after.ok {
		n, reason := plainNumber(after.v)
		switch {
		case reason != "":
		case n.negative():
			reason = QuotaNegativeReset
		default:
			q.ResetMs, reason = deltaMs(n.whole, n.fracNs)
		}
		bad = r.refused(reason) || bad
	}
	if bad {
		return noQuota, false
	}
	q.Source = QuotaSourceXRateLimit
	return r.checked(q)
}

// either is a, or b when a is absent.
func either(a, b quotaField) quotaField {
	if a.ok {
		return a
	}
	return b
}

// number is a plain decimal number: its whole part (saturated at
// maxWhole), its fraction in nanoseconds and its sign.
type number struct {
	whole  int64
	fracNs int64
	frac   bool // a fraction was written
	neg    bool
}

// maxWhole saturates whole parts: above it every check refuses the value
// anyway (the largest epoch in milliseconds ReadQuota could accept is about
// 1.8×10^12), and the bound keeps arithmetic far from overflow.
const maxWhole = 1_000_000_000_000_000

// negative reports a number below zero ("-0" is not).
func (n number) negative() bool { return n.neg && (n.whole > 0 || n.fracNs > 0) }

func (n number) signed() int64 {
	if n.neg {
		return -n.whole
	}
	return n.whole
}

// plainNumber reads `-?DIGITS(.DIGITS)?` with 1–9 fraction digits, OWS
// around it; anything else (a plus sign, an exponent, a list) is malformed.
func plainNumber(v string) (number, string) {
	if len(v) > MaxQuotaHeaderBytes {
		return number{}, QuotaTooLarge
	}
	s := trimOWS(v)
	var n number
	i := 0
	if i < len(s) && s[i] == '-' {
		n.neg, i = true, i+1
	}
	start := i
	for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		n.whole = min(n.whole*10+int64(s[i]-'0'), maxWhole)
	}
	if i == start {
		return number{}, QuotaMalformed
	}
	if i < len(s) && s[i] == '.' {
		i++
		scale, digits := int64(100_000_000), 0
		for ; i < len(s) && s[i] >= '0' && s[i] <= '9' && digits < 9; i, digits = i+1, digits+1 {
			n.fracNs += int64(s[i]-'0') * scale
			scale /= 10
		}
		if digits == 0 {
			return number{}, QuotaMalformed
		}
		n.frac = true
	}
	if i != len(s) {
		return number{}, QuotaMalformed
	}
	return n, ""
}

// plainInteger reads a plain number without a fraction.
func plainInteger(v string) (int64, string) {
	n, reason := plainNumber(v)
	if reason == "" && n.frac {
		reason = QuotaMalformed
	}
	return n.signed(), reason
}

// resetMs reads a reset given as one number by the epoch rule: below
// epochSeconds delta-seconds, below epochMillis epoch seconds, else epoch
// milliseconds. An epoch in the past is a reset of 0.
func (r *quotaReading) resetMs(n number) (int64, string) {
	switch {
	case n.negative():
		return 0, QuotaNegativeReset
	case n.whole < epochSeconds:
		return deltaMs(n.whole, n.fracNs)
	case n.whole >= maxWhole:
		return 0, QuotaResetTooFar
	}
	var at time.Time
	if n.whole < epochMillis {
		at = time.Unix(n.whole, n.fracNs)
	} else {
		at = time.UnixMilli(n.whole).Add(time.Duration(n.fracNs / 1000))
	}
	d := at.Sub(r.now) // saturates, never wraps
	if d <= 0 {
		return 0, ""
	}
	return deltaMs(int64(d/time.Second), int64(d%time.Second))
}

// deltaMs converts seconds and nanoseconds to milliseconds, rounded up so
// that a wait is never short, within 0–MaxQuotaResetMs.
func deltaMs(sec, ns int64) (int64, string) {
	switch {
	case sec < 0:
		return 0, QuotaNegativeReset
	case sec > MaxQuotaResetMs/1000:
		return 0, QuotaResetTooFar
	}
	ms := sec*1000 + (ns+999_999)/1_000_000
	if ms > MaxQuotaResetMs {
		return 0, QuotaResetTooFar
	}
	return ms, ""
}

// limitReason judges a limit or quota.
func limitReason(n int64) string {
	switch {
	case n <= 0:
		return QuotaZeroLimit
	case n > MaxQuotaLimit:
		return QuotaTooLarge
	}
	return ""
}

// remainingReason judges a count of requests left.
func remainingReason(n int64) string {
	switch {
	case n < 0:
		return QuotaMalformed
	case n > MaxQuotaLimit:
		return QuotaTooLarge
	}
	return ""
}

// windowReason judges a window in seconds: the drafts require it positive.
func windowReason(sec int64) string {
	switch {
	case sec <= 0:
		return QuotaMalformed
	case sec > MaxQuotaWindowMs/1000:
		return QuotaTooLarge
	}
	return ""
}

// checked accepts q unless it has more requests left than its limit.
func (r *quotaReading) checked(q Quota) (Quota, bool) {
	if q.Limit > 0 && q.Remaining > q.Limit {
		r.refuse(QuotaRemainingOverLimit)
		return noQuota, false
	}
	return q, true
}
