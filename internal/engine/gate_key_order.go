package engine

import (
	"context"
	"fmt"

	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/wire"
)

// keyOrderRule keeps one job of an ordered key in flight, in enqueue order:
// the next runs when the one in flight finishes, and a job waits while one
// enqueued before it has not run (jobHold).
type keyOrderRule struct{}

func (keyOrderRule) Gate() wire.Gate                          { return wire.GateKeyOrder }
func (keyOrderRule) active(ep *store.Endpoint) bool           { return ep.KeyOrdered }
func (keyOrderRule) needs() keyNeeds                          { return keyNeeds{running: true} }
func (keyOrderRule) room(_ *store.Endpoint, k *keyTurn) int64 { return 1 - k.running - k.took }

func (r keyOrderRule) held(_ *store.Endpoint, k *keyTurn, _ int64) gate {
	return gate{gate: r.Gate(), detail: fmt.Sprintf("key %q is ordered and has a job in flight; the next runs when it finishes", k.key)}
}

// jobHold is the hold of job j of an ordered key with nothing in flight
// when a job enqueued before it has not run yet (nil otherwise).
func (r keyOrderRule) jobHold(ctx context.Context, q store.Queries, ep *store.Endpoint, j *store.Job, k *keyTurn) (*Hold, error) {
	if !ep.KeyOrdered || k.running != 0 {
		return nil, nil
	}
	head, err := q.FlowKeyHead(ctx, ep.ID, j.FlowKey)
	if err != nil || head == 0 || head == j.ID {
		return nil, err
	}
	return &Hold{Gate: r.Gate(), Detail: fmt.Sprintf("key %q is ordered: job %d, enqueued before this one, runs first", j.FlowKey, head)}, nil
}
