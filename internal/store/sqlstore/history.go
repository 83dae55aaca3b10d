package sqlstore

import (
	"context"
	"fmt"

	"github.com/getratchet/ratchet/internal/store"
)

// HistoryCursorGet reads the first minute not rolled up yet from the one
// row of history_cursor; with Locking (PostgreSQL) it locks the row FOR
// UPDATE until the transaction ends, so one node at a time rolls up.
func (q *Queries) HistoryCursorGet(ctx context.Context) (int64, error) {
	var next int64
	err := q.row(ctx, `SELECT next_minute FROM history_cursor WHERE id = 1`+q.forUpdate()).Scan(&next)
	return next, q.D.Translate(err)
}

// HistoryCursorSet stores the first minute not rolled up yet;
// ErrNotFound when the cursor's row is missing.
func (q *Queries) HistoryCursorSet(ctx context.Context, nextMinute int64) error {
	return q.expectOne(q.exec(ctx, `UPDATE history_cursor SET next_minute = ? WHERE id = 1`, nextMinute))
}

// HistoryCompute is one SELECT. Each of its three parts reads
// the attempts through an index that leads with the endpoint, probed once
// per endpoint ("endpoint_id IN (SELECT id FROM endpoints)"):
// attempts_claims (endpoint_id, claimed_at), jobs_running (endpoint_id,
// claimed_at) for attempts still running, and attempts_finished
// (endpoint_id, finished_at). Written as a join from endpoints, SQLite,
// without statistics, scanned every attempt instead. A minute is the claim or
// finish time minus its remainder by 60,000. An attempt is either in
// attempts or a running job's claim columns, moved in one transaction, so
// the one statement counts each claim once.
func (q *Queries) HistoryCompute(ctx context.Context, p *store.HistoryComputeParams) ([]store.HistoryPoint, error) {
	const lag = `CASE WHEN %[1]s.due_at > 0 AND %[1]s.claimed_at > %[1]s.due_at THEN %[1]s.claimed_at - %[1]s.due_at ELSE 0 END`
	const lagN = `CASE WHEN %[1]s.due_at > 0 THEN 1 ELSE 0 END`
	la, lj := fmt.Sprintf(lag, "a"), fmt.Sprintf(lag, "j")
	rows, err := q.query(ctx, `SELECT e.project_id, u.endpoint_id, u.minute, CAST(sum(u.claims) AS BIGINT), CAST(sum(u.succeeded) AS BIGINT),
			CAST(sum(u.failed) AS BIGINT), CAST(sum(u.timed_out) AS BIGINT), CAST(sum(u.lag) AS BIGINT), CAST(sum(u.lag_n) AS BIGINT), CAST(max(u.lag) AS BIGINT)
		FROM (
			SELECT a.endpoint_id, a.claimed_at - a.claimed_at % 60000 AS minute, 1 AS claims, 0 AS succeeded, 0 AS failed, 0 AS timed_out,
				`+la+` AS lag, `+fmt.Sprintf(lagN, "a")+` AS lag_n
			FROM attempts a WHERE a.endpoint_id IN (SELECT id FROM endpoints) AND a.claimed_at >= ? AND a.claimed_at < ?
			UNION ALL
			SELECT j.endpoint_id, j.claimed_at - j.claimed_at % 60000, 1, 0, 0, 0, `+lj+`, `+fmt.Sprintf(lagN, "j")+`
			FROM jobs j WHERE j.endpoint_id IN (SELECT id FROM endpoints) AND j.state = 'running' AND j.claimed_at >= ? AND j.claimed_at < ?
			UNION ALL
			SELECT f.endpoint_id, f.finished_at - f.finished_at % 60000, 0,
				CASE WHEN f.outcome = 'succeeded' THEN 1 ELSE 0 END, CASE WHEN f.outcome = 'failed' THEN 1 ELSE 0 END,
				CASE WHEN f.outcome = 'timed_out' THEN 1 ELSE 0 END, 0, 0
			FROM attempts f WHERE f.endpoint_id IN (SELECT id FROM endpoints) AND f.finished_at >= ? AND f.finished_at < ?
		) AS u JOIN endpoints e ON e.id = u.endpoint_id
		GROUP BY e.project_id, u.endpoint_id, u.minute`, p.From, p.To, p.From, p.To, p.From, p.To)
	return collect(q, rows, err, func(sc scanner) (store.HistoryPoint, error) {
		var h store.HistoryPoint
		err := sc.Scan(&h.ProjectID, &h.EndpointID, &h.Minute, &h.Claims, &h.Succeeded, &h.Failed, &h.TimedOut, &h.LagSumMs, &h.LagCount, &h.LagMaxMs)
		return h, err
	})
}

// HistoryInsert writes one row per point: a minute holds one row per
// endpoint, so these are few.
func (q *Queries) HistoryInsert(ctx context.Context, points []store.HistoryPoint) (int64, error) {
	var n int64
	for _, h := range points {
		r, err := q.exec(ctx, `INSERT INTO history (project_id, endpoint_id, minute, claims, succeeded, failed, timed_out, lag_sum_ms, lag_count, lag_max_ms)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (project_id, endpoint_id, minute) DO NOTHING`,
			h.ProjectID, h.EndpointID, h.Minute, h.Claims, h.Succeeded, h.Failed, h.TimedOut, h.LagSumMs, h.LagCount, h.LagMaxMs)
		if err != nil {
			return n, err
		}
		k, err := r.RowsAffected()
		if err != nil {
			return n, err
		}
		n += k
	}
	return n, nil
}

// HistoryList reads the project's roll-ups of minutes in [p.From, p.To),
// of endpoint p.EndpointID or (0) every endpoint, each with its
// endpoint's name, by endpoint name then minute.
func (q *Queries) HistoryList(ctx context.Context, p *store.HistoryListParams) ([]store.HistoryPoint, error) {
	where, args := `h.project_id = ? AND h.minute >= ? AND h.minute < ?`, []any{p.ProjectID, p.From, p.To}
	if p.EndpointID != 0 {
		where += ` AND h.endpoint_id = ?`
		args = append(args, p.EndpointID)
	}
	rows, err := q.query(ctx, `SELECT h.project_id, h.endpoint_id, e.name, h.minute, h.claims, h.succeeded, h.failed, h.timed_out, h.lag_sum_ms, h.lag_count, h.lag_max_ms
		FROM history h JOIN endpoints e ON e.id = h.endpoint_id WHERE `+where+` ORDER BY e.name, h.minute`, args...)
	return collect(q, rows, err, func(sc scanner) (store.HistoryPoint, error) {
		var h store.HistoryPoint
		err := sc.Scan(&h.ProjectID, &h.EndpointID, &h.Endpoint, &h.Minute, &h.Claims, &h.Succeeded, &h.Failed, &h.TimedOut, &h.LagSumMs, &h.LagCount, &h.LagMaxMs)
		return h, err
	})
}

// HistoryPrune deletes every project's roll-ups of minutes before
// p.Before and returns how many.
func (q *Queries) HistoryPrune(ctx context.Context, p *store.HistoryPruneParams) (int64, error) {
	r, err := q.exec(ctx, `DELETE FROM history WHERE minute < ?`, p.Before)
	if err != nil {
		return 0, err
	}
	return r.RowsAffected()
}
