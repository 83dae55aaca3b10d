package engine

import (
	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/wire"
)

// keyDailyBudgetRule holds a flow key that had keyDailyCallBudget claims
// since midnight in the endpoint's budgetTimeZone, until the next
// midnight there.
type keyDailyBudgetRule struct{}

func (keyDailyBudgetRule) Gate() wire.Gate                { return wire.GateKeyDailyBudget }
func (keyDailyBudgetRule) active(ep *store.Endpoint) bool { return ep.KeyDailyCallBudget != nil }
func (keyDailyBudgetRule) needs() keyNeeds                { return keyNeeds{day: true} }

func (keyDailyBudgetRule) room(ep *store.Endpoint, k *keyTurn) int64 {
	return *ep.KeyDailyCallBudget - k.day.N - k.took
}

func (r keyDailyBudgetRule) held(ep *store.Endpoint, k *keyTurn, now int64) gate {
	return keyBudgetHeld(ep, k, now, r.Gate(), *ep.KeyDailyCallBudget, k.day.N, dailyBudget)
}
