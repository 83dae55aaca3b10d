// Command pg-floor measures the least a durable job queue can do on a
// PostgreSQL server: how fast the server burns down N jobs when each job
// is only claimed and then marked done, two row updates and nothing else.
// It is the floor under any queue that records a claim and a completion
// durably, Ratchet and River alike: no attempt rows, no counters, no
// gates, no lease index, no payload decoding, one index for the due jobs.
// scripts/bench-river prints it beside River and Ratchet, so the ratios a
// target asks for can be checked against what the machine can do at all.
//
//	go run ./scripts/pg-floor --database URL [--jobs N] [--batch B] [--claimers C]
//
// Method: a table of its own (dropped at the end) with a primary key and a
// partial index on the due jobs (WHERE state = 0); N jobs inserted in
// batches of B (not timed); then C goroutines each loop: claim up to B due
// jobs with UPDATE … WHERE id IN (SELECT … ORDER BY due_at, id LIMIT B FOR
// UPDATE SKIP LOCKED) RETURNING id, payload, then mark them done with one
// UPDATE … WHERE id = ANY(…), each statement its own transaction at the
// server's durability. Timed from the first claim until every claimer
// found nothing left; every job is checked done.
//
// With --record the floor keeps, in the least space, what Ratchet keeps of
// each job: the claim also writes the indexes the gates and the rescue
// read (the running jobs by endpoint and claim time, the leases by expiry)
// and the one the lists by state read (project, state, id), and marking a
// batch done also inserts one attempt row per job, in the same statement,
// into a table indexed as Ratchet's attempts are (job and number; endpoint
// and claim time, for rate limits; endpoint and finish time, for
// circuits). The row stays narrow: no payload, policy, names or keys,
// which a job's body written once at enqueue would hold. It is the
// ceiling of any schema that keeps Ratchet's attempt history, lists and
// gates, however few its statements.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

func main() {
	url := flag.String("database", "", "PostgreSQL URL (required)")
	jobs := flag.Int("jobs", 100_000, "jobs to burn down")
	batch := flag.Int("batch", 1000, "most jobs per claim and per completion")
	claimers := flag.Int("claimers", 4, "concurrent claimers")
	record := flag.Bool("record", false, "also keep Ratchet's record: attempt rows and the gates', rescue's and lists' indexes")
	flag.Parse()
	if *url == "" || *jobs < 1 || *batch < 1 || *claimers < 1 {
		fmt.Fprintln(os.Stderr, "usage: pg-floor --database URL [--jobs N ≥ 1] [--batch B ≥ 1] [--claimers C ≥ 1]")
		os.Exit(2)
	}
	if err := run(context.Background(), *url, *jobs, *batch, *claimers, *record, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "pg-floor:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, url string, n, batch, claimers int, record bool, w io.Writer) error {
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		return err
	}
	defer pool.Close()
	table := fmt.Sprintf("floor_jobs_%d", os.Getpid())
	defer pool.Exec(context.Background(), `DROP TABLE IF EXISTS `+table+`, `+table+`_attempts`) //nolint:errcheck // best effort
	if err := create(ctx, pool, table, record); err != nil {
		return err
	}
	now := time.Now().UnixMilli()
	for left := n; left > 0; left -= batch {
		k := min(left, batch)
		if _, err := pool.Exec(ctx, `INSERT INTO `+table+` (due_at, payload) SELECT $1, '{}' FROM generate_series(1, $2)`, now, k); err != nil {
			return err
		}
	}
	if _, err := pool.Exec(ctx, `ANALYZE `+table); err != nil {
		return err
	}
	elapsed, err := burnDown(ctx, pool, table, batch, claimers, record)
	if err != nil {
		return err
	}
	var left int64
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM `+table+` WHERE state <> 2`).Scan(&left); err != nil {
		return err
	}
	if left != 0 {
		return fmt.Errorf("%d of %d jobs not done", left, n)
	}
	what := "claim and mark done only"
	if record {
		what = "claim, mark done and Ratchet's record"
		var attempts int64
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM `+table+`_attempts`).Scan(&attempts); err != nil {
			return err
		}
		if attempts != int64(n) {
			return fmt.Errorf("%d attempt rows for %d jobs", attempts, n)
		}
	}
	fmt.Fprintf(w, "floor: %d jobs in %s = %.0f jobs/s (%s; batch %d, %d claimers)\n",
		n, elapsed.Round(time.Millisecond), float64(n)/elapsed.Seconds(), what, batch, claimers)
	return nil
}

// create makes the floor's tables: the jobs and their due index, and with
// record the indexes and the attempts table of Ratchet's record.
func create(ctx context.Context, pool *pgxpool.Pool, table string, record bool) error {
	ddl := []string{
		`CREATE TABLE ` + table + ` (id bigserial PRIMARY KEY, state smallint NOT NULL DEFAULT 0, due_at bigint NOT NULL,
			lease_expires_at bigint NOT NULL DEFAULT 0, payload jsonb NOT NULL,
			project_id bigint NOT NULL DEFAULT 1, endpoint_id bigint NOT NULL DEFAULT 1, claimed_at bigint NOT NULL DEFAULT 0)`,
		`CREATE INDEX ` + table + `_due ON ` + table + ` (due_at, id) WHERE state = 0`,
	}
	if record {
		ddl = append(ddl,
			`CREATE INDEX `+table+`_running ON `+table+` (endpoint_id, claimed_at) WHERE state = 1`,
			`CREATE INDEX `+table+`_lease ON `+table+` (lease_expires_at) WHERE state = 1`,
			`CREATE INDEX `+table+`_state ON `+table+` (project_id, state, id)`,
			`CREATE TABLE `+table+`_attempts (job_id bigint NOT NULL, number bigint NOT NULL, endpoint_id bigint NOT NULL,
				claimed_at bigint NOT NULL, finished_at bigint NOT NULL, outcome smallint NOT NULL, PRIMARY KEY (job_id, number))`,
			`CREATE INDEX `+table+`_attempts_claims ON `+table+`_attempts (endpoint_id, claimed_at)`,
			`CREATE INDEX `+table+`_attempts_finished ON `+table+`_attempts (endpoint_id, finished_at)`)
	}
	for _, q := range ddl {
		if _, err := pool.Exec(ctx, q); err != nil {
			return err
		}
	}
	return nil
}

// burnDown runs the claimers over table until none finds a due job, and
// returns how long that took.
func burnDown(ctx context.Context, pool *pgxpool.Pool, table string, batch, claimers int, record bool) (time.Duration, error) {
	claim := `UPDATE ` + table + ` SET state = 1, lease_expires_at = $1, claimed_at = $2 WHERE id IN (SELECT id FROM ` + table +
		` WHERE state = 0 AND due_at <= $2 ORDER BY due_at, id LIMIT $3 FOR UPDATE SKIP LOCKED) RETURNING id, payload`
	done := `UPDATE ` + table + ` SET state = 2 WHERE id = ANY($1)`
	if record {
		done = `WITH d AS (UPDATE ` + table + ` SET state = 2 WHERE id = ANY($1) RETURNING id, endpoint_id, claimed_at)
			INSERT INTO ` + table + `_attempts SELECT id, 1, endpoint_id, claimed_at, (extract(epoch FROM clock_timestamp()) * 1000)::bigint, 1 FROM d`
	}
	var wg sync.WaitGroup
	errs := make(chan error, claimers)
	start := time.Now()
	for range claimers {
		wg.Go(func() {
			ids := make([]int64, 0, batch)
			for {
				rows, err := pool.Query(ctx, claim, time.Now().Add(time.Minute).UnixMilli(), time.Now().UnixMilli(), batch)
				if err != nil {
					errs <- err
					return
				}
				ids = ids[:0]
				var id int64
				var payload []byte
				_, err = pgx.ForEachRow(rows, []any{&id, &payload}, func() error { ids = append(ids, id); return nil })
				if err != nil {
					errs <- err
					return
				}
				if len(ids) == 0 {
					return
				}
				if _, err := pool.Exec(ctx, done, ids); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	close(errs)
	for err := range errs {
		return 0, err
	}
	return elapsed, nil
}
