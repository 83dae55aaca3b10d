package engine

import (
	"fmt"

	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/wire"
)

// keyRateRule holds a flow key that had keyRateLimitPerMinute claims in the
// last KeyRateWindowMs (a minute and a second for delivery), until the
// earliest of them leaves the window.
type keyRateRule struct{}

func (keyRateRule) Gate() wire.Gate                { return wire.GateKeyRate }
func (keyRateRule) active(ep *store.Endpoint) bool { return ep.KeyRateLimitPerMinute != nil }
func (keyRateRule) needs() keyNeeds                { return keyNeeds{claims: true} }

func (keyRateRule) room(ep *store.Endpoint, k *keyTurn) int64 {
	return *ep.KeyRateLimitPerMinute - k.claims.N - k.took
}

func (r keyRateRule) held(ep *store.Endpoint, k *keyTurn, now int64) gate {
	earliest := now
	if k.claims.N > 0 {
		earliest = k.claims.Earliest
	}
	return gate{gate: r.Gate(), until: earliest + KeyRateWindowMs,
		detail: fmt.Sprintf("key %q had %d claims in the last 61 s (keyRateLimitPerMinute %d, and a second for delivery)", k.key, k.claims.N+k.took, *ep.KeyRateLimitPerMinute)}
}
