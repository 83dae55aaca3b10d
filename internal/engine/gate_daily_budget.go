package engine

import (
	"context"
	"fmt"

	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/wire"
)

// DayMs is a UTC day: a daily call budget renews at each midnight UTC.
// Unix milliseconds count UTC days exactly (no leap seconds), so a day
// starts where the time is a multiple of DayMs.
const DayMs = 86_400_000

// dailyBudgetRule holds an endpoint that made dailyCallBudget claims since
// midnight UTC, until the next midnight. Like the rate limit it counts
// the claims of the endpoint's attempts (ClaimsSince), over a window that
// starts at the day's start instead of sliding.
type dailyBudgetRule struct{}

func (dailyBudgetRule) Gate() wire.Gate { return wire.GateDailyBudget }

// dayStart is the start of the UTC day of t (unix ms).
func dayStart(t int64) int64 { return t - t%DayMs }

func (r dailyBudgetRule) admit(ctx context.Context, q store.Queries, ep *store.Endpoint, now int64, v *gate) error {
	if ep.DailyCallBudget == nil {
		return nil
	}
	budget, day := *ep.DailyCallBudget, dayStart(now)
	n, _, err := q.ClaimsSince(ctx, &store.ClaimsSinceParams{EndpointID: ep.ID, Since: day, Limit: budget})
	if err != nil {
		return err
	}
	v.narrow(budget - n)
	if v.allowed <= 0 {
		v.shut(r.Gate(), day+DayMs, fmt.Sprintf("endpoint %q used %d of its %d calls today (dailyCallBudget); the budget renews at %s",
			ep.Name, n, budget, FormatTime(day+DayMs)))
	}
	return nil
}

// fast lets the optimistic path try: what is left of the budget is not
// known without a count, so it takes at most the whole budget and confirm
// counts under the lock.
func (dailyBudgetRule) fast(ep *store.Endpoint) (bool, int64) {
	if ep.DailyCallBudget == nil {
		return true, -1
	}
	return true, *ep.DailyCallBudget
}

// confirm counts the claims of t0's UTC day, t0 being when the claims
// were stamped: the day a claim counts against is the day it was made.
func (dailyBudgetRule) confirm(ctx context.Context, q store.Queries, ep *store.Endpoint, t0 int64) (bool, error) {
	if ep.DailyCallBudget == nil {
		return true, nil
	}
	budget := *ep.DailyCallBudget
	n, _, err := q.ClaimsSince(ctx, &store.ClaimsSinceParams{EndpointID: ep.ID, Since: dayStart(t0), Limit: budget + 1})
	if err != nil || n > budget {
		return false, err
	}
	return true, nil
}
