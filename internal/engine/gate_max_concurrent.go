package engine

import (
	"context"
	"fmt"

	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/wire"
)

// concurrencyRule holds an endpoint that runs maxConcurrent jobs already.
type concurrencyRule struct{}

func (concurrencyRule) Gate() wire.Gate { return wire.GateMaxConcurrent }

func (r concurrencyRule) admit(ctx context.Context, q store.Queries, ep *store.Endpoint, _ int64, v *gate) error {
	running, err := q.CountRunning(ctx, &store.CountRunningParams{EndpointID: ep.ID, Limit: ep.MaxConcurrent})
	if err != nil {
		return err
	}
	v.narrow(ep.MaxConcurrent - running)
	if v.allowed <= 0 {
		v.shut(r.Gate(), 0, fmt.Sprintf("endpoint %q has %d of %d jobs running (maxConcurrent)", ep.Name, running, ep.MaxConcurrent))
	}
	return nil
}

func (concurrencyRule) fast(ep *store.Endpoint) (bool, int64) { return true, ep.MaxConcurrent }

// confirm asks more than admit does, because the claims were stamped at
// t0, before the lock: an attempt of the endpoint that finished after t0
// overlaps them in the attempts table, so it counts as running.
func (concurrencyRule) confirm(ctx context.Context, q store.Queries, ep *store.Endpoint, t0 int64) (bool, error) {
	running, err := q.CountRunning(ctx, &store.CountRunningParams{EndpointID: ep.ID, Limit: ep.MaxConcurrent + 1})
	if err != nil || running > ep.MaxConcurrent {
		return false, err
	}
	finished, err := q.AttemptsFinishedSince(ctx, &store.AttemptsFinishedSinceParams{EndpointID: ep.ID, Since: t0, Limit: ep.MaxConcurrent - running + 1})
	if err != nil || running+finished > ep.MaxConcurrent {
		return false, err
	}
	return true, nil
}
