package engine

import (
	"context"

	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/wire"
)

// Gates are units: each one is a rule in a file of its own (gate_*.go) and
// a line in one of the two lists below. A rule holds everything Ratchet
// says and does about its gate: the hold decision on the claim's locked
// path, the unlocked read that lets the optimistic path try, the
// confirmation of that path under the endpoint's lock, and the sentences
// explain and heldBy show. Its name (Gate) is the value of wire.Gate that
// the API shows and the label of ratchet_gate_holds_total.
//
// The claim (gates, confirm, claimUnlocked), explain (holdOf, keyHold) and
// the flow keys' turns (flowLimits, keyGate) iterate the lists, so a new
// gate is a new file and a line here; TestEveryGateHasARule fails for a
// gate constant no rule answers for.

// endpointRule is a gate of a whole endpoint, checked in list order: the
// first rule that shuts the endpoint is the one explain names.
type endpointRule interface {
	Gate() wire.Gate
	// admit narrows v, the endpoint's verdict so far, at now: it lowers
	// v.allowed, or shuts v (v.shut) when the gate holds the endpoint.
	// ep is as read in the claim's transaction (locked on the locked path).
	admit(ctx context.Context, q store.Queries, ep *store.Endpoint, now int64, v *gate) error
	// fast says whether an unlocked read of ep lets the optimistic path
	// claim (open), and caps how many it may take (cap, -1 for no cap).
	fast(ep *store.Endpoint) (open bool, cap int64)
	// confirm decides, with the endpoint's row locked, whether claims
	// stamped at t0 (this transaction's and any committed before it) keep
	// within the gate. When in doubt it says no: the locked path decides.
	confirm(ctx context.Context, q store.Queries, ep *store.Endpoint, t0 int64) (bool, error)
}

// keyRule is a limit of each flow key of a keyed endpoint, checked after
// the endpoint's own gates let claims through (docs/flow-control.md).
type keyRule interface {
	Gate() wire.Gate
	// active reports whether the endpoint sets this limit. An endpoint
	// with an active key rule is claimed on the locked path only, key by
	// key.
	active(ep *store.Endpoint) bool
	// needs says which of a key's counts the rule reads (keyCounts).
	needs() keyNeeds
	// room is how many more jobs key k may start now (-1: no limit).
	room(ep *store.Endpoint, k *keyTurn) int64
	// held is the verdict when room is 0: the sentence and when it opens.
	held(ep *store.Endpoint, k *keyTurn, now int64) gate
}

// jobHolder is a key rule that can hold one job of a key whose room is
// not spent (explain asks it first): an ordered key's later jobs wait for
// its head.
type jobHolder interface {
	jobHold(ctx context.Context, q store.Queries, ep *store.Endpoint, j *store.Job, k *keyTurn) (*Hold, error)
}

// timedFast is an endpoint rule whose unlocked read depends on the time
// (a quiet window): fastOpen asks fastAt instead of fast.
type timedFast interface {
	fastAt(ep *store.Endpoint, now int64) (open bool, cap int64)
}

// keyNeeds are the counts of a key a rule reads: its running jobs, its
// claims in the rate window, today and this month (budgetTimeZone's).
type keyNeeds struct{ running, claims, day, month bool }

// endpointRules are the endpoint's gates in the order they are checked: an
// owner's pause first, then the circuit, then capacity.
var endpointRules = []endpointRule{
	pausedRule{},
	circuitRule{},
	recoveringRule{},
	providerLimitRule{},
	concurrencyRule{},
	rateRule{},
	dailyBudgetRule{},
	monthlyBudgetRule{},
	deliveryWindowRule{},
}

// keyRules are a flow key's limits in the order heldBy names them.
var keyRules = []keyRule{
	keyOrderRule{},
	keyConcurrencyRule{},
	keyRateRule{},
	keyDailyBudgetRule{},
	keyMonthlyBudgetRule{},
}

// gate is the verdict of the gates of one endpoint at one moment.
type gate struct {
	allowed  int64     // how many claims the endpoint admits now
	gate     wire.Gate // which gate holds it when allowed is 0
	detail   string
	until    int64 // when it opens, 0 if it waits for an event
	halfOpen bool  // this claim is the half-open probe
	err      error
	ep       *store.Endpoint // the endpoint as read (explain's key gates)
}

// shut makes v the hold of gate g.
func (v *gate) shut(g wire.Gate, until int64, detail string) {
	v.allowed, v.gate, v.until, v.detail = 0, g, until, detail
}

// narrow lowers what v admits to n.
func (v *gate) narrow(n int64) {
	if n < v.allowed {
		v.allowed = n
	}
}

// hold is the gate's verdict as explain tells it.
func (v *gate) hold() *Hold {
	h := &Hold{Gate: v.gate, Detail: v.detail}
	if v.until > 0 {
		h.Until = FormatTime(v.until)
	}
	return h
}

// gates evaluates the endpoint's rules at now, in order, until one shuts
// it. It does not write; the caller records a half-open transition.
func (e *Engine) gates(ctx context.Context, q store.Queries, ep *store.Endpoint, now int64) gate {
	v := gate{allowed: ep.MaxConcurrent}
	for _, r := range endpointRules {
		if err := r.admit(ctx, q, ep, now, &v); err != nil {
			return gate{err: err}
		}
		if v.allowed <= 0 {
			v.allowed = 0
			return v
		}
	}
	return v
}

// fastOpen reports whether an unlocked read of ep at now lets the
// optimistic path claim, and how many at most (want capped by every rule).
func fastOpen(ep *store.Endpoint, want, now int64) (bool, int64) {
	if keyed(ep) {
		return false, 0
	}
	for _, r := range endpointRules {
		open, limit := r.fast(ep)
		if t, ok := r.(timedFast); ok {
			open, limit = t.fastAt(ep, now)
		}
		if !open {
			return false, 0
		}
		if limit >= 0 {
			want = min(want, limit)
		}
	}
	return true, want
}

// confirm decides, with the endpoint's row locked, whether claims stamped
// at t0 keep within every gate (see endpointRule.confirm). A keyed
// endpoint is never confirmed: its keys are claimed on the locked path.
func (e *Engine) confirm(ctx context.Context, q store.Queries, ep *store.Endpoint, t0 int64) (bool, error) {
	if keyed(ep) {
		return false, nil
	}
	for _, r := range endpointRules {
		if ok, err := r.confirm(ctx, q, ep, t0); err != nil || !ok {
			return false, err
		}
	}
	return true, nil
}

// keyed reports whether the endpoint's claims go through its flow keys: a
// key rule is active, or claims take turns across keys (fairKeys, which
// holds nothing on its own).
func keyed(ep *store.Endpoint) bool {
	if ep.FairKeys {
		return true
	}
	for _, r := range keyRules {
		if r.active(ep) {
			return true
		}
	}
	return false
}

// flowLimits are an endpoint's limits per key.
type flowLimits struct{ ep *store.Endpoint }

// room is how many more jobs key k may start now (-1: no limit): the least
// room of the active key rules. Key "" (the key-less jobs) has no limit
// of its own.
func (l flowLimits) room(k *keyTurn) int64 {
	if k.key == "" {
		return -1
	}
	room := int64(-1)
	for _, r := range keyRules {
		if !r.active(l.ep) {
			continue
		}
		if n := max(r.room(l.ep, k), 0); room < 0 || n < room {
			room = n
		}
	}
	return room
}

// keyGate says which of its limits holds key k (room 0): the first active
// key rule without room.
func (e *Engine) keyGate(ep *store.Endpoint, k *keyTurn, now int64) gate {
	for _, r := range keyRules {
		if r.active(ep) && r.room(ep, k) <= 0 {
			return r.held(ep, k, now)
		}
	}
	return gate{gate: wire.GateNone}
}

// keyNeedsOf is what the endpoint's active key rules read of each key.
func keyNeedsOf(ep *store.Endpoint) keyNeeds {
	var n keyNeeds
	for _, r := range keyRules {
		if r.active(ep) {
			m := r.needs()
			n.running = n.running || m.running
			n.claims = n.claims || m.claims
			n.day = n.day || m.day
			n.month = n.month || m.month
		}
	}
	return n
}
