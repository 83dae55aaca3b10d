package engine

import (
	"fmt"

	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/wire"
)

// keyConcurrencyRule holds a flow key that runs keyMaxConcurrent jobs
// already; the key is parked until one of them finishes.
type keyConcurrencyRule struct{}

func (keyConcurrencyRule) Gate() wire.Gate                { return wire.GateKeyConcurrent }
func (keyConcurrencyRule) active(ep *store.Endpoint) bool { return ep.KeyMaxConcurrent != nil }
func (keyConcurrencyRule) needs() keyNeeds                { return keyNeeds{running: true} }

func (keyConcurrencyRule) room(ep *store.Endpoint, k *keyTurn) int64 {
	return *ep.KeyMaxConcurrent - k.running - k.took
}

func (r keyConcurrencyRule) held(ep *store.Endpoint, k *keyTurn, _ int64) gate {
	return gate{gate: r.Gate(), detail: fmt.Sprintf("key %q has %d of %d in flight (keyMaxConcurrent)", k.key, k.running+k.took, *ep.KeyMaxConcurrent)}
}
