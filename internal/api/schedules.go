package api

import (
	"strconv"

	"github.com/getratchet/ratchet/field"
	"github.com/getratchet/ratchet/internal/engine"
	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/wire"
)

// scheduleRoutes are the routes of schedules (docs/schedules.md).
func (a *API) scheduleRoutes() []Route {
	return []Route{
		route(a, "POST", "/v1/schedules", "Create a schedule: one job per tick of a cron expression in a time zone, with overlap, catch-up and spread", owner, 201, a.createSchedule),
		route(a, "GET", "/v1/schedules", "List schedules by name with cursor paging, each with its next tick and its latest ticks", producer, 200, a.listSchedules, inQuery()),
		route(a, "GET", "/v1/schedules/{name}", "Read a schedule with its latest ticks and their jobs", producer, 200, a.getSchedule),
		route(a, "GET", "/v1/schedules/{name}/ticks", "List a schedule's ticks, newest first, with cursor paging (ticks older than the retention go, each schedule's newest aside)", producer, 200, a.scheduleTicks, inQuery()),
		route(a, "POST", "/v1/schedules/{name}/fire", "Fire a tick of the schedule now, even while it is paused: one job due now; audited as schedule.fire_now", owner, 200, a.fireScheduleNow),
		route(a, "GET", "/v1/schedules/{name}/preview", "The schedule's next fire times, each its tick plus the spread offset", producer, 200, a.previewSchedule, inQuery()),
		route(a, "POST", "/v1/schedules/{name}/pause", "Pause a schedule: no tick fires until it is resumed", owner, 200, a.pauseSchedule),
		route(a, "POST", "/v1/schedules/{name}/resume", "Resume a schedule from its next tick after now (ticks passed while paused never fire)", owner, 200, a.resumeSchedule),
		route(a, "DELETE", "/v1/schedules/{name}", "Delete a schedule and its ticks; the jobs it made stay", owner, 204, a.deleteSchedule),
	}
}

// scheduleTicks is how many latest ticks a list shows per schedule and a
// read shows.
const (
	listTicks = 5
	readTicks = 20
)

func (a *API) createSchedule(c *call[wire.ScheduleCreate]) (*wire.Schedule, error) {
	s, err := a.e.CreateSchedule(c.ctx(), c.p, c.in)
	if err != nil {
		return nil, err
	}
	v := scheduleView(s, nil)
	return &v, nil
}

func (a *API) listSchedules(c *call[wire.ScheduleQuery]) (*wire.ScheduleList, error) {
	var errs field.Errors
	if c.in.Cursor != "" && !engine.ValidName(c.in.Cursor) {
		errs.Add("cursor", strconv.Quote(c.in.Cursor), "must be the nextCursor of the previous page")
	}
	limit := limitParam(&errs, c.in.Limit, wire.DefaultListLimit, wire.MaxListLimit)
	if err := errs.Err(); err != nil {
		return nil, err
	}
	list, err := a.e.Schedules(c.ctx(), c.p, c.in.Cursor, limit, listTicks)
	if err != nil {
		return nil, err
	}
	out := &wire.ScheduleList{Schedules: []wire.Schedule{}}
	for i := range list {
		out.Schedules = append(out.Schedules, scheduleView(&list[i].Schedule, list[i].Ticks))
	}
	if len(list) == limit {
		next := list[len(list)-1].Schedule.Name
		out.NextCursor = &next
	}
	return out, nil
}

func (a *API) getSchedule(c *call[none]) (*wire.Schedule, error) {
	d, err := a.e.Schedule(c.ctx(), c.p, c.r.PathValue("name"), readTicks)
	if err != nil {
		return nil, err
	}
	v := scheduleView(&d.Schedule, d.Ticks)
	if n := d.Counts; n != nil {
		v.Last24h = &wire.TickCounts{Since: ft(d.Since), Ticks: n.Ticks, Enqueued: n.Enqueued, Skipped: n.Skipped, Replaced: n.Replaced, Failed: n.Failed, Missed: n.Missed}
	}
	return &v, nil
}

func (a *API) scheduleTicks(c *call[wire.ScheduleTickQuery]) (*wire.ScheduleTickList, error) {
	before, limit, err := pageParams(c.in.Cursor, c.in.Limit)
	if err != nil {
		return nil, err
	}
	ticks, err := a.e.ScheduleTicks(c.ctx(), c.p, c.r.PathValue("name"), before, limit)
	if err != nil {
		return nil, err
	}
	out := &wire.ScheduleTickList{Ticks: []wire.ScheduleTick{}}
	for i := range ticks {
		out.Ticks = append(out.Ticks, tickView(&ticks[i]))
	}
	if len(ticks) == limit {
		next := strconv.FormatInt(ticks[len(ticks)-1].TickAt, 10)
		out.NextCursor = &next
	}
	return out, nil
}

func (a *API) fireScheduleNow(c *call[none]) (*wire.ScheduleTick, error) {
	tk, err := a.e.FireScheduleNow(c.ctx(), c.p, c.r.PathValue("name"))
	if err != nil {
		return nil, err
	}
	v := tickView(tk)
	return &v, nil
}

func (a *API) previewSchedule(c *call[wire.SchedulePreview]) (*wire.ScheduleFires, error) {
	n := wire.DefaultPreviewCount
	if c.in.Count != "" {
		v, err := strconv.Atoi(c.in.Count)
		if err != nil || v < 1 || v > wire.MaxPreviewCount {
			return nil, field.New("count", strconv.Quote(c.in.Count), "must be an integer from 1 through 100")
		}
		n = v
	}
	ticks, off, err := a.e.PreviewSchedule(c.ctx(), c.p, c.r.PathValue("name"), n)
	if err != nil {
		return nil, err
	}
	out := &wire.ScheduleFires{Fires: []wire.ScheduleFire{}}
	for _, t := range ticks {
		out.Fires = append(out.Fires, wire.ScheduleFire{TickAt: ft(t), FireAt: ft(t + off)})
	}
	return out, nil
}

func (a *API) pauseSchedule(c *call[none]) (*wire.Schedule, error) {
	return a.setSchedulePaused(c, true)
}

func (a *API) resumeSchedule(c *call[none]) (*wire.Schedule, error) {
	return a.setSchedulePaused(c, false)
}

func (a *API) setSchedulePaused(c *call[none], paused bool) (*wire.Schedule, error) {
	s, err := a.e.SetSchedulePaused(c.ctx(), c.p, c.r.PathValue("name"), paused)
	if err != nil {
		return nil, err
	}
	v := scheduleView(s, nil)
	return &v, nil
}

func (a *API) deleteSchedule(c *call[none]) (*none, error) {
	return nil, a.e.DeleteSchedule(c.ctx(), c.p, c.r.PathValue("name"))
}

// scheduleView renders a schedule and its latest ticks.
func scheduleView(s *store.Schedule, ticks []store.ScheduleTick) wire.Schedule {
	v := wire.Schedule{Name: s.Name, Cron: s.Cron, TimeZone: s.TimeZone, Tool: s.Tool, Payload: s.Payload, FlowKey: s.FlowKey, Paused: s.Paused,
		Overlap: s.Overlap, CatchUp: s.CatchUp, CatchUpLimit: s.CatchUpLimit, SpreadMs: s.SpreadMs, SpreadOffsetMs: s.SpreadOffsetMs,
		CreatedAt: ft(s.CreatedAt), LastTicks: []wire.ScheduleTick{}}
	if !s.Paused && s.NextTickAt < engine.NeverMs {
		v.NextTickAt, v.NextFireAt = ft(s.NextTickAt), ft(s.NextFireAt)
	}
	for i := range ticks {
		v.LastTicks = append(v.LastTicks, tickView(&ticks[i]))
	}
	return v
}

func tickView(t *store.ScheduleTick) wire.ScheduleTick {
	return wire.ScheduleTick{TickAt: ft(t.TickAt), FireAt: ft(t.FireAt), FiredAt: ft(t.FiredAt), Outcome: t.Outcome,
		Overlap: t.Overlap, JobID: t.JobID, PreviousJobID: t.PreviousJobID, Missed: t.Missed, Error: t.Error}
}
