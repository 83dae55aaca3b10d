package engine

import (
	"context"
	"fmt"

	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/wire"
)

// providerLimitRule holds an endpoint by what its provider said in its
// rate-limit headers (learned.go): no requests remain until a reset, or
// the learned limit of its window was claimed. The window slides over
// the claim times of the endpoint's attempts, as the rate limit's does. A
// learned limit stands for learnedFor after the provider last said it,
// never above what the endpoint's own limits allow (those gates still
// apply).
type providerLimitRule struct{}

func (providerLimitRule) Gate() wire.Gate { return wire.GateProviderLimit }

func (r providerLimitRule) admit(ctx context.Context, q store.Queries, ep *store.Endpoint, now int64, v *gate) error {
	l := ep.Learned
	if l.ResetAt > now {
		v.shut(r.Gate(), l.ResetAt, fmt.Sprintf("the provider of endpoint %q said no requests remain until its limit resets (%s headers)", ep.Name, l.Source))
		return nil
	}
	if learnedRate(ep, now) == 0 {
		return nil
	}
	n, earliest, err := q.ClaimsSince(ctx, &store.ClaimsSinceParams{EndpointID: ep.ID, Since: now - l.WindowMs + 1, Limit: l.Limit})
	if err != nil {
		return err
	}
	v.narrow(l.Limit - n)
	if v.allowed <= 0 {
		v.shut(r.Gate(), earliest+l.WindowMs, fmt.Sprintf("endpoint %q made %d claims in the provider's window of %s, the limit it learned from the provider (%s headers)",
			ep.Name, n, formatWindow(l.WindowMs), l.Source))
	}
	return nil
}

// fast lets the optimistic path take at most the learned limit (confirm
// counts the window under the lock); a pending reset holds it to the
// locked path.
func (providerLimitRule) fast(ep *store.Endpoint) (bool, int64) {
	l := ep.Learned
	switch {
	case l.ResetAt > 0:
		return false, 0
	case l.Limit == 0:
		return true, -1
	}
	return true, l.Limit
}

func (providerLimitRule) confirm(ctx context.Context, q store.Queries, ep *store.Endpoint, t0 int64) (bool, error) {
	l := ep.Learned
	if l.ResetAt > t0 {
		return false, nil
	}
	if learnedRate(ep, t0) == 0 {
		return true, nil
	}
	n, _, err := q.ClaimsSince(ctx, &store.ClaimsSinceParams{EndpointID: ep.ID, Since: t0 - l.WindowMs + 1, Limit: l.Limit + 1})
	if err != nil || n > l.Limit {
		return false, err
	}
	return true, nil
}

// formatWindow prints a window: "1 s", "60 s", "1500 ms".
func formatWindow(ms int64) string {
	if ms%1000 == 0 {
		return fmt.Sprintf("%d s", ms/1000)
	}
	return fmt.Sprintf("%d ms", ms)
}
