package engine

import (
	"fmt"

	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/wire"
)

// keyMonthlyBudgetRule holds a flow key that had keyMonthlyCallBudget
// claims since midnight of the 1st in the endpoint's budgetTimeZone, until
// the next 1st.
type keyMonthlyBudgetRule struct{}

func (keyMonthlyBudgetRule) Gate() wire.Gate                { return wire.GateKeyMonthlyBudget }
func (keyMonthlyBudgetRule) active(ep *store.Endpoint) bool { return ep.KeyMonthlyCallBudget != nil }
func (keyMonthlyBudgetRule) needs() keyNeeds                { return keyNeeds{month: true} }

func (keyMonthlyBudgetRule) room(ep *store.Endpoint, k *keyTurn) int64 {
	return *ep.KeyMonthlyCallBudget - k.month.N - k.took
}

func (r keyMonthlyBudgetRule) held(ep *store.Endpoint, k *keyTurn, now int64) gate {
	return keyBudgetHeld(ep, k, now, r.Gate(), *ep.KeyMonthlyCallBudget, k.month.N, monthlyBudget)
}

// keyBudgetHeld is the verdict of a key's spent budget (daily or monthly,
// as b says): held until the period renews.
func keyBudgetHeld(ep *store.Endpoint, k *keyTurn, now int64, g wire.Gate, limit, counted int64, b budget) gate {
	end := b.periodOf(now, budgetZone(ep)).end
	return gate{gate: g, until: end, detail: fmt.Sprintf("key %q used %d of its %d calls %s (%s, %s); the budget renews at %s",
		k.key, counted+k.took, limit, b.span, b.keySetting, zoneName(ep), FormatTime(end))}
}
