package sqlstore

import (
	"context"
	"encoding/json"
	"strconv"

	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/wire"
)

const eventColumns = `v.id, v.project_id, v.endpoint_id, e.name, v.at, v.kind, v.failures, v.threshold, v.opened_at, v.next_probe_at,
	v.probe_job, v.held_jobs, v.actor, v.detail, v.facts`

// EndpointEventInsert stores the event and sets ev.ID.
func (q *Queries) EndpointEventInsert(ctx context.Context, ev *store.EndpointEvent) error {
	facts := ""
	if len(ev.Facts) > 0 {
		b, err := json.Marshal(ev.Facts)
		if err != nil {
			return err
		}
		facts = string(b)
	}
	id, err := q.insertID(ctx, `INSERT INTO endpoint_events (project_id, endpoint_id, at, kind, failures, threshold, opened_at, next_probe_at,
		probe_job, held_jobs, actor, detail, facts) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		ev.ProjectID, ev.EndpointID, ev.At, string(ev.Kind), ev.Failures, ev.Threshold, ev.OpenedAt, ev.NextProbeAt,
		ev.ProbeJob, ev.HeldJobs, ev.Actor, ev.Detail, facts)
	ev.ID = id
	return err
}

// EndpointEventList reads a page of the project's endpoint events, newest
// first (by id): of one endpoint when p.EndpointID is set, at or after
// p.Since when it is set, with ids below p.AfterID when it is set; at most
// p.Limit, 100 when it is 0 or less.
func (q *Queries) EndpointEventList(ctx context.Context, p *store.EndpointEventListParams) ([]store.EndpointEvent, error) {
	where, args := `v.project_id = ?`, []any{p.ProjectID}
	if p.EndpointID != 0 {
		where += ` AND v.endpoint_id = ?`
		args = append(args, p.EndpointID)
	}
	if p.Since != 0 {
		where += ` AND v.at >= ?`
		args = append(args, p.Since)
	}
	if p.AfterID > 0 {
		where += ` AND v.id < ?`
		args = append(args, p.AfterID)
	}
	rows, err := q.query(ctx, `SELECT `+eventColumns+` FROM endpoint_events v JOIN endpoints e ON e.id = v.endpoint_id WHERE `+where+
		` ORDER BY v.id DESC LIMIT `+strconv.Itoa(limitOr100(p.Limit)), args...)
	return collect(q, rows, err, scanEvent)
}

// EndpointEventsAfter reads the events of every project with ids above
// p.AfterID, oldest first.
func (q *Queries) EndpointEventsAfter(ctx context.Context, p *store.EndpointEventsAfterParams) ([]store.EndpointEvent, error) {
	rows, err := q.query(ctx, `SELECT `+eventColumns+` FROM endpoint_events v JOIN endpoints e ON e.id = v.endpoint_id WHERE v.id > ?
		ORDER BY v.id LIMIT `+strconv.Itoa(limitOr100(p.Limit)), p.AfterID)
	return collect(q, rows, err, scanEvent)
}

// EndpointEventsPrune deletes up to p.Limit events older than p.Before.
func (q *Queries) EndpointEventsPrune(ctx context.Context, p *store.EndpointEventsPruneParams) (int64, error) {
	rows, err := q.query(ctx, `SELECT id FROM endpoint_events WHERE at < ? ORDER BY at LIMIT `+strconv.Itoa(p.Limit), p.Before)
	ids, err := collect(q, rows, err, scanInt64)
	if err != nil || len(ids) == 0 {
		return 0, err
	}
	r, err := q.exec(ctx, `DELETE FROM endpoint_events WHERE id IN (`+placeholders(len(ids))+`)`, int64Args(ids)...)
	if err != nil {
		return 0, err
	}
	return r.RowsAffected()
}

func limitOr100(n int) int {
	if n <= 0 {
		return 100
	}
	return n
}

func scanEvent(sc scanner) (store.EndpointEvent, error) {
	var ev store.EndpointEvent
	var kind, facts string
	err := sc.Scan(&ev.ID, &ev.ProjectID, &ev.EndpointID, &ev.Endpoint, &ev.At, &kind, &ev.Failures, &ev.Threshold, &ev.OpenedAt, &ev.NextProbeAt,
		&ev.ProbeJob, &ev.HeldJobs, &ev.Actor, &ev.Detail, &facts)
	ev.Kind = wire.EndpointEventKind(kind)
	if err == nil && facts != "" {
		err = json.Unmarshal([]byte(facts), &ev.Facts)
	}
	return ev, err
}
