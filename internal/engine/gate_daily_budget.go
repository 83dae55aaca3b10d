package engine

import (
	"context"

	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/wire"
)

// dailyBudgetRule holds an endpoint that made dailyCallBudget claims since
// midnight in its budgetTimeZone, until the next midnight there (a day of
// 23 or 25 hours across a daylight-saving change; budget.go).
type dailyBudgetRule struct{}

func (dailyBudgetRule) Gate() wire.Gate { return wire.GateDailyBudget }

func (dailyBudgetRule) admit(ctx context.Context, q store.Queries, ep *store.Endpoint, now int64, v *gate) error {
	return dailyBudget.admit(ctx, q, ep, ep.DailyCallBudget, now, v)
}

func (dailyBudgetRule) fast(ep *store.Endpoint) (bool, int64) {
	return dailyBudget.fast(ep.DailyCallBudget)
}

func (dailyBudgetRule) confirm(ctx context.Context, q store.Queries, ep *store.Endpoint, t0 int64) (bool, error) {
	return dailyBudget.confirm(ctx, q, ep, ep.DailyCallBudget, t0)
}
