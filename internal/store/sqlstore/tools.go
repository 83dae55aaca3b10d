package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"

	"github.com/getratchet/ratchet/internal/store"
)

const toolCols = `id, project_id, name, version, endpoint_id, description, schema, timeout_ms, retry_policy, created_at, delivery, delivery_secret, flow_key_from`

func scanTool(sc interface{ Scan(...any) error }) (*store.Tool, error) {
	var t store.Tool
	var schema, policy, delivery sql.NullString
	var timeout sql.NullInt64
	if err := sc.Scan(&t.ID, &t.ProjectID, &t.Name, &t.Version, &t.EndpointID, &t.Description, &schema, &timeout, &policy, &t.CreatedAt,
		&delivery, &t.DeliverySecret, &t.FlowKeyFrom); err != nil {
		return nil, err
	}
	if delivery.Valid {
		t.Delivery = json.RawMessage(delivery.String)
	}
	if schema.Valid {
		t.Schema = json.RawMessage(schema.String)
	}
	if policy.Valid {
		t.RetryPolicy = json.RawMessage(policy.String)
	}
	if timeout.Valid {
		v := timeout.Int64
		t.TimeoutMs = &v
	}
	return &t, nil
}

// ToolCreate stores the tool and sets t.ID; an empty or null schema,
// retry policy or delivery is stored as NULL. ErrConflict when the
// project has the tool's name@version already.
func (q *Queries) ToolCreate(ctx context.Context, t *store.Tool) error {
	id, err := q.insertID(ctx, `INSERT INTO tools (project_id, name, version, endpoint_id, description, schema, timeout_ms, retry_policy, created_at,
		delivery, delivery_secret, flow_key_from) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, t.ProjectID, t.Name, t.Version, t.EndpointID, t.Description,
		nullJSON(t.Schema), nullInt(t.TimeoutMs), nullJSON(t.RetryPolicy), t.CreatedAt, nullJSON(t.Delivery), t.DeliverySecret, t.FlowKeyFrom)
	t.ID = id
	return err
}

// ToolGetInProject reads the project's tool p.Name@p.Version;
// ErrNotFound when there is none.
func (q *Queries) ToolGetInProject(ctx context.Context, p *store.ToolGetInProjectParams) (*store.Tool, error) {
	t, err := scanTool(q.row(ctx, `SELECT `+toolCols+` FROM tools WHERE project_id = ? AND name = ? AND version = ?`, p.ProjectID, p.Name, p.Version))
	return t, q.D.Translate(err)
}

// ToolGetAnyProject reads tool id of any project; ErrNotFound when there
// is none.
func (q *Queries) ToolGetAnyProject(ctx context.Context, id int64) (*store.Tool, error) {
	t, err := scanTool(q.row(ctx, `SELECT `+toolCols+` FROM tools WHERE id = ?`, id))
	return t, q.D.Translate(err)
}

// ToolList lists the project's tools by name, then version.
func (q *Queries) ToolList(ctx context.Context, projectID int64) ([]store.Tool, error) {
	return q.tools(q.query(ctx, `SELECT `+toolCols+` FROM tools WHERE project_id = ? ORDER BY name, version`, projectID))
}

// ToolListDelivery lists the tools of every project that have a delivery
// target, by id.
func (q *Queries) ToolListDelivery(ctx context.Context) ([]store.Tool, error) {
	return q.tools(q.query(ctx, `SELECT `+toolCols+` FROM tools WHERE delivery IS NOT NULL ORDER BY id`))
}

func (q *Queries) tools(rows *sql.Rows, err error) ([]store.Tool, error) {
	return collect(q, rows, err, deref(scanTool))
}
