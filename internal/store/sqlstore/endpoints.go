package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/wire"
)

// The settings columns come from wire.EndpointSettings' db tags, in the
// struct's order: a new setting is a field there and a column in a
// migration per driver, never an edit here. Nullable limits are NULL for
// none; flags are 0 or 1 (SQLite has no boolean, and both drivers share
// these statements).
var (
	settingFields   = wire.SettingFields()
	settingCols     = columnList(settingFields, "%s")
	settingSets     = columnList(settingFields, "%s = ?")
	settingHoles    = strings.Repeat(", ?", len(settingFields))
	endpointColList = `id, project_id, name, policy, version, created_at, updated_at, circuit_state, circuit_failures, circuit_opened_at, circuit_probe_job, circuit_opened_by,
	paused_at, paused_by, paused_reason, circuit_probe_at, recovery_rate, recovery_ceiling, recovery_started_at, recovery_adjusted_at, recovery_bad_at,
	learned_limit, learned_window_ms, learned_at, learned_reset_at, learned_source`
	endpointCols = endpointColList + ", " + settingCols
)

// columnList formats each setting's column with format, comma separated.
func columnList(fields []wire.SettingField, format string) string {
	parts := make([]string, len(fields))
	for i, f := range fields {
		parts[i] = fmt.Sprintf(format, f.Column)
	}
	return strings.Join(parts, ", ")
}

// settingArgs are the settings of s as statement arguments, in column order.
func settingArgs(s *wire.EndpointSettings) []any {
	args := make([]any, len(settingFields))
	for i, f := range settingFields {
		v := f.Value(s)
		switch f.Kind {
		case wire.SettingLimit:
			args[i] = nullInt(v.Interface().(*int64))
		case wire.SettingBool:
			args[i] = b2i(v.Bool())
		case wire.SettingText:
			args[i] = v.String()
		default:
			args[i] = v.Int()
		}
	}
	return args
}

// settingScan is where a row's settings columns are scanned before set
// copies them onto the endpoint: integers (and flags) into ints, texts
// into texts.
type settingScan struct {
	ints  []sql.NullInt64
	texts []string
}

func newSettingScan() *settingScan {
	return &settingScan{ints: make([]sql.NullInt64, len(settingFields)), texts: make([]string, len(settingFields))}
}

func (sc *settingScan) dests() []any {
	d := make([]any, len(settingFields))
	for i, f := range settingFields {
		if f.Kind == wire.SettingText {
			d[i] = &sc.texts[i]
		} else {
			d[i] = &sc.ints[i]
		}
	}
	return d
}

// set copies the scanned columns onto s: NULL is a nil limit, non-zero a
// true flag.
func (sc *settingScan) set(s *wire.EndpointSettings) {
	for i, f := range settingFields {
		v := f.Value(s)
		switch f.Kind {
		case wire.SettingLimit:
			v.Set(reflect.ValueOf(ptrOf(sc.ints[i])))
		case wire.SettingBool:
			v.SetBool(sc.ints[i].Int64 != 0)
		case wire.SettingText:
			v.SetString(sc.texts[i])
		default:
			v.SetInt(sc.ints[i].Int64)
		}
	}
}

func scanEndpoint(sc interface{ Scan(...any) error }) (*store.Endpoint, error) {
	var e store.Endpoint
	var policy string
	settings := newSettingScan()
	dests := append([]any{&e.ID, &e.ProjectID, &e.Name, &policy, &e.Version, &e.CreatedAt, &e.UpdatedAt, &e.CircuitState, &e.CircuitFailures,
		&e.CircuitOpenedAt, &e.CircuitProbeJob, &e.CircuitOpenedBy, &e.PausedAt, &e.PausedBy, &e.PausedReason, &e.CircuitProbeAt,
		&e.Recovery.Rate, &e.Recovery.Ceiling, &e.Recovery.StartedAt, &e.Recovery.AdjustedAt, &e.Recovery.BadAt,
		&e.Learned.Limit, &e.Learned.WindowMs, &e.Learned.At, &e.Learned.ResetAt, &e.Learned.Source}, settings.dests()...)
	if err := sc.Scan(dests...); err != nil {
		return nil, err
	}
	settings.set(&e.EndpointSettings)
	e.Policy = json.RawMessage(policy)
	return &e, nil
}

// EndpointCreate stores the endpoint and sets e.ID, and sets an empty
// e.CircuitState to closed first; ErrConflict when the project has an
// endpoint of that name.
func (q *Queries) EndpointCreate(ctx context.Context, e *store.Endpoint) error {
	if e.CircuitState == "" {
		e.CircuitState = wire.CircuitClosed
	}
	args := append([]any{e.ProjectID, e.Name, string(e.Policy), e.Version, e.CreatedAt, e.UpdatedAt, e.CircuitState}, settingArgs(&e.EndpointSettings)...)
	id, err := q.insertID(ctx, `INSERT INTO endpoints (project_id, name, policy, version, created_at, updated_at, circuit_state, `+settingCols+`)
		VALUES (?, ?, ?, ?, ?, ?, ?`+settingHoles+`)`, args...)
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
	args := slices.Concat([]any{string(e.Policy)}, settingArgs(&e.EndpointSettings), []any{e.UpdatedAt, e.ID, expectedVersion})
	r, err := q.exec(ctx, `UPDATE endpoints SET policy = ?, `+settingSets+`,
		version = version + 1, updated_at = ? WHERE id = ? AND version = ?`, args...)
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
// opened at, probe job, opened by, probe at) and its recovery ramp
// (e.Recovery); ErrNotFound when there is no
// endpoint e.ID.
func (q *Queries) EndpointUpdateCircuit(ctx context.Context, e *store.Endpoint) error {
	r := &e.Recovery
	return q.expectOne(q.exec(ctx, `UPDATE endpoints SET circuit_state = ?, circuit_failures = ?, circuit_opened_at = ?, circuit_probe_job = ?,
		circuit_opened_by = ?, circuit_probe_at = ?, recovery_rate = ?, recovery_ceiling = ?, recovery_started_at = ?, recovery_adjusted_at = ?,
		recovery_bad_at = ? WHERE id = ?`,
		e.CircuitState, e.CircuitFailures, e.CircuitOpenedAt, e.CircuitProbeJob, e.CircuitOpenedBy, e.CircuitProbeAt,
		r.Rate, r.Ceiling, r.StartedAt, r.AdjustedAt, r.BadAt, e.ID))
}

// EndpointUpdateLearned writes e's learned limit (e.Learned);
// ErrNotFound when there is no endpoint e.ID.
func (q *Queries) EndpointUpdateLearned(ctx context.Context, e *store.Endpoint) error {
	l := &e.Learned
	return q.expectOne(q.exec(ctx, `UPDATE endpoints SET learned_limit = ?, learned_window_ms = ?, learned_at = ?, learned_reset_at = ?,
		learned_source = ? WHERE id = ?`, l.Limit, l.WindowMs, l.At, l.ResetAt, l.Source, e.ID))
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
