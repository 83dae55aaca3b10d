package sqlstore

import (
	"context"
	"errors"
	"strconv"

	"github.com/getratchet/ratchet/internal/store"
)

const scheduleCols = `id, project_id, name, cron, time_zone, tool, payload, flow_key, paused, overlap, catch_up, catch_up_limit,
	spread_ms, spread_offset_ms, next_tick_at, next_fire_at, last_job_id, created_at, updated_at`

func scanSchedule(sc scanner) (*store.Schedule, error) {
	var s store.Schedule
	var payload string
	var paused int64
	err := sc.Scan(&s.ID, &s.ProjectID, &s.Name, &s.Cron, &s.TimeZone, &s.Tool, &payload, &s.FlowKey, &paused, &s.Overlap, &s.CatchUp, &s.CatchUpLimit,
		&s.SpreadMs, &s.SpreadOffsetMs, &s.NextTickAt, &s.NextFireAt, &s.LastJobID, &s.CreatedAt, &s.UpdatedAt)
	if payload != "" {
		s.Payload = []byte(payload)
	}
	s.Paused = paused != 0
	return &s, err
}

// ScheduleCreate stores s and sets s.ID; ErrConflict when the project has
// a schedule of that name.
func (q *Queries) ScheduleCreate(ctx context.Context, s *store.Schedule) error {
	id, err := q.insertID(ctx, `INSERT INTO schedules (project_id, name, cron, time_zone, tool, payload, flow_key, paused, overlap, catch_up, catch_up_limit,
		spread_ms, spread_offset_ms, next_tick_at, next_fire_at, last_job_id, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		s.ProjectID, s.Name, s.Cron, s.TimeZone, s.Tool, string(s.Payload), s.FlowKey, b2i(s.Paused), s.Overlap, s.CatchUp, s.CatchUpLimit,
		s.SpreadMs, s.SpreadOffsetMs, s.NextTickAt, s.NextFireAt, s.LastJobID, s.CreatedAt, s.UpdatedAt)
	s.ID = id
	return err
}

// ScheduleGetInProject reads the project's schedule p.Name; ErrNotFound
// when it has none.
func (q *Queries) ScheduleGetInProject(ctx context.Context, p *store.ScheduleGetInProjectParams) (*store.Schedule, error) {
	s, err := scanSchedule(q.row(ctx, `SELECT `+scheduleCols+` FROM schedules WHERE project_id = ? AND name = ?`, p.ProjectID, p.Name))
	return s, q.D.Translate(err)
}

// ScheduleList lists a page of the project's schedules by name, after
// p.AfterName, through the (project_id, name) index.
func (q *Queries) ScheduleList(ctx context.Context, p *store.ScheduleListParams) ([]store.Schedule, error) {
	rows, err := q.query(ctx, `SELECT `+scheduleCols+` FROM schedules WHERE project_id = ? AND name > ? ORDER BY name LIMIT ?`, p.ProjectID, p.AfterName, p.Limit)
	return collect(q, rows, err, deref(scanSchedule))
}

// SchedulesDue lists the active schedules of every project due at p.Now,
// earliest first, through the partial index schedules_due; no locks (the
// firing transaction's compare-and-set decides).
func (q *Queries) SchedulesDue(ctx context.Context, p *store.SchedulesDueParams) ([]store.Schedule, error) {
	rows, err := q.query(ctx, `SELECT `+scheduleCols+` FROM schedules WHERE paused = 0 AND next_fire_at <= ? ORDER BY next_fire_at, id LIMIT ?`, p.Now, p.Limit)
	return collect(q, rows, err, deref(scanSchedule))
}

// ScheduleAdvance moves schedule p.ID to its next tick if its next tick
// still is p.FromTickAt and it is not paused. The UPDATE locks the row: on PostgreSQL a second
// transaction doing the same waits, then finds next_tick_at moved and
// changes nothing (ErrConflict).
func (q *Queries) ScheduleAdvance(ctx context.Context, p *store.ScheduleAdvanceParams) error {
	err := q.expectOne(q.exec(ctx, `UPDATE schedules SET next_tick_at = ?, next_fire_at = ?, last_job_id = ?, updated_at = ? WHERE id = ? AND next_tick_at = ? AND paused = 0`,
		p.NextTickAt, p.NextFireAt, p.LastJobID, p.Now, p.ID, p.FromTickAt))
	if errors.Is(err, store.ErrNotFound) {
		return store.ErrConflict
	}
	return err
}

// ScheduleSetPaused pauses or resumes the project's schedule p.Name and
// sets its next tick; ErrNotFound when it has none.
func (q *Queries) ScheduleSetPaused(ctx context.Context, p *store.ScheduleSetPausedParams) error {
	return q.expectOne(q.exec(ctx, `UPDATE schedules SET paused = ?, next_tick_at = ?, next_fire_at = ?, updated_at = ? WHERE project_id = ? AND name = ?`,
		b2i(p.Paused), p.NextTickAt, p.NextFireAt, p.Now, p.ProjectID, p.Name))
}

// ScheduleDelete deletes the project's schedule p.Name and its ticks;
// ErrNotFound when it has none. Its jobs stay.
func (q *Queries) ScheduleDelete(ctx context.Context, p *store.ScheduleGetInProjectParams) error {
	s, err := q.ScheduleGetInProject(ctx, p)
	if err != nil {
		return err
	}
	if _, err := q.exec(ctx, `DELETE FROM schedule_ticks WHERE schedule_id = ?`, s.ID); err != nil {
		return err
	}
	return q.expectOne(q.exec(ctx, `DELETE FROM schedules WHERE id = ?`, s.ID))
}

// ScheduleTickInsert records t and sets t.ID; ErrConflict when the
// schedule has a tick at t.TickAt.
func (q *Queries) ScheduleTickInsert(ctx context.Context, t *store.ScheduleTick) error {
	id, err := q.insertID(ctx, `INSERT INTO schedule_ticks (schedule_id, tick_at, fire_at, fired_at, outcome, overlap, job_id, previous_job_id, missed, error)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, t.ScheduleID, t.TickAt, t.FireAt, t.FiredAt, t.Outcome, t.Overlap, t.JobID, t.PreviousJobID, t.Missed, t.Error)
	t.ID = id
	return err
}

// ScheduleTickList lists schedule p.ScheduleID's latest p.Limit ticks
// before p.BeforeTick (none: the newest), newest first.
func (q *Queries) ScheduleTickList(ctx context.Context, p *store.ScheduleTickListParams) ([]store.ScheduleTick, error) {
	before := p.BeforeTick
	if before == 0 {
		before = 1 << 62
	}
	rows, err := q.query(ctx, `SELECT `+tickCols+` FROM schedule_ticks WHERE schedule_id = ? AND tick_at < ? ORDER BY tick_at DESC LIMIT ?`, p.ScheduleID, before, p.Limit)
	return collect(q, rows, err, scanTick)
}

const tickCols = `id, schedule_id, tick_at, fire_at, fired_at, outcome, overlap, job_id, previous_job_id, missed, error`

func scanTick(sc scanner) (store.ScheduleTick, error) {
	var t store.ScheduleTick
	err := sc.Scan(&t.ID, &t.ScheduleID, &t.TickAt, &t.FireAt, &t.FiredAt, &t.Outcome, &t.Overlap, &t.JobID, &t.PreviousJobID, &t.Missed, &t.Error)
	return t, err
}

// ScheduleTicksLatest lists the latest p.PerSchedule ticks of each
// schedule of p.ScheduleIDs in one query: a page of the list costs two
// queries whatever its length, not one per schedule.
func (q *Queries) ScheduleTicksLatest(ctx context.Context, p *store.ScheduleTicksLatestParams) ([]store.ScheduleTick, error) {
	if len(p.ScheduleIDs) == 0 || p.PerSchedule <= 0 {
		return nil, nil
	}
	args := append(int64Args(p.ScheduleIDs), int64(p.PerSchedule))
	rows, err := q.query(ctx, `SELECT `+tickCols+` FROM (SELECT `+tickCols+`, ROW_NUMBER() OVER (PARTITION BY schedule_id ORDER BY tick_at DESC) AS n
		FROM schedule_ticks WHERE schedule_id IN (`+placeholders(len(p.ScheduleIDs))+`)) t WHERE n <= ? ORDER BY schedule_id, tick_at DESC`, args...)
	return collect(q, rows, err, scanTick)
}

// ScheduleTickCounts counts schedule p.ScheduleID's ticks at or after
// p.Since by outcome, through the (schedule_id, tick_at) index.
func (q *Queries) ScheduleTickCounts(ctx context.Context, p *store.ScheduleTickCountsParams) (*store.TickCounts, error) {
	var c store.TickCounts
	err := q.row(ctx, `SELECT COUNT(*), COUNT(CASE WHEN outcome = 'enqueued' THEN 1 END), COUNT(CASE WHEN outcome = 'skipped' THEN 1 END),
		COUNT(CASE WHEN outcome = 'replaced' THEN 1 END), COUNT(CASE WHEN outcome = 'failed' THEN 1 END), CAST(COALESCE(SUM(missed), 0) AS BIGINT)
		FROM schedule_ticks WHERE schedule_id = ? AND tick_at >= ?`, p.ScheduleID, p.Since).Scan(&c.Ticks, &c.Enqueued, &c.Skipped, &c.Replaced, &c.Failed, &c.Missed)
	return &c, q.D.Translate(err)
}

// ScheduleTicksPrune deletes up to p.Limit ticks older than p.TickBefore,
// keeping each schedule's newest tick. It walks the schedules and, for
// each, the (schedule_id, tick_at) index, so it needs no index of its own.
func (q *Queries) ScheduleTicksPrune(ctx context.Context, p *store.ScheduleTicksPruneParams) (int64, error) {
	rows, err := q.query(ctx, `SELECT t.id FROM schedules s JOIN schedule_ticks t ON t.schedule_id = s.id
		WHERE t.tick_at < ? AND t.tick_at < (SELECT MAX(u.tick_at) FROM schedule_ticks u WHERE u.schedule_id = s.id) LIMIT `+strconv.Itoa(p.Limit), p.TickBefore)
	ids, err := collect(q, rows, err, scanInt64)
	if err != nil || len(ids) == 0 {
		return 0, err
	}
	r, err := q.exec(ctx, `DELETE FROM schedule_ticks WHERE id IN (`+placeholders(len(ids))+`)`, int64Args(ids)...)
	if err != nil {
		return 0, err
	}
	return r.RowsAffected()
}
