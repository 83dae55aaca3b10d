package sqlstore

import (
	"context"
	"strconv"

	"github.com/getratchet/ratchet/internal/store"
)

// AuditInsert stores the entry and sets a.ID.
func (q *Queries) AuditInsert(ctx context.Context, a *store.AuditEntry) error {
	id, err := q.insertID(ctx, `INSERT INTO audit_log (project_id, at, actor, key_prefix, action, target, detail) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		a.ProjectID, a.At, a.Actor, a.KeyPrefix, a.Action, a.Target, a.Detail)
	a.ID = id
	return err
}

// AuditList reads a page of the project's audit log, newest first (by id),
// only entries with target p.Target when it is set and ids below
// p.AfterID when it is set; at most p.Limit entries, 100 when it is 0 or
// less.
func (q *Queries) AuditList(ctx context.Context, p *store.AuditListParams) ([]store.AuditEntry, error) {
	where, args := `project_id = ?`, []any{p.ProjectID}
	if p.Target != "" {
		where += ` AND target = ?`
		args = append(args, p.Target)
	}
	if p.AfterID > 0 {
		where += ` AND id < ?`
		args = append(args, p.AfterID)
	}
	limit := p.Limit
	if limit <= 0 {
		limit = 100
	}
	rows, err := q.query(ctx, `SELECT id, project_id, at, actor, key_prefix, action, target, detail FROM audit_log WHERE `+where+
		` ORDER BY id DESC LIMIT `+strconv.Itoa(limit), args...)
	return collect(q, rows, err, func(sc scanner) (store.AuditEntry, error) {
		var a store.AuditEntry
		err := sc.Scan(&a.ID, &a.ProjectID, &a.At, &a.Actor, &a.KeyPrefix, &a.Action, &a.Target, &a.Detail)
		return a, err
	})
}
