package api

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/getratchet/ratchet/backoff"
	"github.com/getratchet/ratchet/field"
	"github.com/getratchet/ratchet/internal/classify"
	"github.com/getratchet/ratchet/internal/engine"
	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/wire"
)

var (
	owner    = []wire.Scope{wire.ScopeOwner}
	producer = []wire.Scope{wire.ScopeProducer}
	worker   = []wire.Scope{wire.ScopeWorker}
	anyKey   = []wire.Scope{wire.ScopeOwner, wire.ScopeProducer, wire.ScopeWorker}
)

func (a *API) table() []Route {
	jobQuery := []Param{
		{"state", "string", "comma-separated states: scheduled, running, succeeded, failed, exhausted, cancelled"},
		{"tool", "string", `"name" or "name@version"`},
		{"endpoint", "string", "endpoint name"},
		{"runId", "integer", "run id"},
		{"createdAfter", "string", "RFC 3339 time, inclusive"},
		{"createdBefore", "string", "RFC 3339 time, exclusive"},
		{"cursor", "string", "nextCursor of the previous page"},
		{"limit", "integer", "1–500, default 100"},
	}
	return []Route{
		{Method: "GET", Path: "/v1/me", Summary: "The calling key and its project", Scopes: anyKey, Response: "Me", Status: 200, handler: a.auth(anyKey, a.me)},
		{Method: "POST", Path: "/v1/keys", Summary: "Create an API key (the secret is shown once)", Scopes: owner, Request: "KeyCreate", Response: "Key", Status: 201, handler: a.auth(owner, a.createKey)},
		{Method: "GET", Path: "/v1/keys", Summary: "List API keys", Scopes: owner, Response: "KeyList", Status: 200, handler: a.auth(owner, a.listKeys)},
		{Method: "DELETE", Path: "/v1/keys/{id}", Summary: "Revoke an API key", Scopes: owner, Status: 204, handler: a.auth(owner, a.revokeKey)},
		{Method: "POST", Path: "/v1/endpoints", Summary: "Create an endpoint with its policy", Scopes: owner, Request: "EndpointCreate", Response: "Endpoint", Status: 201, handler: a.auth(owner, a.createEndpoint)},
		{Method: "GET", Path: "/v1/endpoints", Summary: "List endpoints", Scopes: anyKey, Response: "EndpointList", Status: 200, handler: a.auth(anyKey, a.listEndpoints)},
		{Method: "GET", Path: "/v1/endpoints/{name}", Summary: "Read an endpoint, its policy, version and circuit", Scopes: anyKey, Response: "Endpoint", Status: 200, handler: a.auth(anyKey, a.getEndpoint)},
		{Method: "PUT", Path: "/v1/endpoints/{name}/policy", Summary: "Replace the endpoint policy; 409 with the current endpoint when expectedVersion is stale", Scopes: owner, Request: "EndpointPolicyUpdate", Response: "Endpoint", Status: 200, handler: a.auth(owner, a.updatePolicy)},
		{Method: "POST", Path: "/v1/tools", Summary: "Publish an immutable tool contract", Scopes: owner, Request: "ToolPublish", Response: "Tool", Status: 201, handler: a.auth(owner, a.publishTool)},
		{Method: "GET", Path: "/v1/tools", Summary: "List tool contracts", Scopes: anyKey, Response: "ToolList", Status: 200, handler: a.auth(anyKey, a.listTools)},
		{Method: "GET", Path: "/v1/tools/{name}/{version}", Summary: "Read a tool contract", Scopes: anyKey, Response: "Tool", Status: 200, handler: a.auth(anyKey, a.getTool)},
		{Method: "POST", Path: "/v1/runs", Summary: "Start a run", Scopes: producer, Request: "RunCreate", Response: "Run", Status: 201, handler: a.auth(producer, a.startRun)},
		{Method: "GET", Path: "/v1/runs/{id}", Summary: "Read a run with its steps", Scopes: producer, Response: "Run", Status: 200, handler: a.auth(producer, a.getRun)},
		{Method: "POST", Path: "/v1/runs/{id}/finish", Summary: "Finish a run", Scopes: producer, Response: "Run", Status: 200, handler: a.auth(producer, a.finishRun)},
		{Method: "POST", Path: "/v1/jobs", Summary: "Enqueue a job (201 created, 200 when the idempotency key returns an existing job)", Scopes: producer, Request: "JobEnqueue", Response: "Job", Status: 201, handler: a.auth(producer, a.enqueue)},
		{Method: "POST", Path: "/v1/jobs/batch", Summary: "Enqueue up to 1000 jobs in one transaction", Scopes: producer, Request: "JobBatch", Response: "JobBatchResult", Status: 200, handler: a.auth(producer, a.enqueueBatch)},
		{Method: "GET", Path: "/v1/jobs", Summary: "List jobs, newest first, with filters and cursor paging", Scopes: producer, Response: "JobList", Status: 200, Query: jobQuery, handler: a.auth(producer, a.listJobs)},
		{Method: "GET", Path: "/v1/jobs/count", Summary: "Count jobs matching the same filters as the list", Scopes: producer, Response: "Count", Status: 200, Query: jobQuery, handler: a.auth(producer, a.countJobs)},
		{Method: "POST", Path: "/v1/jobs/bulk", Summary: "Cancel or replay every job matching a filter (at most 1000); expectedCount must equal the current count", Scopes: producer, Request: "JobBulk", Response: "JobBulkResult", Status: 200, handler: a.auth(producer, a.bulk)},
		{Method: "GET", Path: "/v1/jobs/{id}", Summary: "Read a job with its attempts and what holds it", Scopes: producer, Response: "Job", Status: 200, handler: a.auth(producer, a.getJob)},
		{Method: "GET", Path: "/v1/jobs/{id}/explain", Summary: "Which gate holds a scheduled job and until when", Scopes: producer, Response: "Hold", Status: 200, handler: a.auth(producer, a.explain)},
		{Method: "POST", Path: "/v1/jobs/{id}/cancel", Summary: "Cancel a scheduled or running job", Scopes: producer, Response: "Job", Status: 200, handler: a.auth(producer, a.cancel)},
		{Method: "POST", Path: "/v1/jobs/{id}/replay", Summary: "Replay a failed, exhausted or cancelled job as a new job", Scopes: producer, Response: "Job", Status: 201, handler: a.auth(producer, a.replay)},
		{Method: "POST", Path: "/v1/claims", Summary: "Claim due jobs (batch, optional long poll)", Scopes: worker, Request: "ClaimRequest", Response: "ClaimResult", Status: 200, handler: a.auth(worker, a.claim)},
		{Method: "POST", Path: "/v1/jobs/{id}/heartbeat", Summary: "Extend a lease", Scopes: worker, Request: "Heartbeat", Response: "HeartbeatResult", Status: 200, handler: a.auth(worker, a.heartbeat)},
		{Method: "POST", Path: "/v1/jobs/{id}/report", Summary: "Report the outcome of a leased job", Scopes: worker, Request: "Report", Response: "ReportResult", Status: 200, handler: a.auth(worker, a.report)},
		{Method: "POST", Path: "/v1/reports", Summary: "Report up to 1000 outcomes; each report succeeds or fails on its own", Scopes: worker, Request: "ReportBatch", Response: "ReportBatchResult", Status: 200, handler: a.auth(worker, a.reportBatch)},
		{Method: "POST", Path: "/v1/dev/clock", Summary: "Advance the clock of a server started with --dev-clock (for tests of long backoffs)", Scopes: owner, Request: "ClockAdvance", Response: "ClockAdvance", Status: 200, handler: a.auth(owner, a.advanceClock)},
		{Method: "GET", Path: "/v1/overview", Summary: "Per-endpoint live state for the dashboard", Scopes: anyKey, Response: "Overview", Status: 200, handler: a.auth(anyKey, a.overview)},
		{Method: "POST", Path: "/api/simulate", Summary: "Run the contention simulator (no key; Content-Type: application/json; body: the config of ratchet simulate, e.g. {\"to\":100,\"runs\":20}; one sweep at a time, 503 while busy)", Status: 200, handler: newSimulator(a.log).serve},
	}
}

func (a *API) me(w http.ResponseWriter, r *http.Request, p *engine.Principal) (any, error) {
	proj, err := a.e.Project(r.Context(), p)
	if err != nil {
		return nil, err
	}
	return map[string]any{"project": map[string]any{"id": proj.ID, "name": proj.Name, "plan": proj.Plan}, "key": map[string]any{"id": p.KeyID, "scope": p.Scope, "tools": orEmpty(p.Tools)}}, nil
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

type keyCreate struct {
	Name  string   `json:"name"`
	Scope string   `json:"scope"`
	Tools []string `json:"tools"`
}

func (a *API) createKey(w http.ResponseWriter, r *http.Request, p *engine.Principal) (any, error) {
	var req keyCreate
	if err := decode(w, r, &req); err != nil {
		return nil, err
	}
	k, secret, err := a.e.CreateKey(r.Context(), p, engine.KeySpec{Name: req.Name, Scope: wire.Scope(req.Scope), Tools: req.Tools})
	if err != nil {
		return nil, err
	}
	return withStatus(201, keyView(k, secret)), nil
}

func (a *API) listKeys(w http.ResponseWriter, r *http.Request, p *engine.Principal) (any, error) {
	ks, err := a.e.ListKeys(r.Context(), p)
	if err != nil {
		return nil, err
	}
	out := []KeyView{}
	for i := range ks {
		out = append(out, keyView(&ks[i], ""))
	}
	return map[string]any{"keys": out}, nil
}

func (a *API) revokeKey(w http.ResponseWriter, r *http.Request, p *engine.Principal) (any, error) {
	id, err := pathInt(r, "id")
	if err == nil {
		err = a.e.RevokeKey(r.Context(), p, id)
	}
	if err != nil {
		return nil, err
	}
	return nil, nil
}

func (a *API) createEndpoint(w http.ResponseWriter, r *http.Request, p *engine.Principal) (any, error) {
	body, err := readBody(w, r)
	if err != nil {
		return nil, err
	}
	fields, err := backoff.ReadObject(body, "body")
	if err != nil {
		return nil, err
	}
	var name string
	var errs field.Errors
	if raw, ok := fields["name"]; !ok {
		errs = append(errs, &field.Error{Field: "name", Value: field.Missing, Allowed: "required: the endpoint name, e.g. \"stripe\""})
	} else if json.Unmarshal(raw, &name) != nil {
		errs = append(errs, &field.Error{Field: "name", Value: string(raw), Allowed: "must be a string"})
	}
	pol, perr := engine.ParseEndpointPolicy(fields, false, nil, "name")
	if perr != nil {
		errs.Merge(perr)
	}
	if len(errs) > 0 {
		return nil, errs
	}
	ep, err := a.e.CreateEndpoint(r.Context(), p, name, pol)
	if err != nil {
		return nil, err
	}
	return withStatus(201, endpointView(ep)), nil
}

func (a *API) listEndpoints(w http.ResponseWriter, r *http.Request, p *engine.Principal) (any, error) {
	eps, err := a.e.Endpoints(r.Context(), p)
	if err != nil {
		return nil, err
	}
	out := []EndpointView{}
	for i := range eps {
		out = append(out, endpointView(&eps[i]))
	}
	return map[string]any{"endpoints": out}, nil
}

func (a *API) getEndpoint(w http.ResponseWriter, r *http.Request, p *engine.Principal) (any, error) {
	ep, err := a.e.Endpoint(r.Context(), p, r.PathValue("name"))
	if err != nil {
		return nil, err
	}
	return endpointView(ep), nil
}

func (a *API) updatePolicy(w http.ResponseWriter, r *http.Request, p *engine.Principal) (any, error) {
	body, err := readBody(w, r)
	if err != nil {
		return nil, err
	}
	fields, err := backoff.ReadObject(body, "body")
	if err != nil {
		return nil, err
	}
	ep, err := a.e.Endpoint(r.Context(), p, r.PathValue("name"))
	if err != nil {
		return nil, err
	}
	cur, err := engine.CurrentPolicy(ep)
	if err != nil {
		return nil, err
	}
	var errs field.Errors
	var expected int64
	if raw, ok := fields["expectedVersion"]; !ok {
		errs = append(errs, &field.Error{Field: "expectedVersion", Value: field.Missing, Allowed: "required: the version you read (currently " + strconv.FormatInt(ep.Version, 10) + ")"})
	} else if json.Unmarshal(raw, &expected) != nil || expected < 1 {
		errs = append(errs, &field.Error{Field: "expectedVersion", Value: string(raw), Allowed: "must be the integer version you read"})
	}
	pol, perr := engine.ParseEndpointPolicy(fields, true, &cur, "expectedVersion")
	if perr != nil {
		errs.Merge(perr)
	}
	if len(errs) > 0 {
		return nil, errs
	}
	ep, err = a.e.UpdateEndpointPolicy(r.Context(), p, r.PathValue("name"), expected, pol)
	if err != nil {
		return nil, err
	}
	return endpointView(ep), nil
}

func (a *API) publishTool(w http.ResponseWriter, r *http.Request, p *engine.Principal) (any, error) {
	body, err := readBody(w, r)
	if err != nil {
		return nil, err
	}
	spec, err := engine.ParseToolSpec(body)
	if err != nil {
		return nil, err
	}
	t, err := a.e.PublishTool(r.Context(), p, spec)
	if err != nil {
		return nil, err
	}
	return withStatus(201, toolView(t, spec.Endpoint)), nil
}

func (a *API) listTools(w http.ResponseWriter, r *http.Request, p *engine.Principal) (any, error) {
	ts, err := a.e.Tools(r.Context(), p)
	if err != nil {
		return nil, err
	}
	eps, err := a.e.Endpoints(r.Context(), p)
	if err != nil {
		return nil, err
	}
	names := map[int64]string{}
	for _, ep := range eps {
		names[ep.ID] = ep.Name
	}
	out := []ToolView{}
	for i := range ts {
		out = append(out, toolView(&ts[i], names[ts[i].EndpointID]))
	}
	return map[string]any{"tools": out}, nil
}

func (a *API) getTool(w http.ResponseWriter, r *http.Request, p *engine.Principal) (any, error) {
	t, ep, err := a.e.Tool(r.Context(), p, r.PathValue("name"), r.PathValue("version"))
	if err != nil {
		return nil, err
	}
	return toolView(t, ep.Name), nil
}

type runCreate struct {
	Name string `json:"name"`
}

func (a *API) startRun(w http.ResponseWriter, r *http.Request, p *engine.Principal) (any, error) {
	var req runCreate
	if err := decode(w, r, &req); err != nil {
		return nil, err
	}
	run, err := a.e.StartRun(r.Context(), p, req.Name)
	if err != nil {
		return nil, err
	}
	return withStatus(201, runView(run, nil)), nil
}

func (a *API) getRun(w http.ResponseWriter, r *http.Request, p *engine.Principal) (any, error) {
	id, err := pathInt(r, "id")
	if err != nil {
		return nil, err
	}
	run, steps, err := a.e.GetRun(r.Context(), p, id, 500)
	if err != nil {
		return nil, err
	}
	return runView(run, steps), nil
}

func (a *API) finishRun(w http.ResponseWriter, r *http.Request, p *engine.Principal) (any, error) {
	id, err := pathInt(r, "id")
	if err != nil {
		return nil, err
	}
	run, err := a.e.FinishRun(r.Context(), p, id)
	if err != nil {
		return nil, err
	}
	return runView(run, nil), nil
}

type enqueueReq struct {
	Tool           string          `json:"tool"`
	Payload        json.RawMessage `json:"payload"`
	IdempotencyKey string          `json:"idempotencyKey"`
	MaxAttempts    *int64          `json:"maxAttempts"`
	RunID          int64           `json:"runId"`
	RunAt          string          `json:"runAt"`
}

func (req enqueueReq) toEngine(prefix string) (engine.EnqueueRequest, error) {
	out := engine.EnqueueRequest{Tool: req.Tool, Payload: req.Payload, IdempotencyKey: req.IdempotencyKey, MaxAttempts: req.MaxAttempts, RunID: req.RunID}
	if req.RunAt != "" {
		t, err := time.Parse(time.RFC3339Nano, req.RunAt)
		if err != nil {
			return out, field.Errors{{Field: prefix + "runAt", Value: strconv.Quote(req.RunAt), Allowed: "must be an RFC 3339 time, e.g. 2026-12-02T09:00:00Z"}}
		}
		out.RunAt = &t
	}
	return out, nil
}

func (a *API) enqueue(w http.ResponseWriter, r *http.Request, p *engine.Principal) (any, error) {
	var req enqueueReq
	if err := decode(w, r, &req); err != nil {
		return nil, err
	}
	if h := r.Header.Get("Idempotency-Key"); h != "" {
		if req.IdempotencyKey != "" && req.IdempotencyKey != h {
			return nil, field.Errors{{Field: "idempotencyKey", Value: strconv.Quote(req.IdempotencyKey), Allowed: "must equal the Idempotency-Key header (" + strconv.Quote(h) + ") when both are given"}}
		}
		req.IdempotencyKey = h
	}
	er, err := req.toEngine("")
	if err != nil {
		return nil, err
	}
	res, err := a.e.Enqueue(r.Context(), p, er)
	if err != nil {
		return nil, err
	}
	status := 201
	if !res.Created {
		status = 200
	}
	return withStatus(status, jobView(res.Job, nil, nil, true)), nil
}

type batchReq struct {
	Jobs []enqueueReq `json:"jobs"`
}

func (a *API) enqueueBatch(w http.ResponseWriter, r *http.Request, p *engine.Principal) (any, error) {
	var req batchReq
	if err := decode(w, r, &req); err != nil {
		return nil, err
	}
	reqs := make([]engine.EnqueueRequest, len(req.Jobs))
	var errs field.Errors
	for i, j := range req.Jobs {
		er, err := j.toEngine("jobs[" + strconv.Itoa(i) + "].")
		if err != nil {
			errs.Merge(err)
		}
		reqs[i] = er
	}
	if len(errs) > 0 {
		return nil, errs
	}
	res, err := a.e.EnqueueBatch(r.Context(), p, reqs)
	if err != nil {
		return nil, err
	}
	type item struct {
		ID      int64  `json:"id"`
		State   string `json:"state"`
		Created bool   `json:"created"`
		DueAt   string `json:"dueAt"`
	}
	out := make([]item, len(res))
	for i, x := range res {
		out[i] = item{ID: x.Job.ID, State: string(x.Job.State), Created: x.Created, DueAt: ft(x.Job.DueAt)}
	}
	return map[string]any{"jobs": out}, nil
}

func parseFilter(r *http.Request, p *engine.Principal, e *engine.Engine) (store.JobFilter, error) {
	q := r.URL.Query()
	var f store.JobFilter
	var errs field.Errors
	for _, k := range sortedQueryKeys(q) {
		switch k {
		case "state", "tool", "endpoint", "runId", "createdAfter", "createdBefore", "cursor", "limit":
		default:
			errs = append(errs, &field.Error{Field: k, Value: field.Unknown, Allowed: "query parameters are state, tool, endpoint, runId, createdAfter, createdBefore, cursor, limit"})
		}
	}
	if s := q.Get("state"); s != "" {
		for _, st := range strings.Split(s, ",") {
			if !slices.Contains(wire.JobStates(), wire.JobState(st)) {
				errs = append(errs, &field.Error{Field: "state", Value: strconv.Quote(st), Allowed: "must be one of " + strings.Join(wire.JobStates(), ", ")})
			}
			f.States = append(f.States, wire.JobState(st))
		}
	}
	if t := q.Get("tool"); t != "" {
		f.Tool, f.Version, _ = strings.Cut(t, "@")
	}
	if name := q.Get("endpoint"); name != "" {
		ep, err := e.Endpoint(r.Context(), p, name)
		if err != nil {
			f.EndpointID = -1 // no such endpoint: an empty list, not an error
		} else {
			f.EndpointID = ep.ID
		}
	}
	intParam := func(name string, lo, hi int64, dst *int64) {
		if s := q.Get(name); s != "" {
			v, err := strconv.ParseInt(s, 10, 64)
			if err != nil || v < lo || v > hi {
				errs = append(errs, &field.Error{Field: name, Value: strconv.Quote(s), Allowed: "must be an integer from " + strconv.FormatInt(lo, 10) + " through " + strconv.FormatInt(hi, 10)})
				return
			}
			*dst = v
		}
	}
	intParam("runId", 1, 1<<62, &f.RunID)
	intParam("cursor", 1, 1<<62, &f.AfterID)
	var limit int64 = 100
	intParam("limit", 1, 500, &limit)
	f.Limit = int(limit)
	timeParam := func(name string, dst *int64) {
		if s := q.Get(name); s != "" {
			t, err := time.Parse(time.RFC3339Nano, s)
			if err != nil {
				errs = append(errs, &field.Error{Field: name, Value: strconv.Quote(s), Allowed: "must be an RFC 3339 time"})
				return
			}
			*dst = t.UnixMilli()
		}
	}
	timeParam("createdAfter", &f.CreatedAfter)
	timeParam("createdBefore", &f.CreatedBefore)
	if len(errs) > 0 {
		return f, errs
	}
	return f, nil
}

func (a *API) listJobs(w http.ResponseWriter, r *http.Request, p *engine.Principal) (any, error) {
	f, err := parseFilter(r, p, a.e)
	if err != nil {
		return nil, err
	}
	jobs, err := a.e.Jobs(r.Context(), p, f)
	if err != nil {
		return nil, err
	}
	out := []JobView{}
	for i := range jobs {
		out = append(out, jobView(&jobs[i], nil, nil, false))
	}
	var next *string
	if len(jobs) == f.Limit {
		c := strconv.FormatInt(jobs[len(jobs)-1].ID, 10)
		next = &c
	}
	return map[string]any{"jobs": out, "nextCursor": next}, nil
}

func (a *API) countJobs(w http.ResponseWriter, r *http.Request, p *engine.Principal) (any, error) {
	f, err := parseFilter(r, p, a.e)
	if err != nil {
		return nil, err
	}
	f.AfterID, f.Limit = 0, 0
	n, err := a.e.CountJobs(r.Context(), p, f)
	if err != nil {
		return nil, err
	}
	return map[string]any{"count": n}, nil
}

func (a *API) getJob(w http.ResponseWriter, r *http.Request, p *engine.Principal) (any, error) {
	id, err := pathInt(r, "id")
	if err != nil {
		return nil, err
	}
	j, as, hold, err := a.e.Job(r.Context(), p, id)
	if err != nil {
		return nil, err
	}
	return jobView(j, as, hold, true), nil
}

func (a *API) explain(w http.ResponseWriter, r *http.Request, p *engine.Principal) (any, error) {
	id, err := pathInt(r, "id")
	if err != nil {
		return nil, err
	}
	return a.e.Explain(r.Context(), p, id)
}

func (a *API) cancel(w http.ResponseWriter, r *http.Request, p *engine.Principal) (any, error) {
	id, err := pathInt(r, "id")
	if err != nil {
		return nil, err
	}
	j, err := a.e.Cancel(r.Context(), p, id)
	if err != nil {
		return nil, err
	}
	return jobView(j, nil, nil, false), nil
}

func (a *API) replay(w http.ResponseWriter, r *http.Request, p *engine.Principal) (any, error) {
	id, err := pathInt(r, "id")
	if err != nil {
		return nil, err
	}
	j, err := a.e.Replay(r.Context(), p, id)
	if err != nil {
		return nil, err
	}
	return withStatus(201, jobView(j, nil, nil, false)), nil
}

type bulkReq struct {
	Action        string            `json:"action"`
	Filter        map[string]string `json:"filter"`
	ExpectedCount *int64            `json:"expectedCount"`
}

// bulk cancels or replays every job matching a filter. The caller first
// counts (GET /v1/jobs/count) and sends that count; if the set changed in
// between, nothing is done and the new count comes back as a conflict.
func (a *API) bulk(w http.ResponseWriter, r *http.Request, p *engine.Principal) (any, error) {
	var req bulkReq
	if err := decode(w, r, &req); err != nil {
		return nil, err
	}
	var errs field.Errors
	if req.Action != "cancel" && req.Action != "replay" {
		errs = append(errs, &field.Error{Field: "action", Value: strconv.Quote(req.Action), Allowed: "must be cancel or replay"})
	}
	if req.ExpectedCount == nil {
		errs = append(errs, &field.Error{Field: "expectedCount", Value: field.Missing, Allowed: "required: the count shown to the person who confirmed"})
	}
	fr, _ := http.NewRequestWithContext(r.Context(), "GET", "/?", nil)
	qv := fr.URL.Query()
	for k, v := range req.Filter {
		qv.Set(k, v)
	}
	fr.URL.RawQuery = qv.Encode()
	f, err := parseFilter(fr, p, a.e)
	if err != nil {
		fes, ok := field.As(err)
		if !ok {
			return nil, err
		}
		errs = append(errs, fes.Prefixed("filter.")...)
	}
	if len(errs) > 0 {
		return nil, errs
	}
	f.AfterID, f.Limit = 0, 0
	n, err := a.e.CountJobs(r.Context(), p, f)
	if err != nil {
		return nil, err
	}
	if n != *req.ExpectedCount {
		return nil, &engine.Error{Kind: engine.KindConflict, Message: "the selection now holds " + strconv.FormatInt(n, 10) + " jobs, not " + strconv.FormatInt(*req.ExpectedCount, 10) + "; nothing was done, confirm the new count"}
	}
	if n > 1000 {
		return nil, field.Errors{{Field: "filter", Value: strconv.FormatInt(n, 10) + " jobs", Allowed: "a bulk action takes at most 1000 jobs; narrow the filter"}}
	}
	f.Limit = 1000
	jobs, err := a.e.Jobs(r.Context(), p, f)
	if err != nil {
		return nil, err
	}
	done, failed := []int64{}, []map[string]any{}
	for _, j := range jobs {
		var err error
		if req.Action == "cancel" {
			_, err = a.e.Cancel(r.Context(), p, j.ID)
		} else {
			var nj *store.Job
			nj, err = a.e.Replay(r.Context(), p, j.ID)
			if err == nil {
				done = append(done, nj.ID)
				continue
			}
		}
		if err != nil {
			failed = append(failed, map[string]any{"id": j.ID, "error": err.Error()})
			continue
		}
		done = append(done, j.ID)
	}
	return map[string]any{"action": req.Action, "count": len(done), "jobs": done, "failed": failed}, nil
}

type claimReq struct {
	WorkerID string   `json:"workerId"`
	Tools    []string `json:"tools"`
	Max      int      `json:"max"`
	WaitMs   int64    `json:"waitMs"`
}

func (a *API) claim(w http.ResponseWriter, r *http.Request, p *engine.Principal) (any, error) {
	var req claimReq
	if err := decode(w, r, &req); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	select {
	case <-a.draining:
		return map[string]any{"jobs": []any{}}, nil
	default:
	}
	go func() {
		select {
		case <-a.draining:
			cancel()
		case <-ctx.Done():
		}
	}()
	if req.WaitMs < 0 || req.WaitMs > 1<<31 {
		return nil, field.Errors{{Field: "waitMs", Value: strconv.FormatInt(req.WaitMs, 10), Allowed: "must be from 0 through 30000 milliseconds"}}
	}
	cs, err := a.e.Claim(ctx, p, engine.ClaimRequest{WorkerID: req.WorkerID, Tools: req.Tools, Max: req.Max, Wait: time.Duration(req.WaitMs) * time.Millisecond})
	if err != nil {
		return nil, err
	}
	out := make([]engine.ClaimedJSON, len(cs))
	for i, c := range cs {
		out[i] = c.JSON()
	}
	return map[string]any{"jobs": out}, nil
}

type heartbeatReq struct {
	LeaseToken string `json:"leaseToken"`
}

func (a *API) heartbeat(w http.ResponseWriter, r *http.Request, p *engine.Principal) (any, error) {
	id, err := pathInt(r, "id")
	if err != nil {
		return nil, err
	}
	var req heartbeatReq
	if err := decode(w, r, &req); err != nil {
		return nil, err
	}
	j, err := a.e.Heartbeat(r.Context(), p, id, req.LeaseToken)
	if err != nil {
		return nil, err
	}
	return map[string]any{"leaseExpiresAt": ft(j.LeaseExpiresAt), "cancelRequested": j.CancelRequested}, nil
}

// ReportBody is a worker's report on the wire.
type ReportBody struct {
	JobID        int64             `json:"jobId,omitempty"`
	LeaseToken   string            `json:"leaseToken"`
	Success      bool              `json:"success"`
	HTTPStatus   int               `json:"httpStatus"`
	Headers      map[string]string `json:"headers"`
	ErrorKind    string            `json:"errorKind"`
	Retryable    *bool             `json:"retryable"`
	RetryAfterMs *int64            `json:"retryAfterMs"`
	Message      string            `json:"message"`
}

func (b ReportBody) toEngine(id int64) engine.ReportRequest {
	return engine.ReportRequest{JobID: id, LeaseToken: b.LeaseToken, Report: classify.Report{Success: b.Success, HTTPStatus: b.HTTPStatus, Headers: b.Headers,
		ErrorKind: b.ErrorKind, Retryable: b.Retryable, RetryAfterMs: b.RetryAfterMs, Message: b.Message}}
}

type decisionView struct {
	Outcome             string `json:"outcome"`
	Classification      string `json:"classification"`
	RetryAfterMs        int64  `json:"retryAfterMs"`
	CountsTowardCircuit bool   `json:"countsTowardCircuit"`
	Reason              string `json:"reason"`
}

func (a *API) report(w http.ResponseWriter, r *http.Request, p *engine.Principal) (any, error) {
	id, err := pathInt(r, "id")
	if err != nil {
		return nil, err
	}
	var req ReportBody
	if err := decode(w, r, &req); err != nil {
		return nil, err
	}
	if req.JobID != 0 && req.JobID != id {
		return nil, field.Errors{{Field: "jobId", Value: strconv.FormatInt(req.JobID, 10), Allowed: "must be absent or equal the job id of the path (" + strconv.FormatInt(id, 10) + ")"}}
	}
	res, err := a.e.Report(r.Context(), p, req.toEngine(id))
	if err != nil {
		return nil, err
	}
	d := res.Decision
	return map[string]any{"job": jobView(res.Job, nil, nil, false), "duplicate": res.Duplicate,
		"decision": decisionView{Outcome: string(d.Outcome), Classification: d.Classification, RetryAfterMs: d.RetryAfterMs, CountsTowardCircuit: d.CountsTowardCircuit, Reason: d.Reason}}, nil
}

type reportBatchReq struct {
	Reports []ReportBody `json:"reports"`
}

func (a *API) reportBatch(w http.ResponseWriter, r *http.Request, p *engine.Principal) (any, error) {
	var req reportBatchReq
	if err := decode(w, r, &req); err != nil {
		return nil, err
	}
	var errs field.Errors
	rs := make([]engine.ReportRequest, len(req.Reports))
	for i, b := range req.Reports {
		if b.JobID <= 0 {
			errs = append(errs, &field.Error{Field: "reports[" + strconv.Itoa(i) + "].jobId", Value: strconv.FormatInt(b.JobID, 10), Allowed: "required: the id of the claimed job"})
		}
		rs[i] = b.toEngine(b.JobID)
	}
	if len(errs) > 0 {
		return nil, errs
	}
	items, err := a.e.ReportBatch(r.Context(), p, rs)
	if err != nil {
		return nil, err
	}
	type result struct {
		JobID          int64        `json:"jobId"`
		OK             bool         `json:"ok"`
		State          string       `json:"state,omitempty"`
		Classification string       `json:"classification,omitempty"`
		DueAt          string       `json:"dueAt,omitempty"`
		Duplicate      bool         `json:"duplicate,omitempty"`
		Error          *errorDetail `json:"error,omitempty"`
	}
	out := make([]result, len(items))
	for i, it := range items {
		out[i] = result{JobID: rs[i].JobID}
		if it.Err != nil {
			d := errorDetail{Code: "conflict", Message: it.Err.Error()}
			var ee *engine.Error
			if errors.As(it.Err, &ee) && ee.Kind == engine.KindNotFound {
				d.Code = "not_found"
			} else if ee != nil && ee.Kind == engine.KindForbidden {
				d.Code = "forbidden"
			}
			out[i].Error = &d
			continue
		}
		out[i].OK, out[i].State, out[i].Classification, out[i].Duplicate = true, it.Job.State, it.Decision.Classification, it.Duplicate
		if it.Job.State == wire.JobScheduled {
			out[i].DueAt = ft(it.Job.DueAt)
		}
	}
	return map[string]any{"results": out}, nil
}

type clockAdvance struct {
	AdvanceMs int64  `json:"advanceMs"`
	Now       string `json:"now,omitempty"`
}

func (a *API) advanceClock(w http.ResponseWriter, r *http.Request, p *engine.Principal) (any, error) {
	var req clockAdvance
	if err := decode(w, r, &req); err != nil {
		return nil, err
	}
	if err := a.e.AdvanceClock(r.Context(), time.Duration(req.AdvanceMs)*time.Millisecond); err != nil {
		return nil, err
	}
	return clockAdvance{AdvanceMs: req.AdvanceMs, Now: ft(a.e.Clock().Now().UnixMilli())}, nil
}
