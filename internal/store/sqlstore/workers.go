package sqlstore

import (
	"context"
	"strconv"

	"github.com/getratchet/ratchet/internal/store"
)

// WorkersTouch upserts one row per worker; CASE rather than greatest/max
// keeps one text for both drivers.
func (q *Queries) WorkersTouch(ctx context.Context, p *store.WorkersTouchParams) error {
	for _, w := range p.Workers {
		seen := max(w.ClaimAt, w.HeartbeatAt, w.ReportAt)
		first := w.FirstAt
		if first == 0 {
			first = seen
		}
		_, err := q.exec(ctx, `INSERT INTO workers (project_id, worker_id, first_seen_at, last_claim_at, last_heartbeat_at, last_report_at, last_seen_at)
			VALUES (?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (project_id, worker_id) DO UPDATE SET
			first_seen_at = CASE WHEN excluded.first_seen_at < workers.first_seen_at THEN excluded.first_seen_at ELSE workers.first_seen_at END,
			last_claim_at = CASE WHEN excluded.last_claim_at > workers.last_claim_at THEN excluded.last_claim_at ELSE workers.last_claim_at END,
			last_heartbeat_at = CASE WHEN excluded.last_heartbeat_at > workers.last_heartbeat_at THEN excluded.last_heartbeat_at ELSE workers.last_heartbeat_at END,
			last_report_at = CASE WHEN excluded.last_report_at > workers.last_report_at THEN excluded.last_report_at ELSE workers.last_report_at END,
			last_seen_at = CASE WHEN excluded.last_seen_at > workers.last_seen_at THEN excluded.last_seen_at ELSE workers.last_seen_at END`,
			w.ProjectID, w.WorkerID, first, w.ClaimAt, w.HeartbeatAt, w.ReportAt, seen)
		if err != nil {
			return err
		}
	}
	return nil
}

// WorkerList reads the workers, then what they hold from the project's
// running jobs through jobs_project_state (project, state, id): running
// jobs are few next to the others, and an index on worker_id would be
// written at every claim.
func (q *Queries) WorkerList(ctx context.Context, p *store.WorkerListParams) ([]store.Worker, error) {
	rows, err := q.query(ctx, `SELECT project_id, worker_id, first_seen_at, last_claim_at, last_heartbeat_at, last_report_at, last_seen_at
		FROM workers WHERE project_id = ? AND last_seen_at >= ? ORDER BY last_seen_at DESC, worker_id LIMIT `+strconv.Itoa(max(p.Limit, 0)), p.ProjectID, p.SeenSince)
	out, err := collect(q, rows, err, func(sc scanner) (store.Worker, error) {
		var w store.Worker
		err := sc.Scan(&w.ProjectID, &w.WorkerID, &w.FirstSeenAt, &w.LastClaimAt, &w.LastHeartbeatAt, &w.LastReportAt, &w.LastSeenAt)
		return w, err
	})
	if err != nil || len(out) == 0 {
		return out, err
	}
	index := map[string]int{}
	for i, w := range out {
		index[w.WorkerID] = i
	}
	rows, err = q.query(ctx, `SELECT worker_id, id FROM jobs WHERE project_id = ? AND state = 'running' ORDER BY id DESC`, p.ProjectID)
	err = each(q, rows, err, func(sc scanner) error {
		var worker string
		var id int64
		if err := sc.Scan(&worker, &id); err != nil {
			return err
		}
		i, ok := index[worker]
		if !ok {
			return nil
		}
		out[i].Holding++
		if len(out[i].JobIDs) < p.JobsPerWorker {
			out[i].JobIDs = append(out[i].JobIDs, id)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// WorkersPrune deletes the workers of every project last seen before
// p.SeenBefore and returns how many.
func (q *Queries) WorkersPrune(ctx context.Context, p *store.WorkersPruneParams) (int64, error) {
	r, err := q.exec(ctx, `DELETE FROM workers WHERE last_seen_at < ?`, p.SeenBefore)
	if err != nil {
		return 0, err
	}
	return r.RowsAffected()
}
