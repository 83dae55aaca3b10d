package wire

import (
	"encoding/json"
	"reflect"
	"strings"

	"github.com/getratchet/ratchet/backoff"
)

// JobEnqueue is POST /v1/jobs, and one job of POST /v1/jobs/batch. The
// Idempotency-Key header may carry IdempotencyKey instead; a repeated key
// returns the existing job.
type JobEnqueue struct {
	Tool           string          `json:"tool" pattern:"toolRef"`
	Payload        json.RawMessage `json:"payload,omitempty" doc:"any JSON, checked against the tool's payload schema; at most 256 KiB"`
	IdempotencyKey string          `json:"idempotencyKey,omitempty" maxLength:"255"`
	MaxAttempts    *int64          `json:"maxAttempts,omitempty" bound:"maxAttempts" doc:"overrides the policy's count only"`
	RunID          int64           `json:"runId,omitzero" bound:"id"`
	RunAt          string          `json:"runAt,omitempty" format:"date-time" doc:"not before this time; default now"`
	FlowKey        string          `json:"flowKey,omitempty" maxLength:"128" doc:"the tenant, account or resource the job is made for (docs/flow-control.md): at most 128 bytes, no control characters, no space at either end; wins over the tool's flowKeyFrom; absent for none"`
	Traceparent    string          `json:"traceparent,omitempty" maxLength:"55" doc:"the W3C traceparent the job's trace continues from (version 00: 00-<32 hex trace id>-<16 hex span id>-<2 hex flags>, lowercase, ids not all zero); wins over the traceparent header of POST /v1/jobs and of the batch request; absent for none (docs/operations.md, Traces)"`
	Tracestate     string          `json:"tracestate,omitempty" maxLength:"512" doc:"the W3C tracestate that goes with traceparent; only with one; absent for none"`
}

// Job is a job with its policy snapshot, what holds it and, when read by
// id, its attempts and payload.
type Job struct {
	ID              int64          `json:"id"`
	State           JobState       `json:"state"`
	Tool            string         `json:"tool"`
	Version         string         `json:"version"`
	Endpoint        string         `json:"endpoint"`
	Attempt         int64          `json:"attempt" doc:"attempts started so far"`
	MaxAttempts     int64          `json:"maxAttempts"`
	Throttles       int64          `json:"throttles,omitzero" doc:"attempts that were provider throttles (429, 503 with Retry-After) not counted against maxAttempts, at most 20 (docs/outages.md); absent for none"`
	IdempotencyKey  *string        `json:"idempotencyKey"`
	FlowKey         string         `json:"flowKey" doc:"the tenant, account or resource the job is made for; empty for none"`
	Traceparent     string         `json:"traceparent,omitempty" doc:"the W3C trace context the job keeps and hands to its attempts: the enqueue's, or with tracing on its ratchet.enqueue span's; absent for none"`
	Tracestate      string         `json:"tracestate,omitempty" doc:"the W3C tracestate kept with traceparent; absent for none"`
	DueAt           string         `json:"dueAt" format:"date-time"`
	Policy          PolicySnapshot `json:"policy"`
	HeldBy          *Hold          `json:"heldBy" doc:"what holds it now; set for scheduled jobs, in lists too (the gates are evaluated once per endpoint per request)"`
	RunID           *int64         `json:"runId"`
	ReplayOf        *int64         `json:"replayOf"`
	CancelRequested bool           `json:"cancelRequested"`
	WorkerID        string         `json:"workerId,omitempty"`
	LeaseExpiresAt  string         `json:"leaseExpiresAt,omitempty" format:"date-time"`
	CreatedAt       string         `json:"createdAt" format:"date-time"`
	UpdatedAt       string         `json:"updatedAt" format:"date-time"`
	FinishedAt      string         `json:"finishedAt,omitempty" format:"date-time"`
	// LastClassification and LastError are kept on the job as its attempts
	// finish, so lists show them without reading attempts.
	LastClassification string          `json:"lastClassification" doc:"the decision's code of the last finished attempt, e.g. http_503; empty when no attempt has finished"`
	LastError          string          `json:"lastError" doc:"the message of the last failed attempt, empty if none; at most 200 characters in lists"`
	Payload            json.RawMessage `json:"payload,omitempty" doc:"set when the job is read by id or enqueued"`
	Attempts           []Attempt       `json:"attempts" doc:"set when the job is read by id"`
}

// PolicySnapshot is the retry policy resolved at enqueue and copied into the
// job: later edits of the tool or endpoint never change it.
type PolicySnapshot struct {
	Preset backoff.Preset `json:"preset"`
	backoff.Params
	TimeoutMs int64 `json:"timeoutMs" doc:"the lease of each claim"`
	// Source says where the retry policy came from.
	Source string `json:"source" enum:"tool,endpoint,default"`
	// MaxAttemptsOverridden is true when the enqueue set maxAttempts.
	MaxAttemptsOverridden bool `json:"maxAttemptsOverridden"`
}

// Hold says what keeps a scheduled job waiting, and until when if known.
type Hold struct {
	Gate   Gate   `json:"gate"`
	Until  string `json:"until,omitempty" format:"date-time" doc:"when the gate opens, if known"`
	Detail string `json:"detail" doc:"one sentence for people"`
}

// Attempt is one claim of a job and the delay arithmetic that followed it.
// The delay fields are null when no retry was scheduled.
type Attempt struct {
	Number              int64          `json:"number"`
	WorkerID            string         `json:"workerId"`
	ClaimedAt           string         `json:"claimedAt" format:"date-time"`
	FinishedAt          string         `json:"finishedAt,omitempty" format:"date-time"`
	DurationMs          *int64         `json:"durationMs"`
	Outcome             AttemptOutcome `json:"outcome"`
	Classification      string         `json:"classification" doc:"the decision's code, e.g. http_503 or retry_after; empty while running"`
	HTTPStatus          *int64         `json:"httpStatus"`
	RetryAfterMs        *int64         `json:"retryAfterMs"`
	CountsTowardCircuit bool           `json:"countsTowardCircuit"`
	ThrottleFree        bool           `json:"throttleFree,omitzero" doc:"a provider throttle not counted against the job's maxAttempts (docs/outages.md)"`
	Message             string         `json:"message,omitempty"`
	BaseDelayMs         *float64       `json:"baseDelayMs"`
	JitterSample        *float64       `json:"jitterSample"`
	MinDelayMs          *int64         `json:"minDelayMs"`
	MaxDelayMs          *int64         `json:"maxDelayMs"`
	SelectedDelayMs     *int64         `json:"selectedDelayMs"`
	NextDueAt           *string        `json:"nextDueAt" format:"date-time"`
	// What an HTTP delivery saw (docs/delivery.md); absent for attempts
	// reported by workers.
	RequestMs       *int64            `json:"requestMs,omitempty" doc:"the delivery request's duration, connect to end of body"`
	ResponseHeaders map[string]string `json:"responseHeaders,omitempty" doc:"the response headers that mattered to the decision"`
	ResponseExcerpt string            `json:"responseExcerpt,omitempty" doc:"the start of the response body, valid UTF-8, at most 1024 bytes"`
}

// JobBatch is POST /v1/jobs/batch: 1 to 1000 jobs in one transaction.
type JobBatch struct {
	Jobs []JobEnqueue `json:"jobs" minItems:"1" maxItems:"1000"`
}

// JobBatchResult answers a batch enqueue, one item per job in order.
type JobBatchResult struct {
	Jobs []JobBatchItem `json:"jobs"`
}

// JobBatchItem is one job of a batch enqueue; Created is false when its
// idempotency key returned an existing job.
type JobBatchItem struct {
	ID      int64    `json:"id"`
	State   JobState `json:"state"`
	Created bool     `json:"created"`
	DueAt   string   `json:"dueAt" format:"date-time"`
}

// JobQuery selects jobs: the query parameters of GET /v1/jobs and
// /v1/jobs/count, and the filter of a bulk action. Every value is a string,
// as in a URL.
type JobQuery struct {
	State         string  `json:"state,omitempty" doc:"comma-separated states"`
	Tool          string  `json:"tool,omitempty" doc:"\"name\" or \"name@version\""`
	Endpoint      string  `json:"endpoint,omitempty"`
	RunID         string  `json:"runId,omitempty" doc:"a run id"`
	FlowKey       string  `json:"flowKey,omitempty" maxLength:"128" doc:"only jobs of this flow key (exact match)"`
	CreatedAfter  string  `json:"createdAfter,omitempty" doc:"RFC 3339 time, inclusive"`
	CreatedBefore string  `json:"createdBefore,omitempty" doc:"RFC 3339 time, exclusive"`
	Cursor        string  `json:"cursor,omitempty" doc:"nextCursor of the previous page"`
	Limit         string  `json:"limit,omitempty" query:"listLimit" doc:"1–500, default 100"`
	Sort          JobSort `json:"sort,omitempty" doc:"the order of the list, id_desc (newest first) when left out; finished_desc and finished_asc need a state filter of failed, exhausted or both"`
	Q             string  `json:"q,omitempty" maxLength:"200" doc:"search text: a number matches the job id exactly; other text matches an exact idempotency key, tool name or endpoint name, or a substring of the payload or of the last error message (case-insensitive for ASCII). A text search reads at most the newest 20000 jobs of the other filters per page: a page may then hold fewer jobs than the limit, even none, and still have a nextCursor that continues the search"`
}

// JobSort is the order of GET /v1/jobs. Every order is served by an
// index on both drivers (internal/store/sqlstore/jobs_list.go says which),
// so a page costs its rows, not the table.
type JobSort string

// Orders of a jobs list.
const (
	SortIDDesc       JobSort = "id_desc"       // newest first (the default)
	SortIDAsc        JobSort = "id_asc"        // oldest first
	SortFinishedDesc JobSort = "finished_desc" // most recently finished first, then highest id; failed and exhausted jobs only
	SortFinishedAsc  JobSort = "finished_asc"  // earliest finished first, then lowest id; failed and exhausted jobs only
)

// JobSorts lists every order of a jobs list.
func JobSorts() []JobSort { return []JobSort{SortIDDesc, SortIDAsc, SortFinishedDesc, SortFinishedAsc} }

// ByFinish says whether the order is by finish time (and needs a state
// filter of JobState.Unsuccessful states).
func (s JobSort) ByFinish() bool { return s == SortFinishedDesc || s == SortFinishedAsc }

// Ascending says whether the order runs from the lowest key up.
func (s JobSort) Ascending() bool { return s == SortIDAsc || s == SortFinishedAsc }

// JobList is GET /v1/jobs, in the order of JobQuery.Sort (newest first by
// default); NextCursor is null on the last page.
type JobList struct {
	Jobs       []Job   `json:"jobs"`
	NextCursor *string `json:"nextCursor"`
}

// JobCount is GET /v1/jobs/count. A text search (q not a job id) counts
// within the newest SearchWindow jobs of the other filters; Capped says
// older jobs were left unsearched, so at least Count jobs match.
type JobCount struct {
	Count  int64 `json:"count"`
	Capped bool  `json:"capped" doc:"true when a text search stopped at the newest 50000 jobs of the other filters: at least count jobs match"`
}

// SearchWindow is how many jobs (newest first, of the other filters) a
// text search counts or acts on in bulk: a count of a rare word costs this
// many rows, not the table.
const SearchWindow = 50_000

// JobBulk is POST /v1/jobs/bulk: cancel, replay or run now every job the
// filter selects (at most 1000), or the jobs listed in IDs. ExpectedCount is
// the count the person confirmed; when a filter's selection holds another
// count, nothing is done (409). For an ids selection it must equal the
// number of ids. Exactly one of Filter and IDs is given; run_now needs an
// owner key.
type JobBulk struct {
	Action        BulkAction `json:"action"`
	Filter        *JobQuery  `json:"filter,omitempty"`
	IDs           []int64    `json:"ids,omitempty" minItems:"1" maxItems:"1000" doc:"job ids, instead of a filter"`
	ExpectedCount *int64     `json:"expectedCount" minimum:"0"`
}

// BulkAction is what POST /v1/jobs/bulk does to each job it selects.
type BulkAction string

// Bulk actions.
const (
	BulkCancel BulkAction = "cancel"  // cancel each job (JobState.Cancellable)
	BulkReplay BulkAction = "replay"  // replay each job as a new one (JobState.Replayable)
	BulkRunNow BulkAction = "run_now" // make each job due now (JobState.Claimable); owner keys only
)

// BulkActions lists every bulk action.
func BulkActions() []BulkAction { return []BulkAction{BulkCancel, BulkReplay, BulkRunNow} }

// JobBulkResult is what a bulk action did: the ids acted on (for replay,
// the new jobs) and the jobs it could not act on.
type JobBulkResult struct {
	Action BulkAction      `json:"action"`
	Count  int             `json:"count"`
	Jobs   []int64         `json:"jobs"`
	Failed []JobBulkFailed `json:"failed"`
}

// JobBulkFailed is a job a bulk action could not act on, and why.
type JobBulkFailed struct {
	ID    int64  `json:"id"`
	Error string `json:"error"`
}

// JobCountsQuery is the query of GET /v1/jobs/counts.
type JobCountsQuery struct {
	Endpoint string `json:"endpoint,omitempty" doc:"only this endpoint's jobs (read from the maintained counters)"`
	Tool     string `json:"tool,omitempty" doc:"\"name\" or \"name@version\": only this tool's jobs (the counters are kept per tool too)"`
}

// JobCounts is GET /v1/jobs/counts: how many jobs are in each state. It
// reads counters kept (per endpoint, tool and state) in the same
// transaction as every insert, state change and prune of jobs, so it never
// scans jobs.
type JobCounts struct {
	Counts JobStateCounts `json:"counts"`
	Total  int64          `json:"total"`
}

// JobStateCounts is a count per job state: one field per state of
// JobStates, named by its json tag. It stays a struct (not a map) so that
// the OpenAPI document gets a closed object with one required key per
// state, which the TypeScript and Python types are generated from, and Go
// callers keep the fields. No code names the fields state by state: Set,
// Get and Total go through countFields, read from the tags.
// TestEnumsEverywhere fails when a state has no field here.
type JobStateCounts struct {
	Scheduled int64 `json:"scheduled"`
	Running   int64 `json:"running"`
	Succeeded int64 `json:"succeeded"`
	Failed    int64 `json:"failed"`
	Exhausted int64 `json:"exhausted"`
	Cancelled int64 `json:"cancelled"`
}

// countFields is the index of the field of JobStateCounts for each state,
// by the field's json tag.
var countFields = func() map[JobState]int {
	m := map[JobState]int{}
	t := reflect.TypeFor[JobStateCounts]()
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		m[JobState(name)] = i
	}
	return m
}()

// Set stores n as the count of state s; unknown states are ignored.
func (c *JobStateCounts) Set(s JobState, n int64) {
	if i, ok := countFields[s]; ok {
		reflect.ValueOf(c).Elem().Field(i).SetInt(n)
	}
}

// Get is the count of state s, 0 for an unknown state.
func (c JobStateCounts) Get(s JobState) int64 {
	if i, ok := countFields[s]; ok {
		return reflect.ValueOf(c).Field(i).Int()
	}
	return 0
}

// Total is the sum of the counts of every state.
func (c JobStateCounts) Total() int64 {
	var n int64
	for _, s := range JobStates() {
		n += c.Get(s)
	}
	return n
}
