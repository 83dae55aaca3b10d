package engine

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"sync"
	"time"

	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/wire"
)

// Budgets and quiet hours read an endpoint's budgetTimeZone: a day runs
// from one midnight of the zone to the next (23 or 25 hours across a
// daylight-saving change), a month from midnight of the 1st, and the quiet
// window on the zone's wall clock. A wall time becomes an instant by the
// schedules' rule (wallInstant, docs/schedules.md): a wall time the zone
// skips is the first instant after the gap, one it repeats is its first
// occurrence. docs/flow-control.md tells it to users.

// zones caches the loaded time zones by name: loading reads the zone's
// file, and a claim reads the zone of every budgeted endpoint it meets.
var zones sync.Map

// budgetZone is the endpoint's budgetTimeZone. A zone was checked when it
// was saved; one this node cannot load (a node without that zone's data)
// and an empty one read as UTC, as budgets did before they had a zone.
func budgetZone(ep *store.Endpoint) *time.Location {
	name := ep.BudgetTimeZone
	if name == "" || name == "UTC" {
		return time.UTC
	}
	if l, ok := zones.Load(name); ok {
		return l.(*time.Location)
	}
	loc, ok := wire.LoadZone(name)
	if !ok {
		loc = time.UTC
	}
	zones.Store(name, loc)
	return loc
}

// zoneName is the name budgets say their zone by.
func zoneName(ep *store.Endpoint) string {
	if ep.BudgetTimeZone == "" {
		return "UTC"
	}
	return ep.BudgetTimeZone
}

// period is a budget's span, [start, end) in unix ms.
type period struct{ start, end int64 }

// localMidnight is the instant midnight of y-m-d (normalized: day 32 is
// the next month's 1st) begins in loc.
func localMidnight(y int, m time.Month, d int, loc *time.Location) int64 {
	return wallInstant(time.Date(y, m, d, 0, 0, 0, 0, time.UTC), loc).UnixMilli()
}

// dayOf is the day of loc that t falls in.
func dayOf(t int64, loc *time.Location) period {
	y, m, d := time.UnixMilli(t).In(loc).Date()
	p := period{localMidnight(y, m, d, loc), localMidnight(y, m, d+1, loc)}
	if p.end <= t {
		// In the hour a zone repeats across midnight, t reads as the day
		// before though its midnight (the first one) has passed.
		p = period{p.end, localMidnight(y, m, d+2, loc)}
	}
	return p
}

// monthOf is the calendar month of loc that t falls in.
func monthOf(t int64, loc *time.Location) period {
	y, m, _ := time.UnixMilli(t).In(loc).Date()
	p := period{localMidnight(y, m, 1, loc), localMidnight(y, m+1, 1, loc)}
	if p.end <= t {
		p = period{p.end, localMidnight(y, m+2, 1, loc)}
	}
	return p
}

// quietAt says whether t falls in one of w's daily windows on loc's clock:
// if so, quiet and when that window ends; if not, when the next begins.
func quietAt(w wire.Window, loc *time.Location, t int64) (quiet bool, at int64) {
	y, m, d := time.UnixMilli(t).In(loc).Date()
	next := int64(0)
	for off := -1; off <= 2; off++ { // a window that started yesterday may still run
		s, e := windowOn(w, y, m, d+off, loc)
		if t >= s && t < e {
			return true, e
		}
		if s > t && (next == 0 || s < next) {
			next = s
		}
	}
	return false, next
}

// windowOn is the window of w that starts on y-m-d: its start and end
// instants (the end on the next day when the window crosses midnight).
// Within a daylight-saving gap both may be one instant: that day's window
// is empty.
func windowOn(w wire.Window, y int, m time.Month, d int, loc *time.Location) (start, end int64) {
	endDay := d
	if w.End <= w.Start {
		endDay++
	}
	start = wallInstant(time.Date(y, m, d, 0, w.Start, 0, 0, time.UTC), loc).UnixMilli()
	end = wallInstant(time.Date(y, m, endDay, 0, w.End, 0, 0, time.UTC), loc).UnixMilli()
	return start, end
}

// budget is one of an endpoint's call budgets: which gate it is, its
// setting, how it names its period and how the period is found.
type budget struct {
	gate       wire.Gate
	setting    string // "dailyCallBudget"
	keySetting string // the same period's budget per flow key
	span       string // "today"
	periodOf   func(t int64, loc *time.Location) period
}

var (
	dailyBudget   = budget{wire.GateDailyBudget, "dailyCallBudget", "keyDailyCallBudget", "today", dayOf}
	monthlyBudget = budget{wire.GateMonthlyBudget, "monthlyCallBudget", "keyMonthlyCallBudget", "this month", monthOf}
)

// admit narrows v to what is left of limit (nil: no budget) in the period
// of now, and shuts it, until the period renews, when nothing is left.
// Like the rate limit it counts the claims of the endpoint's attempts
// (ClaimsSince), over a window that starts at the period's start instead
// of sliding.
func (b budget) admit(ctx context.Context, q store.Queries, ep *store.Endpoint, limit *int64, now int64, v *gate) error {
	if limit == nil {
		return nil
	}
	p := b.periodOf(now, budgetZone(ep))
	n, err := budgetUsed(ctx, q, ep, p.start, *limit)
	if err != nil {
		return err
	}
	v.narrow(*limit - n)
	if v.allowed <= 0 {
		v.shut(b.gate, p.end, fmt.Sprintf("endpoint %q used %d of its %d calls %s (%s, %s); the budget renews at %s",
			ep.Name, n, *limit, b.span, b.setting, zoneName(ep), FormatTime(p.end)))
	}
	return nil
}

// fast lets the optimistic path try: what is left of the budget is not
// known without a count, so it takes at most the whole budget and confirm
// counts under the lock.
func (budget) fast(limit *int64) (bool, int64) {
	if limit == nil {
		return true, -1
	}
	return true, *limit
}

// confirm counts the claims of t0's period, t0 being when the claims were
// stamped: the period a claim counts against is the one it was made in.
func (b budget) confirm(ctx context.Context, q store.Queries, ep *store.Endpoint, limit *int64, t0 int64) (bool, error) {
	if limit == nil {
		return true, nil
	}
	p := b.periodOf(t0, budgetZone(ep))
	n, err := budgetUsed(ctx, q, ep, p.start, *limit+1)
	if err != nil || n > *limit {
		return false, err
	}
	return true, nil
}

// budgetUsed counts the endpoint's claims since a period's start, up to
// limit: those of the attempts kept (ClaimsSince) and those of the
// attempts retention deleted (PrunedClaimsCount), so a budget longer than
// the retention still counts its whole period.
func budgetUsed(ctx context.Context, q store.Queries, ep *store.Endpoint, since, limit int64) (int64, error) {
	pruned, err := q.PrunedClaimsCount(ctx, &store.PrunedClaimsCountParams{EndpointID: ep.ID, Since: since})
	if err != nil || pruned >= limit {
		return min(pruned, limit), err
	}
	n, _, err := q.ClaimsSince(ctx, &store.ClaimsSinceParams{EndpointID: ep.ID, Since: since, Limit: limit - pruned})
	return pruned + n, err
}

// paceWindowMs is how far back the exhaustion forecast reads the pace: the
// last hour, or the period so far when it began less than an hour ago.
const paceWindowMs = 3_600_000

// use is where the endpoint stands against limit in the period of now,
// with the forecast: at the pace of the last hour (or of the period so far
// when shorter), when the budget runs out, if before it renews.
func (b budget) use(ctx context.Context, q store.Queries, ep *store.Endpoint, limit int64, now int64) (*wire.BudgetPeriod, error) {
	p := b.periodOf(now, budgetZone(ep))
	used, err := budgetUsed(ctx, q, ep, p.start, limit)
	if err != nil {
		return nil, err
	}
	out := &wire.BudgetPeriod{Budget: limit, Used: used, StartedAt: FormatTime(p.start), RenewsAt: FormatTime(p.end)}
	from := max(p.start, now-paceWindowMs)
	if now <= from {
		return out, nil
	}
	recent, _, err := q.ClaimsSince(ctx, &store.ClaimsSinceParams{EndpointID: ep.ID, Since: from, Limit: limit})
	if err != nil {
		return nil, err
	}
	perMs := float64(recent) / float64(now-from)
	out.PacePerHour = math.Round(perMs*paceWindowMs*10) / 10
	switch {
	case used >= limit:
		out.RunsOutAt = FormatTime(now)
	case recent > 0:
		if at := now + int64(math.Ceil(float64(limit-used)/perMs)); at < p.end {
			out.RunsOutAt = FormatTime(at)
		}
	}
	return out, nil
}

// EndpointUse reads the project's endpoint named name with where it stands
// against its budgets and its quiet hours now (nil when it sets none).
func (e *Engine) EndpointUse(ctx context.Context, p *Principal, name string) (*store.Endpoint, *wire.BudgetUse, error) {
	var ep *store.Endpoint
	var use *wire.BudgetUse
	now := e.nowMs()
	err := e.st.Read(ctx, func(q store.Queries) (err error) {
		ep, err = q.EndpointGetInProject(ctx, &store.EndpointGetInProjectParams{ProjectID: p.ProjectID, Name: name})
		if err != nil {
			return err
		}
		use, err = budgetUse(ctx, q, ep, now)
		return err
	})
	return ep, use, storeErr(err, "endpoint "+strconv.Quote(name))
}

// budgetUse is where ep stands at now against its budgets and its quiet
// hours; nil when it sets none of them.
func budgetUse(ctx context.Context, q store.Queries, ep *store.Endpoint, now int64) (*wire.BudgetUse, error) {
	if ep.DailyCallBudget == nil && ep.MonthlyCallBudget == nil && ep.QuietHours == "" {
		return nil, nil
	}
	out := &wire.BudgetUse{TimeZone: zoneName(ep)}
	var err error
	if ep.DailyCallBudget != nil {
		if out.Daily, err = dailyBudget.use(ctx, q, ep, *ep.DailyCallBudget, now); err != nil {
			return nil, err
		}
	}
	if ep.MonthlyCallBudget != nil {
		if out.Monthly, err = monthlyBudget.use(ctx, q, ep, *ep.MonthlyCallBudget, now); err != nil {
			return nil, err
		}
	}
	if w, ok := wire.ParseWindow(ep.QuietHours); ok {
		quiet, at := quietAt(w, budgetZone(ep), now)
		out.QuietHours = &wire.QuietHoursNow{Window: ep.QuietHours, Quiet: quiet}
		if quiet {
			out.QuietHours.EndsAt = FormatTime(at)
		} else if at > 0 {
			out.QuietHours.StartsAt = FormatTime(at)
		}
	}
	return out, nil
}
