package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"time"

	"github.com/getratchet/ratchet/field"
	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/wire"
)

// ScheduleDetail is a schedule with its latest ticks, newest first.
type ScheduleDetail struct {
	Schedule store.Schedule
	Ticks    []store.ScheduleTick
	Counts   *store.TickCounts // its ticks since Since by outcome; nil in a list
	Since    int64             // unix ms
}

// checkSchedule validates a schedule before anything is stored: every
// problem of the request as a field error.
func checkSchedule(in *wire.ScheduleCreate, now time.Time) (*cronSpec, field.Errors) {
	var errs field.Errors
	if !ValidName(in.Name) {
		errs.Add("name", strconv.Quote(in.Name), "must match "+wire.NamePattern)
	}
	spec, cerrs := parseCron(in.Cron, in.TimeZone)
	errs = append(errs, cerrs...)
	r := EnqueueRequest{Tool: in.Tool, Payload: in.Payload, FlowKey: in.FlowKey}
	perrs := validateEnqueue(&r, "")
	errs = append(errs, perrs...)
	in.Payload = r.Payload
	if !slices.ContainsFunc(perrs, func(e *field.Error) bool { return e.Field == "payload" }) {
		if n := maxTickPayloadLen(compactPayload(in.Payload)); n > MaxPayloadBytes {
			errs.Add("payload", strconv.Itoa(n)+" bytes once each "+wire.TickPlaceholder+" becomes a tick time",
				"must be at most 262144 bytes of JSON with every "+wire.TickPlaceholder+" replaced by a tick time ("+strconv.Itoa(len(maxTickText))+" bytes)")
		}
	}
	if in.Overlap == "" {
		in.Overlap = wire.OverlapSkip
	} else if !contains(wire.ScheduleOverlaps(), in.Overlap) {
		errs.Add("overlap", strconv.Quote(string(in.Overlap)), "must be "+wire.JoinOr(wire.ScheduleOverlaps()))
	}
	if in.CatchUp == "" {
		in.CatchUp = wire.CatchUpLatest
	} else if !contains(wire.ScheduleCatchUps(), in.CatchUp) {
		errs.Add("catchUp", strconv.Quote(string(in.CatchUp)), "must be "+wire.JoinOr(wire.ScheduleCatchUps()))
	}
	if in.CatchUpLimit == 0 {
		in.CatchUpLimit = wire.DefaultCatchUpLimit
	} else if in.CatchUpLimit < 1 || in.CatchUpLimit > wire.MaxCatchUpLimit {
		errs.Add("catchUpLimit", strconv.FormatInt(in.CatchUpLimit, 10), "must be an integer from 1 through 100")
	}
	if in.SpreadMs < 0 || in.SpreadMs > wire.MaxSpreadMs {
		errs.Add("spreadMs", strconv.FormatInt(in.SpreadMs, 10), "must be an integer from 0 through 86400000 milliseconds")
	} else if spec != nil && in.SpreadMs > 0 {
		if iv := spec.minInterval(now); iv > 0 && in.SpreadMs >= iv.Milliseconds() {
			errs.Add("spreadMs", strconv.FormatInt(in.SpreadMs, 10), "must be shorter than the schedule's shortest interval, "+strconv.FormatInt(iv.Milliseconds(), 10)+" ms")
		}
	}
	if spec != nil && spec.next(now).IsZero() {
		errs.Add("cron", strconv.Quote(in.Cron), "must fire at least once in the next five years")
	}
	return spec, errs
}

func contains[T comparable](list []T, v T) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

// CreateSchedule stores a schedule after checking it whole: the
// expression, the zone, the spread, and the tool and payload as an
// enqueue of its first tick would see them. Nothing is stored on error.
func (e *Engine) CreateSchedule(ctx context.Context, p *Principal, in wire.ScheduleCreate) (*store.Schedule, error) {
	if err := p.Require(wire.ScopeOwner); err != nil {
		return nil, err
	}
	now := e.clk.Now()
	spec, errs := checkSchedule(&in, now)
	if len(errs) > 0 {
		return nil, invalid(errs)
	}
	off := spreadOffset(p.ProjectID, in.Name, in.SpreadMs)
	next := spec.next(now).UnixMilli()
	s := &store.Schedule{ProjectID: p.ProjectID, Name: in.Name, Cron: in.Cron, TimeZone: spec.loc.String(), Tool: in.Tool, Payload: compactPayload(in.Payload),
		FlowKey: in.FlowKey, Paused: in.Paused, Overlap: in.Overlap, CatchUp: in.CatchUp, CatchUpLimit: in.CatchUpLimit, SpreadMs: in.SpreadMs,
		SpreadOffsetMs: off, NextTickAt: next, NextFireAt: next + off, CreatedAt: now.UnixMilli(), UpdatedAt: now.UnixMilli()}
	err := e.st.Tx(ctx, func(q store.Queries) error {
		b := newBatch(e, &Principal{ProjectID: p.ProjectID, Scope: wire.ScopeProducer}, q, now.UnixMilli())
		r := EnqueueRequest{Tool: in.Tool, Payload: tickPayload(s.Payload, next), FlowKey: in.FlowKey}
		if res, ok, err := b.tool(ctx, "", r.Tool); err != nil || !ok {
			return errors.Join(err, b.errs.Err())
		} else if ok, err := b.payloadValid("", &r, res.t); err != nil || !ok {
			return errors.Join(err, b.errs.Err())
		} else if _, ok := b.flowKey("", &r, res.t); !ok {
			return b.errs.Err()
		}
		err := q.ScheduleCreate(ctx, s)
		if errors.Is(err, store.ErrConflict) {
			return conflict("schedule %q exists; delete it first or pick another name", in.Name)
		}
		return err
	})
	if fe, ok := field.As(err); ok {
		return nil, invalid(fe)
	}
	return s, storeErr(err, "schedule "+in.Name)
}

func newBatch(e *Engine, p *Principal, q store.Queries, now int64) *enqueueBatch {
	return &enqueueBatch{e: e, p: p, q: q, now: now, out: make([]Enqueued, 1), tools: map[string]resolvedTool{}, runs: map[int64]bool{}}
}

// maxTickText is the longest tick time a placeholder becomes: every tick
// before the year 10000 is as long.
var maxTickText = FormatTime(time.Date(9999, 12, 31, 23, 59, 59, 999e6, time.UTC).UnixMilli())

// maxTickPayloadLen is the length of a stored schedule payload once each
// placeholder is a tick time: the size of every tick's job's payload.
func maxTickPayloadLen(payload []byte) int {
	return len(payload) + bytes.Count(payload, []byte(wire.TickPlaceholder))*(len(maxTickText)-len(wire.TickPlaceholder))
}

// tickPayload is a schedule's payload for the tick at tick (unix ms): the
// placeholder wire.TickPlaceholder becomes the tick time. It can only
// stand inside a JSON string, and the time needs no escaping there.
func tickPayload(payload []byte, tick int64) json.RawMessage {
	return bytes.ReplaceAll(payload, []byte(wire.TickPlaceholder), []byte(FormatTime(tick)))
}

// tickKey is the idempotency key of a tick's job: the schedule's id (not
// its name, which a new schedule may take again) and the tick.
func tickKey(scheduleID, tick int64) string {
	return "schedule:" + strconv.FormatInt(scheduleID, 10) + ":" + strconv.FormatInt(tick, 10)
}

// Schedules lists a page of the project's schedules by name, after
// afterName, each with its latest ticks: two queries whatever the page's
// length.
func (e *Engine) Schedules(ctx context.Context, p *Principal, afterName string, limit, ticks int) ([]ScheduleDetail, error) {
	if err := p.Require(wire.ScopeProducer); err != nil {
		return nil, err
	}
	if limit <= 0 || limit > wire.MaxListLimit {
		limit = wire.DefaultListLimit
	}
	var out []ScheduleDetail
	err := e.st.Read(ctx, func(q store.Queries) error {
		list, err := q.ScheduleList(ctx, &store.ScheduleListParams{ProjectID: p.ProjectID, AfterName: afterName, Limit: limit})
		if err != nil {
			return err
		}
		ids := make([]int64, len(list))
		at := make(map[int64]int, len(list))
		out = make([]ScheduleDetail, len(list))
		for i := range list {
			out[i].Schedule, ids[i], at[list[i].ID] = list[i], list[i].ID, i
		}
		latest, err := q.ScheduleTicksLatest(ctx, &store.ScheduleTicksLatestParams{ScheduleIDs: ids, PerSchedule: ticks})
		for _, t := range latest {
			out[at[t.ScheduleID]].Ticks = append(out[at[t.ScheduleID]].Ticks, t)
		}
		return err
	})
	return out, storeErr(err, "schedules")
}

// Schedule reads one schedule with its latest ticks and the counts of its
// ticks over the last 24 hours.
func (e *Engine) Schedule(ctx context.Context, p *Principal, name string, ticks int) (*ScheduleDetail, error) {
	if err := p.Require(wire.ScopeProducer); err != nil {
		return nil, err
	}
	var out ScheduleDetail
	err := e.st.Read(ctx, func(q store.Queries) error {
		s, err := q.ScheduleGetInProject(ctx, &store.ScheduleGetInProjectParams{ProjectID: p.ProjectID, Name: name})
		if err != nil {
			return err
		}
		out.Schedule = *s
		if out.Ticks, err = q.ScheduleTickList(ctx, &store.ScheduleTickListParams{ScheduleID: s.ID, Limit: ticks}); err != nil {
			return err
		}
		out.Since = e.clk.Now().UnixMilli() - tickCountWindowMs
		out.Counts, err = q.ScheduleTickCounts(ctx, &store.ScheduleTickCountsParams{ScheduleID: s.ID, Since: out.Since})
		return err
	})
	return &out, storeErr(err, "schedule "+strconv.Quote(name))
}

// PreviewSchedule lists the next n ticks of a schedule after now (or after
// its next tick while it is active), each with its fire time.
func (e *Engine) PreviewSchedule(ctx context.Context, p *Principal, name string, n int) (ticks []int64, offset int64, err error) {
	d, err := e.Schedule(ctx, p, name, 0)
	if err != nil {
		return nil, 0, err
	}
	s := &d.Schedule
	spec, errs := parseCron(s.Cron, s.TimeZone)
	if len(errs) > 0 {
		return nil, 0, errs.Err()
	}
	t := spec.next(e.clk.Now())
	if !s.Paused {
		t = time.UnixMilli(s.NextTickAt)
	}
	for ; len(ticks) < n && !t.IsZero() && t.UnixMilli() < NeverMs; t = spec.next(t) {
		ticks = append(ticks, t.UnixMilli())
	}
	return ticks, s.SpreadOffsetMs, nil
}

// SetSchedulePaused pauses or resumes a schedule. A resumed schedule
// starts from its next tick after now: ticks passed while it was paused
// never fire.
func (e *Engine) SetSchedulePaused(ctx context.Context, p *Principal, name string, paused bool) (*store.Schedule, error) {
	if err := p.Require(wire.ScopeOwner); err != nil {
		return nil, err
	}
	var s *store.Schedule
	err := e.st.Tx(ctx, func(q store.Queries) (err error) {
		if s, err = q.ScheduleGetInProject(ctx, &store.ScheduleGetInProjectParams{ProjectID: p.ProjectID, Name: name}); err != nil {
			return err
		}
		now, err := e.txNow(ctx, q)
		if err != nil {
			return err
		}
		spec, errs := parseCron(s.Cron, s.TimeZone)
		if len(errs) > 0 {
			return errs.Err()
		}
		if s.Paused && !paused {
			s.NextTickAt = nextTick(spec, now)
			s.NextFireAt = s.NextTickAt + s.SpreadOffsetMs
		}
		s.Paused, s.UpdatedAt = paused, now
		return q.ScheduleSetPaused(ctx, &store.ScheduleSetPausedParams{ProjectID: p.ProjectID, Name: name, Paused: paused,
			NextTickAt: s.NextTickAt, NextFireAt: s.NextFireAt, Now: now})
	})
	return s, storeErr(err, "schedule "+strconv.Quote(name))
}

// DeleteSchedule deletes a schedule and its ticks; the jobs it made stay.
func (e *Engine) DeleteSchedule(ctx context.Context, p *Principal, name string) error {
	if err := p.Require(wire.ScopeOwner); err != nil {
		return err
	}
	err := e.st.Tx(ctx, func(q store.Queries) error {
		return q.ScheduleDelete(ctx, &store.ScheduleGetInProjectParams{ProjectID: p.ProjectID, Name: name})
	})
	return storeErr(err, "schedule "+strconv.Quote(name))
}

// NeverMs is the next tick (unix ms) of a schedule that never fires again.
const NeverMs = int64(1) << 62

// nextTick is the first tick of spec after now (unix ms), or NeverMs.
func nextTick(spec *cronSpec, now int64) int64 {
	t := spec.next(time.UnixMilli(now))
	if t.IsZero() {
		return NeverMs
	}
	return t.UnixMilli()
}
