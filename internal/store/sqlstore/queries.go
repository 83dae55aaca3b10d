// Package sqlstore implements store.Queries over database/sql for both
// drivers. The SQL is written once with ? placeholders; a Dialect rewrites
// placeholders and adds row locks where PostgreSQL needs them.
package sqlstore

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/wire"
)

// Dialect is what differs between the drivers.
type Dialect struct {
	// Numbered rewrites ? placeholders as $1, $2, ... (PostgreSQL).
	Numbered bool
	// Locking adds FOR UPDATE (and SKIP LOCKED for claims). SQLite has one
	// writer and needs neither.
	Locking bool
	// Arrays passes a batch of rows as one array parameter per column,
	// read back with unnest (PostgreSQL), where the other drivers bind a
	// placeholder per cell of a VALUES list. One statement text for every
	// batch size is prepared once and planned once; 15,000 placeholders
	// were parsed, planned and encoded one by one for each report batch.
	Arrays bool
	// Translate maps driver errors to store sentinels.
	Translate func(error) error
	// Now is the statement that reads the database's clock in unix
	// milliseconds (Queries.Now).
	Now string
}

// PostgresNowSQL and SQLiteNowSQL read the database's clock for Queries.Now.
// PostgreSQL's clock_timestamp() is the time of the read itself: now() is
// the transaction's start, older than a row lock the transaction waited
// for. SQLite's 'now' is the machine's clock with millisecond resolution.
const (
	PostgresNowSQL = `SELECT floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint`
	SQLiteNowSQL   = `SELECT CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)`
)

// Queries runs store operations inside one transaction.
type Queries struct {
	Tx *sql.Tx
	D  *Dialect
}

var rebindCache sync.Map // string → string

func (q *Queries) sql(s string) string {
	if !q.D.Numbered {
		return s
	}
	if v, ok := rebindCache.Load(s); ok {
		return v.(string)
	}
	var b strings.Builder
	n := 0
	for _, r := range s {
		if r == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(r)
	}
	out := b.String()
	rebindCache.Store(s, out)
	return out
}

func (q *Queries) exec(ctx context.Context, s string, args ...any) (sql.Result, error) {
	r, err := q.Tx.ExecContext(ctx, q.sql(s), args...)
	return r, q.D.Translate(err)
}

func (q *Queries) row(ctx context.Context, s string, args ...any) *sql.Row {
	return q.Tx.QueryRowContext(ctx, q.sql(s), args...)
}

func (q *Queries) query(ctx context.Context, s string, args ...any) (*sql.Rows, error) {
	r, err := q.Tx.QueryContext(ctx, q.sql(s), args...)
	return r, q.D.Translate(err)
}

func (q *Queries) insertID(ctx context.Context, s string, args ...any) (int64, error) {
	var id int64
	err := q.row(ctx, s+" RETURNING id", args...).Scan(&id)
	return id, q.D.Translate(err)
}

func (q *Queries) forUpdate() string {
	if q.D.Locking {
		return " FOR UPDATE"
	}
	return ""
}

func nullJSON(raw json.RawMessage) any {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	return string(raw)
}

func nullInt(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}

func nullStr(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// --- projects ---

func (q *Queries) ProjectCreate(ctx context.Context, p *store.Project) error {
	id, err := q.insertID(ctx, `INSERT INTO projects (name, plan, created_at) VALUES (?, ?, ?)`, p.Name, p.Plan, p.CreatedAt)
	p.ID = id
	return err
}

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

func (q *Queries) expectOne(r sql.Result, err error) error {
	if err != nil {
		return err
	}
	n, err := r.RowsAffected()
	if err != nil {
		return err
	}
	if n == 0 {
		return store.ErrNotFound
	}
	return nil
}

// --- keys ---

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

func (q *Queries) KeyByHash(ctx context.Context, hash string) (*store.APIKey, error) {
	k, err := scanKey(q.row(ctx, `SELECT `+keyCols+` FROM api_keys WHERE hash = ?`, hash))
	return k, q.D.Translate(err)
}

func (q *Queries) KeyList(ctx context.Context, projectID int64) ([]store.APIKey, error) {
	rows, err := q.query(ctx, `SELECT `+keyCols+` FROM api_keys WHERE project_id = ? ORDER BY id`, projectID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []store.APIKey
	for rows.Next() {
		k, err := scanKey(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *k)
	}
	return out, q.D.Translate(rows.Err())
}

func (q *Queries) KeyRevoke(ctx context.Context, p *store.KeyRevokeParams) error {
	return q.expectOne(q.exec(ctx, `UPDATE api_keys SET revoked_at = ? WHERE project_id = ? AND id = ? AND revoked_at = 0`, p.Now, p.ProjectID, p.ID))
}

// --- endpoints ---

const endpointCols = `id, project_id, name, policy, default_timeout_ms, max_concurrent, rate_limit_per_minute, circuit_threshold, circuit_open_ms,
	version, created_at, updated_at, circuit_state, circuit_failures, circuit_opened_at, circuit_probe_job, circuit_opened_by,
	paused_at, paused_by, paused_reason`

func scanEndpoint(sc interface{ Scan(...any) error }) (*store.Endpoint, error) {
	var e store.Endpoint
	var policy string
	var rate sql.NullInt64
	if err := sc.Scan(&e.ID, &e.ProjectID, &e.Name, &policy, &e.DefaultTimeoutMs, &e.MaxConcurrent, &rate, &e.CircuitThreshold, &e.CircuitOpenMs,
		&e.Version, &e.CreatedAt, &e.UpdatedAt, &e.CircuitState, &e.CircuitFailures, &e.CircuitOpenedAt, &e.CircuitProbeJob, &e.CircuitOpenedBy,
		&e.PausedAt, &e.PausedBy, &e.PausedReason); err != nil {
		return nil, err
	}
	e.Policy = json.RawMessage(policy)
	if rate.Valid {
		v := rate.Int64
		e.RateLimitPerMinute = &v
	}
	return &e, nil
}

func (q *Queries) EndpointCreate(ctx context.Context, e *store.Endpoint) error {
	if e.CircuitState == "" {
		e.CircuitState = wire.CircuitClosed
	}
	id, err := q.insertID(ctx, `INSERT INTO endpoints (project_id, name, policy, default_timeout_ms, max_concurrent, rate_limit_per_minute,
		circuit_threshold, circuit_open_ms, version, created_at, updated_at, circuit_state) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		e.ProjectID, e.Name, string(e.Policy), e.DefaultTimeoutMs, e.MaxConcurrent, nullInt(e.RateLimitPerMinute),
		e.CircuitThreshold, e.CircuitOpenMs, e.Version, e.CreatedAt, e.UpdatedAt, e.CircuitState)
	e.ID = id
	return err
}

func (q *Queries) EndpointGetInProject(ctx context.Context, p *store.EndpointGetInProjectParams) (*store.Endpoint, error) {
	e, err := scanEndpoint(q.row(ctx, `SELECT `+endpointCols+` FROM endpoints WHERE project_id = ? AND name = ?`, p.ProjectID, p.Name))
	return e, q.D.Translate(err)
}

func (q *Queries) EndpointGetAnyProject(ctx context.Context, p *store.EndpointGetAnyProjectParams) (*store.Endpoint, error) {
	s := `SELECT ` + endpointCols + ` FROM endpoints WHERE id = ?`
	if p.Lock {
		s += q.forUpdate()
	}
	e, err := scanEndpoint(q.row(ctx, s, p.ID))
	return e, q.D.Translate(err)
}

func (q *Queries) EndpointList(ctx context.Context, projectID int64) ([]store.Endpoint, error) {
	s, args := `SELECT `+endpointCols+` FROM endpoints WHERE project_id = ? ORDER BY name`, []any{projectID}
	if projectID == 0 { // every project: metrics
		s, args = `SELECT `+endpointCols+` FROM endpoints ORDER BY project_id, name`, nil
	}
	rows, err := q.query(ctx, s, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []store.Endpoint
	for rows.Next() {
		e, err := scanEndpoint(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *e)
	}
	return out, q.D.Translate(rows.Err())
}

func (q *Queries) EndpointUpdatePolicy(ctx context.Context, p *store.EndpointUpdatePolicyParams) error {
	e, expectedVersion := p.Endpoint, p.ExpectedVersion
	r, err := q.exec(ctx, `UPDATE endpoints SET policy = ?, default_timeout_ms = ?, max_concurrent = ?, rate_limit_per_minute = ?,
		circuit_threshold = ?, circuit_open_ms = ?, version = version + 1, updated_at = ? WHERE id = ? AND version = ?`,
		string(e.Policy), e.DefaultTimeoutMs, e.MaxConcurrent, nullInt(e.RateLimitPerMinute), e.CircuitThreshold, e.CircuitOpenMs,
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

func (q *Queries) EndpointUpdateCircuit(ctx context.Context, e *store.Endpoint) error {
	return q.expectOne(q.exec(ctx, `UPDATE endpoints SET circuit_state = ?, circuit_failures = ?, circuit_opened_at = ?, circuit_probe_job = ?,
		circuit_opened_by = ? WHERE id = ?`,
		e.CircuitState, e.CircuitFailures, e.CircuitOpenedAt, e.CircuitProbeJob, e.CircuitOpenedBy, e.ID))
}

func (q *Queries) EndpointUpdatePause(ctx context.Context, e *store.Endpoint) error {
	return q.expectOne(q.exec(ctx, `UPDATE endpoints SET paused_at = ?, paused_by = ?, paused_reason = ?, updated_at = ? WHERE id = ?`,
		e.PausedAt, e.PausedBy, e.PausedReason, e.UpdatedAt, e.ID))
}

// --- audit log ---

func (q *Queries) AuditInsert(ctx context.Context, a *store.AuditEntry) error {
	id, err := q.insertID(ctx, `INSERT INTO audit_log (project_id, at, actor, key_prefix, action, target, detail) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		a.ProjectID, a.At, a.Actor, a.KeyPrefix, a.Action, a.Target, a.Detail)
	a.ID = id
	return err
}

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
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []store.AuditEntry
	for rows.Next() {
		var a store.AuditEntry
		if err := rows.Scan(&a.ID, &a.ProjectID, &a.At, &a.Actor, &a.KeyPrefix, &a.Action, &a.Target, &a.Detail); err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, q.D.Translate(rows.Err())
}

// --- tools ---

const toolCols = `id, project_id, name, version, endpoint_id, description, schema, timeout_ms, retry_policy, created_at, delivery, delivery_secret`

func scanTool(sc interface{ Scan(...any) error }) (*store.Tool, error) {
	var t store.Tool
	var schema, policy, delivery sql.NullString
	var timeout sql.NullInt64
	if err := sc.Scan(&t.ID, &t.ProjectID, &t.Name, &t.Version, &t.EndpointID, &t.Description, &schema, &timeout, &policy, &t.CreatedAt,
		&delivery, &t.DeliverySecret); err != nil {
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

func (q *Queries) ToolCreate(ctx context.Context, t *store.Tool) error {
	id, err := q.insertID(ctx, `INSERT INTO tools (project_id, name, version, endpoint_id, description, schema, timeout_ms, retry_policy, created_at,
		delivery, delivery_secret) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, t.ProjectID, t.Name, t.Version, t.EndpointID, t.Description, nullJSON(t.Schema),
		nullInt(t.TimeoutMs), nullJSON(t.RetryPolicy), t.CreatedAt, nullJSON(t.Delivery), t.DeliverySecret)
	t.ID = id
	return err
}

func (q *Queries) ToolGetInProject(ctx context.Context, p *store.ToolGetInProjectParams) (*store.Tool, error) {
	t, err := scanTool(q.row(ctx, `SELECT `+toolCols+` FROM tools WHERE project_id = ? AND name = ? AND version = ?`, p.ProjectID, p.Name, p.Version))
	return t, q.D.Translate(err)
}

func (q *Queries) ToolGetAnyProject(ctx context.Context, id int64) (*store.Tool, error) {
	t, err := scanTool(q.row(ctx, `SELECT `+toolCols+` FROM tools WHERE id = ?`, id))
	return t, q.D.Translate(err)
}

func (q *Queries) ToolList(ctx context.Context, projectID int64) ([]store.Tool, error) {
	return q.tools(q.query(ctx, `SELECT `+toolCols+` FROM tools WHERE project_id = ? ORDER BY name, version`, projectID))
}

func (q *Queries) ToolListDelivery(ctx context.Context) ([]store.Tool, error) {
	return q.tools(q.query(ctx, `SELECT `+toolCols+` FROM tools WHERE delivery IS NOT NULL ORDER BY id`))
}

func (q *Queries) tools(rows *sql.Rows, err error) ([]store.Tool, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []store.Tool
	for rows.Next() {
		t, err := scanTool(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *t)
	}
	return out, q.D.Translate(rows.Err())
}

// --- runs ---

func (q *Queries) RunCreate(ctx context.Context, r *store.Run) error {
	if r.State == "" {
		r.State = "open"
	}
	id, err := q.insertID(ctx, `INSERT INTO runs (project_id, name, state, created_at) VALUES (?, ?, ?, ?)`, r.ProjectID, r.Name, r.State, r.CreatedAt)
	r.ID = id
	return err
}

func (q *Queries) RunGetInProject(ctx context.Context, p *store.RunGetInProjectParams) (*store.Run, error) {
	var r store.Run
	err := q.row(ctx, `SELECT id, project_id, name, state, created_at, finished_at FROM runs WHERE project_id = ? AND id = ?`, p.ProjectID, p.ID).
		Scan(&r.ID, &r.ProjectID, &r.Name, &r.State, &r.CreatedAt, &r.FinishedAt)
	return &r, q.D.Translate(err)
}

func (q *Queries) RunFinish(ctx context.Context, p *store.RunFinishParams) error {
	return q.expectOne(q.exec(ctx, `UPDATE runs SET state = 'finished', finished_at = ? WHERE project_id = ? AND id = ? AND state = 'open'`, p.Now, p.ProjectID, p.ID))
}

// --- jobs ---

const jobCols = `id, project_id, tool_id, tool, version, endpoint_id, endpoint, run_id, payload, idempotency_key, policy, max_attempts, timeout_ms,
	attempt, state, due_at, lease_token, lease_expires_at, worker_id, cancel_requested, replay_of, created_at, updated_at, finished_at, claimed_at,
	last_classification, last_error`

// jobColsBut is jobCols with the named columns read as empty text, for
// reads that do not need them (a policy snapshot or a payload is the bulk
// of a job row).
func jobColsBut(skip ...string) string {
	cols := strings.Split(jobCols, ",")
	for i, c := range cols {
		if slices.Contains(skip, strings.TrimSpace(c)) {
			cols[i] = " ''"
		}
	}
	return strings.Join(cols, ",")
}

var (
	// jobColsClaimed leaves out the policy: a claim hands the job to a
	// worker, which is not told the policy.
	jobColsClaimed = jobColsBut("policy")
	// jobColsReported leaves out the payload: a report decides what comes
	// next and never sends the payload again.
	jobColsReported = jobColsBut("payload")
)

func scanJob(sc interface{ Scan(...any) error }) (*store.Job, error) {
	var j store.Job
	var payload, policy string
	var key sql.NullString
	var cancel int64
	if err := sc.Scan(&j.ID, &j.ProjectID, &j.ToolID, &j.Tool, &j.Version, &j.EndpointID, &j.Endpoint, &j.RunID, &payload, &key, &policy,
		&j.MaxAttempts, &j.TimeoutMs, &j.Attempt, &j.State, &j.DueAt, &j.LeaseToken, &j.LeaseExpiresAt, &j.WorkerID, &cancel, &j.ReplayOf,
		&j.CreatedAt, &j.UpdatedAt, &j.FinishedAt, &j.ClaimedAt, &j.LastClassification, &j.LastError); err != nil {
		return nil, err
	}
	j.Payload = json.RawMessage(payload)
	j.Policy = json.RawMessage(policy)
	j.IdempotencyKey = key.String
	j.CancelRequested = cancel != 0
	return &j, nil
}

func (q *Queries) scanJobs(rows *sql.Rows, err error) ([]store.Job, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []store.Job
	for rows.Next() {
		j, err := scanJob(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *j)
	}
	return out, q.D.Translate(rows.Err())
}

// JobInsert skips a repeated idempotency key with ON CONFLICT DO NOTHING
// rather than letting the unique index fail the statement: on PostgreSQL a
// failed statement aborts the whole transaction, and the engine goes on to
// read the existing job in the same one.
func (q *Queries) JobInsert(ctx context.Context, j *store.Job) error {
	id, err := q.insertID(ctx, `INSERT INTO jobs (project_id, tool_id, tool, version, endpoint_id, endpoint, run_id, payload, idempotency_key, policy,
		max_attempts, timeout_ms, attempt, state, due_at, replay_of, created_at, updated_at, finished_at, last_classification, last_error)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT DO NOTHING`,
		j.ProjectID, j.ToolID, j.Tool, j.Version, j.EndpointID, j.Endpoint, j.RunID, string(j.Payload), nullStr(j.IdempotencyKey), string(j.Policy),
		j.MaxAttempts, j.TimeoutMs, j.Attempt, j.State, j.DueAt, j.ReplayOf, j.CreatedAt, j.UpdatedAt, j.FinishedAt, j.LastClassification, j.LastError)
	if errors.Is(err, store.ErrNotFound) { // no row returned: the key is taken
		return fmt.Errorf("idempotency key %q is already used in project %d: %w", j.IdempotencyKey, j.ProjectID, store.ErrConflict)
	}
	if err != nil {
		return err
	}
	j.ID = id
	return nil
}

// JobsInsert inserts one job per statement where rows are bound cell by
// cell (SQLite, in process, where a statement costs little), and all in
// one statement on PostgreSQL: ids are taken from the sequence first, so
// each job knows its id whatever order RETURNING would give.
func (q *Queries) JobsInsert(ctx context.Context, jobs []*store.Job) error {
	for _, j := range jobs {
		if j.IdempotencyKey != "" {
			return fmt.Errorf("JobsInsert: job with idempotency key %q: use JobInsert", j.IdempotencyKey)
		}
	}
	if !q.D.Arrays || len(jobs) == 0 {
		for _, j := range jobs {
			if err := q.JobInsert(ctx, j); err != nil {
				return err
			}
		}
		return nil
	}
	rows, err := q.query(ctx, `SELECT nextval(pg_get_serial_sequence('jobs', 'id')) FROM generate_series(1, ?)`, len(jobs))
	if err != nil {
		return err
	}
	ids := make([]int64, 0, len(jobs))
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return err
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return q.D.Translate(err)
	}
	if len(ids) != len(jobs) {
		return fmt.Errorf("JobsInsert: %d ids for %d jobs", len(ids), len(jobs))
	}
	slices.Sort(ids)
	from, args := q.rowsFrom(len(jobs), []string{"BIGINT", "BIGINT", "BIGINT", "TEXT", "TEXT", "BIGINT", "TEXT", "BIGINT", "TEXT", "TEXT",
		"BIGINT", "BIGINT", "BIGINT", "TEXT", "BIGINT", "BIGINT", "BIGINT", "BIGINT", "BIGINT", "TEXT", "TEXT"}, func(i int) []any {
		j := jobs[i]
		return []any{ids[i], j.ProjectID, j.ToolID, j.Tool, j.Version, j.EndpointID, j.Endpoint, j.RunID, string(j.Payload), string(j.Policy),
			j.MaxAttempts, j.TimeoutMs, j.Attempt, j.State, j.DueAt, j.ReplayOf, j.CreatedAt, j.UpdatedAt, j.FinishedAt, j.LastClassification, j.LastError}
	})
	r, err := q.exec(ctx, `INSERT INTO jobs (id, project_id, tool_id, tool, version, endpoint_id, endpoint, run_id, payload, policy,
		max_attempts, timeout_ms, attempt, state, due_at, replay_of, created_at, updated_at, finished_at, last_classification, last_error)
		SELECT * FROM `+from, args...)
	if err := q.expectN(r, err, len(jobs)); err != nil {
		return err
	}
	for i, j := range jobs {
		j.ID = ids[i]
	}
	return nil
}

func (q *Queries) JobByIdempotencyKey(ctx context.Context, projectID int64, key string) (*store.Job, error) {
	j, err := scanJob(q.row(ctx, `SELECT `+jobCols+` FROM jobs WHERE project_id = ? AND idempotency_key = ?`, projectID, key))
	return j, q.D.Translate(err)
}

func (q *Queries) JobGetInProject(ctx context.Context, p *store.JobGetInProjectParams) (*store.Job, error) {
	j, err := scanJob(q.row(ctx, `SELECT `+jobCols+` FROM jobs WHERE project_id = ? AND id = ?`+q.forUpdate(), p.ProjectID, p.ID))
	return j, q.D.Translate(err)
}

func (q *Queries) JobGetAnyProject(ctx context.Context, id int64) (*store.Job, error) {
	j, err := scanJob(q.row(ctx, `SELECT `+jobCols+` FROM jobs WHERE id = ?`+q.forUpdate(), id))
	return j, q.D.Translate(err)
}

func (q *Queries) JobUpdate(ctx context.Context, j *store.Job) error {
	return q.expectOne(q.exec(ctx, `UPDATE jobs SET attempt = ?, state = ?, due_at = ?, lease_token = ?, lease_expires_at = ?, worker_id = ?,
		cancel_requested = ?, updated_at = ?, finished_at = ?, last_classification = ?, last_error = ? WHERE id = ?`,
		j.Attempt, j.State, j.DueAt, j.LeaseToken, j.LeaseExpiresAt, j.WorkerID, b2i(j.CancelRequested), j.UpdatedAt, j.FinishedAt,
		j.LastClassification, j.LastError, j.ID))
}

// maxBatchRows bounds the rows of one multi-row statement, so its
// placeholders stay well under SQLite's 32,766 and PostgreSQL's 65,535.
const maxBatchRows = 500

// valuesList renders rows of a VALUES list with ncols placeholders each. The
// first row casts every column to its type: PostgreSQL types VALUES columns
// like a UNION, so one typed row types them all (untyped parameters would be
// text), and SQLite keeps the bound value's own type either way.
func valuesList(rows int, types ...string) string {
	out := "(" + casts(types, "") + ")"
	if rows > 1 {
		out += strings.Repeat(", ("+placeholders(len(types))+")", rows-1)
	}
	return out
}

// casts renders a placeholder per type, each cast to the type with suffix
// ("[]" for arrays).
func casts(types []string, suffix string) string {
	parts := make([]string, len(types))
	for i, t := range types {
		parts[i] = "CAST(? AS " + t + suffix + ")"
	}
	return strings.Join(parts, ", ")
}

// rowsFrom renders n rows as a relation named v with columns column1,
// column2, ... of the given SQL types (BIGINT, TEXT or DOUBLE PRECISION),
// for a FROM or JOIN, and returns its arguments. row(i) gives row i's
// values, one per type. With Arrays each column goes as one array, else
// each cell as one placeholder of a VALUES list.
func (q *Queries) rowsFrom(n int, types []string, row func(i int) []any) (string, []any) {
	if !q.D.Arrays {
		args := make([]any, 0, n*len(types))
		for i := range n {
			args = append(args, row(i)...)
		}
		return "(VALUES " + valuesList(n, types...) + ") AS v", args
	}
	cols := make([]any, len(types))
	for c, t := range types {
		switch t {
		case "BIGINT":
			cols[c] = make([]int64, n)
		case "TEXT":
			cols[c] = make([]string, n)
		case "DOUBLE PRECISION":
			cols[c] = make([]float64, n)
		default:
			panic("rowsFrom: no array type for " + t)
		}
	}
	for i := range n {
		for c, v := range row(i) {
			switch col := cols[c].(type) {
			case []int64:
				col[i] = cellOf(v, reflect.Value.Int, reflect.Int64)
			case []string:
				col[i] = cellOf(v, reflect.Value.String, reflect.String)
			case []float64:
				col[i] = cellOf(v, reflect.Value.Float, reflect.Float64)
			}
		}
	}
	names := make([]string, len(types))
	for c := range types {
		names[c] = "column" + strconv.Itoa(c+1)
	}
	return "unnest(" + casts(types, "[]") + ") AS v(" + strings.Join(names, ", ") + ")", cols
}

// cellOf reads a cell of an array column: a value of the column's Go kind,
// named types included (a wire.JobState is a TEXT cell, as the drivers
// bind it in a VALUES list).
func cellOf[T any](v any, get func(reflect.Value) T, kind reflect.Kind) T {
	rv := reflect.ValueOf(v)
	if rv.Kind() != kind {
		panic(fmt.Sprintf("rowsFrom: a %T in a column of %s", v, kind))
	}
	return get(rv)
}

// inChunks calls fn with consecutive parts of n items: of at most
// maxBatchRows when each row takes placeholders, all at once when a batch
// goes as arrays.
func (q *Queries) inChunks(n int, fn func(lo, hi int) error) error {
	size := maxBatchRows
	if q.D.Arrays {
		size = max(n, 1)
	}
	for lo := 0; lo < n; lo += size {
		if err := fn(lo, min(n, lo+size)); err != nil {
			return err
		}
	}
	return nil
}

func (q *Queries) JobsGetInProject(ctx context.Context, p *store.JobsGetInProjectParams) ([]store.Job, error) {
	projectID, ids := p.ProjectID, p.IDs
	forUpdate := ""
	if p.Lock {
		forUpdate = q.forUpdate()
	}
	var out []store.Job
	err := q.inChunks(len(ids), func(lo, hi int) error {
		part := ids[lo:hi]
		in, args := "id IN ("+placeholders(len(part))+")", int64Args(part)
		if q.D.Arrays {
			in, args = "id = ANY(CAST(? AS BIGINT[]))", []any{part}
		}
		// The project is checked here, not in SQL: with "project_id = ?"
		// PostgreSQL, misled by statistics taken while the table was
		// small, sometimes read every job of the project through
		// jobs_project and tested each against the thousand ids (0.4 s)
		// instead of looking the ids up.
		jobs, err := q.scanJobs(q.query(ctx, `SELECT `+jobColsReported+` FROM jobs WHERE `+in+` ORDER BY id`+forUpdate, args...))
		for _, j := range jobs {
			if j.ProjectID == projectID {
				out = append(out, j)
			}
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	byID := func(a, b store.Job) int { return cmp.Compare(a.ID, b.ID) }
	if !slices.IsSortedFunc(out, byID) { // chunks are each in order, not the whole
		slices.SortFunc(out, byID)
	}
	return out, nil
}

// JobsUpdate writes every job with one UPDATE ... FROM (VALUES ...) per
// chunk rather than one UPDATE per job: on the report path the statement
// overhead per row was most of the cost. A guard rides along as three more
// columns (an empty state: none). On PostgreSQL an UPDATE that waited for
// another transaction's row lock checks the guard against the row as that
// transaction left it.
func (q *Queries) JobsUpdate(ctx context.Context, jobs []*store.Job, guards []store.JobGuard) error {
	if guards != nil && len(guards) != len(jobs) {
		return fmt.Errorf("JobsUpdate: %d guards for %d jobs", len(guards), len(jobs))
	}
	return q.inChunks(len(jobs), func(lo, hi int) error {
		part := jobs[lo:hi]
		from, args := q.rowsFrom(len(part), []string{"BIGINT", "BIGINT", "TEXT", "BIGINT", "TEXT", "BIGINT", "TEXT", "BIGINT", "BIGINT", "BIGINT",
			"TEXT", "TEXT", "BIGINT", "TEXT", "TEXT"}, func(i int) []any {
			j := part[i]
			var g store.JobGuard
			if guards != nil {
				g = guards[lo+i]
			}
			return []any{j.ID, j.Attempt, j.State, j.DueAt, j.LeaseToken, j.LeaseExpiresAt, j.WorkerID, b2i(j.CancelRequested), j.UpdatedAt, j.FinishedAt,
				g.State, g.LeaseToken, b2i(g.CancelRequested), j.LastClassification, j.LastError}
		})
		r, err := q.exec(ctx, `UPDATE jobs SET attempt = v.column2, state = v.column3, due_at = v.column4, lease_token = v.column5,
			lease_expires_at = v.column6, worker_id = v.column7, cancel_requested = v.column8, updated_at = v.column9, finished_at = v.column10,
			last_classification = v.column14, last_error = v.column15
			FROM `+from+` WHERE jobs.id = v.column1
			AND (v.column11 = '' OR (jobs.state = v.column11 AND jobs.lease_token = v.column12 AND jobs.cancel_requested = v.column13))`, args...)
		if err != nil {
			return err
		}
		if n, err := r.RowsAffected(); err != nil || n == int64(len(part)) {
			return err
		}
		// Fewer rows written: missing, or no longer as read.
		ids := make([]int64, len(part))
		for i, j := range part {
			ids[i] = j.ID
		}
		var found int64
		in, inArgs := "id IN ("+placeholders(len(ids))+")", int64Args(ids)
		if q.D.Arrays {
			in, inArgs = "id = ANY(CAST(? AS BIGINT[]))", []any{ids}
		}
		if err := q.row(ctx, `SELECT count(*) FROM jobs WHERE `+in, inArgs...).Scan(&found); err != nil {
			return q.D.Translate(err)
		}
		if found < int64(len(part)) {
			return fmt.Errorf("%d of %d jobs found: %w", found, len(part), store.ErrNotFound)
		}
		return fmt.Errorf("a job changed since it was read: %w", store.ErrConflict)
	})
}

// expectN is expectOne for a statement that should change n rows.
func (q *Queries) expectN(r sql.Result, err error, n int) error {
	if err != nil {
		return err
	}
	got, err := r.RowsAffected()
	if err != nil {
		return err
	}
	if got != int64(n) {
		return fmt.Errorf("%d of %d rows found: %w", got, n, store.ErrNotFound)
	}
	return nil
}

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
	if f.AfterID != 0 {
		where = append(where, "id < ?")
		args = append(args, f.AfterID)
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

func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?, ", n), ", ")
}

func (q *Queries) JobList(ctx context.Context, f store.JobFilter) ([]store.Job, error) {
	limit := f.Limit
	if limit <= 0 {
		limit = 100
	}
	from, args := q.jobsFrom(f)
	return q.scanJobs(q.query(ctx, `SELECT `+jobCols+` FROM `+from+` ORDER BY id DESC LIMIT `+strconv.Itoa(limit), args...))
}

// jobsFrom is the FROM and WHERE of the jobs f selects. With a ScanLimit
// and a text search it is a window: the newest ScanLimit jobs of the other
// filters, read in id order and searched as they stream, so a search that
// finds little reads ScanLimit rows, not the table.
func (q *Queries) jobsFrom(f store.JobFilter) (string, []any) {
	if f.ScanLimit <= 0 || !isTextSearch(f.Q) {
		where, args := q.jobWhere(f)
		return "jobs WHERE " + where, args
	}
	text := f.Q
	f.Q = ""
	where, args := q.jobWhere(f)
	search, sargs := textSearch(text)
	return `(SELECT ` + jobCols + ` FROM jobs WHERE ` + where + ` ORDER BY id DESC LIMIT ` + strconv.Itoa(f.ScanLimit) + `) AS w WHERE ` + search,
		append(args, sargs...)
}

func (q *Queries) JobScanEnd(ctx context.Context, f store.JobFilter) (int64, error) {
	if f.ScanLimit <= 0 || !isTextSearch(f.Q) {
		return 0, nil
	}
	f.Q = ""
	where, args := q.jobWhere(f)
	var id int64
	err := q.row(ctx, `SELECT id FROM jobs WHERE `+where+` ORDER BY id DESC LIMIT 1 OFFSET `+strconv.Itoa(f.ScanLimit-1), args...).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	return id, q.D.Translate(err)
}

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
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[wire.JobState]int64{}
	for rows.Next() {
		var st wire.JobState
		var n int64
		if err := rows.Scan(&st, &n); err != nil {
			return nil, err
		}
		if n != 0 {
			out[st] = n
		}
	}
	return out, q.D.Translate(rows.Err())
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
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []store.JobStateCount
	for rows.Next() {
		var c store.JobStateCount
		if err := rows.Scan(&c.EndpointID, &c.State, &c.Count); err != nil {
			return nil, err
		}
		if c.Count != 0 {
			out = append(out, c)
		}
	}
	return out, q.D.Translate(rows.Err())
}

func (q *Queries) JobCountGroupByState(ctx context.Context, f store.JobFilter) (map[wire.JobState]int64, error) {
	f.AfterID = 0
	from, args := q.jobsFrom(f)
	return q.stateCounts(q.query(ctx, `SELECT state, count(*) FROM `+from+` GROUP BY state`, args...))
}

func int64Args(ids []int64) []any {
	out := make([]any, len(ids))
	for i, id := range ids {
		out[i] = id
	}
	return out
}

// DueEndpoints looks only at the endpoints of the requested tools (a job's
// endpoint is its tool's: tools are immutable) and asks each with an EXISTS
// that seeks the jobs_due index. A SELECT DISTINCT over the jobs walked every
// scheduled job on every claim: with 20,000 queued that was a fifth of the
// burn-down's CPU.
func (q *Queries) DueEndpoints(ctx context.Context, p *store.DueEndpointsParams) ([]int64, error) {
	toolIDs, now := p.ToolIDs, p.Now
	if len(toolIDs) == 0 {
		return nil, nil
	}
	in := placeholders(len(toolIDs))
	args := append(int64Args(toolIDs), int64Args(toolIDs)...)
	args = append(args, now)
	rows, err := q.query(ctx, `SELECT e.endpoint_id FROM (SELECT DISTINCT endpoint_id FROM tools WHERE id IN (`+in+`)) AS e
		WHERE EXISTS (SELECT 1 FROM jobs WHERE state = 'scheduled' AND jobs.endpoint_id = e.endpoint_id AND tool_id IN (`+in+`) AND due_at <= ?)
		ORDER BY e.endpoint_id`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		out = append(out, id)
	}
	return out, q.D.Translate(rows.Err())
}

func (q *Queries) JobsClaimable(ctx context.Context, p *store.JobsClaimableParams) ([]store.Job, error) {
	toolIDs, limit := p.ToolIDs, p.Limit
	if len(toolIDs) == 0 || limit <= 0 {
		return nil, nil
	}
	args := append([]any{p.EndpointID}, int64Args(toolIDs)...)
	args = append(args, p.Now)
	lock := ""
	if q.D.Locking {
		lock = " FOR UPDATE SKIP LOCKED"
	}
	return q.scanJobs(q.query(ctx, `SELECT `+jobCols+` FROM jobs WHERE state = 'scheduled' AND endpoint_id = ? AND tool_id IN (`+
		placeholders(len(toolIDs))+`) AND due_at <= ? ORDER BY due_at, id LIMIT `+strconv.Itoa(limit)+lock, args...))
}

func (q *Queries) JobsClaim(ctx context.Context, p *store.JobsClaimParams) error {
	if len(p.IDs) == 0 {
		return nil
	}
	ids := int64Args(p.IDs)
	args := append([]any{p.LeaseToken, p.Now, p.WorkerID, p.Now, p.Now}, ids...)
	r, err := q.exec(ctx, `UPDATE jobs SET state = 'running', attempt = attempt + 1, lease_token = ?, lease_expires_at = ? + timeout_ms,
		worker_id = ?, updated_at = ?, claimed_at = ? WHERE state = 'scheduled' AND id IN (`+placeholders(len(ids))+`)`, args...)
	if err != nil {
		return err
	}
	if n, _ := r.RowsAffected(); n != int64(len(ids)) {
		return fmt.Errorf("claim: %d of %d jobs were still scheduled: %w", n, len(ids), store.ErrConflict)
	}
	return nil
}

// JobsClaimDue claims with one UPDATE ... RETURNING instead of a SELECT of
// the rows and an UPDATE by id. The attempt it starts is the job row's
// claim columns until the attempt finishes (see AttemptsFinish).
func (q *Queries) JobsClaimDue(ctx context.Context, p *store.JobsClaimDueParams) ([]store.Job, error) {
	if len(p.ToolIDs) == 0 || p.Limit <= 0 {
		return nil, nil
	}
	lock := ""
	if q.D.Locking {
		lock = " FOR UPDATE SKIP LOCKED"
	}
	args := append([]any{p.LeaseToken, p.Now, p.WorkerID, p.Now, p.Now, p.EndpointID}, int64Args(p.ToolIDs)...)
	args = append(args, p.Now)
	jobs, err := q.scanJobs(q.query(ctx, `UPDATE jobs SET state = 'running', attempt = attempt + 1, lease_token = ?, lease_expires_at = ? + timeout_ms,
		worker_id = ?, updated_at = ?, claimed_at = ? WHERE id IN (SELECT id FROM jobs WHERE state = 'scheduled' AND endpoint_id = ? AND tool_id IN (`+
		placeholders(len(p.ToolIDs))+`) AND due_at <= ? ORDER BY due_at, id LIMIT `+strconv.Itoa(p.Limit)+lock+`) RETURNING `+jobColsClaimed, args...))
	if err != nil {
		return nil, err
	}
	// RETURNING has no order.
	slices.SortFunc(jobs, func(a, b store.Job) int {
		if c := cmp.Compare(a.DueAt, b.DueAt); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	return jobs, nil
}

// CountScheduled reads only jobs_due (an index-only scan where the index
// covers the query): the state is the index's predicate, written out.
func (q *Queries) CountScheduled(ctx context.Context, p *store.CountScheduledParams) (int64, int64, error) {
	var n, due int64
	err := q.row(ctx, `SELECT count(*), COALESCE(sum(CASE WHEN due_at <= ? THEN 1 ELSE 0 END), 0) FROM jobs
		WHERE state = 'scheduled' AND endpoint_id = ?`, p.DueBy, p.EndpointID).Scan(&n, &due)
	return n, due, q.D.Translate(err)
}

// CountDue seeks jobs_due (endpoint, tool, due_at, id) once per tool of
// the endpoint, each a range up to Now, and stops at the limit: the
// endpoint alone would read every scheduled job of it.
func (q *Queries) CountDue(ctx context.Context, p *store.CountDueParams) (int64, error) {
	var n int64
	err := q.row(ctx, `SELECT count(*) FROM (SELECT 1 FROM jobs WHERE state = 'scheduled' AND endpoint_id = ?
		AND tool_id IN (SELECT id FROM tools WHERE endpoint_id = ?) AND due_at <= ? LIMIT ?) AS d`, p.EndpointID, p.EndpointID, p.Now, p.Limit).Scan(&n)
	return n, q.D.Translate(err)
}

// Now reads the database's clock with the dialect's statement.
func (q *Queries) Now(ctx context.Context) (int64, error) {
	var ms int64
	err := q.row(ctx, q.D.Now).Scan(&ms)
	return ms, q.D.Translate(err)
}

func (q *Queries) CountRunning(ctx context.Context, p *store.CountRunningParams) (int64, error) {
	var n int64
	err := q.row(ctx, `SELECT count(*) FROM (SELECT 1 FROM jobs WHERE endpoint_id = ? AND state = 'running' LIMIT ?) AS r`, p.EndpointID, p.Limit).Scan(&n)
	return n, q.D.Translate(err)
}

func (q *Queries) ClaimsSince(ctx context.Context, p *store.ClaimsSinceParams) (int64, int64, error) {
	endpointID, since, limit := p.EndpointID, p.Since, p.Limit
	var n int64
	var earliest sql.NullInt64
	// Finished attempts and running ones (the claim columns of running
	// jobs), each stopping at limit.
	err := q.row(ctx, `SELECT count(*), min(claimed_at) FROM (
		SELECT claimed_at FROM (SELECT claimed_at FROM attempts WHERE endpoint_id = ? AND claimed_at >= ? ORDER BY claimed_at LIMIT ?) AS f
		UNION ALL
		SELECT claimed_at FROM (SELECT claimed_at FROM jobs WHERE state = 'running' AND endpoint_id = ? AND claimed_at >= ? ORDER BY claimed_at LIMIT ?) AS r) AS c`,
		endpointID, since, limit, endpointID, since, limit).Scan(&n, &earliest)
	return min(n, limit), earliest.Int64, q.D.Translate(err)
}

func (q *Queries) AttemptsFinishedSince(ctx context.Context, p *store.AttemptsFinishedSinceParams) (int64, error) {
	var n int64
	err := q.row(ctx, `SELECT count(*) FROM (SELECT 1 FROM attempts WHERE endpoint_id = ? AND finished_at >= ? LIMIT ?) AS f`, p.EndpointID, p.Since, p.Limit).Scan(&n)
	return n, q.D.Translate(err)
}

func (q *Queries) NextDueAt(ctx context.Context, toolIDs []int64) (int64, error) {
	if len(toolIDs) == 0 {
		return 0, nil
	}
	// Per tool, the first entry of jobs_due under (its endpoint, the tool):
	// without the endpoint the index cannot be used, and min(due_at) over
	// the tools alone read every scheduled job (170 ms at 50,000 queued) on
	// each claim that found nothing.
	var due sql.NullInt64
	err := q.row(ctx, `SELECT min((SELECT min(due_at) FROM jobs WHERE state = 'scheduled' AND jobs.endpoint_id = t.endpoint_id AND jobs.tool_id = t.id))
		FROM tools t WHERE t.id IN (`+placeholders(len(toolIDs))+`)`, int64Args(toolIDs)...).Scan(&due)
	return due.Int64, q.D.Translate(err)
}

func (q *Queries) ExpiredLeases(ctx context.Context, p *store.ExpiredLeasesParams) ([]store.Job, error) {
	lock := ""
	if q.D.Locking {
		lock = " FOR UPDATE SKIP LOCKED"
	}
	return q.scanJobs(q.query(ctx, `SELECT `+jobCols+` FROM jobs WHERE state = 'running' AND lease_expires_at <= ? ORDER BY lease_expires_at LIMIT `+
		strconv.Itoa(p.Limit)+lock, p.Now))
}

func (q *Queries) JobsPrune(ctx context.Context, p *store.JobsPruneParams) (int64, error) {
	rows, err := q.query(ctx, `SELECT id FROM jobs WHERE finished_at > 0 AND finished_at < ? AND state IN `+finishedStates+` LIMIT `+strconv.Itoa(p.Limit), p.FinishedBefore)
	if err != nil {
		return 0, err
	}
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return 0, err
		}
		ids = append(ids, id)
	}
	rows.Close()
	if len(ids) == 0 {
		return 0, q.D.Translate(rows.Err())
	}
	in := placeholders(len(ids))
	if _, err := q.exec(ctx, `DELETE FROM attempts WHERE job_id IN (`+in+`)`, int64Args(ids)...); err != nil {
		return 0, err
	}
	r, err := q.exec(ctx, `DELETE FROM jobs WHERE id IN (`+in+`)`, int64Args(ids)...)
	if err != nil {
		return 0, err
	}
	return r.RowsAffected()
}

// --- attempts ---

const attemptCols = `job_id, number, endpoint_id, worker_id, lease_token, claimed_at, finished_at, outcome, classification, http_status,
	retry_after_ms, message, base_delay_ms, jitter_sample, min_delay_ms, max_delay_ms, selected_ms, next_due_at, counted,
	request_ms, response_headers, response_excerpt`

func scanAttempt(sc interface{ Scan(...any) error }) (*store.Attempt, error) {
	var a store.Attempt
	var counted int64
	err := sc.Scan(&a.JobID, &a.Number, &a.EndpointID, &a.WorkerID, &a.LeaseToken, &a.ClaimedAt, &a.FinishedAt, &a.Outcome, &a.Classification,
		&a.HTTPStatus, &a.RetryAfterMs, &a.Message, &a.BaseDelayMs, &a.JitterSample, &a.MinDelayMs, &a.MaxDelayMs, &a.SelectedMs, &a.NextDueAt, &counted,
		&a.RequestMs, &a.ResponseHeaders, &a.ResponseExcerpt)
	a.Counted = counted != 0
	return &a, err
}

// jobRunning tests that job j is running where j is looked up by id. It is
// written so that no index matches it: with "j.state = 'running'",
// PostgreSQL, misled by statistics sampled while every job was scheduled
// (running: next to none), scanned the partial index of running jobs for
// each id instead of the primary key, seconds per report batch.
const jobRunning = `(j.state || '') = 'running'`

// runningAttempt selects, from a running job j, its current attempt in
// the columns of attemptCols: an attempt is stored in the attempts table
// once, when it finishes; until then the job row's claim columns are the
// attempt. Writing the attempt at the claim and again at the report was a
// third of the burn-down's writes on PostgreSQL.
const runningAttempt = `SELECT j.id, j.attempt, j.endpoint_id, j.worker_id, j.lease_token, j.claimed_at, 0, '', '', 0, 0, '',
	CAST(0 AS DOUBLE PRECISION), CAST(0 AS DOUBLE PRECISION), 0, 0, 0, 0, 0, 0, '', '' FROM jobs j`

func (q *Queries) AttemptGet(ctx context.Context, p *store.AttemptGetParams) (*store.Attempt, error) {
	jobID, number := p.JobID, p.Number
	a, err := scanAttempt(q.row(ctx, `SELECT `+attemptCols+` FROM attempts WHERE job_id = ? AND number = ?
		UNION ALL `+runningAttempt+` WHERE j.id = ? AND j.attempt = ? AND `+jobRunning+``, jobID, number, jobID, number))
	return a, q.D.Translate(err)
}

func (q *Queries) AttemptsByKeys(ctx context.Context, keys []store.AttemptKey) ([]store.Attempt, error) {
	var out []store.Attempt
	err := q.inChunks(len(keys), func(lo, hi int) error {
		part := keys[lo:hi]
		from, args := q.rowsFrom(len(part), []string{"BIGINT", "BIGINT"}, func(i int) []any { return []any{part[i].JobID, part[i].Number} })
		rows, err := q.query(ctx, `WITH k AS (SELECT * FROM `+from+`)
			SELECT `+attemptColsOf("a")+` FROM k JOIN attempts a ON a.job_id = k.column1 AND a.number = k.column2
			UNION ALL `+runningAttempt+` JOIN k ON j.id = k.column1 AND j.attempt = k.column2 WHERE `+jobRunning, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			a, err := scanAttempt(rows)
			if err != nil {
				return err
			}
			out = append(out, *a)
		}
		return q.D.Translate(rows.Err())
	})
	return out, err
}

// attemptColsOf is attemptCols qualified by a table alias.
func attemptColsOf(alias string) string {
	cols := strings.Split(attemptCols, ",")
	for i, c := range cols {
		cols[i] = alias + "." + strings.TrimSpace(c)
	}
	return strings.Join(cols, ", ")
}

// AttemptsFinish stores each finished attempt with one INSERT ... SELECT
// per chunk. The claim columns come from the job row, which must still be
// running that attempt: the attempt is written once, as it ends (see
// runningAttempt).
func (q *Queries) AttemptsFinish(ctx context.Context, as []*store.Attempt) error {
	return q.inChunks(len(as), func(lo, hi int) error {
		part := as[lo:hi]
		from, args := q.rowsFrom(len(part), []string{"BIGINT", "BIGINT", "BIGINT", "TEXT", "TEXT", "BIGINT", "BIGINT", "TEXT",
			"DOUBLE PRECISION", "DOUBLE PRECISION", "BIGINT", "BIGINT", "BIGINT", "BIGINT", "BIGINT", "BIGINT", "TEXT", "TEXT"}, func(i int) []any {
			a := part[i]
			return []any{a.JobID, a.Number, a.FinishedAt, a.Outcome, a.Classification, a.HTTPStatus, a.RetryAfterMs, a.Message,
				a.BaseDelayMs, a.JitterSample, a.MinDelayMs, a.MaxDelayMs, a.SelectedMs, a.NextDueAt, b2i(a.Counted),
				a.RequestMs, a.ResponseHeaders, a.ResponseExcerpt}
		})
		jobs := `JOIN jobs j ON j.id = v.column1 AND j.attempt = v.column2 WHERE ` + jobRunning
		if q.D.Arrays {
			// Each row looks its job up by id; OFFSET 0 keeps PostgreSQL
			// from flattening the lookup into a join it may plan the other
			// way round (see jobRunning).
			jobs = `CROSS JOIN LATERAL (SELECT id, attempt, endpoint_id, worker_id, lease_token, claimed_at, due_at FROM jobs j
				WHERE j.id = v.column1 AND j.attempt = v.column2 AND ` + jobRunning + ` OFFSET 0) AS j WHERE true`
		}
		// due_at: the job's due time while it runs is the one the attempt
		// was claimed at (history's due-to-claim lag).
		r, err := q.exec(ctx, `INSERT INTO attempts (`+attemptCols+`, due_at)
			SELECT j.id, j.attempt, j.endpoint_id, j.worker_id, j.lease_token, j.claimed_at, v.column3, v.column4, v.column5, v.column6,
			v.column7, v.column8, v.column9, v.column10, v.column11, v.column12, v.column13, v.column14, v.column15,
			v.column16, v.column17, v.column18, j.due_at
			FROM `+from+` `+jobs+`
			ON CONFLICT DO NOTHING`, args...) // an attempt finished already is not found, as one not started
		return q.expectN(r, err, len(part))
	})
}

func (q *Queries) AttemptFinish(ctx context.Context, a *store.Attempt) error {
	return q.AttemptsFinish(ctx, []*store.Attempt{a})
}

func (q *Queries) AttemptList(ctx context.Context, jobID int64) ([]store.Attempt, error) {
	rows, err := q.query(ctx, `SELECT `+attemptCols+` FROM attempts WHERE job_id = ?
		UNION ALL `+runningAttempt+` WHERE j.id = ? AND `+jobRunning+` ORDER BY 2`, jobID, jobID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []store.Attempt
	for rows.Next() {
		a, err := scanAttempt(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *a)
	}
	return out, q.D.Translate(rows.Err())
}

func (q *Queries) AttemptOutcomes(ctx context.Context, p *store.AttemptOutcomesParams) (map[wire.AttemptOutcome]int64, error) {
	rows, err := q.query(ctx, `SELECT outcome, count(*) FROM attempts WHERE endpoint_id = ? AND finished_at >= ? AND finished_at > 0 GROUP BY outcome`, p.EndpointID, p.Since)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[wire.AttemptOutcome]int64{}
	for rows.Next() {
		var o wire.AttemptOutcome
		var n int64
		if err := rows.Scan(&o, &n); err != nil {
			return nil, err
		}
		out[o] = n
	}
	return out, q.D.Translate(rows.Err())
}

// --- workers ---

// WorkersTouch upserts one row per worker; CASE rather than greatest/max
// keeps one text for both drivers.
func (q *Queries) WorkersTouch(ctx context.Context, p *store.WorkersTouchParams) error {
	for _, w := range p.Workers {
		seen := max(w.ClaimAt, w.HeartbeatAt, w.ReportAt)
		first := w.FirstAt
		if first == 0 {
			first = seen
		}
		_, err := q.exec(ctx, `INSERT INTO workers (project_id, worker_id, first_seen_at, last_claim_at, last_heartbeat_at, last_report_at, last_seen_at)
			VALUES (?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (project_id, worker_id) DO UPDATE SET
			first_seen_at = CASE WHEN excluded.first_seen_at < workers.first_seen_at THEN excluded.first_seen_at ELSE workers.first_seen_at END,
			last_claim_at = CASE WHEN excluded.last_claim_at > workers.last_claim_at THEN excluded.last_claim_at ELSE workers.last_claim_at END,
			last_heartbeat_at = CASE WHEN excluded.last_heartbeat_at > workers.last_heartbeat_at THEN excluded.last_heartbeat_at ELSE workers.last_heartbeat_at END,
			last_report_at = CASE WHEN excluded.last_report_at > workers.last_report_at THEN excluded.last_report_at ELSE workers.last_report_at END,
			last_seen_at = CASE WHEN excluded.last_seen_at > workers.last_seen_at THEN excluded.last_seen_at ELSE workers.last_seen_at END`,
			w.ProjectID, w.WorkerID, first, w.ClaimAt, w.HeartbeatAt, w.ReportAt, seen)
		if err != nil {
			return err
		}
	}
	return nil
}

// WorkerList reads the workers, then what they hold from the project's
// running jobs through jobs_project_state (project, state, id): running
// jobs are few next to the others, and an index on worker_id would be
// written at every claim.
func (q *Queries) WorkerList(ctx context.Context, p *store.WorkerListParams) ([]store.Worker, error) {
	rows, err := q.query(ctx, `SELECT project_id, worker_id, first_seen_at, last_claim_at, last_heartbeat_at, last_report_at, last_seen_at
		FROM workers WHERE project_id = ? AND last_seen_at >= ? ORDER BY last_seen_at DESC, worker_id LIMIT `+strconv.Itoa(max(p.Limit, 0)), p.ProjectID, p.SeenSince)
	if err != nil {
		return nil, err
	}
	var out []store.Worker
	index := map[string]int{}
	for rows.Next() {
		var w store.Worker
		if err := rows.Scan(&w.ProjectID, &w.WorkerID, &w.FirstSeenAt, &w.LastClaimAt, &w.LastHeartbeatAt, &w.LastReportAt, &w.LastSeenAt); err != nil {
			rows.Close()
			return nil, err
		}
		index[w.WorkerID] = len(out)
		out = append(out, w)
	}
	rows.Close()
	if err := rows.Err(); err != nil || len(out) == 0 {
		return out, q.D.Translate(err)
	}
	rows, err = q.query(ctx, `SELECT worker_id, id FROM jobs WHERE project_id = ? AND state = 'running' ORDER BY id DESC`, p.ProjectID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var worker string
		var id int64
		if err := rows.Scan(&worker, &id); err != nil {
			return nil, err
		}
		i, ok := index[worker]
		if !ok {
			continue
		}
		out[i].Holding++
		if len(out[i].JobIDs) < p.JobsPerWorker {
			out[i].JobIDs = append(out[i].JobIDs, id)
		}
	}
	return out, q.D.Translate(rows.Err())
}

func (q *Queries) WorkersPrune(ctx context.Context, p *store.WorkersPruneParams) (int64, error) {
	r, err := q.exec(ctx, `DELETE FROM workers WHERE last_seen_at < ?`, p.SeenBefore)
	if err != nil {
		return 0, err
	}
	return r.RowsAffected()
}

// --- history ---

func (q *Queries) HistoryCursorGet(ctx context.Context) (int64, error) {
	var next int64
	err := q.row(ctx, `SELECT next_minute FROM history_cursor WHERE id = 1`+q.forUpdate()).Scan(&next)
	return next, q.D.Translate(err)
}

func (q *Queries) HistoryCursorSet(ctx context.Context, nextMinute int64) error {
	return q.expectOne(q.exec(ctx, `UPDATE history_cursor SET next_minute = ? WHERE id = 1`, nextMinute))
}

// HistoryCompute is one SELECT. Each of its three parts reads
// the attempts through an index that leads with the endpoint, probed once
// per endpoint ("endpoint_id IN (SELECT id FROM endpoints)"):
// attempts_claims (endpoint_id, claimed_at), jobs_running (endpoint_id,
// claimed_at) for attempts still running, and attempts_finished
// (endpoint_id, finished_at). Written as a join from endpoints, SQLite,
// without statistics, scanned every attempt instead. A minute is the claim or
// finish time minus its remainder by 60,000. An attempt is either in
// attempts or a running job's claim columns, moved in one transaction, so
// the one statement counts each claim once.
func (q *Queries) HistoryCompute(ctx context.Context, p *store.HistoryComputeParams) ([]store.HistoryPoint, error) {
	const lag = `CASE WHEN %[1]s.due_at > 0 AND %[1]s.claimed_at > %[1]s.due_at THEN %[1]s.claimed_at - %[1]s.due_at ELSE 0 END`
	const lagN = `CASE WHEN %[1]s.due_at > 0 THEN 1 ELSE 0 END`
	la, lj := fmt.Sprintf(lag, "a"), fmt.Sprintf(lag, "j")
	rows, err := q.query(ctx, `SELECT e.project_id, u.endpoint_id, u.minute, CAST(sum(u.claims) AS BIGINT), CAST(sum(u.succeeded) AS BIGINT),
			CAST(sum(u.failed) AS BIGINT), CAST(sum(u.timed_out) AS BIGINT), CAST(sum(u.lag) AS BIGINT), CAST(sum(u.lag_n) AS BIGINT), CAST(max(u.lag) AS BIGINT)
		FROM (
			SELECT a.endpoint_id, a.claimed_at - a.claimed_at % 60000 AS minute, 1 AS claims, 0 AS succeeded, 0 AS failed, 0 AS timed_out,
				`+la+` AS lag, `+fmt.Sprintf(lagN, "a")+` AS lag_n
			FROM attempts a WHERE a.endpoint_id IN (SELECT id FROM endpoints) AND a.claimed_at >= ? AND a.claimed_at < ?
			UNION ALL
			SELECT j.endpoint_id, j.claimed_at - j.claimed_at % 60000, 1, 0, 0, 0, `+lj+`, `+fmt.Sprintf(lagN, "j")+`
			FROM jobs j WHERE j.endpoint_id IN (SELECT id FROM endpoints) AND j.state = 'running' AND j.claimed_at >= ? AND j.claimed_at < ?
			UNION ALL
			SELECT f.endpoint_id, f.finished_at - f.finished_at % 60000, 0,
				CASE WHEN f.outcome = 'succeeded' THEN 1 ELSE 0 END, CASE WHEN f.outcome = 'failed' THEN 1 ELSE 0 END,
				CASE WHEN f.outcome = 'timed_out' THEN 1 ELSE 0 END, 0, 0
			FROM attempts f WHERE f.endpoint_id IN (SELECT id FROM endpoints) AND f.finished_at >= ? AND f.finished_at < ?
		) AS u JOIN endpoints e ON e.id = u.endpoint_id
		GROUP BY e.project_id, u.endpoint_id, u.minute`, p.From, p.To, p.From, p.To, p.From, p.To)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []store.HistoryPoint
	for rows.Next() {
		var h store.HistoryPoint
		if err := rows.Scan(&h.ProjectID, &h.EndpointID, &h.Minute, &h.Claims, &h.Succeeded, &h.Failed, &h.TimedOut, &h.LagSumMs, &h.LagCount, &h.LagMaxMs); err != nil {
			return nil, err
		}
		out = append(out, h)
	}
	return out, q.D.Translate(rows.Err())
}

// HistoryInsert writes one row per point: a minute holds one row per
// endpoint, so these are few.
func (q *Queries) HistoryInsert(ctx context.Context, points []store.HistoryPoint) (int64, error) {
	var n int64
	for _, h := range points {
		r, err := q.exec(ctx, `INSERT INTO history (project_id, endpoint_id, minute, claims, succeeded, failed, timed_out, lag_sum_ms, lag_count, lag_max_ms)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (project_id, endpoint_id, minute) DO NOTHING`,
			h.ProjectID, h.EndpointID, h.Minute, h.Claims, h.Succeeded, h.Failed, h.TimedOut, h.LagSumMs, h.LagCount, h.LagMaxMs)
		if err != nil {
			return n, err
		}
		k, err := r.RowsAffected()
		if err != nil {
			return n, err
		}
		n += k
	}
	return n, nil
}

func (q *Queries) HistoryList(ctx context.Context, p *store.HistoryListParams) ([]store.HistoryPoint, error) {
	where, args := `h.project_id = ? AND h.minute >= ? AND h.minute < ?`, []any{p.ProjectID, p.From, p.To}
	if p.EndpointID != 0 {
		where += ` AND h.endpoint_id = ?`
		args = append(args, p.EndpointID)
	}
	rows, err := q.query(ctx, `SELECT h.project_id, h.endpoint_id, e.name, h.minute, h.claims, h.succeeded, h.failed, h.timed_out, h.lag_sum_ms, h.lag_count, h.lag_max_ms
		FROM history h JOIN endpoints e ON e.id = h.endpoint_id WHERE `+where+` ORDER BY e.name, h.minute`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []store.HistoryPoint
	for rows.Next() {
		var h store.HistoryPoint
		if err := rows.Scan(&h.ProjectID, &h.EndpointID, &h.Endpoint, &h.Minute, &h.Claims, &h.Succeeded, &h.Failed, &h.TimedOut, &h.LagSumMs, &h.LagCount, &h.LagMaxMs); err != nil {
			return nil, err
		}
		out = append(out, h)
	}
	return out, q.D.Translate(rows.Err())
}

func (q *Queries) HistoryPrune(ctx context.Context, p *store.HistoryPruneParams) (int64, error) {
	r, err := q.exec(ctx, `DELETE FROM history WHERE minute < ?`, p.Before)
	if err != nil {
		return 0, err
	}
	return r.RowsAffected()
}

var _ store.Queries = (*Queries)(nil)
