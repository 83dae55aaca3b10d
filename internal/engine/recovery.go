package engine

import (
	"context"
	"fmt"
	"net/http"

	"github.com/getratchet/ratchet/internal/classify"
	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/wire"
)

// The recovery ramp (docs/outages.md). When an endpoint's circuit closes
// or its pause ends, its claims a second start low and move once a
// period, AIMD as TCP's congestion control (RFC 5681): while every answer
// to a claim made since the last move was good, the rate doubles (slow
// start) until it reaches the rate of the last cut, then grows by a tenth
// of that rate a second; an answer that was a throttle, a 5xx or a
// timeout cuts it to 7/10 (at most once a period, and only for claims made
// at the rate being cut). The ramp ends when it reaches the endpoint's
// cap (its rate limit, or the limit learned from the provider), or when
// the claims made fall below half of what it allows: the ramp no longer
// holds anything back. The state is the endpoint's row, so every node
// claims by the same ramp.
const (
	recoveryPeriodMs  = 1000 // the ramp moves at most once a period
	recoveryCutPerTen = 7    // a cut keeps 7/10 of the rate
	recoveryStartDiv  = 10   // the ramp starts at a tenth of the cap (or of maxConcurrent a second)
	// recoveryLookAheadMs is how far ahead the ramp looks for due jobs
	// before it ends: throttled jobs come back after their delay, and a
	// ramp that ended while they waited would let them come back at once.
	recoveryLookAheadMs = 60_000
)

// recoveryCap is the rate the ramp ends at, in thousandths of a claim a
// second: the lower of the endpoint's rate limit and the limit learned
// from the provider, 0 when neither is known.
func recoveryCap(ep *store.Endpoint, now int64) int64 {
	var c int64
	if ep.RateLimitPerMinute != nil {
		c = *ep.RateLimitPerMinute * 1000 / 60
	}
	if l := learnedRate(ep, now); l > 0 && (c == 0 || l < c) {
		c = l
	}
	return c
}

// startRecovery starts the endpoint's ramp at now: at a tenth of its cap
// (or of maxConcurrent a second), or at half a limit the provider stated
// and that still stands (it said what it takes, within the last minute),
// doubling from there.
func startRecovery(ep *store.Endpoint, now int64) {
	start := max(1000, ep.MaxConcurrent*1000/recoveryStartDiv)
	if c := recoveryCap(ep, now); c > 0 {
		start = max(1000, c/recoveryStartDiv)
		if l := learnedRate(ep, now); l > 0 && l <= c {
			start = max(1000, l/2)
		}
	}
	ep.Recovery = store.Recovery{Rate: start, StartedAt: now, AdjustedAt: now}
}

// rampAfterRise starts the ramp when an update raised the endpoint's
// rate limit or maxConcurrent (from before): the rate goes up from the old
// limit's (a raised rate limit) or from the claims of the last second (a
// raised maxConcurrent) by additive steps, not at once. An endpoint that
// is recovering, paused or not closed keeps what it has.
func (e *Engine) rampAfterRise(ctx context.Context, q store.Queries, ep *store.Endpoint, before wire.EndpointSettings, now int64) error {
	if ep.Recovery.Rate != 0 || ep.PausedAt != 0 || ep.CircuitState != wire.CircuitClosed {
		return nil
	}
	var from int64
	switch {
	case before.RateLimitPerMinute != nil && (ep.RateLimitPerMinute == nil || *ep.RateLimitPerMinute > *before.RateLimitPerMinute):
		from = *before.RateLimitPerMinute * 1000 / 60
	case ep.MaxConcurrent > before.MaxConcurrent:
		n, _, err := q.ClaimsSince(ctx, &store.ClaimsSinceParams{EndpointID: ep.ID, Since: now - RecoveryWindowMs + 1, Limit: 1_000_000})
		if err != nil {
			return err
		}
		from = n * 1000
	default:
		return nil
	}
	from = max(1000, from)
	ep.Recovery = store.Recovery{Rate: from, Ceiling: from, StartedAt: now, AdjustedAt: now}
	if err := q.EndpointUpdateCircuit(ctx, ep); err != nil {
		return err
	}
	return e.recoveryEvent(ctx, q, ep, store.Recovery{}, now)
}

// recoveryStepOf is the additive step above the rate of the last cut.
func recoveryStepOf(ceiling int64) int64 { return max(1000, ceiling/10) }

// badAnswer reports whether a decision is one the ramp cuts on: the
// provider throttled, failed (5xx) or timed out.
func badAnswer(d classify.Decision, status int) bool {
	return d.CountsTowardCircuit || status == http.StatusTooManyRequests
}

// isThrottle reports whether an attempt was the provider asking to come
// back later rather than failing: a 429, or a 503 with Retry-After. Such
// an attempt is not counted against the job's maxAttempts, up to
// wire.MaxFreeThrottles a job (docs/outages.md).
func isThrottle(d classify.Decision, status int) bool {
	if d.Outcome != classify.Retry {
		return false
	}
	return status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable && d.Classification == classify.CodeRetryAfter
}

// recoveryMayChange reports, from a possibly unlocked read, whether an
// answer to a claim made at claimedAt moves the ramp: only answers to
// claims made after its last move do.
func recoveryMayChange(ep *store.Endpoint, claimedAt int64, bad bool, now int64) bool {
	r := ep.Recovery
	switch {
	case r.Rate == 0 || claimedAt <= r.AdjustedAt: // a claim of the same millisecond as the move may have been made before it
		return false
	case now-r.AdjustedAt < recoveryPeriodMs:
		return bad && r.BadAt < r.AdjustedAt
	}
	return true
}

// updateRecovery moves the endpoint's ramp after an answer to a claim
// made at claimedAt: it notes a bad answer, or, once a period has passed,
// grows, cuts or ends the ramp.
func (e *Engine) updateRecovery(ctx context.Context, q store.Queries, endpointID, claimedAt int64, d classify.Decision, status int, now int64, eps endpointCache) error {
	ep, err := eps.get(ctx, q, endpointID)
	if err != nil {
		return err
	}
	bad := badAnswer(d, status)
	if !recoveryMayChange(ep, claimedAt, bad, now) {
		return nil
	}
	if ep, err = eps.lock(ctx, q, endpointID); err != nil || !recoveryMayChange(ep, claimedAt, bad, now) {
		return err
	}
	r, was := &ep.Recovery, ep.Recovery
	switch {
	case now-r.AdjustedAt < recoveryPeriodMs:
		r.BadAt = now
	case bad || r.BadAt >= r.AdjustedAt:
		r.Ceiling = max(1000, r.Rate*recoveryCutPerTen/10)
		r.Rate, r.AdjustedAt, r.BadAt = r.Ceiling, now, 0
		e.log.Info("recovery cut", "endpoint", ep.Name, "rate", formatRate(r.Rate))
	default:
		if err := e.growRecovery(ctx, q, ep, now); err != nil {
			return err
		}
	}
	if err := q.EndpointUpdateCircuit(ctx, ep); err != nil {
		return err
	}
	return e.recoveryEvent(ctx, q, ep, was, now)
}

// recoveryEvent writes recovery_started or recovery_ended to the
// endpoint's event log when the ramp started or ended since was. A ramp
// that ends because the circuit opened again is told by circuit_opened.
func (e *Engine) recoveryEvent(ctx context.Context, q store.Queries, ep *store.Endpoint, was store.Recovery, now int64) error {
	r := ep.Recovery
	switch {
	case r.Rate > 0 && (was.Rate == 0 || r.StartedAt != was.StartedAt):
		return e.endpointEvent(ctx, q, ep, wire.EndpointRecoveryStarted, now, withFact("ratePerSecondMilli", r.Rate),
			withDetail(fmt.Sprintf("endpoint %s started to recover at %s a second, %s", ep.Name, claimsText(r.Rate), recoveryPhase(ep))))
	case r.Rate == 0 && was.Rate > 0 && ep.CircuitState == wire.CircuitClosed:
		return e.endpointEvent(ctx, q, ep, wire.EndpointRecoveryEnded, now, withFact("ratePerSecondMilli", was.Rate), withFact("tookMs", now-was.StartedAt),
			withDetail(fmt.Sprintf("endpoint %s recovered: the ramp ended at %s a second after %s", ep.Name, claimsText(was.Rate), formatMs(now-was.StartedAt))))
	}
	return nil
}

// claimsText is a rate in thousandths as "1 claim" or "2.5 claims".
func claimsText(rate int64) string {
	if rate == 1000 {
		return "1 claim"
	}
	return formatRate(rate) + " claims"
}

// formatMs prints a duration in ms as seconds: "42.5 s".
func formatMs(ms int64) string { return fmt.Sprintf("%.1f s", float64(ms)/1000) }

// growRecovery grows the ramp a period of good answers, or ends it when
// it reaches the endpoint's cap or no longer holds claims back.
func (e *Engine) growRecovery(ctx context.Context, q store.Queries, ep *store.Endpoint, now int64) error {
	r := &ep.Recovery
	allow := recoveryAllowance(r.Rate)
	n, _, err := q.ClaimsSince(ctx, &store.ClaimsSinceParams{EndpointID: ep.ID, Since: recoveryWindowStart(ep, now), Limit: allow})
	if err != nil {
		return err
	}
	switch {
	case n*2 < allow:
		// The ramp holds nothing back now; it ends unless jobs are due
		// soon (the throttled ones coming back after their delay), which
		// would otherwise come back together.
		soon, err := q.CountDue(ctx, &store.CountDueParams{EndpointID: ep.ID, Now: now + recoveryLookAheadMs, Limit: allow})
		if err != nil {
			return err
		}
		if soon*2 < allow {
			e.endRecovery(ep, now, "its claims fell below half of what the ramp allows")
			return nil
		}
		r.AdjustedAt, r.BadAt = now, 0 // hold the rate: the backlog is not drained
		return nil
	case r.Ceiling == 0 || r.Rate < r.Ceiling:
		r.Rate *= 2
		if r.Ceiling > 0 {
			r.Rate = min(r.Rate, r.Ceiling)
		}
	default:
		r.Rate += recoveryStepOf(r.Ceiling)
	}
	r.AdjustedAt, r.BadAt = now, 0
	if c := recoveryCap(ep, now); c > 0 && r.Rate >= c {
		e.endRecovery(ep, now, "it reached the endpoint's limit")
	}
	return nil
}

// endRecovery ends the ramp: the endpoint's other gates alone admit
// claims again.
func (e *Engine) endRecovery(ep *store.Endpoint, now int64, why string) {
	e.log.Info("recovery ended", "endpoint", ep.Name, "rate", formatRate(ep.Recovery.Rate), "after_ms", now-ep.Recovery.StartedAt, "why", why)
	ep.Recovery = store.Recovery{}
}

// learnedRate is the limit learned from the provider, in thousandths of a
// claim a second, while it stands (learnedFor); 0 for none.
func learnedRate(ep *store.Endpoint, now int64) int64 {
	l := ep.Learned
	if l.Limit == 0 || l.WindowMs <= 0 || now-l.At > learnedFor(l.WindowMs) {
		return 0
	}
	return l.Limit * 1_000_000 / l.WindowMs
}

// learnedFor is how long a learned limit stands after the provider last
// said it: ten windows, at least a minute. When the provider stops
// saying, the endpoint's own limits alone apply again.
func learnedFor(windowMs int64) int64 { return max(60_000, 10*windowMs) }

// freeThrottle reports whether an attempt the decision ended is a
// throttle the job does not count against its maxAttempts: a throttle,
// while the job has had fewer than wire.MaxFreeThrottles. A failed
// half-open probe counts as any failure: a job's attempts stay what its
// policy says (the seeds' "no automatic attempt 7").
func freeThrottle(j *store.Job, d classify.Decision, status int) bool {
	return isThrottle(d, status) && j.Throttles < wire.MaxFreeThrottles
}

// RecoveryView is the endpoint's ramp as the API shows it; nil while it
// is not recovering.
func RecoveryView(ep *store.Endpoint, now int64) *wire.Recovery {
	r := ep.Recovery
	if r.Rate == 0 {
		return nil
	}
	return &wire.Recovery{RatePerSecond: float64(r.Rate) / 1000, CutAtPerSec: float64(r.Ceiling) / 1000, CapPerSecond: float64(recoveryCap(ep, now)) / 1000,
		Phase: recoveryPhase(ep), StartedAt: FormatTime(r.StartedAt), AdjustedAt: FormatTime(r.AdjustedAt)}
}

// LearnedView is the limit learned from the provider as the API shows it;
// nil when none stands.
func LearnedView(ep *store.Endpoint, now int64) *wire.LearnedLimit {
	l := ep.Learned
	if learnedRate(ep, now) == 0 && l.ResetAt <= now {
		return nil
	}
	v := &wire.LearnedLimit{Limit: l.Limit, WindowMs: l.WindowMs, Source: l.Source, SaidAt: FormatTime(l.At)}
	if l.ResetAt > now {
		v.ResetAt = FormatTime(l.ResetAt)
	}
	return v
}
