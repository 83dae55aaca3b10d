package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/getratchet/ratchet/internal/classify"
	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/wire"
)

// Limits learned from the provider (docs/outages.md): each answer's
// rate-limit headers (classify.ReadQuota), from HTTP delivery and from
// workers' reports alike, update the endpoint's learned limit, which the
// gate provider_limit applies. What is learned:
//
//   - a limit per window, when the provider says both (a policy's q and w),
//     or says a limit whose window resets within a second (RateLimit-Limit
//     with RateLimit-Reset ≤ 1 s: a per-second limit). A limit without a
//     window is not guessed at;
//   - none remaining until a reset, when it says remaining 0 and a reset.
//
// The row is written only when what was learned changes, or to keep a
// standing limit from lapsing (at most every learnedRefreshMs), so a busy
// endpoint's answers do not write it each time.
const learnedRefreshMs = 10_000

// learnedFrom is the limit an answer's quota teaches at now, from what
// stood before (was).
func learnedFrom(q classify.Quota, was store.LearnedLimit, now int64) store.LearnedLimit {
	l := store.LearnedLimit{Limit: was.Limit, WindowMs: was.WindowMs, At: was.At, Source: was.Source}
	window := q.WindowMs
	if window == 0 && q.ResetMs >= 0 && q.ResetMs <= 1000 {
		window = 1000
	}
	if q.Limit > 0 && window > 0 {
		l.Limit, l.WindowMs, l.At, l.Source = q.Limit, window, now, q.Source
	}
	if q.Remaining == 0 && q.ResetMs > 0 {
		l.ResetAt = now + q.ResetMs
		if l.Source == "" {
			l.Source = q.Source
		}
	}
	return l
}

// learnedChanged reports whether l must be written over was: a new limit
// or window, a reset that starts or ends (or moves by more than half a
// second), or a standing limit due for a refresh.
func learnedChanged(l, was store.LearnedLimit, now int64) bool {
	switch {
	case l.Limit != was.Limit || l.WindowMs != was.WindowMs || l.Source != was.Source:
		return true
	case (l.ResetAt > now) != (was.ResetAt > now):
		return true
	case l.ResetAt > was.ResetAt+500:
		return true
	}
	return l.Limit > 0 && l.At-was.At >= learnedRefreshMs
}

// learnLimit reads the rate-limit headers of an answer for the endpoint
// and writes what they teach; headers it refused are counted by reason.
func (e *Engine) learnLimit(ctx context.Context, q store.Queries, endpointID int64, headers map[string]string, now int64, eps endpointCache) error {
	if len(headers) == 0 {
		return nil
	}
	quota, ok, ignored := classify.ReadQuota(headers, time.UnixMilli(now))
	if e.obs != nil {
		for _, reason := range ignored {
			e.obs.QuotaIgnored(reason)
		}
	}
	if !ok {
		return nil
	}
	ep, err := eps.get(ctx, q, endpointID)
	if err != nil {
		return err
	}
	if !learnedChanged(learnedFrom(quota, ep.Learned, now), ep.Learned, now) {
		return nil
	}
	if ep, err = eps.lock(ctx, q, endpointID); err != nil {
		return err
	}
	was := ep.Learned
	ep.Learned = learnedFrom(quota, was, now)
	if !learnedChanged(ep.Learned, was, now) {
		return nil
	}
	if err := q.EndpointUpdateLearned(ctx, ep); err != nil {
		return err
	}
	if ep.Learned.Limit == was.Limit && ep.Learned.WindowMs == was.WindowMs {
		return nil
	}
	e.log.Info("limit learned", "endpoint", ep.Name, "limit", ep.Learned.Limit, "window_ms", ep.Learned.WindowMs, "source", ep.Learned.Source)
	return e.endpointEvent(ctx, q, ep, wire.EndpointLimitLearned, now, withFact("limit", ep.Learned.Limit), withFact("windowMs", ep.Learned.WindowMs),
		withFact("previousLimit", was.Limit), withFact("previousWindowMs", was.WindowMs),
		withDetail(fmt.Sprintf("the provider of endpoint %s said its limit is %d requests per %s (%s headers); it was %s",
			ep.Name, ep.Learned.Limit, formatWindow(ep.Learned.WindowMs), ep.Learned.Source, previousLimit(was))))
}

// previousLimit says what was learned before, for the event's sentence.
func previousLimit(l store.LearnedLimit) string {
	if l.Limit == 0 {
		return "not known"
	}
	return fmt.Sprintf("%d per %s", l.Limit, formatWindow(l.WindowMs))
}
