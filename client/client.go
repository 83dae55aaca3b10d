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
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/getratchet/ratchet/backoff"
	"github.com/getratchet/ratchet/field"
	"github.com/getratchet/ratchet/wire"
)

// Client talks to one Ratchet server with one API key.
type Client struct {
	base    string
	key     string
	http    *http.Client
	strict  bool
	silence time.Duration // Stream: the longest quiet before the stream counts as dead
}

// Option configures a Client.
type Option func(*Client)

// WithHTTPClient sets the HTTP client (timeouts, transport).
func WithHTTPClient(h *http.Client) Option { return func(c *Client) { c.http = h } }

// WithStrictDecoding makes every response decode strictly: a field the
// client's types do not know is an error. Tests use it to prove the server
// sends exactly its contract; programs should not, so that a newer server
// may add fields.
func WithStrictDecoding() Option { return func(c *Client) { c.strict = true } }

// DefaultStreamSilence is how long a Stream waits without a byte — the
// server pings every 15 s — before it counts the connection as dead.
const DefaultStreamSilence = 60 * time.Second

// WithStreamSilence sets how long Stream waits without hearing anything
// (not even a ping) before it ends with ErrStreamSilent; 0 keeps
// DefaultStreamSilence.
func WithStreamSilence(d time.Duration) Option {
	return func(c *Client) {
		if d > 0 {
			c.silence = d
		}
	}
}

// ErrStreamSilent ends a Stream whose server sent nothing, not even a ping,
// for the stream silence (a connection dropped without a close).
var ErrStreamSilent = errors.New("stream: nothing heard from the server, not even a ping")

// New makes a client for baseURL (e.g. http://127.0.0.1:8080) and key.
func New(baseURL, key string, opts ...Option) *Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 64
	c := &Client{base: strings.TrimRight(baseURL, "/"), key: key, http: &http.Client{Transport: tr}, silence: DefaultStreamSilence}
	for _, o := range opts {
		o(c)
	}
	return c
}

// The SDK's types are the server's wire types (package wire), so they
// cannot drift from what the server sends.
type (
	// Me describes the calling key and its project.
	Me = wire.Me
	// Key is an API key; Secret is set only when it was just created.
	Key = wire.Key
	// Policy is a retry policy document: a preset, or CUSTOM with every
	// field (backoff.Custom with Custom set).
	Policy = backoff.Policy
	// EndpointPolicy is the endpoint policy of the API: the retry policy
	// with the lease, concurrency, rate limit and circuit settings.
	EndpointPolicy = wire.EndpointPolicy
	// EndpointSettings are an endpoint's settings besides its retry
	// policy (lease, concurrency, rate limit, circuit, limits per key).
	EndpointSettings = wire.EndpointSettings
	// KeyLimits are an endpoint's limits per flow key.
	KeyLimits = wire.KeyLimits
	// Endpoint is an endpoint as the API returns it.
	Endpoint = wire.Endpoint
	// ToolSpec is a tool contract to publish.
	ToolSpec = wire.ToolPublish
	// Tool is a published contract.
	Tool = wire.Tool
	// Run is a group of steps.
	Run = wire.Run
	// ScheduleCreate is a schedule to create (docs/schedules.md).
	ScheduleCreate = wire.ScheduleCreate
	// Schedule is a recurring job with its next and latest ticks.
	Schedule = wire.Schedule
	// ScheduleTick is one tick of a schedule and what it did.
	ScheduleTick = wire.ScheduleTick
	// ScheduleFire is one coming tick of a preview.
	ScheduleFire = wire.ScheduleFire
	// SchedulePage is one page of the schedules by name; NextCursor is nil
	// on the last page.
	SchedulePage = wire.ScheduleList
	// ScheduleTickPage is one page of a schedule's ticks, newest first;
	// NextCursor is nil on the last page.
	ScheduleTickPage = wire.ScheduleTickList
	// TickCounts counts a schedule's ticks since a time by outcome.
	TickCounts = wire.TickCounts
	// Job is a job as the API returns it.
	Job = wire.Job
	// Hold says which gate keeps a scheduled job waiting.
	Hold = wire.Hold
	// Attempt is one claim of a job and the arithmetic that followed.
	Attempt = wire.Attempt
	// EnqueueRequest is one job to enqueue.
	EnqueueRequest = wire.JobEnqueue
	// Enqueued is one result of a batch enqueue.
	Enqueued = wire.JobBatchItem
	// JobPage is one page of a job list; NextCursor is nil on the last page.
	JobPage = wire.JobList
	// FlowKeyList is an endpoint's busiest flow keys.
	FlowKeyList = wire.FlowKeyList
	// JobCounts is the count of each job state and the total.
	JobCounts = wire.JobCounts
	// BulkResult is what a bulk action did.
	BulkResult = wire.JobBulkResult
	// ClaimRequest asks for due jobs.
	ClaimRequest = wire.ClaimRequest
	// ClaimedJob is a leased job.
	ClaimedJob = wire.ClaimedJob
	// HeartbeatResult is the extended lease.
	HeartbeatResult = wire.HeartbeatResult
	// Report is a worker's outcome.
	Report = wire.Report
	// ReportResult is the answer to a single report.
	ReportResult = wire.ReportResult
	// BatchResult is one result of a batch report.
	BatchResult = wire.ReportBatchItem
	// EndpointPause says who paused an endpoint, when and why.
	EndpointPause = wire.EndpointPause
	// AuditEntry is one operator action.
	AuditEntry = wire.AuditEntry
	// RunPage is one page of the runs, newest first; NextCursor is nil on the last page.
	RunPage = wire.RunList
	// AuditPage is one page of the audit log; NextCursor is nil on the last page.
	AuditPage = wire.AuditList
	// EndpointEvent is one entry of an endpoint's event log.
	EndpointEvent = wire.EndpointEvent
	// EndpointEventPage is one page of an endpoint's event log, newest
	// first; NextCursor is nil on the last page.
	EndpointEventPage = wire.EndpointEventList
	// FailureGroupList is an endpoint's failures grouped by classification
	// and message fingerprint.
	FailureGroupList = wire.FailureGroupList
	// FailureGroup is one group of failures.
	FailureGroup = wire.FailureGroup
	// FailureFilter selects failed and exhausted jobs for ReplayFailures
	// (its Preview and ExpectedCount are set by the method).
	FailureFilter = wire.FailureReplay
	// FailureReplayResult is what a replay by filter counted and did.
	FailureReplayResult = wire.FailureReplayResult
)

// Error is an error response of the API. Its Fields are the rejected
// fields of an invalid request; field.As finds them through the error.
type Error struct {
	Status int
	// RetryAfter is the server's Retry-After (on 503), zero when none.
	RetryAfter time.Duration
	wire.ErrorDetail
}

// errorOf is the *Error of a failed response whose body is data: Ratchet's
// error body, or, when the body is not in Ratchet's error shape (a
// proxy's page, say), the code http_STATUS with the body's text.
func errorOf(resp *http.Response, data []byte) *Error {
	var eb wire.ErrorBody
	if err := json.Unmarshal(data, &eb); err != nil || eb.Error.Code == "" {
		eb.Error = wire.ErrorDetail{Code: "http_" + strconv.Itoa(resp.StatusCode), Message: strings.TrimSpace(string(data))}
	}
	return &Error{Status: resp.StatusCode, RetryAfter: parseRetryAfter(resp.Header.Get("Retry-After"), time.Now()), ErrorDetail: eb.Error}
}

// Error reads "ratchet: STATUS CODE: MESSAGE".
func (e *Error) Error() string {
	return fmt.Sprintf("ratchet: %d %s: %s", e.Status, e.Code, e.Message)
}

// Unwrap exposes the rejected fields as a field.Errors.
func (e *Error) Unwrap() error { return field.Errors(e.Fields).Err() }

// IsConflict reports whether err is a 409 (stale version or lease).
func IsConflict(err error) bool { return hasStatus(err, http.StatusConflict) }

// IsNotFound reports whether err is a 404.
func IsNotFound(err error) bool { return hasStatus(err, http.StatusNotFound) }

func hasStatus(err error, status int) bool {
	var e *Error
	return errors.As(err, &e) && e.Status == status
}

// do sends a request and decodes a JSON response into out (if not nil).
func (c *Client) do(ctx context.Context, method, path string, in, out any) (int, error) {
	var body io.Reader
	if in != nil {
		if err := checkRequestText(in); err != nil {
			return 0, fmt.Errorf("%s %s: %w", method, path, err)
		}
		b, err := json.Marshal(in)
		if err != nil {
			return 0, fmt.Errorf("encode %s %s: %w", method, path, err)
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
		return resp.StatusCode, fmt.Errorf("read %s %s: %w", method, path, err)
	}
	if resp.StatusCode >= 400 {
		return resp.StatusCode, errorOf(resp, data)
	}
	if out != nil && len(data) > 0 {
		dec := json.NewDecoder(bytes.NewReader(data))
		if c.strict {
			dec.DisallowUnknownFields()
		}
		if err := dec.Decode(out); err != nil {
			return resp.StatusCode, fmt.Errorf("decode %s %s: %w", method, path, err)
		}
	}
	return resp.StatusCode, nil
}

// Me returns the calling key and its project.
func (c *Client) Me(ctx context.Context) (*Me, error) {
	var m Me
	_, err := c.do(ctx, "GET", "/v1/me", nil, &m)
	return &m, err
}

// CreateKey creates a key: scope owner, producer or worker (with tools).
func (c *Client) CreateKey(ctx context.Context, name string, scope wire.Scope, tools []string) (*Key, error) {
	var k Key
	_, err := c.do(ctx, "POST", "/v1/keys", wire.KeyCreate{Name: name, Scope: scope, Tools: tools}, &k)
	return &k, err
}

// ListKeys lists the project's keys.
func (c *Client) ListKeys(ctx context.Context) ([]Key, error) {
	var out wire.KeyList
	_, err := c.do(ctx, "GET", "/v1/keys", nil, &out)
	return out.Keys, err
}

// RevokeKey revokes a key.
func (c *Client) RevokeKey(ctx context.Context, id int64) error {
	_, err := c.do(ctx, "DELETE", "/v1/keys/"+strconv.FormatInt(id, 10), nil, nil)
	return err
}

// CreateEndpoint creates an endpoint. Zero fields take the server defaults
// (STANDARD, 30 s lease, 10 concurrent, no rate limit).
func (c *Client) CreateEndpoint(ctx context.Context, name string, p EndpointPolicy) (*Endpoint, error) {
	var e Endpoint
	_, err := c.do(ctx, "POST", "/v1/endpoints", wire.EndpointCreate{Name: name, EndpointPolicy: p}, &e)
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
	var out wire.EndpointList
	_, err := c.do(ctx, "GET", "/v1/endpoints", nil, &out)
	return out.Endpoints, err
}

// UpdateEndpointPolicy replaces the policy if expectedVersion is current;
// on a stale version it returns an *Error with Status 409 whose Current
// holds the endpoint as it is now.
func (c *Client) UpdateEndpointPolicy(ctx context.Context, name string, expectedVersion int64, p EndpointPolicy) (*Endpoint, error) {
	var e Endpoint
	_, err := c.do(ctx, "PUT", "/v1/endpoints/"+url.PathEscape(name)+"/policy", wire.EndpointPolicyUpdate{ExpectedVersion: expectedVersion, EndpointPolicy: p}, &e)
	return &e, err
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
	var out wire.ToolList
	_, err := c.do(ctx, "GET", "/v1/tools", nil, &out)
	return out.Tools, err
}

// StartRun opens a run.
func (c *Client) StartRun(ctx context.Context, name string) (*Run, error) {
	var r Run
	_, err := c.do(ctx, "POST", "/v1/runs", wire.RunCreate{Name: name}, &r)
	return &r, err
}

// GetRun reads a run with its steps.
func (c *Client) GetRun(ctx context.Context, id int64) (*Run, error) {
	var r Run
	_, err := c.do(ctx, "GET", "/v1/runs/"+strconv.FormatInt(id, 10), nil, &r)
	return &r, err
}

// ListRuns reads a page of the project's runs, newest first, without their
// steps; cursor is the previous page's NextCursor ("" for the first page),
// limit 0 for the server's default.
func (c *Client) ListRuns(ctx context.Context, cursor string, limit int) (*RunPage, error) {
	v := url.Values{}
	if cursor != "" {
		v.Set("cursor", cursor)
	}
	if limit > 0 {
		v.Set("limit", strconv.Itoa(limit))
	}
	var p RunPage
	_, err := c.do(ctx, "GET", "/v1/runs?"+v.Encode(), nil, &p)
	return &p, err
}

// FinishRun closes a run.
func (c *Client) FinishRun(ctx context.Context, id int64) (*Run, error) {
	var r Run
	_, err := c.do(ctx, "POST", "/v1/runs/"+strconv.FormatInt(id, 10)+"/finish", nil, &r)
	return &r, err
}

// Enqueue stores a job. created is false when the idempotency key returned
// an existing job.
func (c *Client) Enqueue(ctx context.Context, r EnqueueRequest) (*Job, bool, error) {
	var j Job
	status, err := c.do(ctx, "POST", "/v1/jobs", r, &j)
	return &j, status == http.StatusCreated, err
}

// EnqueueBatch stores up to 1000 jobs in one transaction.
func (c *Client) EnqueueBatch(ctx context.Context, rs []EnqueueRequest) ([]Enqueued, error) {
	var out wire.JobBatchResult
	_, err := c.do(ctx, "POST", "/v1/jobs/batch", wire.JobBatch{Jobs: rs}, &out)
	return out.Jobs, err
}

// JobFilter selects jobs; the zero value selects every job.
type JobFilter struct {
	States        []wire.JobState
	Tool          string // name or name@version
	Endpoint      string
	RunID         int64
	FlowKey       string // jobs of this flow key (exact match)
	CreatedAfter  time.Time
	CreatedBefore time.Time
	// Sort is the order of ListJobs ("" is wire.SortIDDesc, newest
	// first); the finished orders need States of failed, exhausted or
	// both. Keep it with the Cursor of its pages: a cursor is of one
	// order.
	Sort   wire.JobSort
	Cursor string
	Limit  int
	// Q is search text: a job id, an exact idempotency key, tool or
	// endpoint name, or a substring of the payload or the last error.
	Q string
}

// Wire renders the filter as the API's query.
func (f JobFilter) Wire() wire.JobQuery {
	var q wire.JobQuery
	states := make([]string, len(f.States))
	for i, s := range f.States {
		states[i] = string(s)
	}
	q.State, q.Tool, q.Endpoint, q.Cursor, q.Q, q.FlowKey, q.Sort = strings.Join(states, ","), f.Tool, f.Endpoint, f.Cursor, f.Q, f.FlowKey, f.Sort
	if f.RunID != 0 {
		q.RunID = strconv.FormatInt(f.RunID, 10)
	}
	if !f.CreatedAfter.IsZero() {
		q.CreatedAfter = f.CreatedAfter.UTC().Format(time.RFC3339Nano)
	}
	if !f.CreatedBefore.IsZero() {
		q.CreatedBefore = f.CreatedBefore.UTC().Format(time.RFC3339Nano)
	}
	if f.Limit > 0 {
		q.Limit = strconv.Itoa(f.Limit)
	}
	return q
}

// Query renders the filter as URL query parameters.
func (f JobFilter) Query() url.Values {
	q, v := f.Wire(), url.Values{}
	for name, val := range map[string]string{"state": q.State, "tool": q.Tool, "endpoint": q.Endpoint, "runId": q.RunID, "flowKey": q.FlowKey,
		"createdAfter": q.CreatedAfter, "createdBefore": q.CreatedBefore, "cursor": q.Cursor, "limit": q.Limit, "q": q.Q, "sort": string(q.Sort)} {
		if val != "" {
			v.Set(name, val)
		}
	}
	return v
}

// ListJobs lists jobs in f.Sort's order, newest first by default.
func (c *Client) ListJobs(ctx context.Context, f JobFilter) (*JobPage, error) {
	var p JobPage
	_, err := c.do(ctx, "GET", "/v1/jobs?"+f.Query().Encode(), nil, &p)
	return &p, err
}

// CountJobs counts jobs matching a filter. A text search (Q not a job id)
// counts within the newest 50,000 jobs of the other filters
// (wire.SearchWindow); the server's answer then says "capped": the
// count is a lower bound.
func (c *Client) CountJobs(ctx context.Context, f JobFilter) (int64, error) {
	f.Cursor, f.Limit = "", 0
	var out wire.JobCount
	_, err := c.do(ctx, "GET", "/v1/jobs/count?"+f.Query().Encode(), nil, &out)
	return out.Count, err
}

// JobCounts counts jobs per state: of the project, of one endpoint (when
// endpoint is not empty) or of one tool ("name" or "name@version"). Without
// a tool the server reads counters it keeps with every change of a job.
func (c *Client) JobCounts(ctx context.Context, endpoint, tool string) (*JobCounts, error) {
	v := url.Values{}
	if endpoint != "" {
		v.Set("endpoint", endpoint)
	}
	if tool != "" {
		v.Set("tool", tool)
	}
	var out JobCounts
	_, err := c.do(ctx, "GET", "/v1/jobs/counts?"+v.Encode(), nil, &out)
	return &out, err
}

// Bulk cancels, replays or runs now ("run_now", owner key) every job matching f; expectedCount is the count
// the person confirmed (CountJobs), and a changed selection is a conflict.
func (c *Client) Bulk(ctx context.Context, action string, f JobFilter, expectedCount int64) (*BulkResult, error) {
	f.Cursor, f.Limit = "", 0
	q := f.Wire()
	var out BulkResult
	_, err := c.do(ctx, "POST", "/v1/jobs/bulk", wire.JobBulk{Action: wire.BulkAction(action), Filter: &q, ExpectedCount: &expectedCount}, &out)
	return &out, err
}

// BulkIDs cancels, replays or runs now ("cancel", "replay", "run_now") the
// jobs listed by id (1–1000); run_now needs an owner key.
func (c *Client) BulkIDs(ctx context.Context, action string, ids []int64) (*BulkResult, error) {
	n := int64(len(ids))
	var out BulkResult
	_, err := c.do(ctx, "POST", "/v1/jobs/bulk", wire.JobBulk{Action: wire.BulkAction(action), IDs: ids, ExpectedCount: &n}, &out)
	return &out, err
}

// RunNow makes a scheduled job due now (owner key); the gates still apply
// and its attempt count stays. A job in another state is a 409.
func (c *Client) RunNow(ctx context.Context, id int64) (*Job, error) {
	var j Job
	_, err := c.do(ctx, "POST", "/v1/jobs/"+strconv.FormatInt(id, 10)+"/run-now", nil, &j)
	return &j, err
}

// PauseEndpoint pauses an endpoint (owner key): its due jobs are held by
// the gate "paused" until ResumeEndpoint. reason may be empty. Pausing a
// paused endpoint keeps the first pause.
func (c *Client) PauseEndpoint(ctx context.Context, name, reason string) (*Endpoint, error) {
	var ep Endpoint
	_, err := c.do(ctx, "POST", "/v1/endpoints/"+url.PathEscape(name)+"/pause", wire.EndpointPauseRequest{Reason: reason}, &ep)
	return &ep, err
}

// ResumeEndpoint lifts a pause (owner key).
func (c *Client) ResumeEndpoint(ctx context.Context, name string) (*Endpoint, error) {
	var ep Endpoint
	_, err := c.do(ctx, "POST", "/v1/endpoints/"+url.PathEscape(name)+"/resume", nil, &ep)
	return &ep, err
}

// CloseCircuit closes an endpoint's circuit now and clears its failure
// count (owner key).
func (c *Client) CloseCircuit(ctx context.Context, name string) (*Endpoint, error) {
	var ep Endpoint
	_, err := c.do(ctx, "POST", "/v1/endpoints/"+url.PathEscape(name)+"/circuit/close", nil, &ep)
	return &ep, err
}

// OpenCircuit opens an endpoint's circuit now for its circuitOpenMs (owner
// key); then it half-opens as usual.
func (c *Client) OpenCircuit(ctx context.Context, name string) (*Endpoint, error) {
	var ep Endpoint
	_, err := c.do(ctx, "POST", "/v1/endpoints/"+url.PathEscape(name)+"/circuit/open", nil, &ep)
	return &ep, err
}

// HeldJobs lists the endpoint's due jobs that one of its gates holds now,
// newest first, each with HeldBy; cursor is "" for the first page and
// limit 0 for the default (100).
func (c *Client) HeldJobs(ctx context.Context, name, cursor string, limit int) (*JobPage, error) {
	v := url.Values{}
	if cursor != "" {
		v.Set("cursor", cursor)
	}
	if limit > 0 {
		v.Set("limit", strconv.Itoa(limit))
	}
	var p JobPage
	_, err := c.do(ctx, "GET", "/v1/endpoints/"+url.PathEscape(name)+"/held?"+v.Encode(), nil, &p)
	return &p, err
}

// EndpointEvents lists the endpoint's event log (circuit changes, pauses,
// recoveries, learned limits) newest first: events at or after since
// (zero: all kept); cursor is "" for the first page and limit 0 for the
// default (100).
func (c *Client) EndpointEvents(ctx context.Context, name string, since time.Time, cursor string, limit int) (*EndpointEventPage, error) {
	v := url.Values{}
	if !since.IsZero() {
		v.Set("since", since.UTC().Format(time.RFC3339Nano))
	}
	if cursor != "" {
		v.Set("cursor", cursor)
	}
	if limit > 0 {
		v.Set("limit", strconv.Itoa(limit))
	}
	var p EndpointEventPage
	_, err := c.do(ctx, "GET", "/v1/endpoints/"+url.PathEscape(name)+"/events?"+v.Encode(), nil, &p)
	return &p, err
}

// FlowKeys lists the endpoint's busiest flow keys, most running and
// scheduled jobs first, with the due jobs each key's own limits hold now;
// limit 0 for the default (10, at most 100).
func (c *Client) FlowKeys(ctx context.Context, name string, limit int) (*FlowKeyList, error) {
	v := url.Values{}
	if limit > 0 {
		v.Set("limit", strconv.Itoa(limit))
	}
	var l FlowKeyList
	_, err := c.do(ctx, "GET", "/v1/endpoints/"+url.PathEscape(name)+"/keys?"+v.Encode(), nil, &l)
	return &l, err
}

// Failures groups the endpoint's failed and exhausted jobs of [since,
// until) by classification and message fingerprint, the largest group
// first, each with a sparkline of buckets counts. Zero times and 0 buckets
// take the defaults: until now, since 24 hours before it, 24 buckets.
func (c *Client) Failures(ctx context.Context, endpoint string, since, until time.Time, buckets int) (*FailureGroupList, error) {
	v := url.Values{}
	if !since.IsZero() {
		v.Set("since", since.UTC().Format(time.RFC3339Nano))
	}
	if !until.IsZero() {
		v.Set("until", until.UTC().Format(time.RFC3339Nano))
	}
	if buckets > 0 {
		v.Set("buckets", strconv.Itoa(buckets))
	}
	var l FailureGroupList
	_, err := c.do(ctx, "GET", "/v1/endpoints/"+url.PathEscape(endpoint)+"/failures?"+v.Encode(), nil, &l)
	return &l, err
}

// PreviewReplayFailures counts, changing nothing, the failed and exhausted
// jobs f selects that no job replays yet: the count ReplayFailures then
// expects.
func (c *Client) PreviewReplayFailures(ctx context.Context, f FailureFilter) (*FailureReplayResult, error) {
	f.Preview, f.ExpectedCount = true, nil
	var out FailureReplayResult
	_, err := c.do(ctx, "POST", "/v1/failures/replay", f, &out)
	return &out, err
}

// ReplayFailures replays, as new jobs paced by their endpoints' gates, the
// jobs f selects; expectedCount is the preview's count the person
// confirmed (another count is a 409 and nothing is done; at most 1000).
func (c *Client) ReplayFailures(ctx context.Context, f FailureFilter, expectedCount int64) (*FailureReplayResult, error) {
	f.Preview, f.ExpectedCount = false, &expectedCount
	var out FailureReplayResult
	_, err := c.do(ctx, "POST", "/v1/failures/replay", f, &out)
	return &out, err
}

// Audit lists operator actions newest first (owner key); target ("" for
// all) selects e.g. "endpoint:payments" or "job:42".
func (c *Client) Audit(ctx context.Context, target, cursor string, limit int) (*AuditPage, error) {
	v := url.Values{}
	for k, s := range map[string]string{"target": target, "cursor": cursor} {
		if s != "" {
			v.Set(k, s)
		}
	}
	if limit > 0 {
		v.Set("limit", strconv.Itoa(limit))
	}
	var p AuditPage
	_, err := c.do(ctx, "GET", "/v1/audit?"+v.Encode(), nil, &p)
	return &p, err
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

// Claim leases due jobs.
func (c *Client) Claim(ctx context.Context, r ClaimRequest) ([]ClaimedJob, error) {
	var out wire.ClaimResult
	_, err := c.do(ctx, "POST", "/v1/claims", r, &out)
	return out.Jobs, err
}

// Heartbeat extends a lease.
func (c *Client) Heartbeat(ctx context.Context, jobID int64, leaseToken string) (*HeartbeatResult, error) {
	var h HeartbeatResult
	_, err := c.do(ctx, "POST", "/v1/jobs/"+strconv.FormatInt(jobID, 10)+"/heartbeat", wire.Heartbeat{LeaseToken: leaseToken}, &h)
	return &h, err
}

// ReportOne reports one outcome.
func (c *Client) ReportOne(ctx context.Context, r Report) (*ReportResult, error) {
	var out ReportResult
	id := r.JobID
	r.JobID = 0
	_, err := c.do(ctx, "POST", "/v1/jobs/"+strconv.FormatInt(id, 10)+"/report", r, &out)
	return &out, err
}

// ReportBatch reports up to 1000 outcomes; each stands on its own.
func (c *Client) ReportBatch(ctx context.Context, rs []Report) ([]BatchResult, error) {
	var out wire.ReportBatchResult
	_, err := c.do(ctx, "POST", "/v1/reports", wire.ReportBatch{Reports: rs}, &out)
	return out.Results, err
}

// StreamEvent is one event of GET /v1/stream: its name ("job", "overview",
// "jobs" or "error") and its JSON data (a Job, an Overview, a
// wire.StreamJobs or an error body).
type StreamEvent struct {
	Event string
	Data  json.RawMessage
}

// Stream follows GET /v1/stream and calls fn with each event: a job's
// changes (job > 0), the overview (view "overview") or a jobs list (view
// "jobs" with the filters of f; its cursor and limit are left out). The
// first event is the view as it is; later ones come only when it changed;
// ping comments are skipped. Stream returns nil when the server ends the
// stream (shutdown; a revoked key sends an "error" event first), ctx's error
// when ctx ends, fn's error when fn returns one, ErrStreamSilent when
// nothing, not even a ping, arrived for the stream silence (60 s, see
// WithStreamSilence), and an *Error before the stream starts. It is not
// retried: reconnect as you see fit.
func (c *Client) Stream(ctx context.Context, job int64, view string, f JobFilter, fn func(StreamEvent) error) error {
	v := streamQuery(job, view, f)
	// A watchdog ends the request when nothing arrives for the silence;
	// every read that brings bytes winds it up again.
	sctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	watchdog := time.AfterFunc(c.silence, func() { cancel(ErrStreamSilent) })
	defer watchdog.Stop()
	req, err := http.NewRequestWithContext(sctx, "GET", c.base+"/v1/stream?"+v.Encode(), nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "text/event-stream")
	if c.key != "" {
		req.Header.Set("Authorization", "Bearer "+c.key)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		if cause := context.Cause(sctx); cause != nil && ctx.Err() == nil {
			return cause
		}
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 400 {
		data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		return errorOf(resp, data)
	}
	// The time fn takes is not silence.
	err = readEvents(&wound{r: resp.Body, timer: watchdog, d: c.silence}, func(e StreamEvent) error {
		watchdog.Stop()
		defer watchdog.Reset(c.silence)
		return fn(e)
	})
	if cause := context.Cause(sctx); cause != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return cause
	}
	return err
}

// streamQuery is the query of GET /v1/stream: the job, or the view and,
// for view "jobs", the filters of f without its cursor and limit (a
// stream follows the first page).
func streamQuery(job int64, view string, f JobFilter) url.Values {
	v := url.Values{}
	if job > 0 {
		v.Set("job", strconv.FormatInt(job, 10))
	}
	if view != "" {
		v.Set("view", view)
		if view == "jobs" {
			f.Cursor, f.Limit = "", 0
			for k, vals := range f.Query() {
				v[k] = vals
			}
		}
	}
	return v
}

// wound is a reader that winds a watchdog up again whenever bytes arrive.
type wound struct {
	r     io.Reader
	timer *time.Timer
	d     time.Duration
}

func (w *wound) Read(p []byte) (int, error) {
	n, err := w.r.Read(p)
	if n > 0 {
		w.timer.Reset(w.d)
	}
	return n, err
}

// Healthz asks whether the server process serves HTTP (GET /healthz).
func (c *Client) Healthz(ctx context.Context) (*wire.Health, error) {
	var out wire.Health
	_, err := c.do(ctx, "GET", "/healthz", nil, &out)
	return &out, err
}

// Readyz asks whether the server's store answers (GET /readyz). A 503 is
// an answer here, not an error: it is returned as Status "unavailable".
func (c *Client) Readyz(ctx context.Context) (*wire.Readiness, error) {
	var out wire.Readiness
	status, err := c.do(ctx, "GET", "/readyz", nil, &out)
	if status == http.StatusServiceUnavailable {
		// The body is a Readiness, not an error body: the error kept its text.
		var e *Error
		if errors.As(err, &e) {
			if json.Unmarshal([]byte(e.Message), &out) != nil || out.Status == "" {
				out.Status = wire.ReadinessUnavailable
			}
			return &out, nil
		}
	}
	return &out, err
}

// Overview reads the per-endpoint live state the dashboard shows.
func (c *Client) Overview(ctx context.Context) (*wire.Overview, error) {
	var out wire.Overview
	_, err := c.do(ctx, "GET", "/v1/overview", nil, &out)
	return &out, err
}

// Workers lists the workers the servers saw claim, heartbeat or report in
// the last 24 hours, latest activity first, with the running jobs each
// holds (owner key).
func (c *Client) Workers(ctx context.Context) (*wire.WorkerList, error) {
	var out wire.WorkerList
	_, err := c.do(ctx, "GET", "/v1/workers", nil, &out)
	return &out, err
}

// History reads per-minute claims, outcomes and due-to-claim lag of one
// endpoint ("" for every endpoint) over the last hours (1–48; 0 for the
// server's default, 6).
func (c *Client) History(ctx context.Context, endpoint string, hours int) (*wire.History, error) {
	q := url.Values{}
	if endpoint != "" {
		q.Set("endpoint", endpoint)
	}
	if hours != 0 {
		q.Set("hours", strconv.Itoa(hours))
	}
	path := "/v1/history"
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	var out wire.History
	_, err := c.do(ctx, "GET", path, nil, &out)
	return &out, err
}

// AdvanceClock moves the clock of a server started with --dev-clock.
func (c *Client) AdvanceClock(ctx context.Context, d time.Duration) error {
	_, err := c.do(ctx, "POST", "/v1/dev/clock", wire.ClockAdvance{AdvanceMs: d.Milliseconds()}, nil)
	return err
}

// parseRetryAfter reads a Retry-After header: delta-seconds or an HTTP date.
func parseRetryAfter(v string, now time.Time) time.Duration {
	if v == "" {
		return 0
	}
	if d := strings.Trim(v, " \t"); d != "" && strings.Trim(d, "0123456789") == "" {
		// delta-seconds: digits only ("+5" is not one); more than fit in an
		// int64 is still more than the hour it is capped at
		n, err := strconv.ParseInt(d, 10, 64)
		if err != nil || n > 3600 {
			n = 3600
		}
		return time.Duration(n) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return min(t.Sub(now), time.Hour)
	}
	return 0
}

// CreateSchedule creates a schedule (docs/schedules.md).
func (c *Client) CreateSchedule(ctx context.Context, s ScheduleCreate) (*Schedule, error) {
	var out Schedule
	_, err := c.do(ctx, "POST", "/v1/schedules", s, &out)
	return &out, err
}

// Schedules lists every schedule of the project with its latest ticks,
// reading page after page.
func (c *Client) Schedules(ctx context.Context) ([]Schedule, error) {
	var all []Schedule
	cursor := ""
	for {
		p, err := c.SchedulePage(ctx, cursor, wire.MaxListLimit)
		if err != nil {
			return all, err
		}
		all = append(all, p.Schedules...)
		if p.NextCursor == nil {
			return all, nil
		}
		cursor = *p.NextCursor
	}
}

// SchedulePage lists one page of the schedules by name; cursor is the
// previous page's NextCursor ("" for the first page), limit 0 the
// server's default (100).
func (c *Client) SchedulePage(ctx context.Context, cursor string, limit int) (*SchedulePage, error) {
	var p SchedulePage
	_, err := c.do(ctx, "GET", "/v1/schedules?"+pageQuery(cursor, limit), nil, &p)
	return &p, err
}

// ScheduleTicks lists one page of a schedule's ticks, newest first;
// cursor and limit as for SchedulePage.
func (c *Client) ScheduleTicks(ctx context.Context, name, cursor string, limit int) (*ScheduleTickPage, error) {
	var p ScheduleTickPage
	_, err := c.do(ctx, "GET", "/v1/schedules/"+url.PathEscape(name)+"/ticks?"+pageQuery(cursor, limit), nil, &p)
	return &p, err
}

// FireSchedule fires a tick of the schedule now (even while it is
// paused) and returns it.
func (c *Client) FireSchedule(ctx context.Context, name string) (*ScheduleTick, error) {
	var out ScheduleTick
	_, err := c.do(ctx, "POST", "/v1/schedules/"+url.PathEscape(name)+"/fire", nil, &out)
	return &out, err
}

func pageQuery(cursor string, limit int) string {
	v := url.Values{}
	if cursor != "" {
		v.Set("cursor", cursor)
	}
	if limit > 0 {
		v.Set("limit", strconv.Itoa(limit))
	}
	return v.Encode()
}

// GetSchedule reads a schedule with its latest ticks and their jobs.
func (c *Client) GetSchedule(ctx context.Context, name string) (*Schedule, error) {
	var out Schedule
	_, err := c.do(ctx, "GET", "/v1/schedules/"+url.PathEscape(name), nil, &out)
	return &out, err
}

// PreviewSchedule lists a schedule's next n fire times (0: the server's
// default, 10).
func (c *Client) PreviewSchedule(ctx context.Context, name string, n int) ([]ScheduleFire, error) {
	v := url.Values{}
	if n > 0 {
		v.Set("count", strconv.Itoa(n))
	}
	var out wire.ScheduleFires
	_, err := c.do(ctx, "GET", "/v1/schedules/"+url.PathEscape(name)+"/preview?"+v.Encode(), nil, &out)
	return out.Fires, err
}

// PauseSchedule pauses a schedule; ResumeSchedule (paused false) resumes
// it from its next tick after now.
func (c *Client) PauseSchedule(ctx context.Context, name string, paused bool) (*Schedule, error) {
	action := "/pause"
	if !paused {
		action = "/resume"
	}
	var out Schedule
	_, err := c.do(ctx, "POST", "/v1/schedules/"+url.PathEscape(name)+action, nil, &out)
	return &out, err
}

// DeleteSchedule deletes a schedule and its ticks; its jobs stay.
func (c *Client) DeleteSchedule(ctx context.Context, name string) error {
	_, err := c.do(ctx, "DELETE", "/v1/schedules/"+url.PathEscape(name), nil, nil)
	return err
}
