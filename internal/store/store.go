// Package store is the persistence boundary of Ratchet: one interface, two
// drivers (SQLite embedded, PostgreSQL for several nodes) and one conformance
// suite (storetest) both must pass.
//
// Drivers only persist, atomically. Every decision — gates, circuits, the
// delay arithmetic — is made by the engine inside a transaction the store
// opens (Store.Tx), so the same rules hold on every driver and, with
// PostgreSQL's row locks, across nodes. Every time-dependent method takes the
// time as a parameter (unix milliseconds); SQL never calls now().
package store

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/getratchet/ratchet/wire"
)

// Sentinel errors every driver translates its own errors to.
var (
	ErrNotFound  = errors.New("not found")
	ErrConflict  = errors.New("conflict")
	ErrLeaseLost = errors.New("lease lost")
	// ErrUnavailable means the database could not be reached; the request may
	// be retried later.
	ErrUnavailable = errors.New("store unavailable")
)

// Store is a database.
type Store interface {
	// Tx runs fn in a read-write transaction and commits when fn returns nil.
	// Writers are serialised per driver as needed; PostgreSQL callers lock the
	// rows they decide on (EndpointGet with ForUpdate, JobsClaimable).
	Tx(ctx context.Context, fn func(q Queries) error) error
	// Read runs fn in a read-only snapshot.
	Read(ctx context.Context, fn func(q Queries) error) error
	// Migrate applies the numbered migrations that have not run yet.
	Migrate(ctx context.Context) (applied []string, err error)
	// Migrations lists every migration with whether it has been applied.
	Migrations(ctx context.Context) ([]Migration, error)
	// Ping reports whether the database answers.
	Ping(ctx context.Context) error
	// Notify tells every node that jobs may have become claimable; Wakeups
	// delivers those notices (from this node and others). A single-process
	// driver may deliver only its own.
	Notify(ctx context.Context) error
	Wakeups() <-chan struct{}
	// Driver names the driver: "sqlite" or "postgres".
	Driver() string
	// ConcurrentWriters reports whether read-write transactions run at the
	// same time (PostgreSQL), rather than one after another (SQLite's single
	// writer). The engine claims optimistically only where they do.
	ConcurrentWriters() bool
	Close() error
}

// Migration is one numbered schema change.
type Migration struct {
	Version int    `json:"version"`
	Name    string `json:"name"`
	Applied bool   `json:"applied"`
}

// Project is a tenant.
type Project struct {
	ID        int64
	Name      string
	Plan      wire.Plan
	CreatedAt int64
}

// APIKey is a stored key. Only the SHA-256 of the secret is kept.
type APIKey struct {
	ID        int64
	ProjectID int64
	Name      string
	Scope     wire.Scope
	Hash      string   // hex SHA-256 of the secret
	Prefix    string   // first characters of the secret, for recognising it
	Tools     []string // worker allowlist of tool@version; empty for other scopes
	CreatedAt int64
	RevokedAt int64 // 0 while valid
}

// Endpoint is a provider destination with its policy and circuit.
type Endpoint struct {
	ID                 int64
	ProjectID          int64
	Name               string
	Policy             json.RawMessage // retry policy document (preset or CUSTOM)
	DefaultTimeoutMs   int64
	MaxConcurrent      int64
	RateLimitPerMinute *int64 // nil: unlimited
	CircuitThreshold   int64  // consecutive provider-unhealthy failures that open the circuit
	CircuitOpenMs      int64  // how long the circuit stays open before a half-open probe
	Version            int64
	CreatedAt          int64
	UpdatedAt          int64

	CircuitState    wire.CircuitState
	CircuitFailures int64 // consecutive counted failures while closed
	CircuitOpenedAt int64 // when it last opened (unix ms)
	CircuitProbeJob int64 // job id of the half-open probe in flight, 0 when none
}

// Tool is a published tool contract.
type Tool struct {
	ID          int64
	ProjectID   int64
	Name        string
	Version     string
	EndpointID  int64
	Description string
	Schema      json.RawMessage // JSON Schema of the payload; null when none
	TimeoutMs   *int64
	RetryPolicy json.RawMessage // policy document; null when the tool has none
	CreatedAt   int64
}

// Run groups steps.
type Run struct {
	ID         int64
	ProjectID  int64
	Name       string
	State      wire.RunState
	CreatedAt  int64
	FinishedAt int64
}

// Job is one durable unit of work.
type Job struct {
	ID              int64
	ProjectID       int64
	ToolID          int64
	Tool            string
	Version         string
	EndpointID      int64
	Endpoint        string
	RunID           int64 // 0 when none
	Payload         json.RawMessage
	IdempotencyKey  string
	Policy          json.RawMessage // the resolved policy snapshot
	MaxAttempts     int64
	TimeoutMs       int64
	Attempt         int64 // attempts started so far
	State           wire.JobState
	DueAt           int64
	LeaseToken      string
	LeaseExpiresAt  int64
	WorkerID        string
	CancelRequested bool
	ReplayOf        int64
	CreatedAt       int64
	UpdatedAt       int64
	FinishedAt      int64
	ClaimedAt       int64 // when the current attempt was claimed (while running)
}

// JobGuard is what a job's row must still hold for a guarded write
// (JobsUpdate): what a concurrent report, rescue, claim or cancel of the
// job changes. A heartbeat changes only the lease's expiry, which the
// guarded writes replace.
type JobGuard struct {
	State           wire.JobState
	LeaseToken      string
	CancelRequested bool
}

// GuardOf is the guard of a job as it was read.
func GuardOf(j *Job) JobGuard {
	return JobGuard{State: j.State, LeaseToken: j.LeaseToken, CancelRequested: j.CancelRequested}
}

// RunningAttempt is the attempt a running job is making. An attempt is
// stored when it finishes; until then the job's claim columns are the
// attempt, and the drivers read them back as such (AttemptGet, AttemptList,
// AttemptsByKeys). Callers holding the job need not read it again.
func RunningAttempt(j *Job) Attempt {
	return Attempt{JobID: j.ID, Number: j.Attempt, EndpointID: j.EndpointID, WorkerID: j.WorkerID, LeaseToken: j.LeaseToken, ClaimedAt: j.ClaimedAt}
}

// Attempt is one claim of a job and what followed it.
type Attempt struct {
	JobID          int64
	Number         int64
	EndpointID     int64
	WorkerID       string
	LeaseToken     string
	ClaimedAt      int64
	FinishedAt     int64               // 0 while running
	Outcome        wire.AttemptOutcome // empty while running
	Classification string
	HTTPStatus     int64
	RetryAfterMs   int64
	Message        string
	BaseDelayMs    float64
	JitterSample   float64
	MinDelayMs     int64
	MaxDelayMs     int64
	SelectedMs     int64
	NextDueAt      int64
	Counted        bool // counted toward the circuit
}

// AttemptKey names one attempt: the job and the attempt's number.
type AttemptKey struct {
	JobID, Number int64
}

// JobFilter selects jobs for listing and bulk actions.
type JobFilter struct {
	ProjectID     int64
	States        []wire.JobState
	Tool          string // name, optional
	Version       string // optional, with Tool
	EndpointID    int64
	RunID         int64
	CreatedAfter  int64 // inclusive, 0 for none
	CreatedBefore int64 // exclusive, 0 for none
	DueBefore     int64 // due at or before, 0 for none
	AfterID       int64 // cursor: ids below this (newest first)
	Limit         int
}

// ClaimParams hands due jobs of one endpoint to a worker.
type ClaimParams struct {
	IDs        []int64
	WorkerID   string
	LeaseToken string
	Now        int64
}

// ClaimDueParams hands up to Limit due jobs of one endpoint to a worker.
type ClaimDueParams struct {
	EndpointID int64
	ToolIDs    []int64
	Limit      int
	WorkerID   string
	LeaseToken string
	Now        int64
}

// Queries are the operations available inside a transaction.
type Queries interface {
	ProjectCreate(ctx context.Context, p *Project) error
	ProjectGet(ctx context.Context, id int64) (*Project, error)
	// ProjectCount counts projects. In a Tx it also keeps other
	// transactions from creating projects until commit, so a decision on the
	// count (the first start's bootstrap) holds across nodes.
	ProjectCount(ctx context.Context) (int64, error)
	ProjectSetPlan(ctx context.Context, id int64, plan wire.Plan) error

	KeyCreate(ctx context.Context, k *APIKey) error
	KeyByHash(ctx context.Context, hash string) (*APIKey, error)
	KeyList(ctx context.Context, projectID int64) ([]APIKey, error)
	KeyRevoke(ctx context.Context, projectID, id, now int64) error

	EndpointCreate(ctx context.Context, e *Endpoint) error // ErrConflict when the name exists
	EndpointGet(ctx context.Context, projectID int64, name string) (*Endpoint, error)
	// EndpointByID reads an endpoint; forUpdate locks its row until commit so
	// gate decisions about it are serialised across nodes.
	EndpointByID(ctx context.Context, id int64, forUpdate bool) (*Endpoint, error)
	// EndpointList lists a project's endpoints by name; projectID 0 lists
	// every project's (for metrics).
	EndpointList(ctx context.Context, projectID int64) ([]Endpoint, error)
	// EndpointUpdatePolicy writes the policy fields when Version equals
	// expectedVersion and bumps it; otherwise ErrConflict.
	EndpointUpdatePolicy(ctx context.Context, e *Endpoint, expectedVersion int64) error
	EndpointUpdateCircuit(ctx context.Context, e *Endpoint) error

	ToolCreate(ctx context.Context, t *Tool) error // ErrConflict when name@version exists
	ToolGet(ctx context.Context, projectID int64, name, version string) (*Tool, error)
	ToolByID(ctx context.Context, id int64) (*Tool, error)
	ToolList(ctx context.Context, projectID int64) ([]Tool, error)

	RunCreate(ctx context.Context, r *Run) error
	RunGet(ctx context.Context, projectID, id int64) (*Run, error)
	RunFinish(ctx context.Context, projectID, id, now int64) error

	// JobInsert stores a new job and sets its ID. A repeated idempotency key
	// in the project returns ErrConflict and stores nothing.
	JobInsert(ctx context.Context, j *Job) error
	// JobsInsert stores new jobs without idempotency keys and sets their
	// IDs, ascending in the order given.
	JobsInsert(ctx context.Context, jobs []*Job) error
	JobByIdempotencyKey(ctx context.Context, projectID int64, key string) (*Job, error)
	JobGet(ctx context.Context, projectID, id int64) (*Job, error)
	JobByID(ctx context.Context, id int64) (*Job, error)
	// JobUpdate writes the mutable fields of a job (state, due time, lease,
	// attempt, cancel flag, timestamps).
	JobUpdate(ctx context.Context, j *Job) error
	// JobsByIDs reads the project's jobs with these ids in id order, all
	// but their payloads (left empty); ids that are missing or belong to
	// another project are left out. With lock
	// it locks them (PostgreSQL: FOR UPDATE) as JobGet does; without, a
	// caller that writes what it read guards the write (JobsUpdate with
	// guards).
	JobsByIDs(ctx context.Context, projectID int64, ids []int64, lock bool) ([]Job, error)
	// JobsUpdate is JobUpdate for many jobs with distinct ids, in one round
	// trip; ErrNotFound when any of them is missing. With guards (one per
	// job) a job is written only while its row still holds its guard, and
	// ErrConflict says one did not: the caller rolls back and reads again.
	JobsUpdate(ctx context.Context, jobs []*Job, guards []JobGuard) error
	JobList(ctx context.Context, f JobFilter) ([]Job, error)
	JobCount(ctx context.Context, f JobFilter) (int64, error)
	// JobCountsByState counts a project's jobs per state; projectID 0 counts
	// every project's.
	JobCountsByState(ctx context.Context, projectID int64) (map[wire.JobState]int64, error)

	// DueEndpoints lists endpoints with scheduled jobs of these tools due at
	// or before now.
	DueEndpoints(ctx context.Context, toolIDs []int64, now int64) ([]int64, error)
	// JobsClaimable returns up to limit scheduled jobs of the endpoint for
	// these tools, due at or before now, oldest due first, locking them
	// (PostgreSQL: FOR UPDATE SKIP LOCKED).
	JobsClaimable(ctx context.Context, endpointID int64, toolIDs []int64, now int64, limit int) ([]Job, error)
	// JobsClaim moves the jobs to running with the lease (expiry = now + the
	// job's timeout), increments their attempt and starts their attempts.
	JobsClaim(ctx context.Context, p ClaimParams) error
	// JobsClaimDue is JobsClaimable followed by JobsClaim in one step: it
	// moves up to Limit scheduled jobs of the endpoint for these tools, due at
	// or before Now, oldest due first (then lowest id), to running with the
	// lease, starts their attempts, and returns the jobs as they are after
	// the claim (all but their policies, left empty), in that order.
	// PostgreSQL skips rows another transaction has locked.
	JobsClaimDue(ctx context.Context, p ClaimDueParams) ([]Job, error)
	// CountScheduled counts the endpoint's scheduled jobs, and of those the
	// ones due at or before dueBy.
	CountScheduled(ctx context.Context, endpointID, dueBy int64) (scheduled, due int64, err error)
	// CountRunning counts running jobs of the endpoint, stopping at limit.
	CountRunning(ctx context.Context, endpointID, limit int64) (int64, error)
	// ClaimsSince counts attempts of the endpoint claimed at or after since,
	// stopping at limit, and returns the earliest such claim time.
	ClaimsSince(ctx context.Context, endpointID, since, limit int64) (count, earliest int64, err error)
	// AttemptsFinishedSince counts attempts of the endpoint finished at or
	// after since, stopping at limit.
	AttemptsFinishedSince(ctx context.Context, endpointID, since, limit int64) (int64, error)
	// NextDueAt is the earliest due time of scheduled jobs of these tools
	// (0 when none).
	NextDueAt(ctx context.Context, toolIDs []int64) (int64, error)
	// ExpiredLeases lists running jobs whose lease ended at or before now.
	ExpiredLeases(ctx context.Context, now int64, limit int) ([]Job, error)
	// JobsPrune deletes finished jobs (and their attempts) that finished
	// before the given time, at most limit of them, and returns how many.
	JobsPrune(ctx context.Context, finishedBefore int64, limit int) (int64, error)

	AttemptGet(ctx context.Context, jobID, number int64) (*Attempt, error)
	// AttemptsByKeys reads the attempts with these keys, in no particular
	// order; keys without an attempt are left out.
	AttemptsByKeys(ctx context.Context, keys []AttemptKey) ([]Attempt, error)
	AttemptFinish(ctx context.Context, a *Attempt) error
	// AttemptsFinish is AttemptFinish for many attempts with distinct keys,
	// in one round trip; ErrNotFound when any of them is missing.
	AttemptsFinish(ctx context.Context, as []*Attempt) error
	AttemptList(ctx context.Context, jobID int64) ([]Attempt, error)
	// AttemptOutcomes counts the endpoint's attempts finished at or after
	// since, by outcome.
	AttemptOutcomes(ctx context.Context, endpointID, since int64) (map[wire.AttemptOutcome]int64, error)
}
