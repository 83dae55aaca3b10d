package sqlstore

import (
	"context"
	"strconv"

	"github.com/getratchet/ratchet/internal/store"
)

// RunCreate stores the run, open when r.State is empty (and sets it so),
// and sets r.ID.
func (q *Queries) RunCreate(ctx context.Context, r *store.Run) error {
	if r.State == "" {
		r.State = "open"
	}
	id, err := q.insertID(ctx, `INSERT INTO runs (project_id, name, state, created_at) VALUES (?, ?, ?, ?)`, r.ProjectID, r.Name, r.State, r.CreatedAt)
	r.ID = id
	return err
}

// RunGetInProject reads the project's run p.ID; ErrNotFound when the
// project has no such run.
func (q *Queries) RunGetInProject(ctx context.Context, p *store.RunGetInProjectParams) (*store.Run, error) {
	var r store.Run
	err := q.row(ctx, `SELECT id, project_id, name, state, created_at, finished_at FROM runs WHERE project_id = ? AND id = ?`, p.ProjectID, p.ID).
		Scan(&r.ID, &r.ProjectID, &r.Name, &r.State, &r.CreatedAt, &r.FinishedAt)
	return &r, q.D.Translate(err)
}

// RunFinish marks the project's open run p.ID finished at p.Now;
// ErrNotFound when the project has no such open run.
func (q *Queries) RunFinish(ctx context.Context, p *store.RunFinishParams) error {
	return q.expectOne(q.exec(ctx, `UPDATE runs SET state = 'finished', finished_at = ? WHERE project_id = ? AND id = ? AND state = 'open'`, p.Now, p.ProjectID, p.ID))
}

// RunList lists the project's runs newest first, below p.AfterID when set.
func (q *Queries) RunList(ctx context.Context, p *store.RunListParams) ([]store.Run, error) {
	where, args := `project_id = ?`, []any{p.ProjectID}
	if p.AfterID > 0 {
		where += ` AND id < ?`
		args = append(args, p.AfterID)
	}
	limit := p.Limit
	if limit <= 0 {
		limit = 100
	}
	rows, err := q.query(ctx, `SELECT id, project_id, name, state, created_at, finished_at FROM runs WHERE `+where+
		` ORDER BY id DESC LIMIT `+strconv.Itoa(limit), args...)
	return collect(q, rows, err, func(sc scanner) (store.Run, error) {
		var r store.Run
		err := sc.Scan(&r.ID, &r.ProjectID, &r.Name, &r.State, &r.CreatedAt, &r.FinishedAt)
		return r, err
	})
}
