package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"

	"github.com/getratchet/ratchet/internal/store"
)

// DueEndpoints looks only at the endpoints of the requested tools (a job's
// endpoint is its tool's: tools are immutable) and asks each with an EXISTS
// that seeks the jobs_due index. A SELECT DISTINCT over the jobs walked every
// scheduled job on every claim: with 20,000 queued that was a fifth of the
// burn-down's CPU.
func (q *Queries) DueEndpoints(ctx context.Context, p *store.DueEndpointsParams) ([]int64, error) {
	toolIDs, now := p.ToolIDs, p.Now
	if len(toolIDs) == 0 {
		return nil, nil
	}
	in := placeholders(len(toolIDs))
	args := append(int64Args(toolIDs), int64Args(toolIDs)...)
	args = append(args, now)
	rows, err := q.query(ctx, `SELECT e.endpoint_id FROM (SELECT DISTINCT endpoint_id FROM tools WHERE id IN (`+in+`)) AS e
		WHERE EXISTS (SELECT 1 FROM jobs WHERE state = 'scheduled' AND jobs.endpoint_id = e.endpoint_id AND tool_id IN (`+in+`) AND due_at <= ?)
		ORDER BY e.endpoint_id`, args...)
	return collect(q, rows, err, scanInt64)
}

// JobsClaimable reads up to p.Limit scheduled jobs of the endpoint and
// tools due at or before p.Now, by due time then id. With Locking
// (PostgreSQL) it reads them FOR UPDATE SKIP LOCKED: rows another
// transaction has locked are passed over, and the rows read stay locked
// until the transaction ends.
func (q *Queries) JobsClaimable(ctx context.Context, p *store.JobsClaimableParams) ([]store.Job, error) {
	toolIDs, limit := p.ToolIDs, p.Limit
	if len(toolIDs) == 0 || limit <= 0 {
		return nil, nil
	}
	args := append([]any{p.EndpointID}, int64Args(toolIDs)...)
	args = append(args, p.Now)
	lock := ""
	if q.D.Locking {
		lock = " FOR UPDATE SKIP LOCKED"
	}
	return q.scanJobsCap(claimHint(limit))(q.query(ctx, `SELECT `+jobCols+` FROM jobs WHERE state = 'scheduled' AND endpoint_id = ? AND tool_id IN (`+
		placeholders(len(toolIDs))+`) AND due_at <= ? ORDER BY due_at, id LIMIT `+strconv.Itoa(limit)+lock, args...))
}

// JobsClaim moves the jobs to running in one UPDATE that matches only
// scheduled jobs, setting the lease (expiring p.Now + the job's timeout),
// the worker and the claim time, and adding one to the attempt.
// ErrConflict when fewer jobs matched than were given; the ones that
// matched are updated, so the caller rolls the transaction back.
func (q *Queries) JobsClaim(ctx context.Context, p *store.JobsClaimParams) error {
	if len(p.IDs) == 0 {
		return nil
	}
	ids := int64Args(p.IDs)
	args := append([]any{p.LeaseToken, p.Now, p.WorkerID, p.Now, p.Now}, ids...)
	r, err := q.exec(ctx, `UPDATE jobs SET state = 'running', attempt = attempt + 1, lease_token = ?, lease_expires_at = ? + timeout_ms,
		worker_id = ?, updated_at = ?, claimed_at = ? WHERE state = 'scheduled' AND id IN (`+placeholders(len(ids))+`)`, args...)
	if err != nil {
		return err
	}
	if n, _ := r.RowsAffected(); n != int64(len(ids)) {
		return fmt.Errorf("claim: %d of %d jobs were still scheduled: %w", n, len(ids), store.ErrConflict)
	}
	return nil
}

// JobsClaimDue claims with one UPDATE ... RETURNING instead of a SELECT of
// the rows and an UPDATE by id. The attempt it starts is the job row's
// claim columns until the attempt finishes (see AttemptsFinish).
func (q *Queries) JobsClaimDue(ctx context.Context, p *store.JobsClaimDueParams) ([]store.Job, error) {
	if len(p.ToolIDs) == 0 || p.Limit <= 0 {
		return nil, nil
	}
	lock := ""
	if q.D.Locking {
		lock = " FOR UPDATE SKIP LOCKED"
	}
	args := append([]any{p.LeaseToken, p.Now, p.WorkerID, p.Now, p.Now, p.EndpointID}, int64Args(p.ToolIDs)...)
	args = append(args, p.Now)
	byKey := ""
	if p.ByKey {
		// jobs_flow_due holds keyed jobs only, and is chosen only when the
		// query says so itself.
		byKey = " AND flow_key = ?"
		if p.FlowKey != "" {
			byKey += " AND flow_key <> ''"
		}
		args = append(args, p.FlowKey)
	}
	// By key, the tool is kept out of the index choice (see JobsClaimKeys).
	tool := "tool_id"
	if p.ByKey {
		tool = "+tool_id"
	}
	jobs, err := q.scanJobsCap(claimHint(p.Limit))(q.query(ctx, claimSet+` WHERE id IN (SELECT id FROM jobs WHERE state = 'scheduled' AND endpoint_id = ? AND `+tool+` IN (`+
		placeholders(len(p.ToolIDs))+`) AND due_at <= ?`+byKey+` ORDER BY due_at, id LIMIT `+strconv.Itoa(p.Limit)+lock+`) RETURNING `+jobColsClaimed, args...))
	if err != nil {
		return nil, err
	}
	sortByDue(jobs)
	return jobs, nil
}

// claimHint is the first capacity of a claim's jobs: its limit, up to 100
// (a claim of up to 1,000 that finds 1 job should not allocate room for
// 1,000).
func claimHint(limit int) int { return min(limit, 100) }

// CountScheduled reads only jobs_due (an index-only scan where the index
// covers the query): the state is the index's predicate, written out.
func (q *Queries) CountScheduled(ctx context.Context, p *store.CountScheduledParams) (int64, int64, error) {
	var n, due int64
	err := q.row(ctx, `SELECT count(*), COALESCE(sum(CASE WHEN due_at <= ? THEN 1 ELSE 0 END), 0) FROM jobs
		WHERE state = 'scheduled' AND endpoint_id = ?`, p.DueBy, p.EndpointID).Scan(&n, &due)
	return n, due, q.D.Translate(err)
}

// CountDue seeks jobs_due (endpoint, tool, due_at, id) once per tool of
// the endpoint, each a range up to Now, and stops at the limit: the
// endpoint alone would read every scheduled job of it. With Later it
// reads the other end of the same ranges.
func (q *Queries) CountDue(ctx context.Context, p *store.CountDueParams) (int64, error) {
	var n int64
	cmp := "<="
	if p.Later {
		cmp = ">"
	}
	err := q.row(ctx, `SELECT count(*) FROM (SELECT 1 FROM jobs WHERE state = 'scheduled' AND endpoint_id = ?
		AND tool_id IN (SELECT id FROM tools WHERE endpoint_id = ?) AND due_at `+cmp+` ? LIMIT ?) AS d`, p.EndpointID, p.EndpointID, p.Now, p.Limit).Scan(&n)
	return n, q.D.Translate(err)
}

// CountRunning counts the endpoint's running jobs, reading at most
// p.Limit of them.
func (q *Queries) CountRunning(ctx context.Context, p *store.CountRunningParams) (int64, error) {
	var n int64
	err := q.row(ctx, `SELECT count(*) FROM (SELECT 1 FROM jobs WHERE endpoint_id = ? AND state = 'running' LIMIT ?) AS r`, p.EndpointID, p.Limit).Scan(&n)
	return n, q.D.Translate(err)
}

// ClaimsSince counts the endpoint's claims at or after p.Since, reading
// at most p.Limit finished attempts and p.Limit running jobs, and returns
// the count (at most p.Limit) and the earliest claim time read (0 when
// none).
func (q *Queries) ClaimsSince(ctx context.Context, p *store.ClaimsSinceParams) (int64, int64, error) {
	endpointID, since, limit := p.EndpointID, p.Since, p.Limit
	var n int64
	var earliest sql.NullInt64
	// Finished attempts and running ones (the claim columns of running
	// jobs), each stopping at limit.
	err := q.row(ctx, `SELECT count(*), min(claimed_at) FROM (
		SELECT claimed_at FROM (SELECT claimed_at FROM attempts WHERE endpoint_id = ? AND claimed_at >= ? ORDER BY claimed_at LIMIT ?) AS f
		UNION ALL
		SELECT claimed_at FROM (SELECT claimed_at FROM jobs WHERE state = 'running' AND endpoint_id = ? AND claimed_at >= ? ORDER BY claimed_at LIMIT ?) AS r) AS c`,
		endpointID, since, limit, endpointID, since, limit).Scan(&n, &earliest)
	return min(n, limit), earliest.Int64, q.D.Translate(err)
}

// AttemptsFinishedSince counts the endpoint's attempts finished at or
// after p.Since, reading at most p.Limit of them.
func (q *Queries) AttemptsFinishedSince(ctx context.Context, p *store.AttemptsFinishedSinceParams) (int64, error) {
	var n int64
	err := q.row(ctx, `SELECT count(*) FROM (SELECT 1 FROM attempts WHERE endpoint_id = ? AND finished_at >= ? LIMIT ?) AS f`, p.EndpointID, p.Since, p.Limit).Scan(&n)
	return n, q.D.Translate(err)
}

// NextDueAt is the earliest due time of the scheduled jobs of these tools;
// 0 when there are none, or no tools.
func (q *Queries) NextDueAt(ctx context.Context, toolIDs []int64) (int64, error) {
	if len(toolIDs) == 0 {
		return 0, nil
	}
	// Per tool, the first entry of jobs_due under (its endpoint, the tool):
	// without the endpoint the index cannot be used, and min(due_at) over
	// the tools alone read every scheduled job (170 ms at 50,000 queued) on
	// each claim that found nothing.
	var due sql.NullInt64
	err := q.row(ctx, `SELECT min((SELECT min(due_at) FROM jobs WHERE state = 'scheduled' AND jobs.endpoint_id = t.endpoint_id AND jobs.tool_id = t.id))
		FROM tools t WHERE t.id IN (`+placeholders(len(toolIDs))+`)`, int64Args(toolIDs)...).Scan(&due)
	return due.Int64, q.D.Translate(err)
}

// ExpiredLeases reads up to p.Limit running jobs whose lease expired at or
// before p.Now, earliest expiry first. With Locking (PostgreSQL) it reads
// them FOR UPDATE SKIP LOCKED, so nodes rescuing at once take different
// jobs.
func (q *Queries) ExpiredLeases(ctx context.Context, p *store.ExpiredLeasesParams) ([]store.Job, error) {
	lock := ""
	if q.D.Locking {
		lock = " FOR UPDATE SKIP LOCKED"
	}
	return q.scanJobs(q.query(ctx, `SELECT `+jobCols+` FROM jobs WHERE state = 'running' AND lease_expires_at <= ? ORDER BY lease_expires_at LIMIT `+
		strconv.Itoa(p.Limit)+lock, p.Now))
}
