package classify

import (
	"slices"
	"strings"
	"time"
)

// Quota is what a provider said about its rate limit in one response, read
// by ReadQuota. Every field is within the bounds below whenever ReadQuota
// reports ok.
type Quota struct {
	Limit     int64  // requests allowed per window, 1–MaxQuotaLimit; 0 = not said
	WindowMs  int64  // the window's length, 1 s–MaxQuotaWindowMs; 0 = not said (then the engine uses ResetMs or 1 s)
	Remaining int64  // requests left in the current window, 0–Limit (0–MaxQuotaLimit when Limit is not said); -1 = not said
	ResetMs   int64  // ms until the window resets, 0–MaxQuotaResetMs; -1 = not said
	Source    string // which header family said it: QuotaSourceIETF, QuotaSourceRateLimit or QuotaSourceXRateLimit
}

// The header families, in order of precedence: when several are present
// the first that is accepted is the answer (see ReadQuota).
const (
	QuotaSourceIETF       = "ietf"        // RateLimit and RateLimit-Policy (draft-ietf-httpapi-ratelimit-headers)
	QuotaSourceRateLimit  = "ratelimit"   // RateLimit-Limit, -Remaining, -Reset (the draft's earlier revisions)
	QuotaSourceXRateLimit = "x-ratelimit" // X-RateLimit-Limit, -Remaining, -Reset, -Reset-After (GitHub, X/Twitter, Discord)
)

// Why a header value was refused: the fixed set ReadQuota's ignored list
// draws from, fit for a metric label.
const (
	QuotaMalformed          = "malformed"            // not the field's syntax, a wrong type, a missing required parameter, a negative remaining or window
	QuotaZeroLimit          = "zero_limit"           // a limit or quota of 0 or less
	QuotaNegativeReset      = "negative_reset"       // a reset or effective window below 0
	QuotaResetTooFar        = "reset_too_far"        // a reset more than MaxQuotaResetMs away
	QuotaTooLarge           = "too_large"            // a limit or remaining above MaxQuotaLimit, a window above MaxQuotaWindowMs, a value over MaxQuotaHeaderBytes or with too many members
	QuotaRemainingOverLimit = "remaining_over_limit" // more requests left than the limit allows
	QuotaUnsupportedUnit    = "unsupported_unit"     // an IETF policy counted in other units than requests (content-bytes, concurrent-requests)
	QuotaConflict           = "conflict"             // a lower family that disagrees with the one that answered
)

// QuotaIgnoreReasons returns every reason ReadQuota may give.
func QuotaIgnoreReasons() []string {
	return []string{QuotaMalformed, QuotaZeroLimit, QuotaNegativeReset, QuotaResetTooFar, QuotaTooLarge,
		QuotaRemainingOverLimit, QuotaUnsupportedUnit, QuotaConflict}
}

// Bounds on what ReadQuota accepts. A value outside them is refused, not
// clamped: a provider that claims a billion requests a second or a reset a
// year away is misconfigured or hostile, and either way not a pace to
// follow.
const (
	MaxQuotaLimit       int64 = 1_000_000_000   // the most requests per window
	MaxQuotaWindowMs    int64 = 31 * 86_400_000 // the longest window: a month-long quota
	MaxQuotaResetMs           = MaxRetryAfterMs // the furthest reset: 24 hours, as for Retry-After
	MaxQuotaHeaderBytes       = 8192            // the longest value read; HTTP servers commonly refuse longer header lines
)

// epochSeconds and epochMillis split a reset given as one number: below
// epochSeconds it is delta-seconds (31 years of them); below epochMillis
// epoch seconds (until the year 33658); from there epoch milliseconds.
const (
	epochSeconds = 1_000_000_000
	epochMillis  = 1_000_000_000_000
)

// The header names ReadQuota reads, matched case-insensitively. The index
// constants name the slots of quotaFields.
const (
	hRateLimit = iota
	hPolicy
	hRLLimit
	hRLRemaining
	hRLReset
	hXLimit
	hXRemaining
	hXReset
	hXResetAfter
	hXAltLimit
	hXAltRemaining
	hXAltReset
	nQuotaHeaders
)

var quotaHeaderNames = [nQuotaHeaders]string{
	"RateLimit", "RateLimit-Policy",
	"RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset",
	"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "X-RateLimit-Reset-After",
	"X-Rate-Limit-Limit", "X-Rate-Limit-Remaining", "X-Rate-Limit-Reset", // X (Twitter) spells them so
}

// QuotaHeaders returns the names of the headers ReadQuota reads, in their
// usual spelling: the response headers HTTP delivery and the SDKs keep so
// that a learned limit can be read from them. Retry-After is not among
// them (Classify reads it).
func QuotaHeaders() []string { return slices.Clone(quotaHeaderNames[:]) }

// quotaField is the value of one header, when present.
type quotaField struct {
	v  string
	ok bool
}

type quotaFields [nQuotaHeaders]quotaField

// noQuota is a Quota that says nothing.
var noQuota = Quota{Remaining: -1, ResetMs: -1}

// ReadQuota reads what a provider's response headers (h, any case, several
// values of one field joined by ", ") say about its rate limit, at now. It
// reports ok when one header family gave an accepted answer, and lists in
// ignored one reason (a QuotaIgnoreReasons value) per header value it
// refused.
//
// Families, in order of precedence (the first accepted one answers):
//
//  1. ietf: RateLimit (`"default";r=0;t=30`, or the older dictionary
//     `limit=100, remaining=0, reset=30`) and RateLimit-Policy
//     (`"default";q=100;w=60`, or the older `100;w=60`), parsed as
//     Structured Fields (RFC 9651). Of several service limits the one with
//     the fewest requests left binds; the policy of the same name gives
//     Limit and WindowMs. A policy alone gives the most restrictive rate.
//  2. ratelimit: RateLimit-Limit (`100`, or `100, 100;w=60`),
//     RateLimit-Remaining, RateLimit-Reset.
//  3. x-ratelimit: X-RateLimit-Limit, -Remaining, -Reset (also spelt
//     X-Rate-Limit-*) and -Reset-After (decimal seconds, read before
//     -Reset).
//
// A reset in RateLimit-Reset or X-RateLimit-Reset is delta-seconds below
// 10^9, epoch seconds below 10^12, epoch milliseconds above; an epoch in
// the past is a reset of 0. RateLimit's t is delta-seconds only, as the
// draft defines it.
//
// One refused value refuses its whole family (a provider that sends one
// absurd value is not trusted for the others), and the next family is
// tried; RateLimit-Policy alone is advisory and refused on its own. A
// lower family that is accepted but disagrees on Limit or Remaining with
// the answer is reported as a conflict. Retry-After is not read here.
func ReadQuota(h map[string]string, now time.Time) (q Quota, ok bool, ignored []string) {
	f, found := collectQuota(h)
	if !found {
		return noQuota, false, nil
	}
	r := quotaReading{now: now}
	r.readPolicy(f[hPolicy])
	q = noQuota
	a, aok := r.readIETF(&f)
	ok = r.consider(&q, ok, a, aok)
	a, aok = r.readRateLimit(&f)
	ok = r.consider(&q, ok, a, aok)
	a, aok = r.readXRateLimit(&f)
	ok = r.consider(&q, ok, a, aok)
	return q, ok, r.ignored
}

// collectQuota picks the rate-limit headers out of h in one pass. A name
// present in several spellings is joined by ", " in byte order of the
// spellings, as Classify's lookup does, so the result does not depend on
// map order. found reports whether one was.
func collectQuota(h map[string]string) (f quotaFields, found bool) {
	var keys [nQuotaHeaders][]string
	for k := range h {
		name := strings.Trim(k, " \t")
		if len(name) < len("RateLimit") || len(name) > len("X-RateLimit-Reset-After") {
			continue
		}
		for i, n := range quotaHeaderNames {
			if strings.EqualFold(name, n) {
				keys[i] = append(keys[i], k)
				break
			}
		}
	}
	for i, ks := range keys {
		switch len(ks) {
		case 0:
			continue
		case 1:
			f[i], found = quotaField{v: h[ks[0]], ok: true}, true
			continue
		}
		slices.Sort(ks)
		vals := make([]string, len(ks))
		for j, k := range ks {
			vals[j] = h[k]
		}
		f[i] = quotaField{v: strings.Join(vals, ", "), ok: true}
		found = true
	}
	return f, found
}

// quotaReading is the state of one ReadQuota call: the clock, the parsed
// RateLimit-Policy and the reasons gathered.
type quotaReading struct {
	now      time.Time
	policies []quotaPolicy // the accepted policies counted in requests
	ignored  []string
}

func (r *quotaReading) refuse(reason string) { r.ignored = append(r.ignored, reason) }

// consider takes a family's answer a (accepted when aok) in order of
// precedence: the first accepted one becomes q; a later one that disagrees
// with it is a conflict. It reports whether q holds an answer.
func (r *quotaReading) consider(q *Quota, ok bool, a Quota, aok bool) bool {
	switch {
	case !aok:
	case !ok:
		*q = a
		return true
	case a.Limit > 0 && q.Limit > 0 && a.Limit != q.Limit,
		a.Remaining >= 0 && q.Remaining >= 0 && a.Remaining != q.Remaining:
		r.refuse(QuotaConflict)
	}
	return ok
}

// refused records reason when it is not "" and reports whether it was.
func (r *quotaReading) refused(reason string) bool {
	if reason != "" {
		r.refuse(reason)
	}
	return reason != ""
}
