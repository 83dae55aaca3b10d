package engine

import (
	"context"

	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/wire"
)

// monthlyBudgetRule holds an endpoint that made monthlyCallBudget claims
// since midnight of the 1st in its budgetTimeZone, until the next 1st.
type monthlyBudgetRule struct{}

func (monthlyBudgetRule) Gate() wire.Gate { return wire.GateMonthlyBudget }

func (monthlyBudgetRule) admit(ctx context.Context, q store.Queries, ep *store.Endpoint, now int64, v *gate) error {
	return monthlyBudget.admit(ctx, q, ep, ep.MonthlyCallBudget, now, v)
}

func (monthlyBudgetRule) fast(ep *store.Endpoint) (bool, int64) {
	return monthlyBudget.fast(ep.MonthlyCallBudget)
}

func (monthlyBudgetRule) confirm(ctx context.Context, q store.Queries, ep *store.Endpoint, t0 int64) (bool, error) {
	return monthlyBudget.confirm(ctx, q, ep, ep.MonthlyCallBudget, t0)
}
