package sqlstore

import (
	"context"

	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/wire"
)

// ProjectCreate stores the project and sets p.ID.
func (q *Queries) ProjectCreate(ctx context.Context, p *store.Project) error {
	id, err := q.insertID(ctx, `INSERT INTO projects (name, plan, created_at) VALUES (?, ?, ?)`, p.Name, p.Plan, p.CreatedAt)
	p.ID = id
	return err
}

// ProjectGet reads project id; ErrNotFound when there is none.
func (q *Queries) ProjectGet(ctx context.Context, id int64) (*store.Project, error) {
	var p store.Project
	err := q.row(ctx, `SELECT id, name, plan, created_at FROM projects WHERE id = ?`, id).Scan(&p.ID, &p.Name, &p.Plan, &p.CreatedAt)
	return &p, q.D.Translate(err)
}

// ProjectCount counts projects. With row locking (PostgreSQL) it first locks
// the projects table against inserts until the transaction ends: Bootstrap
// decides on this count, and under READ COMMITTED nodes starting together
// would otherwise all see 0 and all create a first project. SHARE ROW
// EXCLUSIVE conflicts with itself and with INSERT, not with plain reads.
func (q *Queries) ProjectCount(ctx context.Context) (int64, error) {
	if q.D.Locking {
		if _, err := q.exec(ctx, `LOCK TABLE projects IN SHARE ROW EXCLUSIVE MODE`); err != nil {
			return 0, err
		}
	}
	var n int64
	err := q.row(ctx, `SELECT count(*) FROM projects`).Scan(&n)
	return n, q.D.Translate(err)
}

// ProjectSetPlan changes the project's plan; ErrNotFound when there is no
// project id.
func (q *Queries) ProjectSetPlan(ctx context.Context, id int64, plan wire.Plan) error {
	return q.expectOne(q.exec(ctx, `UPDATE projects SET plan = ? WHERE id = ?`, plan, id))
}

// ProjectNoteWrite counts one operator write of the project.
func (q *Queries) ProjectNoteWrite(ctx context.Context, id int64) error {
	return q.expectOne(q.exec(ctx, `UPDATE projects SET writes = writes + 1 WHERE id = ?`, id))
}

// ProjectWrites reads the project's count of operator writes.
func (q *Queries) ProjectWrites(ctx context.Context, id int64) (int64, error) {
	var n int64
	err := q.row(ctx, `SELECT writes FROM projects WHERE id = ?`, id).Scan(&n)
	return n, q.D.Translate(err)
}
