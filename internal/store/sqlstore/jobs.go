package sqlstore

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/getratchet/ratchet/internal/store"
)

const jobCols = `id, project_id, tool_id, tool, version, endpoint_id, endpoint, run_id, payload, idempotency_key, policy, max_attempts, timeout_ms,
	attempt, state, due_at, lease_token, lease_expires_at, worker_id, cancel_requested, replay_of, created_at, updated_at, finished_at, claimed_at,
	last_classification, last_error, flow_key, traceparent, tracestate, throttles`

// jobColsBut is jobCols with the named columns read as empty text, for
// reads that do not need them (a policy snapshot or a payload is the bulk
// of a job row).
func jobColsBut(skip ...string) string {
	cols := strings.Split(jobCols, ",")
	for i, c := range cols {
		if slices.Contains(skip, strings.TrimSpace(c)) {
			cols[i] = " ''"
		}
	}
	return strings.Join(cols, ",")
}

var (
	// jobColsClaimed leaves out the policy: a claim hands the job to a
	// worker, which is not told the policy.
	jobColsClaimed = jobColsBut("policy")
	// jobColsReported leaves out the payload: a report decides what comes
	// next and never sends the payload again.
	jobColsReported = jobColsBut("payload")
)

func scanJob(sc interface{ Scan(...any) error }) (*store.Job, error) {
	var j store.Job
	if err := scanJobInto(sc, &j); err != nil {
		return nil, err
	}
	return &j, nil
}

// scanJobInto scans a row of jobCols (or its variants) into j. The
// payload and the policy are scanned straight into their byte slices: one
// copy of each, not a string and then a copy of it.
func scanJobInto(sc interface{ Scan(...any) error }, j *store.Job) error {
	var key sql.NullString
	var cancel int64
	if err := sc.Scan(&j.ID, &j.ProjectID, &j.ToolID, &j.Tool, &j.Version, &j.EndpointID, &j.Endpoint, &j.RunID, (*[]byte)(&j.Payload), &key, (*[]byte)(&j.Policy),
		&j.MaxAttempts, &j.TimeoutMs, &j.Attempt, &j.State, &j.DueAt, &j.LeaseToken, &j.LeaseExpiresAt, &j.WorkerID, &cancel, &j.ReplayOf,
		&j.CreatedAt, &j.UpdatedAt, &j.FinishedAt, &j.ClaimedAt, &j.LastClassification, &j.LastError, &j.FlowKey, &j.Traceparent, &j.Tracestate, &j.Throttles); err != nil {
		return err
	}
	j.IdempotencyKey = key.String
	j.CancelRequested = cancel != 0
	return nil
}

func (q *Queries) scanJobs(rows *sql.Rows, err error) ([]store.Job, error) {
	return q.scanJobsCap(0)(rows, err)
}

// scanJobsCap reads every row into a slice of jobs, each scanned in
// place, the slice's first capacity n (the rows expected; 0 when unknown).
func (q *Queries) scanJobsCap(n int) func(*sql.Rows, error) ([]store.Job, error) {
	return func(rows *sql.Rows, err error) ([]store.Job, error) {
		var out []store.Job
		if n > 0 {
			out = make([]store.Job, 0, n)
		}
		err = each(q, rows, err, func(sc scanner) error {
			out = append(out, store.Job{})
			return scanJobInto(sc, &out[len(out)-1])
		})
		if err != nil || len(out) == 0 {
			return nil, err // no rows is a nil slice, as collect's
		}
		return out, nil
	}
}

// JobInsert skips a repeated idempotency key with ON CONFLICT DO NOTHING
// rather than letting the unique index fail the statement: on PostgreSQL a
// failed statement aborts the whole transaction, and the engine goes on to
// read the existing job in the same one.
func (q *Queries) JobInsert(ctx context.Context, j *store.Job) error {
	if err := q.jobInsert(ctx, j); err != nil {
		return err
	}
	return q.flowTouch(ctx, []*store.Job{j})
}

// jobInsert is JobInsert without flowTouch.
func (q *Queries) jobInsert(ctx context.Context, j *store.Job) error {
	id, err := q.insertID(ctx, `INSERT INTO jobs (project_id, tool_id, tool, version, endpoint_id, endpoint, run_id, payload, idempotency_key, policy,
		max_attempts, timeout_ms, attempt, state, due_at, replay_of, created_at, updated_at, finished_at, last_classification, last_error, flow_key, traceparent, tracestate)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT DO NOTHING`,
		j.ProjectID, j.ToolID, j.Tool, j.Version, j.EndpointID, j.Endpoint, j.RunID, string(j.Payload), nullStr(j.IdempotencyKey), string(j.Policy),
		j.MaxAttempts, j.TimeoutMs, j.Attempt, j.State, j.DueAt, j.ReplayOf, j.CreatedAt, j.UpdatedAt, j.FinishedAt, j.LastClassification, j.LastError,
		j.FlowKey, j.Traceparent, j.Tracestate)
	if errors.Is(err, store.ErrNotFound) { // no row returned: the key is taken
		return fmt.Errorf("idempotency key %q is already used in project %d: %w", j.IdempotencyKey, j.ProjectID, store.ErrConflict)
	}
	if err != nil {
		return err
	}
	j.ID = id
	return nil
}

// JobsInsert inserts one job per statement where rows are bound cell by
// cell (SQLite, in process, where a statement costs little), and all in
// one statement on PostgreSQL: ids are taken from the sequence first, so
// each job knows its id whatever order RETURNING would give.
func (q *Queries) JobsInsert(ctx context.Context, jobs []*store.Job) error {
	for _, j := range jobs {
		if j.IdempotencyKey != "" {
			return fmt.Errorf("JobsInsert: job with idempotency key %q: use JobInsert", j.IdempotencyKey)
		}
	}
	if !q.D.Arrays || len(jobs) == 0 {
		for _, j := range jobs {
			if err := q.jobInsert(ctx, j); err != nil {
				return err
			}
		}
		return q.flowTouch(ctx, jobs)
	}
	rows, err := q.query(ctx, `SELECT nextval(pg_get_serial_sequence('jobs', 'id')) FROM generate_series(1, ?)`, len(jobs))
	ids, err := collect(q, rows, err, scanInt64)
	if err != nil {
		return err
	}
	if len(ids) != len(jobs) {
		return fmt.Errorf("JobsInsert: %d ids for %d jobs", len(ids), len(jobs))
	}
	slices.Sort(ids)
	from, args := q.rowsFrom(len(jobs), []string{"BIGINT", "BIGINT", "BIGINT", "TEXT", "TEXT", "BIGINT", "TEXT", "BIGINT", "TEXT", "TEXT",
		"BIGINT", "BIGINT", "BIGINT", "TEXT", "BIGINT", "BIGINT", "BIGINT", "BIGINT", "BIGINT", "TEXT", "TEXT", "TEXT", "TEXT", "TEXT"}, func(i int, dst []any) []any {
		j := jobs[i]
		return append(dst, ids[i], j.ProjectID, j.ToolID, j.Tool, j.Version, j.EndpointID, j.Endpoint, j.RunID, string(j.Payload), string(j.Policy),
			j.MaxAttempts, j.TimeoutMs, j.Attempt, j.State, j.DueAt, j.ReplayOf, j.CreatedAt, j.UpdatedAt, j.FinishedAt, j.LastClassification, j.LastError,
			j.FlowKey, j.Traceparent, j.Tracestate)
	})
	r, err := q.exec(ctx, `INSERT INTO jobs (id, project_id, tool_id, tool, version, endpoint_id, endpoint, run_id, payload, policy,
		max_attempts, timeout_ms, attempt, state, due_at, replay_of, created_at, updated_at, finished_at, last_classification, last_error, flow_key, traceparent, tracestate)
		SELECT * FROM `+from, args...)
	if err := q.expectN(r, err, len(jobs)); err != nil {
		return err
	}
	for i, j := range jobs {
		j.ID = ids[i]
	}
	return q.flowTouch(ctx, jobs)
}

// JobByIdempotencyKey reads the project's job with this idempotency key;
// ErrNotFound when there is none.
func (q *Queries) JobByIdempotencyKey(ctx context.Context, projectID int64, key string) (*store.Job, error) {
	j, err := scanJob(q.row(ctx, `SELECT `+jobCols+` FROM jobs WHERE project_id = ? AND idempotency_key = ?`, projectID, key))
	return j, q.D.Translate(err)
}

// JobGetInProject reads the project's job p.ID; with Locking (a Tx on
// PostgreSQL) it locks the row FOR UPDATE until the transaction ends.
// ErrNotFound when the project has no such job.
func (q *Queries) JobGetInProject(ctx context.Context, p *store.JobGetInProjectParams) (*store.Job, error) {
	j, err := scanJob(q.row(ctx, `SELECT `+jobCols+` FROM jobs WHERE project_id = ? AND id = ?`+q.forUpdate(), p.ProjectID, p.ID))
	return j, q.D.Translate(err)
}

// JobGetAnyProject reads job id of any project, locking it as
// JobGetInProject does; ErrNotFound when there is none.
func (q *Queries) JobGetAnyProject(ctx context.Context, id int64) (*store.Job, error) {
	j, err := scanJob(q.row(ctx, `SELECT `+jobCols+` FROM jobs WHERE id = ?`+q.forUpdate(), id))
	return j, q.D.Translate(err)
}

// JobUpdate writes the job's mutable columns (attempt, state, due time,
// lease, worker, cancel flag, update and finish times, last
// classification and error) by id, unguarded; ErrNotFound when there is
// no job j.ID.
func (q *Queries) JobUpdate(ctx context.Context, j *store.Job) error {
	if err := q.expectOne(q.exec(ctx, `UPDATE jobs SET attempt = ?, state = ?, due_at = ?, lease_token = ?, lease_expires_at = ?, worker_id = ?,
		cancel_requested = ?, updated_at = ?, finished_at = ?, last_classification = ?, last_error = ?, throttles = ? WHERE id = ?`,
		j.Attempt, j.State, j.DueAt, j.LeaseToken, j.LeaseExpiresAt, j.WorkerID, b2i(j.CancelRequested), j.UpdatedAt, j.FinishedAt,
		j.LastClassification, j.LastError, j.Throttles, j.ID)); err != nil {
		return err
	}
	return q.flowTouch(ctx, []*store.Job{j})
}

// JobsGetInProject reads the jobs with these ids without their payloads,
// one statement per chunk of ids (inChunks), keeps those of p.ProjectID
// and returns them in id order. With p.Lock and Locking (PostgreSQL) the
// rows are read FOR UPDATE; the project is checked after the read, so a
// row of another project among the ids is locked too, though left out.
func (q *Queries) JobsGetInProject(ctx context.Context, p *store.JobsGetInProjectParams) ([]store.Job, error) {
	projectID, ids := p.ProjectID, p.IDs
	forUpdate := ""
	if p.Lock {
		forUpdate = q.forUpdate()
	}
	var out []store.Job
	err := q.inChunks(len(ids), func(lo, hi int) error {
		part := ids[lo:hi]
		in, args := "id IN ("+placeholders(len(part))+")", int64Args(part)
		if q.D.Arrays {
			in, args = "id = ANY(CAST(? AS BIGINT[]))", []any{part}
		}
		// The project is checked here, not in SQL: with "project_id = ?"
		// PostgreSQL, misled by statistics taken while the table was
		// small, sometimes read every job of the project through
		// jobs_project and tested each against the thousand ids (0.4 s)
		// instead of looking the ids up.
		jobs, err := q.scanJobsCap(len(part))(q.query(ctx, `SELECT `+jobColsReported+` FROM jobs WHERE `+in+` ORDER BY id`+forUpdate, args...))
		kept := jobs[:0] // filtered in place: one chunk (the usual) is never copied
		for _, j := range jobs {
			if j.ProjectID == projectID {
				kept = append(kept, j)
			}
		}
		if out == nil {
			out = kept
		} else {
			out = append(out, kept...)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	byID := func(a, b store.Job) int { return cmp.Compare(a.ID, b.ID) }
	if !slices.IsSortedFunc(out, byID) { // chunks are each in order, not the whole
		slices.SortFunc(out, byID)
	}
	return out, nil
}

// JobsUpdate writes every job with one UPDATE ... FROM (VALUES ...) per
// chunk rather than one UPDATE per job: on the report path the statement
// overhead per row was most of the cost. A guard rides along as three more
// columns (an empty state: none). On PostgreSQL an UPDATE that waited for
// another transaction's row lock checks the guard against the row as that
// transaction left it.
func (q *Queries) JobsUpdate(ctx context.Context, jobs []*store.Job, guards []store.JobGuard) error {
	if guards != nil && len(guards) != len(jobs) {
		return fmt.Errorf("JobsUpdate: %d guards for %d jobs", len(guards), len(jobs))
	}
	err := q.inChunks(len(jobs), func(lo, hi int) error {
		part := jobs[lo:hi]
		from, args := q.rowsFrom(len(part), []string{"BIGINT", "BIGINT", "TEXT", "BIGINT", "TEXT", "BIGINT", "TEXT", "BIGINT", "BIGINT", "BIGINT",
			"TEXT", "TEXT", "BIGINT", "TEXT", "TEXT", "BIGINT"}, func(i int, dst []any) []any {
			j := part[i]
			var g store.JobGuard
			if guards != nil {
				g = guards[lo+i]
			}
			return append(dst, j.ID, j.Attempt, j.State, j.DueAt, j.LeaseToken, j.LeaseExpiresAt, j.WorkerID, b2i(j.CancelRequested), j.UpdatedAt, j.FinishedAt,
				g.State, g.LeaseToken, b2i(g.CancelRequested), j.LastClassification, j.LastError, j.Throttles)
		})
		r, err := q.exec(ctx, `UPDATE jobs SET attempt = v.column2, state = v.column3, due_at = v.column4, lease_token = v.column5,
			lease_expires_at = v.column6, worker_id = v.column7, cancel_requested = v.column8, updated_at = v.column9, finished_at = v.column10,
			last_classification = v.column14, last_error = v.column15, throttles = v.column16
			FROM `+from+` WHERE jobs.id = v.column1
			AND (v.column11 = '' OR (jobs.state = v.column11 AND jobs.lease_token = v.column12 AND jobs.cancel_requested = v.column13))`, args...)
		if err != nil {
			return err
		}
		if n, err := r.RowsAffected(); err != nil || n == int64(len(part)) {
			return err
		}
		// Fewer rows written: missing, or no longer as read.
		ids := make([]int64, len(part))
		for i, j := range part {
			ids[i] = j.ID
		}
		var found int64
		in, inArgs := "id IN ("+placeholders(len(ids))+")", int64Args(ids)
		if q.D.Arrays {
			in, inArgs = "id = ANY(CAST(? AS BIGINT[]))", []any{ids}
		}
		if err := q.row(ctx, `SELECT count(*) FROM jobs WHERE `+in, inArgs...).Scan(&found); err != nil {
			return q.D.Translate(err)
		}
		if found < int64(len(part)) {
			return fmt.Errorf("%d of %d jobs found: %w", found, len(part), store.ErrNotFound)
		}
		return fmt.Errorf("a job changed since it was read: %w", store.ErrConflict)
	})
	if err != nil {
		return err
	}
	return q.flowTouch(ctx, jobs)
}

// JobsPrune reads the ids of up to p.Limit jobs in a final state
// (succeeded, failed, exhausted, cancelled) that finished before
// p.FinishedBefore, in no particular order, counts their attempts' claims
// in claims_pruned, deletes their attempts and then the jobs, and returns
// how many jobs it deleted; it forgets pruned claims older than
// store.PrunedClaimsKeepMs before the cutoff.
func (q *Queries) JobsPrune(ctx context.Context, p *store.JobsPruneParams) (int64, error) {
	if _, err := q.exec(ctx, `DELETE FROM claims_pruned WHERE bucket_at < ?`, p.FinishedBefore-store.PrunedClaimsKeepMs); err != nil {
		return 0, err
	}
	rows, err := q.query(ctx, `SELECT id FROM jobs WHERE finished_at > 0 AND finished_at < ? AND state IN `+finishedStates+` LIMIT `+strconv.Itoa(p.Limit), p.FinishedBefore)
	ids, err := collect(q, rows, err, scanInt64)
	if err != nil || len(ids) == 0 {
		return 0, err
	}
	in := placeholders(len(ids))
	// Budgets count claims over a day or a month: keep the count of the
	// claims whose attempts go (store.PrunedClaimsCount).
	bucket := `claimed_at - claimed_at % ` + strconv.Itoa(store.PrunedClaimsBucketMs)
	if _, err := q.exec(ctx, `INSERT INTO claims_pruned (endpoint_id, flow_key, bucket_at, n)
		SELECT endpoint_id, flow_key, `+bucket+`, count(*) FROM attempts WHERE job_id IN (`+in+`) GROUP BY endpoint_id, flow_key, `+bucket+`
		ON CONFLICT (endpoint_id, flow_key, bucket_at) DO UPDATE SET n = claims_pruned.n + excluded.n`, int64Args(ids)...); err != nil {
		return 0, err
	}
	if _, err := q.exec(ctx, `DELETE FROM attempts WHERE job_id IN (`+in+`)`, int64Args(ids)...); err != nil {
		return 0, err
	}
	r, err := q.exec(ctx, `DELETE FROM jobs WHERE id IN (`+in+`)`, int64Args(ids)...)
	if err != nil {
		return 0, err
	}
	return r.RowsAffected()
}

// PrunedClaimsCount sums the endpoint's pruned claims since p.Since.
func (q *Queries) PrunedClaimsCount(ctx context.Context, p *store.PrunedClaimsCountParams) (int64, error) {
	var n sql.NullInt64
	err := q.row(ctx, `SELECT sum(n) FROM claims_pruned WHERE endpoint_id = ? AND bucket_at >= ?`, p.EndpointID, p.Since).Scan(&n)
	return n.Int64, q.D.Translate(err)
}

// FlowKeysPrunedClaims sums each key's pruned claims since since.
func (q *Queries) FlowKeysPrunedClaims(ctx context.Context, endpointID int64, keys []string, since int64) (map[string]int64, error) {
	out := map[string]int64{}
	if len(keys) == 0 {
		return out, nil
	}
	in, keyArgs := q.textIn("flow_key", keys)
	args := append(append([]any{endpointID}, keyArgs...), since)
	rows, err := q.query(ctx, `SELECT flow_key, sum(n) FROM claims_pruned WHERE endpoint_id = ? AND `+in+` AND bucket_at >= ? GROUP BY flow_key`, args...)
	err = each(q, rows, err, func(sc scanner) error {
		var k string
		var n int64
		err := sc.Scan(&k, &n)
		out[k] = n
		return err
	})
	return out, err
}
