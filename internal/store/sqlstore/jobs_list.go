package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"strconv"
	"strings"

	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/wire"
)

func (q *Queries) jobWhere(f store.JobFilter) (string, []any) {
	where := []string{"project_id = ?"}
	args := []any{f.ProjectID}
	if len(f.States) > 0 {
		where = append(where, "state IN ("+placeholders(len(f.States))+")")
		for _, s := range f.States {
			args = append(args, s)
		}
	}
	if f.Tool != "" {
		where = append(where, "tool = ?")
		args = append(args, f.Tool)
		if f.Version != "" {
			where = append(where, "version = ?")
			args = append(args, f.Version)
		}
	}
	if f.EndpointID != 0 {
		where = append(where, "endpoint_id = ?")
		args = append(args, f.EndpointID)
	}
	if f.RunID != 0 {
		// "run_id <> 0" lets both drivers use the partial index jobs_run
		// (migration 0006); "+project_id" keeps SQLite from walking
		// jobs_project instead (SQLite's unary plus hides a column from
		// the planner; PostgreSQL reads it as the column).
		where[0] = "+project_id = ?"
		where = append(where, "run_id = ? AND run_id <> 0")
		args = append(args, f.RunID)
	}
	if f.FlowKey != "" {
		// "flow_key <> ''" lets both drivers use the partial index
		// jobs_flow (migration 0009): (project_id, flow_key, id), so
		// project_id stays visible to the planner here.
		where = append(where, "flow_key = ? AND flow_key <> ''")
		args = append(args, f.FlowKey)
	}
	if f.CreatedAfter != 0 {
		where = append(where, "created_at >= ?")
		args = append(args, f.CreatedAfter)
	}
	if f.CreatedBefore != 0 {
		where = append(where, "created_at < ?")
		args = append(args, f.CreatedBefore)
	}
	if f.DueBefore != 0 {
		where = append(where, "due_at <= ?")
		args = append(args, f.DueBefore)
	}
	if f.Sort.ByFinish() {
		// The predicate of jobs_failed and jobs_failed_project, as the
		// same text, so both planners may read them (see jobOrder).
		where = append(where, "state IN "+unsuccessfulStates)
	}
	if f.AfterID != 0 {
		// A row value: the page continues strictly after the last key,
		// so ties of finished_at are split by id and no job is skipped
		// or read twice. Both planners turn it into a range of the
		// index (SQLite since 3.15; PostgreSQL as an index condition).
		cmp := map[bool]string{true: ">", false: "<"}[f.Sort.Ascending()]
		if f.Sort.ByFinish() {
			where = append(where, "(finished_at, id) "+cmp+" (?, ?)")
			args = append(args, f.AfterFinishedAt, f.AfterID)
		} else {
			where = append(where, "id "+cmp+" ?")
			args = append(args, f.AfterID)
		}
	}
	if f.Q != "" {
		if isTextSearch(f.Q) {
			s, sargs := textSearch(f.Q)
			where = append(where, s)
			args = append(args, sargs...)
		} else {
			id, _ := strconv.ParseInt(f.Q, 10, 64)
			where = append(where, "id = ?")
			args = append(args, id)
		}
	}
	return strings.Join(where, " AND "), args
}

// isTextSearch says whether search text q is text rather than a job id
// (digits only).
func isTextSearch(q string) bool {
	id, err := strconv.ParseInt(q, 10, 64)
	return q != "" && (err != nil || id <= 0 || strings.Trim(q, "0123456789") != "")
}

// textSearch is the condition of a text search: an exact idempotency key,
// tool or endpoint name, or a substring of the payload or the last error.
// lower() on both sides: SQLite's folds ASCII only, PostgreSQL's every
// letter; either way a pattern and a column fold alike.
func textSearch(q string) (string, []any) {
	like := "%" + likeEscaper.Replace(q) + "%"
	return `(idempotency_key = ? OR tool = ? OR endpoint = ? OR lower(payload) LIKE lower(CAST(? AS TEXT)) ESCAPE '\' OR lower(last_error) LIKE lower(CAST(? AS TEXT)) ESCAPE '\')`,
		[]any{q, q, q, like, like}
}

// likeEscaper escapes LIKE's wildcards so search text matches literally.
var likeEscaper = strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)

// jobOrder is the ORDER BY of s. Which index serves each order, on both
// drivers, checked by hand with EXPLAIN QUERY PLAN (SQLite 3.54 through
// modernc.org/sqlite) and EXPLAIN (PostgreSQL, 300,000 jobs, generic plan
// too) on the queries JobList writes (the wire.JobSort comment promises
// it):
//
//   - id_desc, id_asc: jobs_project (project_id, id), read backwards or
//     forwards; with one state jobs_project_state (project_id, state, id);
//     with a run jobs_run (run_id, id); with a flow key jobs_flow
//     (project_id, flow_key, id), as before lists could be sorted.
//     SQLite: "SEARCH jobs USING INDEX jobs_project (project_id=? AND
//     id>?)"; PostgreSQL may prefer the primary key: "Index Scan using
//     jobs_pkey on jobs, Index Cond: (id > 1234), Filter: ((project_id =
//     1) AND (state = 'failed'))", exactly as it already did for id_desc.
//   - finished_desc, finished_asc: jobs_failed_project (project_id,
//     finished_at, id) WHERE state IN ('failed', 'exhausted'), and with an
//     endpoint jobs_failed (project_id, endpoint_id, finished_at, id), both
//     of migration 0012. SQLite: "SEARCH jobs USING INDEX
//     jobs_failed_project (project_id=? AND finished_at<?)" and "SEARCH
//     jobs USING INDEX jobs_failed (project_id=? AND endpoint_id=? AND
//     finished_at<?)"; PostgreSQL: "Index Scan Backward using
//     jobs_failed_project on jobs, Index Cond: ((project_id = $1) AND
//     (ROW(finished_at, id) < ROW($3, $4)))" and "Index Scan Backward using
//     jobs_failed on jobs, Index Cond: ((project_id = 1) AND (endpoint_id =
//     3) AND (ROW(finished_at, id) < ROW(500000, 1234)))". No sort step:
//     a page reads its rows. The indexes' predicate is why these orders
//     select only failed and exhausted jobs: jobWhere repeats it as the
//     same text (SQLite matches a partial index's WHERE by its terms), and
//     the API refuses the finished orders with any other state filter, as
//     jobs of other states would all be read and sorted for every page.
//
// finished_at is NOT NULL DEFAULT 0 on both drivers and set when a job
// fails or is exhausted, so there is no NULL to place; a 0 would still
// sort (last when descending) and page correctly, since the cursor
// compares plain integers.
//
// The other filters are checked row by row along the chosen index: a tool
// or a created window filters the failed jobs until a page fills, as a
// tool filters jobs_project for the id orders. A run or a flow key is read
// through jobs_run or jobs_flow and sorted ("USE TEMP B-TREE FOR ORDER
// BY"): the cost is that run's or key's jobs, which the id orders read
// too when they are few. A text search's window (ScanLimit rows) is read
// along the index on SQLite; PostgreSQL reads a selection smaller than
// the window through jobs_project_state and sorts it, when it estimates
// that cheaper. Either way at most the window or the selection is read.
//
// Soonest due first (due_at, id) is not offered: no index orders a
// project's scheduled jobs by due time (jobs_due and jobs_flow_due lead
// with endpoint_id, jobs_endpoint_state_due has no id to break ties), and
// one more index over scheduled jobs would be written on every enqueue
// and claim, the hottest writes.
func jobOrder(s wire.JobSort) string {
	switch s {
	case wire.SortIDAsc:
		return "id ASC"
	case wire.SortFinishedDesc:
		return "finished_at DESC, id DESC"
	case wire.SortFinishedAsc:
		return "finished_at ASC, id ASC"
	default:
		return "id DESC"
	}
}

// JobList reads a page of the jobs f selects in f.Sort's order, at most
// f.Limit, 100 when it is 0 or less; a text search with a f.ScanLimit
// searches only the window jobsFrom describes.
func (q *Queries) JobList(ctx context.Context, f store.JobFilter) ([]store.Job, error) {
	limit := f.Limit
	if limit <= 0 {
		limit = 100
	}
	from, args := q.jobsFrom(f)
	return q.scanJobs(q.query(ctx, `SELECT `+jobCols+` FROM `+from+` ORDER BY `+jobOrder(f.Sort)+` LIMIT `+strconv.Itoa(limit), args...))
}

// jobsFrom is the FROM and WHERE of the jobs f selects. With a ScanLimit
// and a text search it is a window: the first ScanLimit jobs of the other
// filters in f.Sort's order (after the cursor), read in that order and
// searched as they stream, so a search that finds little reads ScanLimit
// rows, not the table.
func (q *Queries) jobsFrom(f store.JobFilter) (string, []any) {
	if f.ScanLimit <= 0 || !isTextSearch(f.Q) {
		where, args := q.jobWhere(f)
		return "jobs WHERE " + where, args
	}
	text := f.Q
	f.Q = ""
	where, args := q.jobWhere(f)
	search, sargs := textSearch(text)
	return `(SELECT ` + jobCols + ` FROM jobs WHERE ` + where + ` ORDER BY ` + jobOrder(f.Sort) + ` LIMIT ` + strconv.Itoa(f.ScanLimit) + `) AS w WHERE ` + search,
		append(args, sargs...)
}

// JobScanEnd is the key of the f.ScanLimit-th job in f.Sort's order
// matching f but its text (after the cursor): where a bounded search's
// window ends. The zero key when fewer jobs match, and when f has no
// ScanLimit or no text search.
func (q *Queries) JobScanEnd(ctx context.Context, f store.JobFilter) (store.JobKey, error) {
	if f.ScanLimit <= 0 || !isTextSearch(f.Q) {
		return store.JobKey{}, nil
	}
	f.Q = ""
	where, args := q.jobWhere(f)
	var k store.JobKey
	err := q.row(ctx, `SELECT id, finished_at FROM jobs WHERE `+where+` ORDER BY `+jobOrder(f.Sort)+` LIMIT 1 OFFSET `+strconv.Itoa(f.ScanLimit-1), args...).Scan(&k.ID, &k.FinishedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return store.JobKey{}, nil
	}
	if !f.Sort.ByFinish() {
		k.FinishedAt = 0
	}
	return k, q.D.Translate(err)
}

// JobCount counts the jobs f selects by reading them, within the same
// window as JobList; f.Limit is ignored.
func (q *Queries) JobCount(ctx context.Context, f store.JobFilter) (int64, error) {
	from, args := q.jobsFrom(f)
	var n int64
	err := q.row(ctx, `SELECT count(*) FROM `+from, args...).Scan(&n)
	return n, q.D.Translate(err)
}

// JobCountsByState sums the counters (job_counts, kept by triggers; see
// migration 0006) over endpoints and slots.
func (q *Queries) JobCountsByState(ctx context.Context, projectID int64) (map[wire.JobState]int64, error) {
	s := `SELECT state, CAST(sum(n) AS BIGINT) FROM job_counts GROUP BY state`
	var args []any
	if projectID != 0 {
		s = `SELECT state, CAST(sum(n) AS BIGINT) FROM job_counts WHERE project_id = ? GROUP BY state`
		args = []any{projectID}
	}
	return q.stateCounts(q.query(ctx, s, args...))
}

func (q *Queries) stateCounts(rows *sql.Rows, err error) (map[wire.JobState]int64, error) {
	out := map[wire.JobState]int64{}
	err = each(q, rows, err, func(sc scanner) error {
		var st wire.JobState
		var n int64
		if err := sc.Scan(&st, &n); err != nil {
			return err
		}
		if n != 0 {
			out[st] = n
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// JobCountsByEndpoint sums the counters' tools and slots per endpoint and
// state.
func (q *Queries) JobCountsByEndpoint(ctx context.Context, p *store.JobCountsByEndpointParams) ([]store.JobStateCount, error) {
	s, args := `SELECT c.endpoint_id, c.state, CAST(sum(c.n) AS BIGINT) FROM job_counts c`, []any{}
	if p.Tool != "" {
		s += ` JOIN tools t ON t.id = c.tool_id AND t.name = ?`
		args = append(args, p.Tool)
		if p.Version != "" {
			s += ` AND t.version = ?`
			args = append(args, p.Version)
		}
	}
	s += ` WHERE c.project_id = ?`
	args = append(args, p.ProjectID)
	if p.EndpointID != 0 {
		s += ` AND c.endpoint_id = ?`
		args = append(args, p.EndpointID)
	}
	rows, err := q.query(ctx, s+` GROUP BY c.endpoint_id, c.state ORDER BY c.endpoint_id, c.state`, args...)
	counts, err := collect(q, rows, err, func(sc scanner) (store.JobStateCount, error) {
		var c store.JobStateCount
		err := sc.Scan(&c.EndpointID, &c.State, &c.Count)
		return c, err
	})
	if err != nil {
		return nil, err
	}
	var out []store.JobStateCount
	for _, c := range counts {
		if c.Count != 0 {
			out = append(out, c)
		}
	}
	return out, nil
}

// JobCountGroupByState counts the jobs f selects per state by reading
// them (count(*) GROUP BY state), ignoring f.AfterID and f.Limit; states
// without jobs are left out.
func (q *Queries) JobCountGroupByState(ctx context.Context, f store.JobFilter) (map[wire.JobState]int64, error) {
	f.AfterID = 0
	from, args := q.jobsFrom(f)
	return q.stateCounts(q.query(ctx, `SELECT state, count(*) FROM `+from+` GROUP BY state`, args...))
}
