package sqlstore

import (
	"context"
	"fmt"
	"strconv"

	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/wire"
)

// unsuccessfulStates is the SQL list ('failed', 'exhausted'), the
// predicate of the partial indexes of migration 0012, which the queries
// must repeat as the same text.
var unsuccessfulStates = sqlList(wire.JobStatesWhere(wire.JobState.Unsuccessful))

// JobsFailed reads failed and exhausted jobs, latest failure first,
// through the partial indexes jobs_failed (one endpoint) and
// jobs_failed_project (migration 0012), whose predicate the query repeats
// literally so that both planners may use them; the replay check reads
// jobs_replay_of.
func (q *Queries) JobsFailed(ctx context.Context, p *store.JobsFailedParams) ([]store.FailedJob, error) {
	if p.Limit <= 0 {
		return nil, fmt.Errorf("jobs failed: limit %d, want above 0", p.Limit)
	}
	where, args := `j.project_id = ? AND j.state IN `+unsuccessfulStates, []any{p.ProjectID}
	if p.EndpointID != 0 {
		where += ` AND j.endpoint_id = ?`
		args = append(args, p.EndpointID)
	}
	if p.State != "" {
		where += ` AND j.state = ?`
		args = append(args, p.State)
	}
	if p.FinishedFrom != 0 {
		where += ` AND j.finished_at >= ?`
		args = append(args, p.FinishedFrom)
	}
	if p.FinishedBefore != 0 {
		where += ` AND j.finished_at < ?`
		args = append(args, p.FinishedBefore)
	}
	rows, err := q.query(ctx, `SELECT j.id, j.endpoint_id, j.endpoint, j.state, j.last_classification, j.last_error, j.finished_at,
		CASE WHEN EXISTS (SELECT 1 FROM jobs r WHERE r.replay_of = j.id AND r.replay_of <> 0) THEN 1 ELSE 0 END
		FROM jobs j WHERE `+where+` ORDER BY j.finished_at DESC, j.id DESC LIMIT `+strconv.Itoa(p.Limit), args...)
	return collect(q, rows, err, func(sc scanner) (store.FailedJob, error) {
		var f store.FailedJob
		var replayed int64
		err := sc.Scan(&f.ID, &f.EndpointID, &f.Endpoint, &f.State, &f.Classification, &f.Message, &f.FinishedAt, &replayed)
		f.Replayed = replayed != 0
		return f, err
	})
}

// JobReplayedBy reads jobs_replay_of (migration 0012).
func (q *Queries) JobReplayedBy(ctx context.Context, projectID, id int64) (int64, error) {
	var by int64
	err := q.row(ctx, `SELECT COALESCE(MAX(id), 0) FROM jobs WHERE replay_of = ? AND replay_of <> 0 AND project_id = ?`, id, projectID).Scan(&by)
	return by, q.D.Translate(err)
}
