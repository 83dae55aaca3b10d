package sqlstore

import (
	"context"
	"strings"

	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/wire"
)

const attemptCols = `job_id, number, endpoint_id, worker_id, lease_token, claimed_at, finished_at, outcome, classification, http_status,
	retry_after_ms, message, base_delay_ms, jitter_sample, min_delay_ms, max_delay_ms, selected_ms, next_due_at, counted,
	request_ms, response_headers, response_excerpt, throttle_free`

func scanAttempt(sc interface{ Scan(...any) error }) (*store.Attempt, error) {
	var a store.Attempt
	var counted, free int64
	err := sc.Scan(&a.JobID, &a.Number, &a.EndpointID, &a.WorkerID, &a.LeaseToken, &a.ClaimedAt, &a.FinishedAt, &a.Outcome, &a.Classification,
		&a.HTTPStatus, &a.RetryAfterMs, &a.Message, &a.BaseDelayMs, &a.JitterSample, &a.MinDelayMs, &a.MaxDelayMs, &a.SelectedMs, &a.NextDueAt, &counted,
		&a.RequestMs, &a.ResponseHeaders, &a.ResponseExcerpt, &free)
	a.Counted, a.ThrottleFree = counted != 0, free != 0
	return &a, err
}

// jobRunning tests that job j is running where j is looked up by id. It is
// written so that no index matches it: with "j.state = 'running'",
// PostgreSQL, misled by statistics sampled while every job was scheduled
// (running: next to none), scanned the partial index of running jobs for
// each id instead of the primary key, seconds per report batch.
const jobRunning = `(j.state || '') = 'running'`

// runningAttempt selects, from a running job j, its current attempt in
// the columns of attemptCols: an attempt is stored in the attempts table
// once, when it finishes; until then the job row's claim columns are the
// attempt. Writing the attempt at the claim and again at the report was a
// third of the burn-down's writes on PostgreSQL.
const runningAttempt = `SELECT j.id, j.attempt, j.endpoint_id, j.worker_id, j.lease_token, j.claimed_at, 0, '', '', 0, 0, '',
	CAST(0 AS DOUBLE PRECISION), CAST(0 AS DOUBLE PRECISION), 0, 0, 0, 0, 0, 0, '', '', 0 FROM jobs j`

// AttemptGet reads attempt p.Number of job p.JobID from the attempts
// table or, while the job is running that attempt, from the job's claim
// columns (runningAttempt); ErrNotFound when there is neither.
func (q *Queries) AttemptGet(ctx context.Context, p *store.AttemptGetParams) (*store.Attempt, error) {
	jobID, number := p.JobID, p.Number
	a, err := scanAttempt(q.row(ctx, `SELECT `+attemptCols+` FROM attempts WHERE job_id = ? AND number = ?
		UNION ALL `+runningAttempt+` WHERE j.id = ? AND j.attempt = ? AND `+jobRunning+``, jobID, number, jobID, number))
	return a, q.D.Translate(err)
}

// AttemptsByKeys reads the attempts with these keys, finished or running,
// with one statement per chunk of keys (inChunks), in no particular order;
// keys without an attempt are left out.
func (q *Queries) AttemptsByKeys(ctx context.Context, keys []store.AttemptKey) ([]store.Attempt, error) {
	var out []store.Attempt
	err := q.inChunks(len(keys), func(lo, hi int) error {
		part := keys[lo:hi]
		from, args := q.rowsFrom(len(part), []string{"BIGINT", "BIGINT"}, func(i int, dst []any) []any { return append(dst, part[i].JobID, part[i].Number) })
		rows, err := q.query(ctx, `WITH k AS (SELECT * FROM `+from+`)
			SELECT `+attemptColsOf("a")+` FROM k JOIN attempts a ON a.job_id = k.column1 AND a.number = k.column2
			UNION ALL `+runningAttempt+` JOIN k ON j.id = k.column1 AND j.attempt = k.column2 WHERE `+jobRunning, args...)
		as, err := collect(q, rows, err, deref(scanAttempt))
		out = append(out, as...)
		return err
	})
	return out, err
}

// attemptColsOf is attemptCols qualified by a table alias.
func attemptColsOf(alias string) string {
	cols := strings.Split(attemptCols, ",")
	for i, c := range cols {
		cols[i] = alias + "." + strings.TrimSpace(c)
	}
	return strings.Join(cols, ", ")
}

// AttemptsFinish stores each finished attempt with one INSERT ... SELECT
// per chunk. The claim columns come from the job row, which must still be
// running that attempt: the attempt is written once, as it ends (see
// runningAttempt).
func (q *Queries) AttemptsFinish(ctx context.Context, as []*store.Attempt) error {
	return q.inChunks(len(as), func(lo, hi int) error {
		part := as[lo:hi]
		from, args := q.rowsFrom(len(part), []string{"BIGINT", "BIGINT", "BIGINT", "TEXT", "TEXT", "BIGINT", "BIGINT", "TEXT",
			"DOUBLE PRECISION", "DOUBLE PRECISION", "BIGINT", "BIGINT", "BIGINT", "BIGINT", "BIGINT", "BIGINT", "TEXT", "TEXT", "BIGINT"}, func(i int, dst []any) []any {
			a := part[i]
			return append(dst, a.JobID, a.Number, a.FinishedAt, a.Outcome, a.Classification, a.HTTPStatus, a.RetryAfterMs, a.Message,
				a.BaseDelayMs, a.JitterSample, a.MinDelayMs, a.MaxDelayMs, a.SelectedMs, a.NextDueAt, b2i(a.Counted),
				a.RequestMs, a.ResponseHeaders, a.ResponseExcerpt, b2i(a.ThrottleFree))
		})
		jobs := `JOIN jobs j ON j.id = v.column1 AND j.attempt = v.column2 WHERE ` + jobRunning
		if q.D.Arrays {
			// Each row looks its job up by id; OFFSET 0 keeps PostgreSQL
			// from flattening the lookup into a join it may plan the other
			// way round (see jobRunning).
			jobs = `CROSS JOIN LATERAL (SELECT id, attempt, endpoint_id, worker_id, lease_token, claimed_at, due_at, flow_key FROM jobs j
				WHERE j.id = v.column1 AND j.attempt = v.column2 AND ` + jobRunning + ` OFFSET 0) AS j WHERE true`
		}
		// due_at: the job's due time while it runs is the one the attempt
		// was claimed at (history's due-to-claim lag).
		// flow_key: the per-key rate limit counts a key's claims here.
		r, err := q.exec(ctx, `INSERT INTO attempts (`+attemptCols+`, due_at, flow_key)
			SELECT j.id, j.attempt, j.endpoint_id, j.worker_id, j.lease_token, j.claimed_at, v.column3, v.column4, v.column5, v.column6,
			v.column7, v.column8, v.column9, v.column10, v.column11, v.column12, v.column13, v.column14, v.column15,
			v.column16, v.column17, v.column18, v.column19, j.due_at, j.flow_key
			FROM `+from+` `+jobs+`
			ON CONFLICT DO NOTHING`, args...) // an attempt finished already is not found, as one not started
		return q.expectN(r, err, len(part))
	})
}

// AttemptFinish is AttemptsFinish for one attempt.
func (q *Queries) AttemptFinish(ctx context.Context, a *store.Attempt) error {
	return q.AttemptsFinish(ctx, []*store.Attempt{a})
}

// AttemptList lists the job's finished attempts and the one it is
// running, by number (the running one last).
func (q *Queries) AttemptList(ctx context.Context, jobID int64) ([]store.Attempt, error) {
	rows, err := q.query(ctx, `SELECT `+attemptCols+` FROM attempts WHERE job_id = ?
		UNION ALL `+runningAttempt+` WHERE j.id = ? AND `+jobRunning+` ORDER BY 2`, jobID, jobID)
	return collect(q, rows, err, deref(scanAttempt))
}

// AttemptOutcomes counts the endpoint's attempts finished at or after
// p.Since, by outcome; running attempts are not in the attempts table and
// are not counted.
func (q *Queries) AttemptOutcomes(ctx context.Context, p *store.AttemptOutcomesParams) (map[wire.AttemptOutcome]int64, error) {
	rows, err := q.query(ctx, `SELECT outcome, count(*) FROM attempts WHERE endpoint_id = ? AND finished_at >= ? AND finished_at > 0 GROUP BY outcome`, p.EndpointID, p.Since)
	out := map[wire.AttemptOutcome]int64{}
	err = each(q, rows, err, func(sc scanner) error {
		var o wire.AttemptOutcome
		var n int64
		if err := sc.Scan(&o, &n); err != nil {
			return err
		}
		out[o] = n
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
