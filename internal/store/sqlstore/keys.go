package sqlstore

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/getratchet/ratchet/internal/store"
)

// KeyCreate stores the key, with its tool allowlist as a JSON array, and
// sets k.ID; ErrConflict when a key with the same hash exists.
func (q *Queries) KeyCreate(ctx context.Context, k *store.APIKey) error {
	tools, _ := json.Marshal(orEmpty(k.Tools))
	id, err := q.insertID(ctx, `INSERT INTO api_keys (project_id, name, scope, hash, prefix, tools, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		k.ProjectID, k.Name, k.Scope, k.Hash, k.Prefix, string(tools), k.CreatedAt)
	k.ID = id
	return err
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

const keyCols = `id, project_id, name, scope, hash, prefix, tools, created_at, revoked_at`

func scanKey(sc interface{ Scan(...any) error }) (*store.APIKey, error) {
	var k store.APIKey
	var tools string
	if err := sc.Scan(&k.ID, &k.ProjectID, &k.Name, &k.Scope, &k.Hash, &k.Prefix, &tools, &k.CreatedAt, &k.RevokedAt); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(tools), &k.Tools); err != nil {
		return nil, fmt.Errorf("key %d tools: %w", k.ID, err)
	}
	return &k, nil
}

// KeyByHash reads the key of any project whose secret has this hash,
// revoked or not (the caller checks RevokedAt); ErrNotFound when there is
// none.
func (q *Queries) KeyByHash(ctx context.Context, hash string) (*store.APIKey, error) {
	k, err := scanKey(q.row(ctx, `SELECT `+keyCols+` FROM api_keys WHERE hash = ?`, hash))
	return k, q.D.Translate(err)
}

// KeyList lists the project's keys, revoked ones included, by id.
func (q *Queries) KeyList(ctx context.Context, projectID int64) ([]store.APIKey, error) {
	rows, err := q.query(ctx, `SELECT `+keyCols+` FROM api_keys WHERE project_id = ? ORDER BY id`, projectID)
	return collect(q, rows, err, deref(scanKey))
}

// KeyRevoke sets RevokedAt of the project's key p.ID to p.Now;
// ErrNotFound when the project has no such key or it is revoked already.
func (q *Queries) KeyRevoke(ctx context.Context, p *store.KeyRevokeParams) error {
	return q.expectOne(q.exec(ctx, `UPDATE api_keys SET revoked_at = ? WHERE project_id = ? AND id = ? AND revoked_at = 0`, p.Now, p.ProjectID, p.ID))
}
