package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"

	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/wire"
)

const endpointCols = `id, project_id, name, policy, default_timeout_ms, max_concurrent, rate_limit_per_minute, circuit_threshold, circuit_open_ms,
	version, created_at, updated_at, circuit_state, circuit_failures, circuit_opened_at, circuit_probe_job, circuit_opened_by,
	paused_at, paused_by, paused_reason, key_max_concurrent, key_rate_limit_per_minute, key_ordered, fair_keys`

func scanEndpoint(sc interface{ Scan(...any) error }) (*store.Endpoint, error) {
	var e store.Endpoint
	var policy string
	var rate, keyMax, keyRate sql.NullInt64
	var ordered, fair int64
	if err := sc.Scan(&e.ID, &e.ProjectID, &e.Name, &policy, &e.DefaultTimeoutMs, &e.MaxConcurrent, &rate, &e.CircuitThreshold, &e.CircuitOpenMs,
		&e.Version, &e.CreatedAt, &e.UpdatedAt, &e.CircuitState, &e.CircuitFailures, &e.CircuitOpenedAt, &e.CircuitProbeJob, &e.CircuitOpenedBy,
		&e.PausedAt, &e.PausedBy, &e.PausedReason, &keyMax, &keyRate, &ordered, &fair); err != nil {
		return nil, err
	}
	e.KeyMaxConcurrent, e.KeyRateLimitPerMinute = ptrOf(keyMax), ptrOf(keyRate)
	e.KeyOrdered, e.FairKeys = ordered != 0, fair != 0
	e.Policy = json.RawMessage(policy)
	e.RateLimitPerMinute = ptrOf(rate)
	return &e, nil
}

// EndpointCreate stores the endpoint and sets e.ID, and sets an empty
// e.CircuitState to closed first; ErrConflict when the project has an
// endpoint of that name.
func (q *Queries) EndpointCreate(ctx context.Context, e *store.Endpoint) error {
	if e.CircuitState == "" {
		e.CircuitState = wire.CircuitClosed
	}
	id, err := q.insertID(ctx, `INSERT INTO endpoints (project_id, name, policy, default_timeout_ms, max_concurrent, rate_limit_per_minute,
		circuit_threshold, circuit_open_ms, version, created_at, updated_at, circuit_state, key_max_concurrent, key_rate_limit_per_minute, key_ordered, fair_keys)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		e.ProjectID, e.Name, string(e.Policy), e.DefaultTimeoutMs, e.MaxConcurrent, nullInt(e.RateLimitPerMinute),
		e.CircuitThreshold, e.CircuitOpenMs, e.Version, e.CreatedAt, e.UpdatedAt, e.CircuitState,
		nullInt(e.KeyMaxConcurrent), nullInt(e.KeyRateLimitPerMinute), b2i(e.KeyOrdered), b2i(e.FairKeys))
	e.ID = id
	return err
}

// EndpointGetInProject reads the project's endpoint named p.Name;
// ErrNotFound when there is none.
func (q *Queries) EndpointGetInProject(ctx context.Context, p *store.EndpointGetInProjectParams) (*store.Endpoint, error) {
	e, err := scanEndpoint(q.row(ctx, `SELECT `+endpointCols+` FROM endpoints WHERE project_id = ? AND name = ?`, p.ProjectID, p.Name))
	return e, q.D.Translate(err)
}

// EndpointGetAnyProject reads endpoint p.ID of any project; with p.Lock
// and Locking (PostgreSQL) it locks the row FOR UPDATE until the
// transaction ends. ErrNotFound when there is none.
func (q *Queries) EndpointGetAnyProject(ctx context.Context, p *store.EndpointGetAnyProjectParams) (*store.Endpoint, error) {
	s := `SELECT ` + endpointCols + ` FROM endpoints WHERE id = ?`
	if p.Lock {
		s += q.forUpdate()
	}
	e, err := scanEndpoint(q.row(ctx, s, p.ID))
	return e, q.D.Translate(err)
}

// EndpointList lists the project's endpoints by name; projectID 0 lists
// every project's, by project then name.
func (q *Queries) EndpointList(ctx context.Context, projectID int64) ([]store.Endpoint, error) {
	s, args := `SELECT `+endpointCols+` FROM endpoints WHERE project_id = ? ORDER BY name`, []any{projectID}
	if projectID == 0 { // every project: metrics
		s, args = `SELECT `+endpointCols+` FROM endpoints ORDER BY project_id, name`, nil
	}
	rows, err := q.query(ctx, s, args...)
	return collect(q, rows, err, deref(scanEndpoint))
}

// EndpointUpdatePolicy writes the policy fields and adds one to the
// version in one UPDATE that matches only while the stored version is
// p.ExpectedVersion, then sets p.Endpoint.Version; ErrConflict when
// nothing matched (the version moved on, or the endpoint is missing).
func (q *Queries) EndpointUpdatePolicy(ctx context.Context, p *store.EndpointUpdatePolicyParams) error {
	e, expectedVersion := p.Endpoint, p.ExpectedVersion
	r, err := q.exec(ctx, `UPDATE endpoints SET policy = ?, default_timeout_ms = ?, max_concurrent = ?, rate_limit_per_minute = ?,
		circuit_threshold = ?, circuit_open_ms = ?, key_max_concurrent = ?, key_rate_limit_per_minute = ?, key_ordered = ?, fair_keys = ?,
		version = version + 1, updated_at = ? WHERE id = ? AND version = ?`,
		string(e.Policy), e.DefaultTimeoutMs, e.MaxConcurrent, nullInt(e.RateLimitPerMinute), e.CircuitThreshold, e.CircuitOpenMs,
		nullInt(e.KeyMaxConcurrent), nullInt(e.KeyRateLimitPerMinute), b2i(e.KeyOrdered), b2i(e.FairKeys),
		e.UpdatedAt, e.ID, expectedVersion)
	if err := q.expectOne(r, err); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return store.ErrConflict
		}
		return err
	}
	e.Version = expectedVersion + 1
	return nil
}

// EndpointUpdateCircuit writes e's circuit columns (state, failures,
// opened at, probe job, opened by); ErrNotFound when there is no
// endpoint e.ID.
func (q *Queries) EndpointUpdateCircuit(ctx context.Context, e *store.Endpoint) error {
	return q.expectOne(q.exec(ctx, `UPDATE endpoints SET circuit_state = ?, circuit_failures = ?, circuit_opened_at = ?, circuit_probe_job = ?,
		circuit_opened_by = ? WHERE id = ?`,
		e.CircuitState, e.CircuitFailures, e.CircuitOpenedAt, e.CircuitProbeJob, e.CircuitOpenedBy, e.ID))
}

// EndpointUpdatePause writes e's pause columns (PausedAt, PausedBy,
// PausedReason) and UpdatedAt; ErrNotFound when there is no endpoint
// e.ID.
func (q *Queries) EndpointUpdatePause(ctx context.Context, e *store.Endpoint) error {
	return q.expectOne(q.exec(ctx, `UPDATE endpoints SET paused_at = ?, paused_by = ?, paused_reason = ?, updated_at = ? WHERE id = ?`,
		e.PausedAt, e.PausedBy, e.PausedReason, e.UpdatedAt, e.ID))
}

// ptrOf is a nullable integer column as a pointer (nil for NULL).
func ptrOf(n sql.NullInt64) *int64 {
	if !n.Valid {
		return nil
	}
	return &n.Int64
}
