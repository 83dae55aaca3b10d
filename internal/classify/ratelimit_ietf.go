package classify

import "errors"

// This file reads the fields of draft-ietf-httpapi-ratelimit-headers:
// RateLimit-Policy (the quota policies) and RateLimit (the service limits:
// what is left now). Draft 11 names a policy with a String
// (`"default";q=100;w=60`), drafts 8–10 allowed a Token; the older
// revisions sent `100;w=60` policies and a `limit=100, remaining=0,
// reset=30` dictionary. All of them are read; anything else is malformed.

// quotaPolicy is one accepted item of RateLimit-Policy.
type quotaPolicy struct {
	name     string // "" for the older, anonymous form
	q        int64  // the quota, 1–MaxQuotaLimit when requests
	w        int64  // the window in seconds; 0 when not said
	requests bool   // counted in requests (the default unit); the others are skipped
}

// readPolicy parses RateLimit-Policy into r.policies. The field is advisory
// (the draft lets clients ignore it): a refused policy field leaves
// r.policies empty and refuses nothing else.
func (r *quotaReading) readPolicy(f quotaField) {
	if !f.ok {
		return
	}
	items, reason := sfListOf(f.v)
	if r.refused(reason) {
		return
	}
	ps := make([]quotaPolicy, 0, len(items))
	for _, it := range items {
		p, reason := policyOf(it)
		if r.refused(reason) {
			return
		}
		if !p.requests {
			r.refuse(QuotaUnsupportedUnit)
		}
		ps = append(ps, p)
	}
	r.policies = ps
}

// policyOf checks one policy item: a String or Token name with an Integer
// q, or (the older form) an Integer that is the quota; an optional Integer
// w; an optional String qu.
func policyOf(it sfItem) (quotaPolicy, string) {
	p := quotaPolicy{requests: true}
	switch it.kind {
	case sfString, sfToken:
		q, ok := it.param("q")
		if !ok || q.kind != sfInteger {
			return p, QuotaMalformed
		}
		p.name, p.q = it.s, q.n
	case sfInteger:
		p.q = it.n
	default:
		return p, QuotaMalformed
	}
	if qu, ok := it.param("qu"); ok {
		if qu.kind != sfString {
			return p, QuotaMalformed
		}
		p.requests = qu.s == "requests"
	}
	if w, ok := it.param("w"); ok {
		if w.kind != sfInteger {
			return p, QuotaMalformed
		}
		if reason := windowReason(w.n); reason != "" {
			return p, reason
		}
		p.w = w.n
	}
	if !p.requests {
		return p, "" // bytes or concurrency: not a pace in requests, so its size is not judged
	}
	return p, limitReason(p.q)
}

// readIETF reads the RateLimit field, with the policies for its limit and
// window. Without RateLimit the policies alone answer, unless
// RateLimit-Limit, -Remaining or -Reset are there: the draft's earlier
// revisions sent RateLimit-Policy beside them, and they say more.
func (r *quotaReading) readIETF(f *quotaFields) (Quota, bool) {
	rl := f[hRateLimit]
	if !rl.ok {
		if f[hRLLimit].ok || f[hRLRemaining].ok || f[hRLReset].ok {
			return noQuota, false
		}
		return r.policyQuota()
	}
	items, listReason := sfListOf(rl.v)
	if listReason == "" {
		return r.serviceLimits(items)
	}
	if listReason == QuotaMalformed { // perhaps the older dictionary form
		if dict, err := parseSFDict(rl.v); err == nil && len(dict) > 0 {
			return r.dictLimit(dict)
		}
	}
	r.refuse(listReason)
	return noQuota, false
}

// serviceLimits reads the items of RateLimit. The binding one is the one
// with the fewest requests left (on a tie, the later reset); its policy, by
// name, gives Limit and WindowMs. Items of a policy counted in other units
// are skipped.
func (r *quotaReading) serviceLimits(items []sfItem) (Quota, bool) {
	q, found := noQuota, false
	var bound quotaPolicy
	for _, it := range items {
		name, rem, reset, reason := serviceLimitOf(it)
		if r.refused(reason) {
			return noQuota, false
		}
		p, known := r.policy(name)
		if known && !p.requests {
			continue
		}
		if !found || rem < q.Remaining || rem == q.Remaining && reset > q.ResetMs {
			q.Remaining, q.ResetMs, bound, found = rem, reset, p, true
		}
	}
	if !found {
		return noQuota, false
	}
	q.Limit, q.WindowMs, q.Source = bound.q, bound.w*1000, QuotaSourceIETF
	return r.checked(q)
}

// serviceLimitOf checks one RateLimit item: a String or Token name, a
// required Integer r, an optional Integer t (delta-seconds). reset is in
// ms, -1 when t is absent.
func serviceLimitOf(it sfItem) (name string, rem, reset int64, reason string) {
	if it.kind != sfString && it.kind != sfToken {
		return "", 0, 0, QuotaMalformed
	}
	rp, ok := it.param("r")
	if !ok || rp.kind != sfInteger {
		return "", 0, 0, QuotaMalformed
	}
	if reason := remainingReason(rp.n); reason != "" {
		return "", 0, 0, reason
	}
	reset = -1
	if t, ok := it.param("t"); ok {
		if t.kind != sfInteger {
			return "", 0, 0, QuotaMalformed
		}
		if reset, reason = deltaMs(t.n, 0); reason != "" {
			return "", 0, 0, reason
		}
	}
	return it.s, rp.n, reset, ""
}

// policy finds the accepted policy named name.
func (r *quotaReading) policy(name string) (quotaPolicy, bool) {
	for _, p := range r.policies {
		if p.name == name && name != "" {
			return p, true
		}
	}
	return quotaPolicy{}, false
}

// dictLimit reads the older dictionary form of RateLimit: Integer members
// limit, remaining and reset (delta-seconds), at least one of the first
// two; other members are comments. The window is that of a policy whose
// quota is the limit.
func (r *quotaReading) dictLimit(dict []sfParam) (Quota, bool) {
	q := noQuota
	var said bool
	for _, m := range dict {
		var reason string
		switch m.key {
		case "limit":
			q.Limit, reason = m.item.n, limitReason(m.item.n)
		case "remaining":
			q.Remaining, reason = m.item.n, remainingReason(m.item.n)
		case "reset":
			q.ResetMs, reason = deltaMs(m.item.n, 0)
		default:
			continue
		}
		if m.item.kind != sfInteger {
			reason = QuotaMalformed
		}
		if r.refused(reason) {
			return noQuota, false
		}
		said = said || m.key != "reset"
	}
	if !said {
		r.refuse(QuotaMalformed)
		return noQuota, false
	}
	q.WindowMs, q.Source = r.windowFor(q.Limit), QuotaSourceIETF
	return r.checked(q)
}

// policyQuota answers from the policies alone: the most restrictive one
// counted in requests (the lowest rate; a policy without a window ranks
// after those with one, by its quota).
func (r *quotaReading) policyQuota() (Quota, bool) {
	best := -1
	for i, p := range r.policies {
		if p.requests && (best < 0 || stricter(p, r.policies[best])) {
			best = i
		}
	}
	if best < 0 {
		return noQuota, false
	}
	p := r.policies[best]
	return Quota{Limit: p.q, WindowMs: p.w * 1000, Remaining: -1, ResetMs: -1, Source: QuotaSourceIETF}, true
}

// stricter reports whether policy a allows a lower rate than b. Quotas
// and windows are bounded, so the cross products cannot overflow.
func stricter(a, b quotaPolicy) bool {
	switch {
	case a.w > 0 && b.w > 0:
		return a.q*b.w < b.q*a.w
	case a.w > 0 || b.w > 0:
		return a.w > 0
	}
	return a.q < b.q
}

// windowFor is the window of the first policy counted in requests whose
// quota is limit, 0 when none.
func (r *quotaReading) windowFor(limit int64) int64 {
	for _, p := range r.policies {
		if p.requests && p.q == limit && limit > 0 {
			return p.w * 1000
		}
	}
	return 0
}

// sfListOf parses a non-empty List of at most maxSFMembers items from a
// value of at most MaxQuotaHeaderBytes; reason says why not.
func sfListOf(v string) ([]sfItem, string) {
	if len(v) > MaxQuotaHeaderBytes {
		return nil, QuotaTooLarge
	}
	items, err := parseSFList(v)
	switch {
	case errors.Is(err, errSFTooMany):
		return nil, QuotaTooLarge
	case err != nil, len(items) == 0:
		return nil, QuotaMalformed
	}
	return items, ""
}
