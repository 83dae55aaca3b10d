package engine

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/wire"
)

// Ticker constants (docs/schedules.md).
const (
	// scheduleBatch is how many due schedules one transaction fires.
	scheduleBatch = 50
	// lateGraceMs is how late a tick may fire under catch-up "none"
	// before it counts as missed.
	lateGraceMs = 60_000
	// catchUpWindowMs is how far back catch-up looks after downtime;
	// older ticks are dropped whatever the policy.
	catchUpWindowMs = 7 * 24 * 3600_000
)

// specCache holds parsed expressions by zone and expression; a ticker of
// many schedules parses each once.
var specCache sync.Map

func cachedSpec(s *store.Schedule) (*cronSpec, error) {
	key := s.TimeZone + "\x00" + s.Cron
	if v, ok := specCache.Load(key); ok {
		return v.(*cronSpec), nil
	}
	spec, errs := parseCron(s.Cron, s.TimeZone)
	if len(errs) > 0 {
		return nil, errs.Err()
	}
	specCache.Store(key, spec)
	return spec, nil
}

// FireSchedules fires every due tick of every active schedule: per tick
// one job, whose idempotency key names the schedule and the tick, made in
// the transaction that moves the schedule's next tick on by
// compare-and-set. Every node may run it at once; a schedule another
// node moved first is left alone. It returns the jobs made.
//
// The ticks due are worked out from the schedules as read, before the
// write transaction (after a clock jump that is up to a week of cron
// arithmetic per schedule, which would hold every enqueue waiting on the
// writer); the transaction only writes them, and the compare-and-set on
// the next tick read makes a plan another node overtook a no-op.
func (e *Engine) FireSchedules(ctx context.Context) (int, error) {
	made := 0
	for {
		var due []store.Schedule
		var now int64
		err := e.st.Read(ctx, func(q store.Queries) (err error) {
			now, err = e.txNow(ctx, q)
			if err == nil {
				due, err = q.SchedulesDue(ctx, &store.SchedulesDueParams{Now: now, Limit: scheduleBatch})
			}
			return err
		})
		if err != nil || len(due) == 0 {
			return made, err
		}
		plans, err := planFires(due, now)
		if err != nil {
			return made, err
		}
		n := 0
		rec := &tickRecorder{}
		err = e.st.Tx(ctx, func(q store.Queries) error {
			n, rec.Queries, rec.ticks = 0, q, nil
			for i := range plans {
				k, err := e.fireSchedule(ctx, rec, &plans[i])
				if err != nil {
					return err
				}
				n += k
			}
			return nil
		})
		if err != nil {
			return made, err
		}
		made += n
		e.observeTicks(rec.ticks)
		if n > 0 {
			e.signal(ctx)
		}
		if len(due) < scheduleBatch {
			return made, nil
		}
	}
}

// firePlan is what firing one schedule writes, worked out before the
// transaction: the ticks to fire, how many were dropped, the next tick.
type firePlan struct {
	s            *store.Schedule
	fire         []int64
	missed, next int64
}

// planFires computes the due ticks of each schedule at now.
func planFires(due []store.Schedule, now int64) ([]firePlan, error) {
	plans := make([]firePlan, len(due))
	for i := range due {
		spec, err := cachedSpec(&due[i])
		if err != nil {
			return nil, err
		}
		plans[i].s = &due[i]
		plans[i].fire, plans[i].missed, plans[i].next = dueTicks(spec, &due[i], now)
	}
	return plans, nil
}

// fireSchedule writes plan p in transaction q; nothing when another node
// moved the schedule on first.
func (e *Engine) fireSchedule(ctx context.Context, q store.Queries, p *firePlan) (int, error) {
	now, err := e.txNow(ctx, q)
	if err != nil {
		return 0, err
	}
	s, fire, missed, next := p.s, p.fire, p.missed, p.next
	lastJob := s.LastJobID
	adv := &store.ScheduleAdvanceParams{ID: s.ID, FromTickAt: s.NextTickAt, NextTickAt: next, NextFireAt: next + s.SpreadOffsetMs, LastJobID: s.LastJobID, Now: now}
	if err := q.ScheduleAdvance(ctx, adv); errors.Is(err, store.ErrConflict) {
		return 0, nil // another node fired these ticks, or the schedule was paused
	} else if err != nil {
		return 0, err
	}
	made := 0
	for _, tick := range fire {
		tk := &store.ScheduleTick{ScheduleID: s.ID, TickAt: tick, FireAt: tick + s.SpreadOffsetMs, FiredAt: now, Outcome: wire.TickEnqueued,
			Overlap: s.Overlap, Missed: missed}
		missed = 0
		if err := e.fireTick(ctx, q, s, tk, now); err != nil {
			return made, err
		}
		if tk.JobID != 0 {
			made++
			adv.LastJobID = tk.JobID
		}
	}
	if adv.LastJobID != lastJob { // the row is ours (locked) since the first advance
		adv.FromTickAt = next
		return made, q.ScheduleAdvance(ctx, adv)
	}
	return made, nil
}

// dueTicks lists the ticks of s due at now (their fire time passed) that
// its catch-up policy fires, oldest first; how many due ticks it drops;
// and the next tick after them.
func dueTicks(spec *cronSpec, s *store.Schedule, now int64) (fire []int64, missed, next int64) {
	keep := 1
	if s.CatchUp == wire.CatchUpAll {
		keep = int(s.CatchUpLimit)
	}
	t := s.NextTickAt
	if t < now-catchUpWindowMs {
		t, missed = nextTick(spec, now-catchUpWindowMs), 1
	}
	for ; t != NeverMs && t+s.SpreadOffsetMs <= now; t = nextTick(spec, t) {
		if len(fire) == keep {
			fire, missed = append(fire[1:], t), missed+1
		} else {
			fire = append(fire, t)
		}
	}
	if s.CatchUp == wire.CatchUpNone && len(fire) == 1 && now-(fire[0]+s.SpreadOffsetMs) > lateGraceMs {
		fire, missed = nil, missed+1
	}
	return fire, missed, t
}

// fireTick applies the overlap policy to one tick, makes its job and
// records the tick.
func (e *Engine) fireTick(ctx context.Context, q store.Queries, s *store.Schedule, tk *store.ScheduleTick, now int64) error {
	if s.Overlap != wire.OverlapAllow && s.LastJobID != 0 {
		prev, err := q.JobGetInProject(ctx, &store.JobGetInProjectParams{ProjectID: s.ProjectID, ID: s.LastJobID})
		switch {
		case errors.Is(err, store.ErrNotFound): // pruned: long finished
		case err != nil:
			return err
		case !prev.State.Finished() && s.Overlap == wire.OverlapSkip:
			tk.Outcome, tk.PreviousJobID = wire.TickSkipped, prev.ID
			return q.ScheduleTickInsert(ctx, tk)
		case !prev.State.Finished():
			if err := cancelForTick(ctx, q, prev, now); err != nil {
				return err
			}
			tk.Outcome, tk.PreviousJobID = wire.TickReplaced, prev.ID
		}
	}
	at := time.UnixMilli(tk.FireAt)
	r := EnqueueRequest{Tool: s.Tool, Payload: tickPayload(s.Payload, tk.TickAt), IdempotencyKey: tickKey(s.ID, tk.TickAt), FlowKey: s.FlowKey, RunAt: &at}
	b := newBatch(e, &Principal{ProjectID: s.ProjectID, Scope: wire.ScopeProducer}, q, now)
	// Every rule of an enqueue, the checks without the database included
	// (a payload grown past the limit by its tick times is refused as at
	// POST /v1/jobs); a broken rule is the tick's failure, not a job.
	if b.errs = validateEnqueue(&r, "jobs[0]."); len(b.errs) == 0 {
		if err := b.add(ctx, 0, &r); err != nil {
			return err
		}
	}
	if len(b.errs) > 0 || b.out[0].Job == nil {
		tk.Outcome, tk.Error = wire.TickFailed, b.errs.Error()
	} else {
		tk.JobID = b.out[0].Job.ID
		s.LastJobID = tk.JobID
	}
	return q.ScheduleTickInsert(ctx, tk)
}

// cancelForTick cancels the unfinished job of an earlier tick (overlap
// cancel_previous): at once when it waits, through its worker's
// heartbeats when it runs, as a cancel by a person would.
func cancelForTick(ctx context.Context, q store.Queries, j *store.Job, now int64) error {
	if j.State == wire.JobRunning {
		j.CancelRequested, j.UpdatedAt = true, now
	} else if err := moveJob(j, wire.EventCancel, now); err != nil {
		return err
	}
	return q.JobUpdate(ctx, j)
}
