package engine

import (
	"context"
	"fmt"

	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/wire"
)

// RateWindowMs is the rate limit window: a sliding 60 seconds over the claim
// times of the endpoint's attempts. A claim is allowed while fewer than
// rateLimitPerMinute attempts were claimed in the 60 s before it.
const RateWindowMs = 60_000

// rateRule holds an endpoint that had rateLimitPerMinute claims in the
// last 60 s, until the earliest of them leaves the window.
type rateRule struct{}

func (rateRule) Gate() wire.Gate { return wire.GateRateLimit }

func (r rateRule) admit(ctx context.Context, q store.Queries, ep *store.Endpoint, now int64, v *gate) error {
	if ep.RateLimitPerMinute == nil {
		return nil
	}
	limit := *ep.RateLimitPerMinute
	n, earliest, err := q.ClaimsSince(ctx, &store.ClaimsSinceParams{EndpointID: ep.ID, Since: now - RateWindowMs + 1, Limit: limit})
	if err != nil {
		return err
	}
	v.narrow(limit - n)
	if v.allowed <= 0 {
		v.shut(r.Gate(), earliest+RateWindowMs, fmt.Sprintf("endpoint %q had %d claims in the last 60 s (rateLimitPerMinute %d)", ep.Name, n, limit))
	}
	return nil
}

func (rateRule) fast(ep *store.Endpoint) (bool, int64) {
	if ep.RateLimitPerMinute == nil {
		return true, -1
	}
	return true, *ep.RateLimitPerMinute
}

// confirm takes the window back from t0, when the claims were stamped, not
// from now.
func (rateRule) confirm(ctx context.Context, q store.Queries, ep *store.Endpoint, t0 int64) (bool, error) {
	if ep.RateLimitPerMinute == nil {
		return true, nil
	}
	limit := *ep.RateLimitPerMinute
	n, _, err := q.ClaimsSince(ctx, &store.ClaimsSinceParams{EndpointID: ep.ID, Since: t0 - RateWindowMs + 1, Limit: limit + 1})
	if err != nil || n > limit {
		return false, err
	}
	return true, nil
}
