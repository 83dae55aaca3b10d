package wire

import "encoding/json"

// ClaimRequest is POST /v1/claims. Tools defaults to the worker key's
// allowlist; WaitMs long-polls for up to 30 s when nothing is due.
type ClaimRequest struct {
	WorkerID string   `json:"workerId" minLength:"1" maxLength:"200"`
	Tools    []string `json:"tools,omitempty" pattern:"toolRef"`
	Max      int      `json:"max,omitzero" bound:"claimMax" doc:"default 1"`
	WaitMs   int64    `json:"waitMs,omitzero" bound:"waitMs"`
}

// ClaimResult is the answer to a claim: the leased jobs, possibly none.
type ClaimResult struct {
	Jobs []ClaimedJob `json:"jobs"`
}

// ClaimedJob is a job leased to a worker. LeaseToken goes with every
// heartbeat and report; IdempotencyKey (the job's, or "ratchet-job-<id>")
// should go to the provider so it can deduplicate.
type ClaimedJob struct {
	ID             int64           `json:"id"`
	Tool           string          `json:"tool"`
	Version        string          `json:"version"`
	Endpoint       string          `json:"endpoint"`
	Attempt        int64           `json:"attempt"`
	MaxAttempts    int64           `json:"maxAttempts"`
	Payload        json.RawMessage `json:"payload"`
	IdempotencyKey string          `json:"idempotencyKey"`
	LeaseToken     string          `json:"leaseToken"`
	LeaseExpiresAt string          `json:"leaseExpiresAt" format:"date-time"`
	TimeoutMs      int64           `json:"timeoutMs"`
	RunID          int64           `json:"runId,omitzero"`
	FlowKey        string          `json:"flowKey,omitempty" doc:"the job's flow key; absent for none"`
	Traceparent    string          `json:"traceparent,omitempty" doc:"the W3C traceparent to continue the job's trace from (send it on to the provider, or start the worker's span as its child): with tracing on, this attempt's ratchet.claim span; otherwise the job's own; absent when the job has none"`
	Tracestate     string          `json:"tracestate,omitempty" doc:"the W3C tracestate that goes with traceparent; absent for none"`
}

// Heartbeat is POST /v1/jobs/{id}/heartbeat.
type Heartbeat struct {
	LeaseToken string `json:"leaseToken" minLength:"1"`
}

// HeartbeatResult is the extended lease; CancelRequested tells the worker
// to stop.
type HeartbeatResult struct {
	LeaseExpiresAt  string `json:"leaseExpiresAt" format:"date-time"`
	CancelRequested bool   `json:"cancelRequested"`
}

// Report is a worker's outcome of one attempt: POST /v1/jobs/{id}/report
// (JobID absent or equal to the path's) or one item of POST /v1/reports
// (JobID required). A failure is classified from, in order: Retryable false
// or an explicit RetryAfterMs, the provider's Headers (Retry-After and
// others), HTTPStatus, and ErrorKind.
type Report struct {
	JobID        int64             `json:"jobId,omitzero" bound:"id"`
	LeaseToken   string            `json:"leaseToken" minLength:"1"`
	Success      bool              `json:"success,omitempty"`
	HTTPStatus   int               `json:"httpStatus,omitzero" bound:"httpStatus" doc:"the provider's status; 0 for no response"`
	Headers      map[string]string `json:"headers,omitempty" text:"free" doc:"the provider's response headers, untouched"`
	ErrorKind    string            `json:"errorKind,omitempty" enum:",dns,connect,timeout,reset,tls,other" doc:"a network failure without a response"`
	Retryable    *bool             `json:"retryable,omitempty" doc:"false: never retry this failure"`
	RetryAfterMs *int64            `json:"retryAfterMs,omitempty" bound:"retryAfterMs" doc:"the worker's own minimum wait"`
	Message      string            `json:"message,omitempty" text:"free" doc:"free text, cleaned of control characters and cut to 2000 bytes on a character boundary"`
}

// ReportResult answers a single report.
type ReportResult struct {
	Job       Job      `json:"job"`
	Duplicate bool     `json:"duplicate" doc:"the same lease was reported before; nothing changed"`
	Decision  Decision `json:"decision"`
}

// Decision is how a report was classified.
type Decision struct {
	Outcome             string `json:"outcome" enum:",succeeded,retry,fail"`
	Classification      string `json:"classification"`
	RetryAfterMs        int64  `json:"retryAfterMs"`
	CountsTowardCircuit bool   `json:"countsTowardCircuit"`
	Reason              string `json:"reason"`
}

// ReportBatch is POST /v1/reports: 1 to 1000 reports, each standing on its
// own.
type ReportBatch struct {
	Reports []Report `json:"reports" minItems:"1" maxItems:"1000"`
}

// ReportBatchResult answers a batch report, one item per report in order.
type ReportBatchResult struct {
	Results []ReportBatchItem `json:"results"`
}

// ReportBatchItem is the result of one report of a batch: OK with the job's
// new state, or the error of that report alone.
type ReportBatchItem struct {
	JobID          int64        `json:"jobId"`
	OK             bool         `json:"ok"`
	State          JobState     `json:"state,omitempty"`
	Classification string       `json:"classification,omitempty"`
	DueAt          string       `json:"dueAt,omitempty" format:"date-time"`
	Duplicate      bool         `json:"duplicate,omitempty"`
	Error          *ErrorDetail `json:"error,omitempty"`
}
