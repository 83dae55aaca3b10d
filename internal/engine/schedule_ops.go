package engine

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/wire"
)

// Tick history constants (docs/schedules.md).
const (
	// tickCountWindowMs is the window a schedule's read counts its ticks
	// over: missed, skipped and failed in the last 24 hours.
	tickCountWindowMs = 24 * 3600_000
	// minTickRetention is the least time ticks are kept, whatever the
	// jobs' retention: the console counts the last 24 hours.
	minTickRetention = 24 * time.Hour
)

// ScheduleTicks lists a page of a schedule's ticks, newest first, before
// the tick time beforeTick (0 for the newest).
func (e *Engine) ScheduleTicks(ctx context.Context, p *Principal, name string, beforeTick int64, limit int) ([]store.ScheduleTick, error) {
	if err := p.Require(wire.ScopeProducer); err != nil {
		return nil, err
	}
	if limit <= 0 || limit > wire.MaxListLimit {
		limit = wire.DefaultListLimit
	}
	var out []store.ScheduleTick
	err := e.st.Read(ctx, func(q store.Queries) error {
		s, err := q.ScheduleGetInProject(ctx, &store.ScheduleGetInProjectParams{ProjectID: p.ProjectID, Name: name})
		if err != nil {
			return err
		}
		out, err = q.ScheduleTickList(ctx, &store.ScheduleTickListParams{ScheduleID: s.ID, BeforeTick: beforeTick, Limit: limit})
		return err
	})
	return out, storeErr(err, "schedule "+strconv.Quote(name))
}

// FireScheduleNow fires a tick of the schedule at now, whatever its cron
// expression and even while it is paused: one job with the schedule's
// tool, payload and flow key, due now. The schedule's own ticks go on as
// before. The overlap policy does not apply (a person asked for this
// job), but an active schedule's next tick sees the job as the latest, as
// after any tick. The action is audited as schedule.fire_now.
func (e *Engine) FireScheduleNow(ctx context.Context, p *Principal, name string) (*store.ScheduleTick, error) {
	if err := p.Require(wire.ScopeOwner); err != nil {
		return nil, err
	}
	var tk *store.ScheduleTick
	err := e.st.Tx(ctx, func(q store.Queries) error {
		s, err := q.ScheduleGetInProject(ctx, &store.ScheduleGetInProjectParams{ProjectID: p.ProjectID, Name: name})
		if err != nil {
			return err
		}
		now, err := e.txNow(ctx, q)
		if err != nil {
			return err
		}
		at, err := manualTickAt(ctx, q, s.ID, now)
		if err != nil {
			return err
		}
		manual := *s
		manual.Overlap = wire.OverlapAllow
		tk = &store.ScheduleTick{ScheduleID: s.ID, TickAt: at, FireAt: now, FiredAt: now, Outcome: wire.TickEnqueued, Overlap: wire.OverlapAllow}
		if err := e.fireTick(ctx, q, &manual, tk, now); err != nil {
			return err
		}
		if tk.JobID != 0 && !s.Paused {
			err := q.ScheduleAdvance(ctx, &store.ScheduleAdvanceParams{ID: s.ID, FromTickAt: s.NextTickAt, NextTickAt: s.NextTickAt, NextFireAt: s.NextFireAt,
				LastJobID: tk.JobID, Now: now})
			if errors.Is(err, store.ErrConflict) {
				return conflict("schedule %q fired a tick meanwhile; try again", name)
			} else if err != nil {
				return err
			}
		}
		detail := fmt.Sprintf("schedule %s fired by hand at %s: %s", name, FormatTime(now), tickSentence(tk))
		return e.audit(ctx, q, p, now, "schedule.fire_now", "schedule:"+name, detail)
	})
	if err != nil {
		return nil, storeErr(err, "schedule "+strconv.Quote(name))
	}
	e.observeTicks([]store.ScheduleTick{*tk})
	if tk.JobID != 0 {
		e.signal(ctx)
	}
	return tk, nil
}

// manualTickAt is the tick time of a tick fired by hand at now: now, or
// the first millisecond after the schedule's newest tick when that is
// later (two fires in one millisecond), and never a whole second. The
// cron's ticks all fall on whole seconds, so a tick fired by hand never
// takes the time (nor the job's idempotency key) of one the ticker will
// fire.
func manualTickAt(ctx context.Context, q store.Queries, scheduleID, now int64) (int64, error) {
	at := now
	newest, err := q.ScheduleTickList(ctx, &store.ScheduleTickListParams{ScheduleID: scheduleID, Limit: 1})
	if err != nil {
		return 0, err
	}
	if len(newest) == 1 && newest[0].TickAt >= at {
		at = newest[0].TickAt + 1
	}
	if at%1000 == 0 {
		at++
	}
	return at, nil
}

// tickSentence says what a tick did, for the audit log.
func tickSentence(tk *store.ScheduleTick) string {
	if tk.JobID != 0 {
		return "job " + strconv.FormatInt(tk.JobID, 10)
	}
	return "no job: " + tk.Error
}

// pruneTicks deletes ticks older than the retention (at least 24 hours:
// the console counts a day of them), keeping each schedule's newest.
// Catch-up reads none of them: a schedule's next tick and its latest job
// live on the schedule.
func (e *Engine) pruneTicks(ctx context.Context) (int64, error) {
	return e.pruneKept(ctx, func(q store.Queries, before int64, limit int) (int64, error) {
		return q.ScheduleTicksPrune(ctx, &store.ScheduleTicksPruneParams{TickBefore: before, Limit: limit})
	})
}

// pruneKept deletes, 500 rows a transaction, what prune deletes from
// before a time: the retention back from the transaction's now, at least
// 24 hours (minTickRetention). Ticks, endpoint events and alerts are kept
// so.
func (e *Engine) pruneKept(ctx context.Context, prune func(q store.Queries, before int64, limit int) (int64, error)) (int64, error) {
	const batch = 500
	keep := max(e.cfg.Retention, minTickRetention).Milliseconds()
	var total int64
	for {
		var n int64
		err := e.st.Tx(ctx, func(q store.Queries) (err error) {
			now, err := e.txNow(ctx, q)
			if err == nil {
				n, err = prune(q, now-keep, batch)
			}
			return err
		})
		total += n
		if err != nil || n < batch {
			return total, err
		}
	}
}

// TickObserver is told about every tick a node fires, for metrics. An
// Observer that implements it gets them.
type TickObserver interface {
	Ticked(outcome wire.TickOutcome, missed int64, lag time.Duration)
}

// observeTicks tells the observer about ticks whose transaction committed.
func (e *Engine) observeTicks(ticks []store.ScheduleTick) {
	o, ok := e.obs.(TickObserver)
	if !ok {
		return
	}
	for _, t := range ticks {
		o.Ticked(t.Outcome, t.Missed, time.Duration(t.FiredAt-t.FireAt)*time.Millisecond)
	}
}

// tickRecorder is a transaction that remembers the ticks it inserted, so
// the ticker reports them once the transaction commits.
type tickRecorder struct {
	store.Queries
	ticks []store.ScheduleTick
}

func (r *tickRecorder) ScheduleTickInsert(ctx context.Context, t *store.ScheduleTick) error {
	err := r.Queries.ScheduleTickInsert(ctx, t)
	if err == nil {
		r.ticks = append(r.ticks, *t)
	}
	return err
}
