// Package client is the Go SDK for Ratchet's HTTP API: a typed client for
// every route and a Worker that runs handlers for tool@version contracts.
//
//	c := client.New("http://127.0.0.1:8080", os.Getenv("RATCHET_KEY"))
//	job, _, err := c.Enqueue(ctx, client.EnqueueRequest{Tool: "charge@1", Payload: payload, IdempotencyKey: "order-42"})
//
// A worker is a few lines:
//
//	w := client.NewWorker(c, client.WorkerOptions{ID: "billing-1", Concurrency: 8})
//	w.Handle("charge@1", func(ctx context.Context, j *client.ClaimedJob) error {
//		resp, err := http.Post(...)            // call the provider
//		if err != nil {
//			return err                       // network errors are classified by kind
//		}
//		defer resp.Body.Close()
//		return client.CheckResponse(resp)     // status and Retry-After go to Ratchet
//	})
//	err := w.Run(ctx)                          // until ctx ends; then drains gracefully
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Client talks to one Ratchet server with one API key.
type Client struct {
	base string
	key  string
	http *http.Client
}

// Option configures a Client.
type Option func(*Client)

// WithHTTPClient sets the HTTP client (timeouts, transport).
func WithHTTPClient(h *http.Client) Option { return func(c *Client) { c.http = h } }

// New makes a client for baseURL (e.g. http://127.0.0.1:8080) and key.
func New(baseURL, key string, opts ...Option) *Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 64
	c := &Client{base: strings.TrimRight(baseURL, "/"), key: key, http: &http.Client{Transport: tr}}
	for _, o := range opts {
		o(c)
	}
	return c
}

// Error is an error response of the API.
type Error struct {
	Status  int             `json:"-"`
	Code    string          `json:"code"`
	Message string          `json:"message"`
	Fields  []FieldError    `json:"fields"`
	Current json.RawMessage `json:"current"`
}

// FieldError names one rejected field.
type FieldError struct {
	Field   string `json:"field"`
	Value   string `json:"value"`
	Allowed string `json:"allowed"`
	Message string `json:"message"`
}

func (e *Error) Error() string {
	return fmt.Sprintf("ratchet: %d %s: %s", e.Status, e.Code, e.Message)
}

// IsConflict reports whether err is a 409 (stale version or lease).
func IsConflict(err error) bool { e, ok := err.(*Error); return ok && e.Status == http.StatusConflict }

// IsNotFound reports whether err is a 404.
func IsNotFound(err error) bool { e, ok := err.(*Error); return ok && e.Status == http.StatusNotFound }

// do sends a request and decodes a JSON response into out (if not nil).
func (c *Client) do(ctx context.Context, method, path string, in, out any) (int, error) {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return 0, err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, body)
	if err != nil {
		return 0, err
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.key != "" {
		req.Header.Set("Authorization", "Bearer "+c.key)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, err
	}
	if resp.StatusCode >= 400 {
		var eb struct {
			Error Error `json:"error"`
		}
		if json.Unmarshal(data, &eb) != nil || eb.Error.Code == "" {
			eb.Error = Error{Code: "http_" + strconv.Itoa(resp.StatusCode), Message: strings.TrimSpace(string(data))}
		}
		eb.Error.Status = resp.StatusCode
		return resp.StatusCode, &eb.Error
	}
	if out != nil && len(data) > 0 {
		if err := json.Unmarshal(data, out); err != nil {
			return resp.StatusCode, fmt.Errorf("decode %s %s: %w", method, path, err)
		}
	}
	return resp.StatusCode, nil
}

// Me describes the calling key.
type Me struct {
	Project struct {
		ID   int64  `json:"id"`
		Name string `json:"name"`
		Plan string `json:"plan"`
	} `json:"project"`
	Key struct {
		ID    int64    `json:"id"`
		Scope string   `json:"scope"`
		Tools []string `json:"tools"`
	} `json:"key"`
}

// Me returns the calling key and its project.
func (c *Client) Me(ctx context.Context) (*Me, error) {
	var m Me
	_, err := c.do(ctx, "GET", "/v1/me", nil, &m)
	return &m, err
}

// Key is an API key; Secret is set only when it was just created.
type Key struct {
	ID        int64    `json:"id"`
	Name      string   `json:"name"`
	Scope     string   `json:"scope"`
	Prefix    string   `json:"prefix"`
	Tools     []string `json:"tools"`
	CreatedAt string   `json:"createdAt"`
	RevokedAt string   `json:"revokedAt,omitempty"`
	Secret    string   `json:"key,omitempty"`
}

// CreateKey creates a key: scope owner, producer or worker (with tools).
func (c *Client) CreateKey(ctx context.Context, name, scope string, tools []string) (*Key, error) {
	var k Key
	_, err := c.do(ctx, "POST", "/v1/keys", map[string]any{"name": name, "scope": scope, "tools": tools}, &k)
	return &k, err
}

// ListKeys lists the project's keys.
func (c *Client) ListKeys(ctx context.Context) ([]Key, error) {
	var out struct {
		Keys []Key `json:"keys"`
	}
	_, err := c.do(ctx, "GET", "/v1/keys", nil, &out)
	return out.Keys, err
}

// RevokeKey revokes a key.
func (c *Client) RevokeKey(ctx context.Context, id int64) error {
	_, err := c.do(ctx, "DELETE", "/v1/keys/"+strconv.FormatInt(id, 10), nil, nil)
	return err
}

// Policy is a retry policy: a preset, or CUSTOM with every field.
type Policy struct {
	Preset         string  `json:"preset"`
	MaxAttempts    int     `json:"maxAttempts,omitempty"`
	InitialDelayMs int64   `json:"initialDelayMs,omitempty"`
	Multiplier     float64 `json:"multiplier,omitempty"`
	MaxDelayMs     int64   `json:"maxDelayMs,omitempty"`
	JitterPercent  float64 `json:"jitterPercent,omitempty"`
}

// MarshalJSON writes every field for CUSTOM (zero jitter included) and only
// the preset otherwise, as the API requires.
func (p Policy) MarshalJSON() ([]byte, error) {
	if p.Preset != "CUSTOM" {
		if p.Preset == "" {
			return []byte("{}"), nil
		}
		return json.Marshal(map[string]string{"preset": p.Preset})
	}
	type all struct {
		Preset         string  `json:"preset"`
		MaxAttempts    int     `json:"maxAttempts"`
		InitialDelayMs int64   `json:"initialDelayMs"`
		Multiplier     float64 `json:"multiplier"`
		MaxDelayMs     int64   `json:"maxDelayMs"`
		JitterPercent  float64 `json:"jitterPercent"`
	}
	return json.Marshal(all(p))
}

// EndpointPolicy is the endpoint policy of the API: the retry policy with
// the lease, concurrency, rate limit and circuit settings.
type EndpointPolicy struct {
	Policy
	DefaultTimeoutMs        int64  `json:"defaultTimeoutMs,omitempty"`
	MaxConcurrent           int64  `json:"maxConcurrent,omitempty"`
	RateLimitPerMinute      *int64 `json:"rateLimitPerMinute"`
	CircuitFailureThreshold int64  `json:"circuitFailureThreshold,omitempty"`
	CircuitOpenMs           int64  `json:"circuitOpenMs,omitempty"`
}

func (p EndpointPolicy) fields() map[string]any {
	type rest struct {
		DefaultTimeoutMs        int64  `json:"defaultTimeoutMs,omitempty"`
		MaxConcurrent           int64  `json:"maxConcurrent,omitempty"`
		RateLimitPerMinute      *int64 `json:"rateLimitPerMinute"`
		CircuitFailureThreshold int64  `json:"circuitFailureThreshold,omitempty"`
		CircuitOpenMs           int64  `json:"circuitOpenMs,omitempty"`
	}
	m := map[string]any{}
	b, _ := json.Marshal(p.Policy)
	_ = json.Unmarshal(b, &m)
	b, _ = json.Marshal(rest{p.DefaultTimeoutMs, p.MaxConcurrent, p.RateLimitPerMinute, p.CircuitFailureThreshold, p.CircuitOpenMs})
	_ = json.Unmarshal(b, &m)
	return m
}

// Endpoint is an endpoint as the API returns it.
type Endpoint struct {
	Name                    string          `json:"name"`
	Version                 int64           `json:"version"`
	Policy                  json.RawMessage `json:"policy"`
	DefaultTimeoutMs        int64           `json:"defaultTimeoutMs"`
	MaxConcurrent           int64           `json:"maxConcurrent"`
	RateLimitPerMinute      *int64          `json:"rateLimitPerMinute"`
	CircuitFailureThreshold int64           `json:"circuitFailureThreshold"`
	CircuitOpenMs           int64           `json:"circuitOpenMs"`
	Circuit                 struct {
		State       string `json:"state"`
		Failures    int64  `json:"failures"`
		OpenedAt    string `json:"openedAt"`
		HalfOpensAt string `json:"halfOpensAt"`
		ProbeJobID  int64  `json:"probeJobId"`
	} `json:"circuit"`
	CreatedAt string `json:"createdAt"`
	UpdatedAt string `json:"updatedAt"`
}

// CreateEndpoint creates an endpoint. Zero fields take the server defaults
// (STANDARD, 30 s lease, 10 concurrent, no rate limit).
func (c *Client) CreateEndpoint(ctx context.Context, name string, p EndpointPolicy) (*Endpoint, error) {
	m := p.fields()
	m["name"] = name
	var e Endpoint
	_, err := c.do(ctx, "POST", "/v1/endpoints", m, &e)
	return &e, err
}

// GetEndpoint reads an endpoint.
func (c *Client) GetEndpoint(ctx context.Context, name string) (*Endpoint, error) {
	var e Endpoint
	_, err := c.do(ctx, "GET", "/v1/endpoints/"+url.PathEscape(name), nil, &e)
	return &e, err
}

// ListEndpoints lists endpoints.
func (c *Client) ListEndpoints(ctx context.Context) ([]Endpoint, error) {
	var out struct {
		Endpoints []Endpoint `json:"endpoints"`
	}
	_, err := c.do(ctx, "GET", "/v1/endpoints", nil, &out)
	return out.Endpoints, err
}

// UpdateEndpointPolicy replaces the policy if expectedVersion is current;
// on a stale version it returns an *Error with Status 409 whose Current
// holds the endpoint as it is now.
func (c *Client) UpdateEndpointPolicy(ctx context.Context, name string, expectedVersion int64, p EndpointPolicy) (*Endpoint, error) {
	m := p.fields()
	m["expectedVersion"] = expectedVersion
	m["rateLimitPerMinute"] = p.RateLimitPerMinute
	var e Endpoint
	_, err := c.do(ctx, "PUT", "/v1/endpoints/"+url.PathEscape(name)+"/policy", m, &e)
	return &e, err
}

// ToolSpec is a tool contract to publish.
type ToolSpec struct {
	Name          string          `json:"name"`
	Version       string          `json:"version"`
	Endpoint      string          `json:"endpoint"`
	Description   string          `json:"description,omitempty"`
	PayloadSchema json.RawMessage `json:"payloadSchema,omitempty"`
	TimeoutMs     *int64          `json:"timeoutMs,omitempty"`
	RetryPreset   string          `json:"retryPreset,omitempty"`
	RetryPolicy   *Policy         `json:"retryPolicy,omitempty"`
}

// Tool is a published contract.
type Tool struct {
	Name          string          `json:"name"`
	Version       string          `json:"version"`
	Endpoint      string          `json:"endpoint"`
	Description   string          `json:"description"`
	PayloadSchema json.RawMessage `json:"payloadSchema"`
	TimeoutMs     *int64          `json:"timeoutMs"`
	RetryPreset   *string         `json:"retryPreset"`
	RetryPolicy   json.RawMessage `json:"retryPolicy"`
	CreatedAt     string          `json:"createdAt"`
}

// PublishTool publishes a contract.
func (c *Client) PublishTool(ctx context.Context, s ToolSpec) (*Tool, error) {
	var t Tool
	_, err := c.do(ctx, "POST", "/v1/tools", s, &t)
	return &t, err
}

// GetTool reads a contract.
func (c *Client) GetTool(ctx context.Context, name, version string) (*Tool, error) {
	var t Tool
	_, err := c.do(ctx, "GET", "/v1/tools/"+url.PathEscape(name)+"/"+url.PathEscape(version), nil, &t)
	return &t, err
}

// ListTools lists contracts.
func (c *Client) ListTools(ctx context.Context) ([]Tool, error) {
	var out struct {
		Tools []Tool `json:"tools"`
	}
	_, err := c.do(ctx, "GET", "/v1/tools", nil, &out)
	return out.Tools, err
}

// Run is a group of steps.
type Run struct {
	ID         int64          `json:"id"`
	Name       string         `json:"name"`
	State      string         `json:"state"`
	CreatedAt  string         `json:"createdAt"`
	FinishedAt string         `json:"finishedAt"`
	Steps      []Job          `json:"steps"`
	Counts     map[string]int `json:"counts"`
}

// StartRun opens a run.
func (c *Client) StartRun(ctx context.Context, name string) (*Run, error) {
	var r Run
	_, err := c.do(ctx, "POST", "/v1/runs", map[string]any{"name": name}, &r)
	return &r, err
}

// GetRun reads a run with its steps.
func (c *Client) GetRun(ctx context.Context, id int64) (*Run, error) {
	var r Run
	_, err := c.do(ctx, "GET", "/v1/runs/"+strconv.FormatInt(id, 10), nil, &r)
	return &r, err
}

// FinishRun closes a run.
func (c *Client) FinishRun(ctx context.Context, id int64) (*Run, error) {
	var r Run
	_, err := c.do(ctx, "POST", "/v1/runs/"+strconv.FormatInt(id, 10)+"/finish", nil, &r)
	return &r, err
}

// Job is a job as the API returns it.
type Job struct {
	ID              int64           `json:"id"`
	State           string          `json:"state"`
	Tool            string          `json:"tool"`
	Version         string          `json:"version"`
	Endpoint        string          `json:"endpoint"`
	Attempt         int64           `json:"attempt"`
	MaxAttempts     int64           `json:"maxAttempts"`
	IdempotencyKey  *string         `json:"idempotencyKey"`
	DueAt           string          `json:"dueAt"`
	Policy          json.RawMessage `json:"policy"`
	HeldBy          *Hold           `json:"heldBy"`
	RunID           *int64          `json:"runId"`
	ReplayOf        *int64          `json:"replayOf"`
	CancelRequested bool            `json:"cancelRequested"`
	WorkerID        string          `json:"workerId"`
	LeaseExpiresAt  string          `json:"leaseExpiresAt"`
	CreatedAt       string          `json:"createdAt"`
	UpdatedAt       string          `json:"updatedAt"`
	FinishedAt      string          `json:"finishedAt"`
	Payload         json.RawMessage `json:"payload"`
	Attempts        []Attempt       `json:"attempts"`
}

// Hold says which gate keeps a scheduled job waiting.
type Hold struct {
	Gate   string `json:"gate"`
	Until  string `json:"until"`
	Detail string `json:"detail"`
}

// Attempt is one claim of a job and the arithmetic that followed.
type Attempt struct {
	Number              int64    `json:"number"`
	WorkerID            string   `json:"workerId"`
	ClaimedAt           string   `json:"claimedAt"`
	FinishedAt          string   `json:"finishedAt"`
	DurationMs          *int64   `json:"durationMs"`
	Outcome             string   `json:"outcome"`
	Classification      string   `json:"classification"`
	HTTPStatus          *int64   `json:"httpStatus"`
	RetryAfterMs        *int64   `json:"retryAfterMs"`
	CountsTowardCircuit bool     `json:"countsTowardCircuit"`
	Message             string   `json:"message"`
	BaseDelayMs         *float64 `json:"baseDelayMs"`
	JitterSample        *float64 `json:"jitterSample"`
	MinDelayMs          *int64   `json:"minDelayMs"`
	MaxDelayMs          *int64   `json:"maxDelayMs"`
	SelectedDelayMs     *int64   `json:"selectedDelayMs"`
	NextDueAt           *string  `json:"nextDueAt"`
}

// EnqueueRequest is one job to enqueue.
type EnqueueRequest struct {
	Tool           string          `json:"tool"`
	Payload        json.RawMessage `json:"payload,omitempty"`
	IdempotencyKey string          `json:"idempotencyKey,omitempty"`
	MaxAttempts    *int64          `json:"maxAttempts,omitempty"`
	RunID          int64           `json:"runId,omitempty"`
	RunAt          *time.Time      `json:"runAt,omitempty"`
}

// Enqueue stores a job. created is false when the idempotency key returned
// an existing job.
func (c *Client) Enqueue(ctx context.Context, r EnqueueRequest) (*Job, bool, error) {
	var j Job
	status, err := c.do(ctx, "POST", "/v1/jobs", r, &j)
	return &j, status == http.StatusCreated, err
}

// Enqueued is one result of a batch enqueue.
type Enqueued struct {
	ID      int64  `json:"id"`
	State   string `json:"state"`
	Created bool   `json:"created"`
	DueAt   string `json:"dueAt"`
}

// EnqueueBatch stores up to 1000 jobs in one transaction.
func (c *Client) EnqueueBatch(ctx context.Context, rs []EnqueueRequest) ([]Enqueued, error) {
	var out struct {
		Jobs []Enqueued `json:"jobs"`
	}
	_, err := c.do(ctx, "POST", "/v1/jobs/batch", map[string]any{"jobs": rs}, &out)
	return out.Jobs, err
}

// JobFilter selects jobs.
type JobFilter struct {
	States        []string
	Tool          string // name or name@version
	Endpoint      string
	RunID         int64
	CreatedAfter  time.Time
	CreatedBefore time.Time
	Cursor        string
	Limit         int
}

// Query renders the filter as URL query parameters.
func (f JobFilter) Query() url.Values {
	q := url.Values{}
	if len(f.States) > 0 {
		q.Set("state", strings.Join(f.States, ","))
	}
	if f.Tool != "" {
		q.Set("tool", f.Tool)
	}
	if f.Endpoint != "" {
		q.Set("endpoint", f.Endpoint)
	}
	if f.RunID != 0 {
		q.Set("runId", strconv.FormatInt(f.RunID, 10))
	}
	if !f.CreatedAfter.IsZero() {
		q.Set("createdAfter", f.CreatedAfter.UTC().Format(time.RFC3339Nano))
	}
	if !f.CreatedBefore.IsZero() {
		q.Set("createdBefore", f.CreatedBefore.UTC().Format(time.RFC3339Nano))
	}
	if f.Cursor != "" {
		q.Set("cursor", f.Cursor)
	}
	if f.Limit > 0 {
		q.Set("limit", strconv.Itoa(f.Limit))
	}
	return q
}

// JobPage is one page of a job list; NextCursor is "" on the last page.
type JobPage struct {
	Jobs       []Job  `json:"jobs"`
	NextCursor string `json:"nextCursor"`
}

// ListJobs lists jobs newest first.
func (c *Client) ListJobs(ctx context.Context, f JobFilter) (*JobPage, error) {
	var p JobPage
	_, err := c.do(ctx, "GET", "/v1/jobs?"+f.Query().Encode(), nil, &p)
	return &p, err
}

// CountJobs counts jobs matching a filter.
func (c *Client) CountJobs(ctx context.Context, f JobFilter) (int64, error) {
	f.Cursor, f.Limit = "", 0
	var out struct {
		Count int64 `json:"count"`
	}
	_, err := c.do(ctx, "GET", "/v1/jobs/count?"+f.Query().Encode(), nil, &out)
	return out.Count, err
}

// BulkResult is what a bulk action did.
type BulkResult struct {
	Action string           `json:"action"`
	Count  int              `json:"count"`
	Jobs   []int64          `json:"jobs"`
	Failed []map[string]any `json:"failed"`
}

// Bulk cancels or replays every job matching f; expectedCount is the count
// the person confirmed (CountJobs), and a changed selection is a conflict.
func (c *Client) Bulk(ctx context.Context, action string, f JobFilter, expectedCount int64) (*BulkResult, error) {
	filter := map[string]string{}
	f.Cursor, f.Limit = "", 0
	for k, v := range f.Query() {
		filter[k] = v[0]
	}
	var out BulkResult
	_, err := c.do(ctx, "POST", "/v1/jobs/bulk", map[string]any{"action": action, "filter": filter, "expectedCount": expectedCount}, &out)
	return &out, err
}

// GetJob reads a job with its attempts.
func (c *Client) GetJob(ctx context.Context, id int64) (*Job, error) {
	var j Job
	_, err := c.do(ctx, "GET", "/v1/jobs/"+strconv.FormatInt(id, 10), nil, &j)
	return &j, err
}

// ExplainJob says which gate holds a job.
func (c *Client) ExplainJob(ctx context.Context, id int64) (*Hold, error) {
	var h Hold
	_, err := c.do(ctx, "GET", "/v1/jobs/"+strconv.FormatInt(id, 10)+"/explain", nil, &h)
	return &h, err
}

// CancelJob cancels a job.
func (c *Client) CancelJob(ctx context.Context, id int64) (*Job, error) {
	var j Job
	_, err := c.do(ctx, "POST", "/v1/jobs/"+strconv.FormatInt(id, 10)+"/cancel", nil, &j)
	return &j, err
}

// ReplayJob replays a finished job as a new one.
func (c *Client) ReplayJob(ctx context.Context, id int64) (*Job, error) {
	var j Job
	_, err := c.do(ctx, "POST", "/v1/jobs/"+strconv.FormatInt(id, 10)+"/replay", nil, &j)
	return &j, err
}

// ClaimRequest asks for due jobs.
type ClaimRequest struct {
	WorkerID string   `json:"workerId"`
	Tools    []string `json:"tools,omitempty"`
	Max      int      `json:"max,omitempty"`
	WaitMs   int64    `json:"waitMs,omitempty"`
}

// ClaimedJob is a leased job.
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
	LeaseExpiresAt string          `json:"leaseExpiresAt"`
	TimeoutMs      int64           `json:"timeoutMs"`
	RunID          int64           `json:"runId,omitempty"`
}

// Claim leases due jobs.
func (c *Client) Claim(ctx context.Context, r ClaimRequest) ([]ClaimedJob, error) {
	var out struct {
		Jobs []ClaimedJob `json:"jobs"`
	}
	_, err := c.do(ctx, "POST", "/v1/claims", r, &out)
	return out.Jobs, err
}

// HeartbeatResult is the extended lease.
type HeartbeatResult struct {
	LeaseExpiresAt  string `json:"leaseExpiresAt"`
	CancelRequested bool   `json:"cancelRequested"`
}

// Heartbeat extends a lease.
func (c *Client) Heartbeat(ctx context.Context, jobID int64, leaseToken string) (*HeartbeatResult, error) {
	var h HeartbeatResult
	_, err := c.do(ctx, "POST", "/v1/jobs/"+strconv.FormatInt(jobID, 10)+"/heartbeat", map[string]string{"leaseToken": leaseToken}, &h)
	return &h, err
}

// Report is a worker's outcome.
type Report struct {
	JobID        int64             `json:"jobId,omitempty"`
	LeaseToken   string            `json:"leaseToken"`
	Success      bool              `json:"success"`
	HTTPStatus   int               `json:"httpStatus,omitempty"`
	Headers      map[string]string `json:"headers,omitempty"`
	ErrorKind    string            `json:"errorKind,omitempty"`
	Retryable    *bool             `json:"retryable,omitempty"`
	RetryAfterMs *int64            `json:"retryAfterMs,omitempty"`
	Message      string            `json:"message,omitempty"`
}

// ReportResult is the answer to a single report.
type ReportResult struct {
	Job       Job  `json:"job"`
	Duplicate bool `json:"duplicate"`
	Decision  struct {
		Outcome             string `json:"outcome"`
		Classification      string `json:"classification"`
		RetryAfterMs        int64  `json:"retryAfterMs"`
		CountsTowardCircuit bool   `json:"countsTowardCircuit"`
		Reason              string `json:"reason"`
	} `json:"decision"`
}

// ReportOne reports one outcome.
func (c *Client) ReportOne(ctx context.Context, r Report) (*ReportResult, error) {
	var out ReportResult
	id := r.JobID
	r.JobID = 0
	_, err := c.do(ctx, "POST", "/v1/jobs/"+strconv.FormatInt(id, 10)+"/report", r, &out)
	return &out, err
}

// BatchResult is one result of a batch report.
type BatchResult struct {
	JobID          int64  `json:"jobId"`
	OK             bool   `json:"ok"`
	State          string `json:"state"`
	Classification string `json:"classification"`
	DueAt          string `json:"dueAt"`
	Duplicate      bool   `json:"duplicate"`
	Error          *Error `json:"error"`
}

// ReportBatch reports up to 1000 outcomes; each stands on its own.
func (c *Client) ReportBatch(ctx context.Context, rs []Report) ([]BatchResult, error) {
	var out struct {
		Results []BatchResult `json:"results"`
	}
	_, err := c.do(ctx, "POST", "/v1/reports", map[string]any{"reports": rs}, &out)
	return out.Results, err
}

// AdvanceClock moves the clock of a server started with --dev-clock.
func (c *Client) AdvanceClock(ctx context.Context, d time.Duration) error {
	_, err := c.do(ctx, "POST", "/v1/dev/clock", map[string]int64{"advanceMs": d.Milliseconds()}, nil)
	return err
}
