package sqlstore

import (
	"cmp"
	"context"
	"database/sql"
	"slices"
	"strings"

	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/wire"
)

// keyedEndpoint is true of an endpoint row e whose claims go through its
// flow keys (store.Endpoint.Keyed).
// Every limit per key is here: engine.keyed and this must agree.
const keyedEndpoint = `(e.key_max_concurrent IS NOT NULL OR e.key_rate_limit_per_minute IS NOT NULL OR e.key_ordered <> 0 OR e.fair_keys <> 0
	OR e.key_daily_call_budget IS NOT NULL OR e.key_monthly_call_budget IS NOT NULL)`

// claimSet moves a job to running under a lease: its arguments are the
// lease token, the time (twice), the worker and the time again.
const claimSet = `UPDATE jobs SET state = 'running', attempt = attempt + 1, lease_token = ?, lease_expires_at = ? + timeout_ms,
	worker_id = ?, updated_at = ?, claimed_at = ?`

// least is the dialect's two-argument minimum.
func (q *Queries) least() string {
	if q.D.Numbered {
		return "LEAST"
	}
	return "min"
}

// textIn is "col IN (...)" over keys, as one array on PostgreSQL.
func (q *Queries) textIn(col string, keys []string) (string, []any) {
	if q.D.Arrays {
		return col + " = ANY(CAST(? AS TEXT[]))", []any{keys}
	}
	args := make([]any, len(keys))
	for i, k := range keys {
		args[i] = k
	}
	return col + " IN (" + placeholders(len(keys)) + ")", args
}

// flowKeyOf names a key of an endpoint.
type flowKeyOf struct {
	endpointID int64
	key        string
}

// flowTouch keeps flow_keys in step with jobs just written, whatever
// wrote them (an enqueue, a report, a rescue, an operator): a job now
// scheduled makes its key ready no later than its due time (a new row
// when the key had none), and a keyed job that finished makes its key
// ready now, so a key parked at its concurrency limit is offered again.
// Only keyed endpoints have rows; for the others the statements match
// nothing. Key-less jobs that finished touch nothing, so a burn-down of
// key-less jobs pays one small statement per batch of enqueues.
func (q *Queries) flowTouch(ctx context.Context, jobs []*store.Job) error {
	scheduled, finished := map[flowKeyOf]int64{}, map[flowKeyOf]int64{}
	for _, j := range jobs {
		k := flowKeyOf{j.EndpointID, j.FlowKey}
		switch {
		case j.State == wire.JobScheduled:
			if t, ok := scheduled[k]; !ok || j.DueAt < t {
				scheduled[k] = j.DueAt
			}
		case j.FlowKey != "" && j.State != wire.JobRunning:
			if t, ok := finished[k]; !ok || j.UpdatedAt < t {
				finished[k] = j.UpdatedAt
			}
		}
	}
	if len(scheduled) > 0 {
		from, args := q.flowRows(scheduled)
		if _, err := q.exec(ctx, `INSERT INTO flow_keys (endpoint_id, flow_key, ready_at)
			SELECT v.column1, v.column2, v.column3 FROM `+from+` JOIN endpoints e ON e.id = v.column1 WHERE `+keyedEndpoint+`
			ON CONFLICT (endpoint_id, flow_key) DO UPDATE SET ready_at = `+q.least()+`(flow_keys.ready_at, excluded.ready_at)`, args...); err != nil {
			return err
		}
	}
	if len(finished) > 0 {
		from, args := q.flowRows(finished)
		// Written even when the key is ready already: the write takes the
		// row's lock, so a claim deciding on the key waits for this
		// transaction, and sees the job finished. Skipped when the key
		// looked ready, the claim could lock the row, count the job as
		// still running (this transaction not yet committed) and park the
		// key after it: parked with nothing running, it waited forever.
		if _, err := q.exec(ctx, `UPDATE flow_keys SET ready_at = `+q.least()+`(flow_keys.ready_at, v.column3) FROM `+from+`
			WHERE flow_keys.endpoint_id = v.column1 AND flow_keys.flow_key = v.column2`, args...); err != nil {
			return err
		}
	}
	return nil
}

// flowRows renders (endpoint, key, time) rows in key order, so that
// writers lock the rows of flow_keys in one order.
func (q *Queries) flowRows(m map[flowKeyOf]int64) (string, []any) {
	keys := make([]flowKeyOf, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b flowKeyOf) int {
		return cmp.Or(cmp.Compare(a.endpointID, b.endpointID), cmp.Compare(a.key, b.key))
	})
	return q.rowsFrom(len(keys), []string{"BIGINT", "TEXT", "BIGINT"}, func(i int, dst []any) []any {
		return append(dst, keys[i].endpointID, keys[i].key, m[keys[i]])
	})
}

// FlowKeysReady reads the keys due a turn, longest waiting first; see
// store.Queries.
func (q *Queries) FlowKeysReady(ctx context.Context, p *store.FlowKeysReadyParams) ([]string, error) {
	lock := ""
	if q.D.Locking {
		lock = " FOR UPDATE SKIP LOCKED"
	}
	rows, err := q.query(ctx, `SELECT flow_key FROM flow_keys WHERE endpoint_id = ? AND ready_at <= ? ORDER BY ready_at, flow_key LIMIT ?`+lock,
		p.EndpointID, p.Now, p.Limit)
	return collect(q, rows, err, scanString)
}

func scanString(sc scanner) (string, error) {
	var s string
	err := sc.Scan(&s)
	return s, err
}

// FlowKeysRunning counts running jobs per key through jobs_flow_running,
// which holds running keyed jobs only.
func (q *Queries) FlowKeysRunning(ctx context.Context, endpointID int64, keys []string) (map[string]int64, error) {
	out := map[string]int64{}
	if len(keys) == 0 {
		return out, nil
	}
	in, args := q.textIn("flow_key", keys)
	rows, err := q.query(ctx, `SELECT flow_key, count(*) FROM jobs WHERE state = 'running' AND endpoint_id = ? AND flow_key <> '' AND `+in+`
		GROUP BY flow_key`, append([]any{endpointID}, args...)...)
	err = each(q, rows, err, func(sc scanner) error {
		var k string
		var n int64
		err := sc.Scan(&k, &n)
		out[k] = n
		return err
	})
	return out, err
}

// FlowKeysClaims counts claims per key in a window: finished attempts
// through attempts_flow, running ones through jobs_flow_running.
func (q *Queries) FlowKeysClaims(ctx context.Context, endpointID int64, keys []string, since int64) (map[string]store.FlowClaims, error) {
	out := map[string]store.FlowClaims{}
	if len(keys) == 0 {
		return out, nil
	}
	in, keyArgs := q.textIn("flow_key", keys)
	args := append([]any{endpointID}, keyArgs...)
	args = append(args, since, endpointID)
	args = append(args, keyArgs...)
	args = append(args, since)
	rows, err := q.query(ctx, `SELECT flow_key, count(*), min(claimed_at) FROM (
		SELECT flow_key, claimed_at FROM attempts WHERE endpoint_id = ? AND flow_key <> '' AND `+in+` AND claimed_at >= ?
		UNION ALL
		SELECT flow_key, claimed_at FROM jobs WHERE state = 'running' AND endpoint_id = ? AND flow_key <> '' AND `+in+` AND claimed_at >= ?) AS c
		GROUP BY flow_key`, args...)
	err = each(q, rows, err, func(sc scanner) error {
		var k string
		var c store.FlowClaims
		err := sc.Scan(&k, &c.N, &c.Earliest)
		out[k] = c
		return err
	})
	return out, err
}

// JobsClaimKeys claims one job per key in one statement: a scalar
// subquery per key seeks jobs_flow_due (or, ordered, jobs_flow_order).
// "+j.tool_id" keeps the tool out of the index choice: SQLite otherwise
// read jobs_due (endpoint, tool, due_at) in due order and passed over
// every job of the keys due before the one asked for — a key of ten jobs
// behind a key of 100,000 read them all on each claim.
func (q *Queries) JobsClaimKeys(ctx context.Context, p *store.JobsClaimKeysParams) ([]store.Job, error) {
	if len(p.Keys) == 0 || len(p.ToolIDs) == 0 {
		return nil, nil
	}
	from, keyArgs := q.rowsFrom(len(p.Keys), []string{"TEXT"}, func(i int, dst []any) []any { return append(dst, p.Keys[i]) })
	tools := placeholders(len(p.ToolIDs))
	args := []any{p.LeaseToken, p.Now, p.WorkerID, p.Now, p.Now}
	var s string
	if p.Ordered {
		// The head in enqueue order of each key, whatever its tool and due
		// time; claimed only when it is due and of these tools.
		s = claimSet + ` WHERE state = 'scheduled' AND due_at <= ? AND tool_id IN (` + tools + `) AND id IN (
			SELECT (SELECT j.id FROM jobs j WHERE j.state = 'scheduled' AND j.endpoint_id = ? AND j.flow_key = v.column1 AND j.flow_key <> ''
			ORDER BY j.id LIMIT 1) FROM ` + from + `) RETURNING ` + jobColsClaimed
		args = append(args, p.Now)
		args = append(args, int64Args(p.ToolIDs)...)
		args = append(args, p.EndpointID)
	} else {
		s = claimSet + ` WHERE state = 'scheduled' AND id IN (
			SELECT (SELECT j.id FROM jobs j WHERE j.state = 'scheduled' AND j.endpoint_id = ? AND j.flow_key = v.column1 AND j.flow_key <> ''
			AND j.due_at <= ? AND +j.tool_id IN (` + tools + `) ORDER BY j.due_at, j.id LIMIT 1) FROM ` + from + `) RETURNING ` + jobColsClaimed
		args = append(args, p.EndpointID, p.Now)
		args = append(args, int64Args(p.ToolIDs)...)
	}
	jobs, err := q.scanJobsCap(claimHint(len(p.Keys)))(q.query(ctx, s, append(args, keyArgs...)...))
	sortByDue(jobs)
	return jobs, err
}

// sortByDue orders claimed jobs oldest due first, then by id: RETURNING
// has no order.
func sortByDue(jobs []store.Job) {
	slices.SortFunc(jobs, func(a, b store.Job) int {
		return cmp.Or(cmp.Compare(a.DueAt, b.DueAt), cmp.Compare(a.ID, b.ID))
	})
}

// FlowKeysNext reads each key's next due time with a scalar subquery per
// key; key ” (the key-less jobs) has no index of its own and is read
// apart.
func (q *Queries) FlowKeysNext(ctx context.Context, endpointID int64, keys []string, ordered bool) (map[string]int64, error) {
	out := map[string]int64{}
	var keyed []string
	for _, k := range keys {
		if k != "" {
			keyed = append(keyed, k)
			continue
		}
		var due sql.NullInt64
		if err := q.row(ctx, `SELECT min(due_at) FROM jobs WHERE state = 'scheduled' AND endpoint_id = ? AND flow_key = ''`, endpointID).Scan(&due); err != nil {
			return nil, q.D.Translate(err)
		}
		if due.Valid {
			out[""] = due.Int64
		}
	}
	if len(keyed) == 0 {
		return out, nil
	}
	next := `SELECT min(j.due_at) FROM jobs j WHERE j.state = 'scheduled' AND j.endpoint_id = ? AND j.flow_key = v.column1 AND j.flow_key <> ''`
	if ordered {
		next = `SELECT j.due_at FROM jobs j WHERE j.state = 'scheduled' AND j.endpoint_id = ? AND j.flow_key = v.column1 AND j.flow_key <> '' ORDER BY j.id LIMIT 1`
	}
	from, args := q.rowsFrom(len(keyed), []string{"TEXT"}, func(i int, dst []any) []any { return append(dst, keyed[i]) })
	rows, err := q.query(ctx, `SELECT v.column1, (`+next+`) FROM `+from, append([]any{endpointID}, args...)...)
	err = each(q, rows, err, func(sc scanner) error {
		var k string
		var due sql.NullInt64
		err := sc.Scan(&k, &due)
		if due.Valid {
			out[k] = due.Int64
		}
		return err
	})
	return out, err
}

// FlowKeysSet writes ready times in key order.
func (q *Queries) FlowKeysSet(ctx context.Context, endpointID int64, readyAt map[string]int64) error {
	if len(readyAt) == 0 {
		return nil
	}
	m := make(map[flowKeyOf]int64, len(readyAt))
	for k, t := range readyAt {
		m[flowKeyOf{endpointID, k}] = t
	}
	from, args := q.flowRows(m)
	_, err := q.exec(ctx, `INSERT INTO flow_keys (endpoint_id, flow_key, ready_at) SELECT v.column1, v.column2, v.column3 FROM `+from+` WHERE true
		ON CONFLICT (endpoint_id, flow_key) DO UPDATE SET ready_at = excluded.ready_at`, args...)
	return err
}

// FlowKeysDelete forgets keys.
func (q *Queries) FlowKeysDelete(ctx context.Context, endpointID int64, keys []string) error {
	if len(keys) == 0 {
		return nil
	}
	in, args := q.textIn("flow_key", keys)
	_, err := q.exec(ctx, `DELETE FROM flow_keys WHERE endpoint_id = ? AND `+in, append([]any{endpointID}, args...)...)
	return err
}

// FlowKeysRebuild reads every scheduled job of the endpoint once.
func (q *Queries) FlowKeysRebuild(ctx context.Context, endpointID int64, clear bool) error {
	if clear {
		_, err := q.exec(ctx, `DELETE FROM flow_keys WHERE endpoint_id = ?`, endpointID)
		return err
	}
	_, err := q.exec(ctx, `INSERT INTO flow_keys (endpoint_id, flow_key, ready_at)
		SELECT endpoint_id, flow_key, min(due_at) FROM jobs WHERE state = 'scheduled' AND endpoint_id = ? GROUP BY endpoint_id, flow_key
		ON CONFLICT (endpoint_id, flow_key) DO UPDATE SET ready_at = `+q.least()+`(flow_keys.ready_at, excluded.ready_at)`, endpointID)
	return err
}

// FlowKeyHead seeks jobs_flow_order.
func (q *Queries) FlowKeyHead(ctx context.Context, endpointID int64, key string) (int64, error) {
	var id int64
	err := q.row(ctx, `SELECT id FROM jobs WHERE state = 'scheduled' AND endpoint_id = ? AND flow_key = ? AND flow_key <> '' ORDER BY id LIMIT 1`,
		endpointID, key).Scan(&id)
	if err == sql.ErrNoRows {
		return 0, nil
	}
	return id, q.D.Translate(err)
}

// FlowKeysWake seeks flow_keys_ready just past now.
func (q *Queries) FlowKeysWake(ctx context.Context, endpointID, now int64) (int64, error) {
	var at sql.NullInt64
	err := q.row(ctx, `SELECT min(ready_at) FROM flow_keys WHERE endpoint_id = ? AND ready_at > ? AND ready_at < ?`,
		endpointID, now, store.FlowKeyParked).Scan(&at)
	return at.Int64, q.D.Translate(err)
}

// FlowKeysBusiest groups the endpoint's keyed running and scheduled jobs
// by key, each state read through its partial index (jobs_flow_running,
// jobs_flow_due) and bounded by store.FlowKeysScanBound.
func (q *Queries) FlowKeysBusiest(ctx context.Context, endpointID, now int64, limit int) ([]store.FlowKeyLoad, bool, error) {
	bound := int64(store.FlowKeysScanBound)
	rows, err := q.query(ctx, `SELECT flow_key, sum(r), sum(s), sum(d), max(n) FROM (
		SELECT flow_key, 1 AS r, 0 AS s, 0 AS d, count(*) OVER () AS n FROM (
			SELECT flow_key FROM jobs WHERE state = 'running' AND endpoint_id = ? AND flow_key <> '' LIMIT ?) AS jr
		UNION ALL
		SELECT flow_key, 0, 1, CASE WHEN due_at <= ? THEN 1 ELSE 0 END, count(*) OVER () FROM (
			SELECT flow_key, due_at FROM jobs WHERE state = 'scheduled' AND endpoint_id = ? AND flow_key <> '' LIMIT ?) AS js
		) AS c GROUP BY flow_key`, endpointID, bound, now, endpointID, bound)
	var out []store.FlowKeyLoad
	capped := false
	err = each(q, rows, err, func(sc scanner) error {
		var k store.FlowKeyLoad
		var n int64
		err := sc.Scan(&k.Key, &k.Running, &k.Scheduled, &k.Due, &n)
		out = append(out, k)
		capped = capped || n >= bound
		return err
	})
	if err != nil {
		return nil, false, err
	}
	slices.SortFunc(out, func(a, b store.FlowKeyLoad) int {
		if c := cmp.Compare(b.Running+b.Scheduled, a.Running+a.Scheduled); c != 0 {
			return c
		}
		return strings.Compare(a.Key, b.Key)
	})
	return out[:min(len(out), limit)], capped, nil
}
