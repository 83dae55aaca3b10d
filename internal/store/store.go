// Package store is the persistence boundary of Ratchet: one interface, two
// drivers (SQLite embedded, PostgreSQL for several nodes) and one conformance
// suite (storetest) both must pass.
//
// Drivers only persist, atomically. Every decision — gates, circuits, the
// delay arithmetic — is made by the engine inside a transaction the store
// opens (Store.Tx), so the same rules hold on every driver and, with
// PostgreSQL's row locks, across nodes. Every time-dependent method takes the
// time as a parameter (unix milliseconds); SQL never calls now(). The time
// itself may come from the database (Queries.Now), read once and passed in.
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
	// ErrStorageFull means the database answered but cannot write: the
	// disk (or PostgreSQL's) is full. The write was rolled back; reads go
	// on, and writes succeed again once space is freed.
	ErrStorageFull = errors.New("store cannot write: storage full")
)

// Store is a database.
type Store interface {
	// Tx runs fn in a read-write transaction and commits when fn returns nil.
	// Writers are serialised per driver as needed; PostgreSQL callers lock the
	// rows they decide on (EndpointGetAnyProject with Lock, JobsClaimable).
	Tx(ctx context.Context, fn func(q Queries) error) error
	// Read runs fn in a read-only snapshot.
	Read(ctx context.Context, fn func(q Queries) error) error
	// Migrate applies the numbered migrations that have not run yet.
	Migrate(ctx context.Context) (applied []string, err error)
	// Migrations lists every migration with whether it has been applied. A
	// failed read is an error, never a list of unapplied migrations.
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
	// Close releases the database. Afterwards every method fails (Wakeups
	// simply stays quiet); closing again does nothing.
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
	ID        int64
	ProjectID int64
	Name      string
	Policy    json.RawMessage // retry policy document (preset or CUSTOM)
	Version   int64
	CreatedAt int64
	UpdatedAt int64

	// The settings (lease, limits, circuit settings, limits per flow key
	// and what comes next), one column each, named by their db tags; the
	// drivers derive the columns from the struct.
	wire.EndpointSettings

	CircuitState    wire.CircuitState
	CircuitFailures int64  // consecutive counted failures while closed
	CircuitOpenedAt int64  // when it last opened (unix ms)
	CircuitProbeJob int64  // job id of the half-open probe in flight, 0 when none
	CircuitOpenedBy string // the key that opened the circuit by hand; "" when failures opened it

	PausedAt     int64  // when an owner paused the endpoint (unix ms); 0 while not paused
	PausedBy     string // the key that paused it: its name, or its prefix when unnamed
	PausedReason string // the reason given, "" for none

	// CircuitProbeAt is when an open circuit half-opens when a provider's
	// Retry-After asked for longer than CircuitOpenMs; 0 for
	// CircuitOpenedAt + CircuitOpenMs.
	CircuitProbeAt int64
	Recovery       Recovery
	Learned        LearnedLimit
}

// Recovery is an endpoint's recovery ramp (the gate recovering): after its
// circuit closes or a pause ends, the claims a second it admits start low,
// grow while the provider answers well and are cut on throttles, 5xx and
// timeouts, until they reach the endpoint's limits. Rate 0: not recovering.
type Recovery struct {
	Rate       int64 // claims a second admitted, in thousandths
	Ceiling    int64 // the rate of the last cut, in thousandths: slow start doubles below it, then grows by steps; 0 before any cut
	StartedAt  int64 // when the ramp started (unix ms)
	AdjustedAt int64 // when it last grew or was cut
	BadAt      int64 // when a claim made since AdjustedAt was answered badly; 0 if none
}

// LearnedLimit is a rate limit the provider stated in its response
// headers (classify.ReadQuota): Limit requests per WindowMs, last said at
// At; none remain until ResetAt. Limit 0: none learned.
type LearnedLimit struct {
	Limit    int64
	WindowMs int64
	At       int64
	ResetAt  int64
	Source   string
}

// FlowKeyParked is a flow key's ready time while it is at its concurrency
// limit: it is offered no claim until one of its jobs finishes.
const FlowKeyParked int64 = 1<<63 - 1

// AuditEntry is one operator action (a pause, a circuit closed by hand, a
// run-now, a bulk action, a key created...), written in the transaction of
// the action.
type AuditEntry struct {
	ID        int64
	ProjectID int64
	At        int64  // when (unix ms)
	Actor     string // the acting key's name, or its prefix when unnamed
	KeyPrefix string // the acting key's prefix
	Action    string // e.g. "endpoint.pause", "job.run_now"
	Target    string // e.g. "endpoint:payments", "job:42"
	Detail    string // one sentence for people
}

// EndpointEvent is one entry of an endpoint's event log (a change of its
// circuit, a pause, a resume, a recovery, a learned limit), written in the
// transaction of the change. Facts that do not apply to the kind are 0.
type EndpointEvent struct {
	ID          int64
	ProjectID   int64
	EndpointID  int64
	Endpoint    string // the endpoint's name (read with the event; not stored)
	At          int64  // when (unix ms)
	Kind        wire.EndpointEventKind
	Failures    int64            // consecutive counted failures of the circuit
	Threshold   int64            // the circuit's failure threshold
	OpenedAt    int64            // when the circuit opened; 0 when it is not open
	NextProbeAt int64            // when it half-opens; 0 when it is not open
	ProbeJob    int64            // the half-open probe's job; 0 for none
	HeldJobs    int64            // the endpoint's scheduled jobs
	Actor       string           // the key that acted, for changes by hand
	Detail      string           // one sentence for people
	Facts       map[string]int64 // numbers of the kind without a column of their own; nil for none
}

// AlertSink is where a project's alerts go (docs/alerts.md).
type AlertSink struct {
	ID        int64
	ProjectID int64
	Name      string
	Kind      wire.AlertSinkKind
	URL       string
	Secret    string // a webhook sink's signing secret ("whsec_..."); "" for others
	CreatedAt int64
}

// AlertSettings are a project's alert thresholds (wire.AlertSettings).
type AlertSettings struct {
	ProjectID          int64
	PausedAfterMs      int64
	FailureRatePercent int64
	FailureRateMin     int64
	WindowMs           int64
	MaxPerWindow       int64
	UpdatedAt          int64
}

// Alert is one alert raised, once per project and DedupKey.
type Alert struct {
	ID         int64
	ProjectID  int64
	EndpointID int64 // 0 for a test alert
	Kind       wire.AlertKind
	At         int64
	DedupKey   string
	EventID    int64  // the endpoint event it reports; 0 for none
	Count      int64  // what it groups (exhausted jobs, suppressed alerts), read when it is sent
	Body       string // its facts as JSON (wire.Alert without the counts read at send)
}

// AlertDelivery is one alert to one sink: the outbox row, retried with
// backoff until delivered or out of attempts.
type AlertDelivery struct {
	ID          int64
	AlertID     int64
	SinkID      int64
	State       wire.AlertDeliveryState
	Attempts    int64
	DueAt       int64
	LeaseUntil  int64
	LastStatus  int64
	LastError   string
	DeliveredAt int64
	// Alert and Sink are read with the row by AlertDeliveriesDue.
	Alert *Alert
	Sink  *AlertSink
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
	// Delivery is the tool's HTTP target (method, URL template, static
	// headers) as a JSON document; nil for a tool run by workers.
	Delivery json.RawMessage
	// DeliverySecret is the Standard Webhooks signing secret ("whsec_...");
	// "" when deliveries are not signed. Never shown after publish.
	DeliverySecret string
	// FlowKeyFrom is a JSON Pointer (RFC 6901) into the payload whose
	// value becomes the flow key of a job enqueued without one; "" for
	// none.
	FlowKeyFrom string
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

// Schedule is a recurring job (docs/schedules.md). Times are unix ms.
type Schedule struct {
	ID             int64
	ProjectID      int64
	Name           string
	Cron           string
	TimeZone       string
	Tool           string // "name@version"
	Payload        []byte // JSON; nil for none
	FlowKey        string
	Paused         bool
	Overlap        wire.ScheduleOverlap
	CatchUp        wire.ScheduleCatchUp
	CatchUpLimit   int64
	SpreadMs       int64
	SpreadOffsetMs int64
	NextTickAt     int64 // the next tick
	NextFireAt     int64 // NextTickAt + SpreadOffsetMs: when the ticker fires it
	LastJobID      int64 // the job of the latest tick that made one; 0 for none
	CreatedAt      int64
	UpdatedAt      int64
}

// ScheduleTick is what one tick of a schedule did.
type ScheduleTick struct {
	ID            int64
	ScheduleID    int64
	TickAt        int64
	FireAt        int64
	FiredAt       int64
	Outcome       wire.TickOutcome
	Overlap       wire.ScheduleOverlap
	JobID         int64 // 0 when the tick made no job
	PreviousJobID int64 // the unfinished earlier job skipped over or cancelled; 0 for none
	Missed        int64 // ticks before this one the catch-up policy dropped
	Error         string
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
	// LastClassification is the decision's code of the last finished
	// attempt ("" before any); LastError the message of the last failed
	// one ("" if none). The engine sets both as an attempt finishes, so
	// lists and search read them from the job row.
	LastClassification string
	LastError          string
	// FlowKey is the tenant, account or resource the job is made for
	// (docs/flow-control.md), "" for none. Set at insert, never changed.
	FlowKey string
	// Traceparent and Tracestate are the job's W3C trace context
	// (internal/traceparent), "" for none: handed to workers with each
	// claim and sent with each delivery. Set at insert, never changed.
	Traceparent, Tracestate string
	// Throttles are the attempts that were provider throttles not counted
	// against MaxAttempts (docs/outages.md): Attempt - Throttles attempts
	// count.
	Throttles int64
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
	ThrottleFree   bool // a provider throttle not counted against the job's maxAttempts
	// What an HTTP delivery saw; zero for attempts reported by workers.
	RequestMs       int64  // the request's duration, from connect to the end of the body read
	ResponseHeaders string // the response headers that mattered (classification, rate limits) as a JSON object; "" for none
	ResponseExcerpt string // the start of the response body: clean, valid UTF-8, bounded
}

// AttemptKey names one attempt: the job and the attempt's number.
type AttemptKey struct {
	JobID, Number int64
}

// JobFilter selects jobs for listing and bulk actions (JobList, JobCount).
// Every field but ProjectID narrows the selection; its zero value does not.
type JobFilter struct {
	ProjectID     int64           // the project whose jobs are selected; required
	States        []wire.JobState // jobs in any of these states; none: every state
	Tool          string          // tool name, optional
	Version       string          // tool version, optional, with Tool
	EndpointID    int64           // jobs of this endpoint, 0 for any
	RunID         int64           // jobs of this run, 0 for any
	FlowKey       string          // jobs of this flow key (exact), "" for any
	CreatedAfter  int64           // created at or after, 0 for none
	CreatedBefore int64           // created before, 0 for none
	DueBefore     int64           // due at or before, 0 for none
	// Sort is the order of JobList (and of the window of a bounded text
	// search); "" is wire.SortIDDesc, newest first. The finished orders
	// (wire.JobSort.ByFinish) select failed and exhausted jobs only (of
	// States, when given): the partial indexes that order jobs by finish
	// time hold those states alone (internal/store/sqlstore/jobs_list.go).
	Sort wire.JobSort
	// AfterID and AfterFinishedAt are the cursor: the key of the last job
	// of the previous page (JobKeyOf), whose successors in Sort's order
	// are read. AfterID 0 for none; AfterFinishedAt is read with the
	// finished orders only.
	AfterID         int64
	AfterFinishedAt int64
	// Q is search text: digits only match the job id exactly; other text
	// matches an exact idempotency key, tool name or endpoint name, or a
	// substring of the payload or of LastError, case-insensitive for ASCII.
	// "" for none.
	Q string
	// ScanLimit bounds a text search (Q not a job id) in JobList, JobCount
	// and JobCountGroupByState: only the newest ScanLimit jobs matching the
	// other filters (below AfterID) are searched, so a page or a count
	// costs at most that many rows; JobScanEnd says where the window ends.
	// 0 searches every job.
	ScanLimit int
	Limit     int // JobList's page size, 0 for 100; JobCount ignores it
}

// JobKey is a job's place in a list's order: its id and, for the finished
// orders, its finish time. It is the cursor of the next page
// (JobFilter.AfterID, AfterFinishedAt); the zero key is none.
type JobKey struct {
	ID         int64
	FinishedAt int64
}

// JobKeyOf is j's key in order s.
func JobKeyOf(j *Job, s wire.JobSort) JobKey {
	if s.ByFinish() {
		return JobKey{ID: j.ID, FinishedAt: j.FinishedAt}
	}
	return JobKey{ID: j.ID}
}

// Queries are the operations available inside a transaction.
//
// Methods follow one shape: EntityVerb(ctx, *EntityVerbParams) wherever a
// method needs several values of one type or a flag; a method that takes one
// id (or one value of each of a few types) takes it as it is. Lookups say
// whether they check the project: XGetInProject finds a row only in the
// project given, XGetAnyProject finds it by id alone (for callers that
// already hold an id they trust, such as a job's tool).
//
// Times are unix milliseconds chosen by the caller.
type Queries interface {
	// Now reads the database server's clock, in unix milliseconds, at the
	// moment of the call (PostgreSQL's clock_timestamp(), not the
	// transaction's start). Nodes that share a database take the time of
	// their decisions from here (engine.Config.DatabaseClock), so that
	// nodes whose clocks disagree still agree on leases, gates and due
	// times; a caller that read the time after taking a row lock is sure
	// to read a time no earlier than that of whoever held the lock. SQLite
	// reads the machine's clock, which is the process's own.
	Now(ctx context.Context) (int64, error)

	ProjectCreate(ctx context.Context, p *Project) error
	ProjectGet(ctx context.Context, id int64) (*Project, error)
	// ProjectCount counts projects. In a Tx it also keeps other
	// transactions from creating projects until commit, so a decision on the
	// count (the first start's bootstrap) holds across nodes.
	ProjectCount(ctx context.Context) (int64, error)
	ProjectSetPlan(ctx context.Context, id int64, plan wire.Plan) error
	// ProjectNoteWrite adds one to the project's count of operator writes,
	// in the write's transaction (on PostgreSQL it locks the project's row
	// until commit, so counts are ordered as commits are).
	ProjectNoteWrite(ctx context.Context, id int64) error
	// ProjectWrites reads the project's count of operator writes: a view
	// read when it was n holds every write up to n.
	ProjectWrites(ctx context.Context, id int64) (int64, error)

	KeyCreate(ctx context.Context, k *APIKey) error // ErrConflict when the hash exists
	// KeyByHash finds a key of any project by the hash of its secret.
	KeyByHash(ctx context.Context, hash string) (*APIKey, error)
	KeyList(ctx context.Context, projectID int64) ([]APIKey, error)
	// KeyRevoke revokes a valid key of the project; ErrNotFound when the
	// project has no such key or it is revoked already.
	KeyRevoke(ctx context.Context, p *KeyRevokeParams) error

	EndpointCreate(ctx context.Context, e *Endpoint) error // ErrConflict when the name exists
	// EndpointGetInProject finds the project's endpoint by name.
	EndpointGetInProject(ctx context.Context, p *EndpointGetInProjectParams) (*Endpoint, error)
	// EndpointGetAnyProject reads an endpoint by id, whatever its project;
	// with Lock it locks the row until commit so gate decisions about it are
	// serialised across nodes.
	EndpointGetAnyProject(ctx context.Context, p *EndpointGetAnyProjectParams) (*Endpoint, error)
	// EndpointList lists a project's endpoints by name; projectID 0 lists
	// every project's (for metrics).
	EndpointList(ctx context.Context, projectID int64) ([]Endpoint, error)
	// EndpointUpdatePolicy writes the policy fields of p.Endpoint when its
	// stored version is p.ExpectedVersion, bumps the version and sets
	// p.Endpoint.Version to the new one; otherwise (or when the endpoint is
	// missing) ErrConflict.
	EndpointUpdatePolicy(ctx context.Context, p *EndpointUpdatePolicyParams) error
	// EndpointUpdateCircuit writes the circuit fields of e (state,
	// failures, opened at and by, probe job, probe at) and its recovery
	// ramp (e.Recovery); ErrNotFound when it is missing.
	EndpointUpdateCircuit(ctx context.Context, e *Endpoint) error
	// EndpointUpdateLearned writes e.Learned, the limit learned from the
	// provider's headers; ErrNotFound when it is missing.
	EndpointUpdateLearned(ctx context.Context, e *Endpoint) error
	// EndpointUpdatePause writes the pause fields of e (PausedAt, PausedBy,
	// PausedReason) and UpdatedAt; ErrNotFound when it is missing.
	EndpointUpdatePause(ctx context.Context, e *Endpoint) error

	// AuditInsert stores an audit entry and sets its ID.
	AuditInsert(ctx context.Context, a *AuditEntry) error
	// AuditList lists a project's audit entries newest first (by id).
	AuditList(ctx context.Context, p *AuditListParams) ([]AuditEntry, error)

	// EndpointEventInsert stores an endpoint event and sets its ID.
	EndpointEventInsert(ctx context.Context, ev *EndpointEvent) error
	// EndpointEventList lists a project's endpoint events newest first
	// (by id), with the endpoint's name.
	EndpointEventList(ctx context.Context, p *EndpointEventListParams) ([]EndpointEvent, error)
	// EndpointEventsAfter lists the events of every project with ids above
	// p.AfterID, oldest first, with their endpoints' names: the feed that
	// alerts read.
	EndpointEventsAfter(ctx context.Context, p *EndpointEventsAfterParams) ([]EndpointEvent, error)
	// EndpointEventsPrune deletes events older than p.Before, at most
	// p.Limit of them; it returns how many went.
	EndpointEventsPrune(ctx context.Context, p *EndpointEventsPruneParams) (int64, error)

	// AlertSinkCreate stores a sink and sets its ID; ErrConflict when the
	// project has a sink of that name.
	AlertSinkCreate(ctx context.Context, k *AlertSink) error
	// AlertSinkList lists a project's sinks by name.
	AlertSinkList(ctx context.Context, projectID int64) ([]AlertSink, error)
	// AlertSinkDelete deletes the project's sink by name and its deliveries
	// not yet made; ErrNotFound when it has none.
	AlertSinkDelete(ctx context.Context, p *AlertSinkDeleteParams) error
	// AlertSettingsGet reads a project's thresholds; ErrNotFound when it
	// has set none.
	AlertSettingsGet(ctx context.Context, projectID int64) (*AlertSettings, error)
	// AlertSettingsPut stores a project's thresholds, replacing any.
	AlertSettingsPut(ctx context.Context, a *AlertSettings) error
	// AlertFeedGet reads how far alerts have read the endpoint events (an
	// event id) and, in a Tx, locks that position until commit, so one
	// node at a time reads the feed.
	AlertFeedGet(ctx context.Context) (int64, error)
	// AlertFeedSet stores how far alerts have read the endpoint events.
	AlertFeedSet(ctx context.Context, lastEventID int64) error
	// AlertInsert stores an alert and sets its ID; ErrConflict when the
	// project has an alert with its DedupKey.
	AlertInsert(ctx context.Context, a *Alert) error
	// AlertByKey reads the project's alert with a DedupKey; ErrNotFound
	// when it has none.
	AlertByKey(ctx context.Context, p *AlertByKeyParams) (*Alert, error)
	// AlertAddCount adds p.N to an alert's Count.
	AlertAddCount(ctx context.Context, p *AlertAddCountParams) error
	// AlertsCount counts an endpoint's alerts at or after p.From and
	// before p.To, those of kind p.Except aside.
	AlertsCount(ctx context.Context, p *AlertsCountParams) (int64, error)
	// AlertDeliveriesInsert stores deliveries and sets their IDs.
	AlertDeliveriesInsert(ctx context.Context, ds []*AlertDelivery) error
	// AlertDeliveriesDue leases up to p.Limit pending deliveries due at
	// or before p.Now whose lease has ended (until p.LeaseUntil), oldest
	// due first, each with its alert and sink; PostgreSQL skips rows
	// another transaction holds. With p.Peek it only reads them.
	AlertDeliveriesDue(ctx context.Context, p *AlertDeliveriesDueParams) ([]AlertDelivery, error)
	// AlertDeliveryFinish writes a delivery's state, attempts, due time,
	// last answer and delivery time, and ends its lease.
	AlertDeliveryFinish(ctx context.Context, d *AlertDelivery) error
	// AlertsPrune deletes alerts raised before p.Before with no delivery
	// pending, and their deliveries, at most p.Limit alerts; it returns how
	// many alerts went.
	AlertsPrune(ctx context.Context, p *AlertsPruneParams) (int64, error)
	// AlertDeliveryList lists a project's latest deliveries, newest first,
	// each with its alert and sink.
	AlertDeliveryList(ctx context.Context, p *AlertDeliveryListParams) ([]AlertDelivery, error)

	ToolCreate(ctx context.Context, t *Tool) error // ErrConflict when name@version exists
	// ToolGetInProject finds the project's tool by name and version.
	ToolGetInProject(ctx context.Context, p *ToolGetInProjectParams) (*Tool, error)
	// ToolGetAnyProject reads a tool by id, whatever its project.
	ToolGetAnyProject(ctx context.Context, id int64) (*Tool, error)
	ToolList(ctx context.Context, projectID int64) ([]Tool, error)
	// ToolListDelivery lists the tools of every project that have an HTTP
	// delivery target, by id: the tools the dispatcher claims for.
	ToolListDelivery(ctx context.Context) ([]Tool, error)

	RunCreate(ctx context.Context, r *Run) error
	// RunGetInProject finds the project's run by id; ErrNotFound when the
	// run belongs to another project.
	RunGetInProject(ctx context.Context, p *RunGetInProjectParams) (*Run, error)
	// RunFinish finishes an open run of the project; ErrNotFound when the
	// project has no such open run.
	RunFinish(ctx context.Context, p *RunFinishParams) error
	// RunList lists a project's runs newest first (by id).
	RunList(ctx context.Context, p *RunListParams) ([]Run, error)

	// ScheduleCreate stores a schedule and sets its ID; ErrConflict when
	// the project has a schedule of that name.
	ScheduleCreate(ctx context.Context, s *Schedule) error
	// ScheduleGetInProject finds the project's schedule by name;
	// ErrNotFound when it has none.
	ScheduleGetInProject(ctx context.Context, p *ScheduleGetInProjectParams) (*Schedule, error)
	// ScheduleList lists a page of the project's schedules by name.
	ScheduleList(ctx context.Context, p *ScheduleListParams) ([]Schedule, error)
	// SchedulesDue lists active schedules of every project whose
	// NextFireAt is at or before p.Now, earliest first, without locking.
	SchedulesDue(ctx context.Context, p *SchedulesDueParams) ([]Schedule, error)
	// ScheduleAdvance moves a schedule's next tick only if it still is
	// p.FromTickAt (compare-and-set; the row stays locked to the end of
	// the transaction); ErrConflict when another transaction moved it.
	ScheduleAdvance(ctx context.Context, p *ScheduleAdvanceParams) error
	// ScheduleSetPaused pauses or resumes the project's schedule and sets
	// its next tick; ErrNotFound when the project has no such schedule.
	ScheduleSetPaused(ctx context.Context, p *ScheduleSetPausedParams) error
	// ScheduleDelete deletes the project's schedule and its ticks;
	// ErrNotFound when it has none.
	ScheduleDelete(ctx context.Context, p *ScheduleGetInProjectParams) error
	// ScheduleTickInsert records a tick and sets its ID; ErrConflict when
	// the schedule has a tick at that time.
	ScheduleTickInsert(ctx context.Context, t *ScheduleTick) error
	// ScheduleTickList lists a schedule's latest ticks, newest first.
	ScheduleTickList(ctx context.Context, p *ScheduleTickListParams) ([]ScheduleTick, error)
	// ScheduleTicksLatest lists the latest p.PerSchedule ticks of each of
	// the schedules p.ScheduleIDs in one query, by schedule id and then
	// newest first.
	ScheduleTicksLatest(ctx context.Context, p *ScheduleTicksLatestParams) ([]ScheduleTick, error)
	// ScheduleTickCounts counts a schedule's ticks since p.Since by
	// outcome, and the missed ticks they name.
	ScheduleTickCounts(ctx context.Context, p *ScheduleTickCountsParams) (*TickCounts, error)
	// ScheduleTicksPrune deletes ticks older than p.TickBefore, at most
	// p.Limit of them, but never a schedule's newest tick; it returns how
	// many went.
	ScheduleTicksPrune(ctx context.Context, p *ScheduleTicksPruneParams) (int64, error)

	// JobInsert stores a new job and sets its ID. A repeated idempotency key
	// in the project returns ErrConflict and stores nothing.
	JobInsert(ctx context.Context, j *Job) error
	// JobsInsert stores new jobs without idempotency keys and sets their
	// IDs, ascending in the order given.
	JobsInsert(ctx context.Context, jobs []*Job) error
	JobByIdempotencyKey(ctx context.Context, projectID int64, key string) (*Job, error)
	// JobGetInProject finds the project's job by id; ErrNotFound when the
	// job belongs to another project. In a Tx it locks the row until commit
	// (PostgreSQL: FOR UPDATE).
	JobGetInProject(ctx context.Context, p *JobGetInProjectParams) (*Job, error)
	// JobGetAnyProject reads a job by id, whatever its project, and locks
	// it as JobGetInProject does.
	JobGetAnyProject(ctx context.Context, id int64) (*Job, error)
	// JobUpdate writes the mutable fields of a job (state, due time, lease,
	// attempt, cancel flag, timestamps).
	JobUpdate(ctx context.Context, j *Job) error
	// JobsGetInProject reads the project's jobs with these ids in id order,
	// all but their payloads (left empty); ids that are missing or belong to
	// another project are left out. With Lock it locks them (PostgreSQL:
	// FOR UPDATE) as JobGetInProject does; without, a caller that writes
	// what it read guards the write (JobsUpdate with guards).
	JobsGetInProject(ctx context.Context, p *JobsGetInProjectParams) ([]Job, error)
	// JobsUpdate is JobUpdate for many jobs with distinct ids, in one round
	// trip; ErrNotFound when any of them is missing. With guards (one per
	// job) a job is written only while its row still holds its guard, and
	// ErrConflict says one did not: the caller rolls back and reads again.
	JobsUpdate(ctx context.Context, jobs []*Job, guards []JobGuard) error
	// JobList reads a page of the jobs f selects in f.Sort's order (ties
	// of finish time broken by id), after the cursor.
	JobList(ctx context.Context, f JobFilter) ([]Job, error)
	// JobScanEnd is the key of the last job a bounded search with f reads:
	// the f.ScanLimit-th job in f.Sort's order matching f's filters but Q
	// (after the cursor); the zero key when fewer jobs match, so the search
	// read them all, and when f has no ScanLimit or no text search.
	JobScanEnd(ctx context.Context, f JobFilter) (JobKey, error)
	JobCount(ctx context.Context, f JobFilter) (int64, error)
	// JobCountsByState counts a project's jobs per state; projectID 0 counts
	// every project's. It reads the counters the drivers keep in the same
	// transaction as every insert, change of state and delete of a job
	// (migration 0006), never the jobs.
	JobCountsByState(ctx context.Context, projectID int64) (map[wire.JobState]int64, error)
	// JobCountsByEndpoint reads the same counters (kept per endpoint, tool
	// and state) per endpoint and state, for the project's endpoints or
	// for one (p.EndpointID), of every tool or of one (p.Tool, p.Version);
	// states without jobs are left out.
	JobCountsByEndpoint(ctx context.Context, p *JobCountsByEndpointParams) ([]JobStateCount, error)
	// JobCountGroupByState counts the jobs that match f per state by
	// reading the jobs: a COUNT(*) GROUP BY state, for selections the
	// counters do not cover (and to check them). f.AfterID and f.Limit are
	// ignored; f.ScanLimit bounds a text search as in JobList.
	JobCountGroupByState(ctx context.Context, f JobFilter) (map[wire.JobState]int64, error)

	// DueEndpoints lists, in id order, the endpoints with scheduled jobs of
	// p.ToolIDs due at or before p.Now.
	DueEndpoints(ctx context.Context, p *DueEndpointsParams) ([]int64, error)
	// JobsClaimable returns up to p.Limit scheduled jobs of the endpoint for
	// p.ToolIDs, due at or before p.Now, oldest due first (then lowest id),
	// locking them (PostgreSQL: FOR UPDATE SKIP LOCKED).
	JobsClaimable(ctx context.Context, p *JobsClaimableParams) ([]Job, error)
	// JobsClaim moves the jobs to running with the lease (expiry = Now + the
	// job's timeout), increments their attempt and starts their attempts.
	// ErrConflict when any of them is no longer scheduled; then none is
	// claimed.
	JobsClaim(ctx context.Context, p *JobsClaimParams) error
	// JobsClaimDue is JobsClaimable followed by JobsClaim in one step: it
	// moves up to Limit scheduled jobs of the endpoint for these tools, due at
	// or before Now, oldest due first (then lowest id), to running with the
	// lease, starts their attempts, and returns the jobs as they are after
	// the claim (all but their policies, left empty), in that order.
	// PostgreSQL skips rows another transaction has locked.
	JobsClaimDue(ctx context.Context, p *JobsClaimDueParams) ([]Job, error)
	// FlowKeysReady lists up to p.Limit flow keys of a keyed endpoint
	// whose ready time is at or before p.Now, longest waiting first, and
	// locks their rows (PostgreSQL: FOR UPDATE SKIP LOCKED, so a key an
	// enqueue or a report is touching is left for the next claim).
	FlowKeysReady(ctx context.Context, p *FlowKeysReadyParams) ([]string, error)
	// FlowKeysRunning counts the running jobs of each of these keys of the
	// endpoint; keys with none are left out. Key '' is never counted.
	FlowKeysRunning(ctx context.Context, endpointID int64, keys []string) (map[string]int64, error)
	// FlowKeysClaims counts each key's claims (finished attempts and
	// running jobs) at or after since, with the earliest; keys with none
	// are left out. Key '' is never counted.
	FlowKeysClaims(ctx context.Context, endpointID int64, keys []string, since int64) (map[string]FlowClaims, error)
	// JobsClaimKeys claims, like JobsClaimDue, at most one due job of each
	// of p.Keys (never key ''): the oldest due, or with p.Ordered the
	// key's first scheduled job in enqueue order when it is due.
	JobsClaimKeys(ctx context.Context, p *JobsClaimKeysParams) ([]Job, error)
	// FlowKeysNext reads, for each of these keys of the endpoint, the due
	// time of its next job: its earliest due, or with ordered its first in
	// enqueue order. Keys with no scheduled job are left out.
	FlowKeysNext(ctx context.Context, endpointID int64, keys []string, ordered bool) (map[string]int64, error)
	// FlowKeysSet writes each key's ready time; FlowKeyParked parks it.
	FlowKeysSet(ctx context.Context, endpointID int64, readyAt map[string]int64) error
	// FlowKeysDelete forgets these keys of the endpoint.
	FlowKeysDelete(ctx context.Context, endpointID int64, keys []string) error
	// FlowKeysRebuild gives every key of the endpoint with a scheduled job
	// a row (a new one ready at its earliest due; an existing one made no
	// later than that), for an endpoint that has just become keyed and as
	// a sweep; with clear it deletes the endpoint's rows instead.
	FlowKeysRebuild(ctx context.Context, endpointID int64, clear bool) error
	// FlowKeysWake is the earliest ready time of a key of the endpoint
	// after now, parked keys aside (0: none).
	FlowKeysWake(ctx context.Context, endpointID, now int64) (int64, error)
	// FlowKeyHead is the first scheduled job of a key in enqueue order (0
	// when none): the one an ordered key runs next.
	FlowKeyHead(ctx context.Context, endpointID int64, key string) (int64, error)
	// FlowKeysBusiest lists the endpoint's flow keys (never '') with the
	// most running and scheduled jobs, most first (then by key), at most
	// limit of them, reading at most FlowKeysScanBound jobs of each state
	// (capped: the bound was reached, so the counts are of those).
	FlowKeysBusiest(ctx context.Context, endpointID, now int64, limit int) (keys []FlowKeyLoad, capped bool, err error)
	// JobsFailed lists failed and exhausted jobs of the project, the
	// latest failure first (finished_at, then id, descending), at most
	// p.Limit of them: the rows a failure group or a replay by filter
	// reads. It reads in the order of a partial index of failed jobs and
	// stops at the limit; with State set it also reads, and skips, the
	// jobs of the other failed state on the way.
	JobsFailed(ctx context.Context, p *JobsFailedParams) ([]FailedJob, error)
	// JobReplayedBy is the id of the latest job of the project that
	// replays job id (its ReplayOf), 0 when none does. A replay by filter
	// reads it after locking the replayed job (JobGetInProject in a Tx),
	// so two replays of one job at once make one new job.
	JobReplayedBy(ctx context.Context, projectID, id int64) (int64, error)
	// CountScheduled counts the endpoint's scheduled jobs, and of those the
	// ones due at or before p.DueBy.
	CountScheduled(ctx context.Context, p *CountScheduledParams) (scheduled, due int64, err error)
	// CountDue counts the endpoint's scheduled jobs due at or before p.Now
	// (with p.Later: due after it), stopping at p.Limit.
	CountDue(ctx context.Context, p *CountDueParams) (int64, error)
	// CountRunning counts running jobs of the endpoint, stopping at p.Limit.
	CountRunning(ctx context.Context, p *CountRunningParams) (int64, error)
	// ClaimsSince counts attempts of the endpoint (finished or running)
	// claimed at or after p.Since, stopping at p.Limit, and returns the
	// earliest such claim time (0 when none).
	ClaimsSince(ctx context.Context, p *ClaimsSinceParams) (count, earliest int64, err error)
	// AttemptsFinishedSince counts attempts of the endpoint finished at or
	// after p.Since, stopping at p.Limit.
	AttemptsFinishedSince(ctx context.Context, p *AttemptsFinishedSinceParams) (int64, error)
	// NextDueAt is the earliest due time of scheduled jobs of these tools
	// (0 when none).
	NextDueAt(ctx context.Context, toolIDs []int64) (int64, error)
	// ExpiredLeases lists up to p.Limit running jobs whose lease ended at or
	// before p.Now, earliest expiry first, locking them (PostgreSQL: FOR
	// UPDATE SKIP LOCKED).
	ExpiredLeases(ctx context.Context, p *ExpiredLeasesParams) ([]Job, error)
	// JobsPrune deletes finished jobs (and their attempts) that finished
	// before p.FinishedBefore, at most p.Limit of them, and returns how
	// many. The claims of the attempts it deletes are added to the pruned
	// claims (PrunedClaimsCount) first, and pruned claims older than
	// PrunedClaimsKeepMs before p.FinishedBefore are forgotten.
	JobsPrune(ctx context.Context, p *JobsPruneParams) (int64, error)
	// PrunedClaimsCount counts the endpoint's claims whose attempts
	// JobsPrune deleted, claimed at or after p.Since (a quarter hour:
	// counts are kept per PrunedClaimsBucketMs), all keys together.
	PrunedClaimsCount(ctx context.Context, p *PrunedClaimsCountParams) (int64, error)
	// FlowKeysPrunedClaims is PrunedClaimsCount per key, for these keys
	// of the endpoint; keys with none are left out.
	FlowKeysPrunedClaims(ctx context.Context, endpointID int64, keys []string, since int64) (map[string]int64, error)

	// AttemptGet reads one attempt, finished or running; ErrNotFound when
	// the job has no such attempt.
	AttemptGet(ctx context.Context, p *AttemptGetParams) (*Attempt, error)
	// AttemptsByKeys reads the attempts with these keys, in no particular
	// order; keys without an attempt are left out.
	AttemptsByKeys(ctx context.Context, keys []AttemptKey) ([]Attempt, error)
	// AttemptFinish stores the running attempt a names as finished;
	// ErrNotFound when its job is not running that attempt or the attempt
	// is finished already.
	AttemptFinish(ctx context.Context, a *Attempt) error
	// AttemptsFinish is AttemptFinish for many attempts with distinct keys,
	// in one round trip; ErrNotFound when any of them is missing.
	AttemptsFinish(ctx context.Context, as []*Attempt) error
	// AttemptList lists a job's attempts by number, the running one last.
	AttemptList(ctx context.Context, jobID int64) ([]Attempt, error)
	// AttemptsFinishedIn reads the endpoint's attempts finished in
	// [p.From, p.To), latest first, at most p.Limit: what the console's
	// History counts by failure class and measures latency from.
	AttemptsFinishedIn(ctx context.Context, p *AttemptsFinishedInParams) ([]AttemptStat, error)
	// AttemptOutcomes counts the endpoint's attempts finished at or after
	// p.Since, by outcome. Running attempts are not counted.
	AttemptOutcomes(ctx context.Context, p *AttemptOutcomesParams) (map[wire.AttemptOutcome]int64, error)

	// WorkersTouch records when workers were seen: for each one it inserts
	// the row or keeps, per time, the later of the stored and the given
	// (0 leaves a time as it is), and the earlier first-seen time.
	WorkersTouch(ctx context.Context, p *WorkersTouchParams) error
	// WorkerList lists the project's workers seen at or after p.SeenSince,
	// latest activity first, at most p.Limit, each with the count of
	// running jobs it holds and up to p.JobsPerWorker of their ids (newest
	// first).
	WorkerList(ctx context.Context, p *WorkerListParams) ([]Worker, error)
	// WorkersPrune deletes workers of every project last seen before
	// p.SeenBefore and returns how many.
	WorkersPrune(ctx context.Context, p *WorkersPruneParams) (int64, error)

	// HistoryCursorGet reads the first minute not rolled up yet (unix ms;
	// 0 before the first roll-up) and, in a Tx, locks it until commit
	// (PostgreSQL: FOR UPDATE), so one node at a time rolls up.
	HistoryCursorGet(ctx context.Context) (int64, error)
	// HistoryCursorSet stores the first minute not rolled up yet.
	HistoryCursorSet(ctx context.Context, nextMinute int64) error
	// HistoryCompute computes the per-minute roll-ups of every endpoint for
	// the minutes in [p.From, p.To) (multiples of 60,000) from the attempts
	// claimed and finished in them (running attempts count as claims): one
	// point per endpoint and minute that had any, in no particular order.
	// It only reads, so it may run in a Read.
	HistoryCompute(ctx context.Context, p *HistoryComputeParams) ([]HistoryPoint, error)
	// HistoryInsert stores roll-ups, leaving those of an endpoint and
	// minute stored already as they are, and returns how many it stored.
	HistoryInsert(ctx context.Context, points []HistoryPoint) (int64, error)
	// HistoryList reads the project's roll-ups of minutes in [p.From,
	// p.To), of one endpoint or (EndpointID 0) every one, by endpoint name
	// then minute.
	HistoryList(ctx context.Context, p *HistoryListParams) ([]HistoryPoint, error)
	// HistoryPrune deletes roll-ups of minutes before p.Before (every
	// project) and returns how many.
	HistoryPrune(ctx context.Context, p *HistoryPruneParams) (int64, error)
}

// WorkerSeen is what one node saw of one worker since it last wrote.
type WorkerSeen struct {
	ProjectID   int64
	WorkerID    string
	ClaimAt     int64 // the latest claim, 0 for none
	HeartbeatAt int64 // the latest heartbeat, 0 for none
	ReportAt    int64 // the latest report, 0 for none
	FirstAt     int64 // the earliest of the three that is not 0
}

// WorkersTouchParams carries what a node saw of its workers.
type WorkersTouchParams struct {
	Workers []WorkerSeen // distinct (ProjectID, WorkerID) pairs
}

// Worker is a stored worker with what it holds.
type Worker struct {
	ProjectID       int64
	WorkerID        string
	FirstSeenAt     int64
	LastClaimAt     int64 // 0 when never seen claiming
	LastHeartbeatAt int64 // 0 when never seen heartbeating
	LastReportAt    int64 // 0 when never seen reporting
	LastSeenAt      int64 // the latest of the three
	Holding         int64 // running jobs leased to this worker
	JobIDs          []int64
}

// WorkerListParams selects a project's workers.
type WorkerListParams struct {
	ProjectID     int64 // the project whose workers are listed
	SeenSince     int64 // workers last seen before this are left out
	Limit         int   // at most this many workers
	JobsPerWorker int   // at most this many job ids per worker
}

// WorkersPruneParams selects workers to forget.
type WorkersPruneParams struct {
	SeenBefore int64 // workers last seen before this go
}

// HistoryComputeParams names the minutes to roll up.
type HistoryComputeParams struct {
	From int64 // the first minute's start (unix ms, a multiple of 60,000)
	To   int64 // the end: the start of the first minute not rolled up
}

// HistoryPoint is the roll-up of one endpoint's minute.
type HistoryPoint struct {
	ProjectID  int64
	EndpointID int64
	Endpoint   string // the endpoint's name (HistoryList only)
	Minute     int64  // the minute's start, unix ms
	Claims     int64  // attempts claimed in the minute
	Succeeded  int64  // attempts that finished in the minute, by outcome
	Failed     int64
	TimedOut   int64
	LagSumMs   int64 // the sum of the due-to-claim lags of LagCount claims
	LagCount   int64 // claims whose due time is known
	LagMaxMs   int64
}

// HistoryListParams selects roll-ups.
type HistoryListParams struct {
	ProjectID  int64 // the project whose roll-ups are read
	EndpointID int64 // one endpoint, or 0 for every one
	From       int64 // minutes starting at or after From
	To         int64 // minutes starting before To
}

// HistoryPruneParams selects roll-ups to delete.
type HistoryPruneParams struct {
	Before int64 // minutes starting before this go
}

// KeyRevokeParams names a key to revoke.
type KeyRevokeParams struct {
	ProjectID int64 // the project the key must belong to
	ID        int64 // the key's id
	Now       int64 // the revocation time, stored as RevokedAt
}

// EndpointGetInProjectParams names an endpoint within a project.
type EndpointGetInProjectParams struct {
	ProjectID int64  // the project the endpoint must belong to
	Name      string // the endpoint's name, unique in the project
}

// EndpointGetAnyProjectParams names an endpoint by id alone.
type EndpointGetAnyProjectParams struct {
	ID int64 // the endpoint's id
	// Lock locks the endpoint's row until the transaction ends (PostgreSQL:
	// FOR UPDATE), so decisions made on it are serialised across nodes. Not
	// in a Read.
	Lock bool
}

// EndpointUpdatePolicyParams is an optimistic write of an endpoint's
// policy.
type EndpointUpdatePolicyParams struct {
	// Endpoint carries the id and the fields to write (Policy, every
	// EndpointSettings member, UpdatedAt); its Version is set to the new
	// version.
	Endpoint *Endpoint
	// ExpectedVersion is the version the caller read; the write happens
	// only while the stored row still has it.
	ExpectedVersion int64
}

// AuditListParams selects a page of a project's audit log.
type AuditListParams struct {
	ProjectID int64  // the project whose entries are listed
	Target    string // only entries with this exact target; "" for every target
	AfterID   int64  // cursor: entries with ids below this, 0 for none
	Limit     int    // at most this many; 0 or less for 100
}

// EndpointEventListParams selects a page of a project's endpoint events.
type EndpointEventListParams struct {
	ProjectID  int64 // the project whose events are listed
	EndpointID int64 // only this endpoint's; 0 for every endpoint of the project
	Since      int64 // only events at or after this time; 0 for all
	AfterID    int64 // cursor: events with ids below this, 0 for none
	Limit      int   // at most this many; 0 or less for 100
}

// EndpointEventsAfterParams selects the events after a position of the feed.
type EndpointEventsAfterParams struct {
	AfterID int64 // events with ids above this
	Limit   int   // at most this many; 0 or less for 100
}

// EndpointEventsPruneParams selects old endpoint events to delete.
type EndpointEventsPruneParams struct {
	Before int64 // events before this time go
	Limit  int   // at most this many go
}

// AlertSinkDeleteParams names a project's sink.
type AlertSinkDeleteParams struct {
	ProjectID int64
	Name      string
}

// AlertByKeyParams names a project's alert by its dedup key.
type AlertByKeyParams struct {
	ProjectID int64
	DedupKey  string
}

// AlertAddCountParams adds to an alert's count.
type AlertAddCountParams struct {
	ID int64
	N  int64
}

// AlertsCountParams selects an endpoint's alerts of a window.
type AlertsCountParams struct {
	ProjectID  int64
	EndpointID int64
	From, To   int64          // at or after From, before To
	Except     wire.AlertKind // alerts of this kind are not counted; "" counts all
}

// AlertDeliveriesDueParams selects deliveries to send.
type AlertDeliveriesDueParams struct {
	Now        int64 // due at or before Now, lease ended at or before Now
	LeaseUntil int64 // the lease of the rows returned
	Limit      int
	// Peek reads without locking or leasing (in a read transaction): is
	// anything due? A sender asks so before it opens a write transaction.
	Peek bool
}

// AlertsPruneParams selects old alerts to delete.
type AlertsPruneParams struct {
	Before int64 // alerts raised before this time go, unless a delivery is pending
	Limit  int   // at most this many go
}

// AlertDeliveryListParams selects a project's latest deliveries.
type AlertDeliveryListParams struct {
	ProjectID int64
	Limit     int // 0 or less for 100
}

// ToolGetInProjectParams names a tool within a project.
type ToolGetInProjectParams struct {
	ProjectID int64  // the project the tool must belong to
	Name      string // the tool's name
	Version   string // the tool's version; name@version is unique in the project
}

// RunGetInProjectParams names a run within a project.
type RunGetInProjectParams struct {
	ProjectID int64 // the project the run must belong to
	ID        int64 // the run's id
}

// ScheduleGetInProjectParams names a schedule within a project.
type ScheduleGetInProjectParams struct {
	ProjectID int64  // the project the schedule must belong to
	Name      string // the schedule's name, unique in the project
}

// SchedulesDueParams selects the schedules to fire.
type SchedulesDueParams struct {
	Now   int64 // schedules whose NextFireAt is at or before this are due
	Limit int   // at most this many
}

// ScheduleAdvanceParams moves a schedule past a tick.
type ScheduleAdvanceParams struct {
	ID         int64 // the schedule
	FromTickAt int64 // the next tick the caller read; no change unless it still is
	NextTickAt int64 // the new next tick
	NextFireAt int64 // the new next tick plus the spread offset
	LastJobID  int64 // the job of the latest tick that made one
	Now        int64 // stored as UpdatedAt
}

// ScheduleSetPausedParams pauses or resumes a schedule.
type ScheduleSetPausedParams struct {
	ProjectID  int64  // the project the schedule must belong to
	Name       string // the schedule's name
	Paused     bool   // the new state
	NextTickAt int64  // the next tick (a resumed schedule starts from now)
	NextFireAt int64  // the next tick plus the spread offset
	Now        int64  // stored as UpdatedAt
}

// ScheduleListParams selects a page of a project's schedules by name.
type ScheduleListParams struct {
	ProjectID int64  // the project whose schedules are listed
	AfterName string // cursor: schedules named after this, "" for the first page
	Limit     int    // at most this many
}

// ScheduleTickListParams selects a schedule's latest ticks.
type ScheduleTickListParams struct {
	ScheduleID int64 // the schedule
	BeforeTick int64 // cursor: ticks before this tick time, 0 for the newest
	Limit      int   // at most this many
}

// ScheduleTicksLatestParams selects the latest ticks of several schedules.
type ScheduleTicksLatestParams struct {
	ScheduleIDs []int64 // the schedules
	PerSchedule int     // at most this many ticks of each
}

// ScheduleTickCountsParams selects a schedule's recent ticks to count.
type ScheduleTickCountsParams struct {
	ScheduleID int64 // the schedule
	Since      int64 // ticks at or after this tick time count
}

// TickCounts counts ticks by outcome.
type TickCounts struct {
	Ticks    int64 // every tick recorded
	Enqueued int64 // outcome enqueued
	Skipped  int64 // outcome skipped
	Replaced int64 // outcome replaced
	Failed   int64 // outcome failed
	Missed   int64 // the ticks the catch-up policy dropped, summed
}

// ScheduleTicksPruneParams selects old ticks to delete.
type ScheduleTicksPruneParams struct {
	TickBefore int64 // ticks before this tick time go, each schedule's newest aside
	Limit      int   // at most this many go
}

// RunListParams selects a page of a project's runs.
type RunListParams struct {
	ProjectID int64 // the project whose runs are listed
	AfterID   int64 // cursor: runs with ids below this, 0 for none
	Limit     int   // at most this many; 0 or less for 100
}

// RunFinishParams names an open run to finish.
type RunFinishParams struct {
	ProjectID int64 // the project the run must belong to
	ID        int64 // the run's id
	Now       int64 // the finish time, stored as FinishedAt
}

// JobCountsByEndpointParams selects counters.
type JobCountsByEndpointParams struct {
	ProjectID  int64  // the project whose counters are read
	EndpointID int64  // only this endpoint's, 0 for every endpoint of the project
	Tool       string // only this tool's (by name), "" for every tool
	Version    string // with Tool: only this version of it, "" for every version
}

// JobStateCount is how many of an endpoint's jobs are in a state.
type JobStateCount struct {
	EndpointID int64
	State      wire.JobState
	Count      int64
}

// JobGetInProjectParams names a job within a project.
type JobGetInProjectParams struct {
	ProjectID int64 // the project the job must belong to
	ID        int64 // the job's id
}

// JobsGetInProjectParams names jobs within a project.
type JobsGetInProjectParams struct {
	ProjectID int64   // the project the jobs must belong to; others are left out
	IDs       []int64 // the jobs' ids, in any order; missing ones are left out
	// Lock locks the jobs' rows until the transaction ends (PostgreSQL: FOR
	// UPDATE). Not in a Read.
	Lock bool
}

// DueEndpointsParams asks which endpoints have work due.
type DueEndpointsParams struct {
	ToolIDs []int64 // only jobs of these tools count; none: no endpoints
	Now     int64   // jobs due at or before Now are due
}

// JobsClaimableParams selects jobs to claim from one endpoint.
type JobsClaimableParams struct {
	EndpointID int64   // the endpoint whose jobs are read
	ToolIDs    []int64 // only jobs of these tools; none: no jobs
	Now        int64   // jobs due at or before Now are claimable
	Limit      int     // at most this many jobs; 0 or less: none
}

// JobsClaimParams hands scheduled jobs, chosen by the caller, to a worker.
type JobsClaimParams struct {
	IDs        []int64 // the jobs to claim; every one must still be scheduled
	WorkerID   string  // the worker the jobs go to
	LeaseToken string  // the lease the worker reports with
	Now        int64   // the claim time; each lease expires Now + the job's timeout
}

// JobsClaimDueParams hands up to Limit due jobs of one endpoint to a worker.
type JobsClaimDueParams struct {
	EndpointID int64   // the endpoint whose jobs are claimed
	ToolIDs    []int64 // only jobs of these tools; none: no jobs
	Limit      int     // at most this many jobs; 0 or less: none
	WorkerID   string  // the worker the jobs go to
	LeaseToken string  // the lease the worker reports with
	Now        int64   // jobs due at or before Now are claimed, at Now; each lease expires Now + the job's timeout
	// ByKey claims only jobs of flow key FlowKey ('' for the key-less).
	ByKey   bool
	FlowKey string
}

// CountScheduledParams asks how many of an endpoint's jobs wait.
type CountScheduledParams struct {
	EndpointID int64 // the endpoint whose scheduled jobs are counted
	DueBy      int64 // jobs due at or before DueBy are counted as due too
}

// CountDueParams asks how many of an endpoint's jobs are due.
type CountDueParams struct {
	EndpointID int64 // the endpoint whose scheduled jobs are counted
	Now        int64 // jobs due at or before Now are due
	Limit      int64 // counting stops here
	// Later counts the jobs due after Now instead: with the scheduled
	// count the counters keep, it makes a large due count exact without
	// reading every due job (engine.dueCount).
	Later bool
}

// FlowKeysReadyParams asks for the flow keys of an endpoint due a turn.
type FlowKeysReadyParams struct {
	EndpointID int64
	Now        int64 // keys ready at or before Now
	Limit      int   // at most this many keys
}

// FlowKeyLoad is one flow key's jobs on an endpoint.
type FlowKeyLoad struct {
	Key       string
	Running   int64
	Scheduled int64 // of them due at or before now: Due
	Due       int64
}

// JobsFailedParams selects failed and exhausted jobs (JobsFailed).
type JobsFailedParams struct {
	ProjectID  int64
	EndpointID int64         // jobs of this endpoint, 0 for any
	State      wire.JobState // JobFailed or JobExhausted, "" for both
	// FinishedFrom and FinishedBefore bound the time the job failed:
	// finished at or after FinishedFrom, before FinishedBefore; 0 for no
	// bound.
	FinishedFrom, FinishedBefore int64
	Limit                        int // at most this many jobs; required, above 0
}

// FailedJob is one failed or exhausted job as failure groups read it.
type FailedJob struct {
	ID         int64
	EndpointID int64
	Endpoint   string
	State      wire.JobState
	// Classification and Message are the job's LastClassification and
	// LastError: those of the attempt that ended it.
	Classification, Message string
	FinishedAt              int64
	// Replayed says a job replays this one (its ReplayOf is this ID).
	Replayed bool
}

// FlowKeysScanBound is how many running, and how many scheduled, keyed
// jobs of an endpoint FlowKeysBusiest reads at most.
const FlowKeysScanBound = 200_000

// FlowClaims is one key's claims in a rate window.
type FlowClaims struct {
	N        int64 // claims in the window
	Earliest int64 // the earliest of them
}

// JobsClaimKeysParams claims one job of each of several flow keys.
type JobsClaimKeysParams struct {
	EndpointID int64
	ToolIDs    []int64 // only jobs of these tools are claimed
	Keys       []string
	Ordered    bool // each key's first scheduled job in enqueue order, if due
	WorkerID   string
	LeaseToken string
	Now        int64
}

// CountRunningParams asks how many of an endpoint's jobs run.
type CountRunningParams struct {
	EndpointID int64 // the endpoint whose running jobs are counted
	Limit      int64 // counting stops here: the caller only needs to know whether the count reaches it
}

// ClaimsSinceParams asks how many claims an endpoint made in a window.
type ClaimsSinceParams struct {
	EndpointID int64 // the endpoint whose attempts are counted
	Since      int64 // attempts claimed at or after Since count
	Limit      int64 // counting stops here
}

// AttemptsFinishedSinceParams asks how many of an endpoint's attempts
// finished in a window.
type AttemptsFinishedSinceParams struct {
	EndpointID int64 // the endpoint whose attempts are counted
	Since      int64 // attempts finished at or after Since count
	Limit      int64 // counting stops here
}

// ExpiredLeasesParams asks for running jobs whose lease has ended.
type ExpiredLeasesParams struct {
	Now   int64 // a lease that ended at or before Now has expired
	Limit int   // at most this many jobs
}

// PrunedClaimsBucketMs is the span the pruned claims are counted per: a
// quarter hour, on which every time zone's midnight falls, so a budget's
// period starts on a bucket's start.
const PrunedClaimsBucketMs = 900_000

// PrunedClaimsKeepMs is how long pruned claims are kept before the
// retention's cutoff: longer than any month, so a monthly budget counts
// its whole month.
const PrunedClaimsKeepMs = 40 * 86_400_000

// PrunedClaimsCountParams asks how many of an endpoint's pruned claims
// were made in a window.
type PrunedClaimsCountParams struct {
	EndpointID int64 // the endpoint whose pruned claims are counted
	Since      int64 // claims at or after Since count (a bucket's start)
}

// JobsPruneParams selects finished jobs to delete.
type JobsPruneParams struct {
	FinishedBefore int64 // jobs that finished before this time go
	Limit          int   // at most this many jobs go
}

// AttemptGetParams names one attempt.
type AttemptGetParams struct {
	JobID  int64 // the attempt's job
	Number int64 // the attempt's number: 1 for the job's first
}

// AttemptsFinishedInParams asks for an endpoint's attempts finished in a
// time range.
type AttemptsFinishedInParams struct {
	EndpointID int64 // the endpoint whose attempts are read
	From, To   int64 // finished at or after From and before To
	Limit      int   // at most this many, the latest
}

// AttemptStat is what History reads of a finished attempt.
type AttemptStat struct {
	ClaimedAt, FinishedAt int64
	Outcome               wire.AttemptOutcome
	Classification        string
	HTTPStatus            int64
	RequestMs             int64 // an HTTP delivery's request duration; 0 for a worker's attempt
}

// AttemptOutcomesParams asks how an endpoint's recent attempts ended.
type AttemptOutcomesParams struct {
	EndpointID int64 // the endpoint whose attempts are counted
	Since      int64 // attempts finished at or after Since count
}
