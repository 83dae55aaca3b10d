package api

import (
	"context"
	"errors"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/getratchet/ratchet/backoff"
	"github.com/getratchet/ratchet/field"
	"github.com/getratchet/ratchet/internal/classify"
	"github.com/getratchet/ratchet/internal/engine"
	"github.com/getratchet/ratchet/internal/simulate"
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
	sim := newSimulator(a.log)
	sim.read = func(w http.ResponseWriter, r *http.Request) ([]byte, error) {
		c := &call[simulate.Config]{r: r}
		err := admit(a, w, c, "/api/simulate", nil, decodeOwn)
		return c.body, err
	}
	sim.fail = a.fail
	return append([]Route{
		route(a, "GET", "/v1/me", "The calling key and its project", anyKey, 200, a.me),
		route(a, "POST", "/v1/keys", "Create an API key (the secret is shown once)", owner, 201, a.createKey),
		route(a, "GET", "/v1/keys", "List API keys", owner, 200, a.listKeys),
		route(a, "DELETE", "/v1/keys/{id}", "Revoke an API key", owner, 204, a.revokeKey),
		route(a, "POST", "/v1/endpoints", "Create an endpoint with its policy", owner, 201, a.createEndpoint, rawBody()),
		route(a, "GET", "/v1/endpoints", "List endpoints", anyKey, 200, a.listEndpoints),
		route(a, "GET", "/v1/endpoints/{name}", "Read an endpoint, its policy, version and circuit", anyKey, 200, a.getEndpoint),
		route(a, "PUT", "/v1/endpoints/{name}/policy", "Replace the endpoint policy; 409 with the current endpoint when expectedVersion is stale", owner, 200, a.updatePolicy, rawBody()),
		route(a, "POST", "/v1/endpoints/{name}/pause", "Pause an endpoint: its due jobs are held (gate paused) for workers and HTTP delivery; pausing a paused endpoint keeps the first pause", owner, 200, a.pauseEndpoint),
		route(a, "POST", "/v1/endpoints/{name}/resume", "Resume a paused endpoint", owner, 200, a.resumeEndpoint),
		route(a, "POST", "/v1/endpoints/{name}/circuit/close", "Close the endpoint's circuit now and clear its failure count", owner, 200, a.closeCircuit),
		route(a, "POST", "/v1/endpoints/{name}/circuit/open", "Open the endpoint's circuit now for its circuitOpenMs (then half-open as usual)", owner, 200, a.openCircuit),
		route(a, "GET", "/v1/endpoints/{name}/keys", "List the endpoint's busiest flow keys (most running and scheduled jobs first) with the due jobs each key's own limits hold now", producer, 200, a.flowKeys, inQuery()),
		route(a, "GET", "/v1/endpoints/{name}/failures", "Group the endpoint's failed and exhausted jobs of a time range by classification and message fingerprint, with counts, first and last seen and a sparkline (reads at most the latest 10,000)", producer, 200, a.failureGroups, inQuery()),
		route(a, "GET", "/v1/endpoints/{name}/held", "List the endpoint's due jobs that one of its gates holds now, newest first, each with heldBy", producer, 200, a.heldJobs, inQuery()),
		route(a, "GET", "/v1/audit", "List operator actions (pause, circuit, run-now, bulk, cancel, replay, policy, keys), newest first", owner, 200, a.audit, inQuery()),
		route(a, "POST", "/v1/tools", "Publish an immutable tool contract", owner, 201, a.publishTool, rawBody()),
		route(a, "GET", "/v1/tools", "List tool contracts", anyKey, 200, a.listTools),
		route(a, "GET", "/v1/tools/{name}/{version}", "Read a tool contract", anyKey, 200, a.getTool),
		route(a, "POST", "/v1/runs", "Start a run", producer, 201, a.startRun),
		route(a, "GET", "/v1/runs", "List runs, newest first, without their steps", producer, 200, a.listRuns, inQuery()),
		route(a, "GET", "/v1/runs/{id}", "Read a run with its steps", producer, 200, a.getRun),
		route(a, "POST", "/v1/runs/{id}/finish", "Finish a run", producer, 200, a.finishRun),
		route(a, "POST", "/v1/jobs", "Enqueue a job (201 created, 200 when the idempotency key returns an existing job)", producer, 201, a.enqueue,
			idempotencyHeader(), also(200, "The idempotency key returned an existing job")),
		route(a, "POST", "/v1/jobs/batch", "Enqueue up to 1000 jobs in one transaction", producer, 200, a.enqueueBatch),
		route(a, "GET", "/v1/jobs", "List jobs, newest first, with filters and cursor paging", producer, 200, a.listJobs, inQuery()),
		route(a, "GET", "/v1/jobs/count", "Count jobs matching the same filters as the list", producer, 200, a.countJobs, inQuery()),
		route(a, "GET", "/v1/jobs/counts", "Count jobs per state, from counters kept with every change of a job (with tool: through an index)", producer, 200, a.jobCounts, inQuery()),
		route(a, "POST", "/v1/jobs/bulk", "Cancel, replay or run now every job matching a filter or listed by ids (at most 1000); expectedCount must equal the current count (run_now needs an owner key)", producer, 200, a.bulk),
		route(a, "POST", "/v1/failures/replay", "Preview, or replay as new jobs paced by their endpoints' gates, the failed and exhausted jobs a filter selects (endpoint, state, classification, group, time range) that no job replays yet; expectedCount must equal the preview's count (at most 1000)", producer, 200, a.replayFailures),
		route(a, "GET", "/v1/jobs/{id}", "Read a job with its attempts and what holds it", producer, 200, a.getJob),
		route(a, "GET", "/v1/jobs/{id}/explain", "Which gate holds a scheduled job and until when", producer, 200, a.explain),
		route(a, "POST", "/v1/jobs/{id}/cancel", "Cancel a "+wire.JoinOr(wire.JobStatesWhere(wire.JobState.Cancellable))+" job", producer, 200, a.cancel),
		route(a, "POST", "/v1/jobs/{id}/replay", "Replay a "+wire.JoinOr(wire.JobStatesWhere(wire.JobState.Replayable))+" job as a new job", producer, 201, a.replay),
		route(a, "POST", "/v1/jobs/{id}/run-now", "Make a scheduled job due now (gates still apply; the attempt count stays); 409 naming the state otherwise", owner, 200, a.runNow),
		route(a, "POST", "/v1/claims", "Claim due jobs (batch, optional long poll)", worker, 200, a.claim),
		route(a, "POST", "/v1/jobs/{id}/heartbeat", "Extend a lease", worker, 200, a.heartbeat),
		route(a, "POST", "/v1/jobs/{id}/report", "Report the outcome of a leased job", worker, 200, a.report),
		route(a, "POST", "/v1/reports", "Report up to 1000 outcomes; each report succeeds or fails on its own", worker, 200, a.reportBatch),
		route(a, "POST", "/v1/dev/clock", "Advance the clock of a server started with --dev-clock (for tests of long backoffs)", owner, 200, a.advanceClock),
		route(a, "GET", "/v1/overview", "Per-endpoint live state for the dashboard", anyKey, 200, a.overview),
		route(a, "GET", "/v1/workers", "Workers seen in the last 24 hours with the running jobs they hold, latest activity first", owner, 200, a.workers),
		route(a, "GET", "/v1/history", "Per-minute claims, outcomes and due-to-claim lag of each endpoint over the last hours", anyKey, 200, a.history, inQuery()),
		a.streamRoute(),
		{Method: "POST", Path: "/api/simulate", Summary: "Run the contention simulator (no key; Content-Type: application/json; body: the config of ratchet simulate, e.g. {\"to\":100,\"runs\":20}; one sweep at a time, 503 while busy)",
			Status: 200, request: reflect.TypeFor[simulate.Config](), response: reflect.TypeFor[simulate.Result](), handler: sim.serve},
	}, a.scheduleRoutes()...)
}

func (a *API) me(c *call[none]) (*wire.Me, error) {
	proj, err := a.e.Project(c.ctx(), c.p)
	if err != nil {
		return nil, err
	}
	return &wire.Me{Project: wire.MeProject{ID: proj.ID, Name: proj.Name, Plan: proj.Plan}, Key: wire.MeKey{ID: c.p.KeyID, Scope: c.p.Scope, Tools: orEmpty(c.p.Tools)}}, nil
}

func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func (a *API) createKey(c *call[wire.KeyCreate]) (*wire.Key, error) {
	k, secret, err := a.e.CreateKey(c.ctx(), c.p, engine.KeySpec{Name: c.in.Name, Scope: c.in.Scope, Tools: c.in.Tools})
	if err != nil {
		return nil, err
	}
	v := keyView(k, secret)
	return &v, nil
}

func (a *API) listKeys(c *call[none]) (*wire.KeyList, error) {
	ks, err := a.e.ListKeys(c.ctx(), c.p)
	if err != nil {
		return nil, err
	}
	out := &wire.KeyList{Keys: []wire.Key{}}
	for i := range ks {
		out.Keys = append(out.Keys, keyView(&ks[i], ""))
	}
	return out, nil
}

func (a *API) revokeKey(c *call[none]) (*none, error) {
	id, err := pathInt(c.r, "id")
	if err != nil {
		return nil, err
	}
	return nil, a.e.RevokeKey(c.ctx(), c.p, id)
}

func (a *API) createEndpoint(c *call[wire.EndpointCreate]) (*wire.Endpoint, error) {
	fields, err := backoff.ReadObject(c.body, "body")
	if err != nil {
		return nil, err
	}
	var errs field.Errors
	if raw, ok := fields["name"]; !ok {
		errs.Add("name", field.Missing, "required: the endpoint name, e.g. \"stripe\"")
	} else if !decodeString(raw, &c.in.Name) {
		errs.Add("name", string(raw), "must be a string")
	}
	pol, perr := DecodeEndpointPolicy(fields, false, nil, "name")
	if !errs.Merge(perr) {
		return nil, perr
	}
	if len(errs) > 0 {
		return nil, errs
	}
	ep, err := a.e.CreateEndpoint(c.ctx(), c.p, c.in.Name, pol)
	if err != nil {
		return nil, err
	}
	v := endpointView(ep)
	return &v, nil
}

func (a *API) listEndpoints(c *call[none]) (*wire.EndpointList, error) {
	eps, err := a.e.Endpoints(c.ctx(), c.p)
	if err != nil {
		return nil, err
	}
	out := &wire.EndpointList{Endpoints: []wire.Endpoint{}}
	for i := range eps {
		out.Endpoints = append(out.Endpoints, endpointView(&eps[i]))
	}
	return out, nil
}

func (a *API) getEndpoint(c *call[none]) (*wire.Endpoint, error) {
	ep, err := a.e.Endpoint(c.ctx(), c.p, c.r.PathValue("name"))
	if err != nil {
		return nil, err
	}
	v := endpointView(ep)
	return &v, nil
}

func (a *API) updatePolicy(c *call[wire.EndpointPolicyUpdate]) (*wire.Endpoint, error) {
	fields, err := backoff.ReadObject(c.body, "body")
	if err != nil {
		return nil, err
	}
	name := c.r.PathValue("name")
	ep, err := a.e.Endpoint(c.ctx(), c.p, name)
	if err != nil {
		return nil, err
	}
	cur, err := engine.CurrentPolicy(ep)
	if err != nil {
		return nil, err
	}
	var errs field.Errors
	if raw, ok := fields["expectedVersion"]; !ok {
		errs.Add("expectedVersion", field.Missing, "required: the version you read (currently "+strconv.FormatInt(ep.Version, 10)+")")
	} else if !decodeInt(raw, &c.in.ExpectedVersion) || c.in.ExpectedVersion < 1 {
		errs.Add("expectedVersion", string(raw), "must be the integer version you read")
	}
	pol, perr := DecodeEndpointPolicy(fields, true, &cur, "expectedVersion")
	if !errs.Merge(perr) {
		return nil, perr
	}
	if len(errs) > 0 {
		return nil, errs
	}
	ep, err = a.e.UpdateEndpointPolicy(c.ctx(), c.p, name, c.in.ExpectedVersion, pol)
	if err != nil {
		return nil, err
	}
	v := endpointView(ep)
	return &v, nil
}

func (a *API) pauseEndpoint(c *call[wire.EndpointPauseRequest]) (*wire.Endpoint, error) {
	return endpointResult(a.e.PauseEndpoint(c.ctx(), c.p, c.r.PathValue("name"), c.in.Reason))
}

func (a *API) resumeEndpoint(c *call[none]) (*wire.Endpoint, error) {
	return endpointResult(a.e.ResumeEndpoint(c.ctx(), c.p, c.r.PathValue("name")))
}

func (a *API) closeCircuit(c *call[none]) (*wire.Endpoint, error) {
	return endpointResult(a.e.CloseCircuit(c.ctx(), c.p, c.r.PathValue("name")))
}

func (a *API) openCircuit(c *call[none]) (*wire.Endpoint, error) {
	return endpointResult(a.e.OpenCircuit(c.ctx(), c.p, c.r.PathValue("name")))
}

func endpointResult(ep *store.Endpoint, err error) (*wire.Endpoint, error) {
	if err != nil {
		return nil, err
	}
	v := endpointView(ep)
	return &v, nil
}

// pageParams reads the cursor and limit of a paged list.
func pageParams(cursor, limit string) (afterID int64, n int, err error) {
	var errs field.Errors
	if cursor != "" {
		v, perr := strconv.ParseInt(cursor, 10, 64)
		if perr != nil || v < 1 || v > 1<<62 {
			errs.Add("cursor", strconv.Quote(cursor), "must be the nextCursor of the previous page")
		}
		afterID = v
	}
	n = limitParam(&errs, limit, wire.DefaultListLimit, wire.MaxListLimit)
	return afterID, n, errs.Err()
}

// limitParam reads a limit query parameter of 1 through most; def when
// it is absent.
func limitParam(errs *field.Errors, limit string, def, most int) int {
	if limit == "" {
		return def
	}
	v, err := strconv.Atoi(limit)
	if err != nil || v < 1 || v > most {
		errs.Add("limit", strconv.Quote(limit), "must be an integer from 1 through "+strconv.Itoa(most))
	}
	return v
}

func (a *API) flowKeys(c *call[wire.FlowKeysQuery]) (*wire.FlowKeyList, error) {
	var errs field.Errors
	n := limitParam(&errs, c.in.Limit, wire.DefaultKeysLimit, wire.MaxKeysLimit)
	if err := errs.Err(); err != nil {
		return nil, err
	}
	return a.e.FlowKeys(c.ctx(), c.p, c.r.PathValue("name"), n)
}

func (a *API) heldJobs(c *call[wire.HeldQuery]) (*wire.JobList, error) {
	after, limit, err := pageParams(c.in.Cursor, c.in.Limit)
	if err != nil {
		return nil, err
	}
	jobs, hold, err := a.e.HeldJobs(c.ctx(), c.p, c.r.PathValue("name"), after, limit)
	if err != nil {
		return nil, err
	}
	out := &wire.JobList{Jobs: []wire.Job{}}
	for i := range jobs {
		out.Jobs = append(out.Jobs, jobView(&jobs[i], nil, hold, false))
	}
	if len(jobs) == limit {
		next := strconv.FormatInt(jobs[len(jobs)-1].ID, 10)
		out.NextCursor = &next
	}
	return out, nil
}

func (a *API) audit(c *call[wire.AuditQuery]) (*wire.AuditList, error) {
	after, limit, err := pageParams(c.in.Cursor, c.in.Limit)
	if len(c.in.Target) > 300 || badText(c.in.Target) {
		errs, _ := field.As(err)
		errs.Add("target", showText(c.in.Target), "must be a target such as endpoint:payments or job:42 (at most 300 characters of text)")
		err = errs
	}
	if err != nil {
		return nil, err
	}
	entries, err := a.e.Audit(c.ctx(), c.p, c.in.Target, after, limit)
	if err != nil {
		return nil, err
	}
	out := &wire.AuditList{Entries: []wire.AuditEntry{}}
	for i := range entries {
		out.Entries = append(out.Entries, auditView(&entries[i]))
	}
	if len(entries) == limit {
		next := strconv.FormatInt(entries[len(entries)-1].ID, 10)
		out.NextCursor = &next
	}
	return out, nil
}

func (a *API) publishTool(c *call[wire.ToolPublish]) (*wire.Tool, error) {
	spec, err := DecodeToolSpec(c.body)
	if err != nil {
		return nil, err
	}
	t, err := a.e.PublishTool(c.ctx(), c.p, spec)
	if err != nil {
		return nil, err
	}
	v := toolView(t, spec.Endpoint)
	if v.Delivery != nil {
		v.Delivery.Secret = t.DeliverySecret // shown once, in this answer
	}
	return &v, nil
}

func (a *API) listTools(c *call[none]) (*wire.ToolList, error) {
	ts, err := a.e.Tools(c.ctx(), c.p)
	if err != nil {
		return nil, err
	}
	eps, err := a.e.Endpoints(c.ctx(), c.p)
	if err != nil {
		return nil, err
	}
	names := map[int64]string{}
	for _, ep := range eps {
		names[ep.ID] = ep.Name
	}
	out := &wire.ToolList{Tools: []wire.Tool{}}
	for i := range ts {
		out.Tools = append(out.Tools, toolView(&ts[i], names[ts[i].EndpointID]))
	}
	return out, nil
}

func (a *API) getTool(c *call[none]) (*wire.Tool, error) {
	t, ep, err := a.e.Tool(c.ctx(), c.p, c.r.PathValue("name"), c.r.PathValue("version"))
	if err != nil {
		return nil, err
	}
	v := toolView(t, ep.Name)
	return &v, nil
}

func (a *API) startRun(c *call[wire.RunCreate]) (*wire.Run, error) {
	run, err := a.e.StartRun(c.ctx(), c.p, c.in.Name)
	if err != nil {
		return nil, err
	}
	v := runView(run, nil)
	return &v, nil
}

func (a *API) getRun(c *call[none]) (*wire.Run, error) {
	id, err := pathInt(c.r, "id")
	if err != nil {
		return nil, err
	}
	run, steps, err := a.e.GetRun(c.ctx(), c.p, id, 500)
	if err != nil {
		return nil, err
	}
	v := runView(run, steps)
	return &v, nil
}

func (a *API) listRuns(c *call[wire.RunQuery]) (*wire.RunList, error) {
	after, limit, err := pageParams(c.in.Cursor, c.in.Limit)
	if err != nil {
		return nil, err
	}
	runs, err := a.e.ListRuns(c.ctx(), c.p, after, limit)
	if err != nil {
		return nil, err
	}
	out := &wire.RunList{Runs: []wire.Run{}}
	for i := range runs {
		out.Runs = append(out.Runs, runView(&runs[i], nil))
	}
	if len(runs) == limit {
		next := strconv.FormatInt(runs[len(runs)-1].ID, 10)
		out.NextCursor = &next
	}
	return out, nil
}

func (a *API) finishRun(c *call[none]) (*wire.Run, error) {
	id, err := pathInt(c.r, "id")
	if err != nil {
		return nil, err
	}
	run, err := a.e.FinishRun(c.ctx(), c.p, id)
	if err != nil {
		return nil, err
	}
	v := runView(run, nil)
	return &v, nil
}

// enqueueRequest turns one wire enqueue into the engine's; prefix names the
// job within a batch ("jobs[3].").
func enqueueRequest(req wire.JobEnqueue, prefix string) (engine.EnqueueRequest, error) {
	out := engine.EnqueueRequest{Tool: req.Tool, Payload: req.Payload, IdempotencyKey: req.IdempotencyKey, MaxAttempts: req.MaxAttempts, RunID: req.RunID,
		FlowKey: req.FlowKey, Traceparent: req.Traceparent, Tracestate: req.Tracestate}
	if req.RunAt != "" {
		t, err := time.Parse(time.RFC3339Nano, req.RunAt)
		if err != nil {
			return out, field.New(prefix+"runAt", strconv.Quote(req.RunAt), "must be an RFC 3339 time, e.g. 2026-12-02T09:00:00Z")
		}
		out.RunAt = &t
	}
	return out, nil
}

func (a *API) enqueue(c *call[wire.JobEnqueue]) (*wire.Job, error) {
	start := time.Now()
	if h := c.r.Header.Get("Idempotency-Key"); h != "" {
		if badText(h) {
			return nil, field.New("Idempotency-Key", showText(h), textAllowed)
		}
		if c.in.IdempotencyKey != "" && c.in.IdempotencyKey != h {
			return nil, field.New("idempotencyKey", strconv.Quote(c.in.IdempotencyKey), "must equal the Idempotency-Key header ("+strconv.Quote(h)+") when both are given")
		}
		c.in.IdempotencyKey = h
	}
	er, err := enqueueRequest(c.in, "")
	if err != nil {
		return nil, err
	}
	reqs := []engine.EnqueueRequest{er}
	spans, err := a.traceEnqueue(c.r, reqs, start)
	if err != nil {
		return nil, err
	}
	res, err := a.e.Enqueue(c.ctx(), c.p, reqs[0])
	endEnqueue(spans, []engine.Enqueued{res}, err)
	if err != nil {
		return nil, err
	}
	if !res.Created {
		c.status = http.StatusOK
	}
	v := jobView(res.Job, nil, nil, true)
	return &v, nil
}

func (a *API) enqueueBatch(c *call[wire.JobBatch]) (*wire.JobBatchResult, error) {
	start := time.Now()
	if n := len(c.in.Jobs); n == 0 || n > wire.MaxBatch {
		return nil, field.New("jobs", strconv.Itoa(n)+" jobs", "must hold 1 through 1000 jobs")
	}
	reqs := make([]engine.EnqueueRequest, len(c.in.Jobs))
	var errs field.Errors
	for i, j := range c.in.Jobs {
		er, err := enqueueRequest(j, "jobs["+strconv.Itoa(i)+"].")
		errs.Merge(err)
		reqs[i] = er
	}
	if len(errs) > 0 {
		return nil, errs
	}
	spans, err := a.traceEnqueue(c.r, reqs, start)
	if err != nil {
		return nil, err
	}
	res, err := a.e.EnqueueBatch(c.ctx(), c.p, reqs)
	endEnqueue(spans, res, err)
	if err != nil {
		return nil, err
	}
	out := &wire.JobBatchResult{Jobs: make([]wire.JobBatchItem, len(res))}
	for i, x := range res {
		out.Jobs[i] = wire.JobBatchItem{ID: x.Job.ID, State: x.Job.State, Created: x.Created, DueAt: ft(x.Job.DueAt)}
	}
	return out, nil
}

// jobFilter checks a job query and resolves it to a store filter. An
// endpoint that does not exist selects no jobs; any other failure to look it
// up is an error, not an empty list.
func (a *API) jobFilter(ctx context.Context, p *engine.Principal, q wire.JobQuery) (store.JobFilter, error) {
	var f store.JobFilter
	var errs field.Errors
	if q.State != "" {
		for _, st := range strings.Split(q.State, ",") {
			if !slices.Contains(wire.JobStates(), wire.JobState(st)) {
				errs.Add("state", strconv.Quote(st), "must be one of "+strings.Join(strs(wire.JobStates()), ", "))
			}
			f.States = append(f.States, wire.JobState(st))
		}
	}
	if q.Tool != "" {
		f.Tool, f.Version, _ = strings.Cut(q.Tool, "@")
	}
	if !engine.ValidFlowKey(q.FlowKey) { // no job has such a key: say why rather than list none
		errs.Add("flowKey", strconv.QuoteToASCII(q.FlowKey), engine.FlowKeyAllowed)
	}
	f.FlowKey = q.FlowKey
	if q.Endpoint != "" {
		ep, err := a.e.Endpoint(ctx, p, q.Endpoint)
		var ee *engine.Error
		switch {
		case err == nil:
			f.EndpointID = ep.ID
		case errors.As(err, &ee) && ee.Kind == engine.KindNotFound:
			f.EndpointID = -1 // no such endpoint: an empty list, not an error
		default:
			return f, err
		}
	}
	intParam := func(name, s string, lo, hi int64, dst *int64) {
		if s == "" {
			return
		}
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil || v < lo || v > hi {
			errs.Add(name, strconv.Quote(s), "must be an integer from "+strconv.FormatInt(lo, 10)+" through "+strconv.FormatInt(hi, 10))
			return
		}
		*dst = v
	}
	intParam("runId", q.RunID, 1, 1<<62, &f.RunID)
	switch {
	case q.Sort == "":
	case !slices.Contains(wire.JobSorts(), q.Sort):
		errs.Add("sort", strconv.QuoteToASCII(cutChars(string(q.Sort), 40)), "must be "+wire.JoinOr(wire.JobSorts()))
	case q.Sort.ByFinish() && (len(f.States) == 0 || !allUnsuccessful(f.States)):
		// Only failed and exhausted jobs are in an index by finish time
		// (internal/store/sqlstore/jobs_list.go, jobOrder); another
		// state would read and sort all its jobs for every page.
		errs.Add("sort", string(q.Sort), "needs a state filter of "+wire.JoinOr(wire.JobStatesWhere(wire.JobState.Unsuccessful))+" or both (the states an index orders by finish time); state is "+strconv.Quote(q.State)+"; sort by "+wire.JoinOr(idSorts)+" instead")
	default:
		f.Sort = q.Sort
	}
	if q.Cursor != "" {
		k, err := parseJobCursor(q.Cursor, q.Sort)
		if fes, ok := field.As(err); ok {
			errs = append(errs, fes...)
		}
		f.AfterID, f.AfterFinishedAt = k.ID, k.FinishedAt
	}
	limit := int64(wire.DefaultListLimit)
	intParam("limit", q.Limit, 1, wire.MaxListLimit, &limit)
	f.Limit = int(limit)
	timeParam := func(name, s string, dst *int64) {
		if s == "" {
			return
		}
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			errs.Add(name, strconv.Quote(s), "must be an RFC 3339 time")
			return
		}
		*dst = t.UnixMilli()
	}
	if n := utf8.RuneCountInString(q.Q); n > wire.MaxSearchChars {
		errs.Add("q", strconv.Quote(cutChars(q.Q, 40)+"…"), "search text of at most "+strconv.Itoa(wire.MaxSearchChars)+" characters")
	} else {
		f.Q = strings.TrimSpace(q.Q)
	}
	timeParam("createdAfter", q.CreatedAfter, &f.CreatedAfter)
	timeParam("createdBefore", q.CreatedBefore, &f.CreatedBefore)
	return f, errs.Err()
}

// allUnsuccessful says whether every state is failed or exhausted.
func allUnsuccessful(states []wire.JobState) bool {
	for _, s := range states {
		if !s.Unsuccessful() {
			return false
		}
	}
	return true
}

func (a *API) listJobs(c *call[wire.JobQuery]) (*wire.JobList, error) {
	f, err := a.jobFilter(c.ctx(), c.p, c.in)
	if err != nil {
		return nil, err
	}
	jobs, holds, next, err := a.e.ListJobs(c.ctx(), c.p, f)
	if err != nil {
		return nil, err
	}
	out := &wire.JobList{Jobs: []wire.Job{}}
	for i := range jobs {
		out.Jobs = append(out.Jobs, jobView(&jobs[i], nil, holds[i], false))
	}
	if s := formatJobCursor(next, f.Sort); s != "" {
		out.NextCursor = &s
	}
	return out, nil
}

func (a *API) countJobs(c *call[wire.JobQuery]) (*wire.JobCount, error) {
	f, err := a.jobFilter(c.ctx(), c.p, c.in)
	if err != nil {
		return nil, err
	}
	f.AfterID, f.Limit = 0, 0
	n, capped, err := a.e.CountJobs(c.ctx(), c.p, f)
	if err != nil {
		return nil, err
	}
	return &wire.JobCount{Count: n, Capped: capped}, nil
}

func (a *API) jobCounts(c *call[wire.JobCountsQuery]) (*wire.JobCounts, error) {
	f, err := a.jobFilter(c.ctx(), c.p, wire.JobQuery{Endpoint: c.in.Endpoint, Tool: c.in.Tool})
	if err != nil {
		return nil, err
	}
	counts, err := a.e.JobCounts(c.ctx(), c.p, f)
	if err != nil {
		return nil, err
	}
	out := &wire.JobCounts{}
	for _, s := range wire.JobStates() {
		out.Counts.Set(s, counts[s])
		out.Total += counts[s]
	}
	return out, nil
}

func (a *API) getJob(c *call[none]) (*wire.Job, error) {
	id, err := pathInt(c.r, "id")
	if err != nil {
		return nil, err
	}
	j, as, hold, err := a.e.Job(c.ctx(), c.p, id)
	if err != nil {
		return nil, err
	}
	v := jobView(j, as, hold, true)
	return &v, nil
}

func (a *API) explain(c *call[none]) (*wire.Hold, error) {
	id, err := pathInt(c.r, "id")
	if err != nil {
		return nil, err
	}
	return a.e.Explain(c.ctx(), c.p, id)
}

func (a *API) cancel(c *call[none]) (*wire.Job, error) {
	id, err := pathInt(c.r, "id")
	if err != nil {
		return nil, err
	}
	j, err := a.e.Cancel(c.ctx(), c.p, id)
	if err != nil {
		return nil, err
	}
	v := jobView(j, nil, nil, false)
	return &v, nil
}

func (a *API) replay(c *call[none]) (*wire.Job, error) {
	id, err := pathInt(c.r, "id")
	if err != nil {
		return nil, err
	}
	j, err := a.e.Replay(c.ctx(), c.p, id)
	if err != nil {
		return nil, err
	}
	v := jobView(j, nil, nil, false)
	return &v, nil
}

func (a *API) runNow(c *call[none]) (*wire.Job, error) {
	id, err := pathInt(c.r, "id")
	if err != nil {
		return nil, err
	}
	j, err := a.e.RunNow(c.ctx(), c.p, id)
	if err != nil {
		return nil, err
	}
	v := jobView(j, nil, nil, false)
	return &v, nil
}

// bulk cancels, replays or runs now every job matching a filter or listed
// by id. For a filter the caller first counts (GET /v1/jobs/count) and
// sends that count; if the set changed in between, nothing is done and the
// new count comes back as a conflict. For ids the count is the number of
// ids, which the person confirmed.
func (a *API) bulk(c *call[wire.JobBulk]) (*wire.JobBulkResult, error) {
	req := c.in
	var errs field.Errors
	switch req.Action {
	case wire.BulkCancel, wire.BulkReplay:
	case wire.BulkRunNow:
		if err := c.p.Require(wire.ScopeOwner); err != nil {
			return nil, err
		}
	default:
		errs.Add("action", strconv.Quote(string(req.Action)), "must be "+wire.JoinOr(wire.BulkActions()))
	}
	if req.ExpectedCount == nil {
		errs.Add("expectedCount", field.Missing, "required: the count shown to the person who confirmed")
	}
	if req.Filter != nil && req.IDs != nil {
		errs.Add("ids", strconv.Itoa(len(req.IDs))+" ids", "give either filter or ids, not both")
	}
	var ids []int64
	if req.IDs != nil {
		if n := len(req.IDs); n == 0 || n > wire.MaxBatch {
			errs.Add("ids", strconv.Itoa(n)+" ids", "must hold 1 through 1000 job ids")
		}
		seen := make(map[int64]bool, len(req.IDs))
		for i, id := range req.IDs {
			switch {
			case id < 1:
				errs.Add("ids["+strconv.Itoa(i)+"]", strconv.FormatInt(id, 10), "must be a job id (1 or more)")
			case seen[id]:
				errs.Add("ids["+strconv.Itoa(i)+"]", strconv.FormatInt(id, 10), "must not repeat an id")
			}
			seen[id] = true
		}
		if req.ExpectedCount != nil && *req.ExpectedCount != int64(len(req.IDs)) {
			errs.Add("expectedCount", strconv.FormatInt(*req.ExpectedCount, 10), "must equal the number of ids ("+strconv.Itoa(len(req.IDs))+")")
		}
		if len(errs) > 0 {
			return nil, errs
		}
		ids = req.IDs
	} else {
		var q wire.JobQuery
		if req.Filter != nil {
			q = *req.Filter
		}
		// The order of a list does not change its selection: a bulk
		// action acts on the filter, newest first, whatever the sort.
		q.Cursor, q.Limit, q.Sort = "", "", ""
		f, err := a.jobFilter(c.ctx(), c.p, q)
		if fes, ok := field.As(err); ok {
			errs = append(errs, fes.Prefixed("filter.")...)
		} else if err != nil {
			return nil, err
		}
		if len(errs) > 0 {
			return nil, errs
		}
		if ids, err = a.bulkSelect(c, f, *req.ExpectedCount); err != nil {
			return nil, err
		}
	}
	res, err := a.e.Bulk(c.ctx(), c.p, req.Action, ids)
	if err != nil {
		return nil, err
	}
	out := &wire.JobBulkResult{Action: req.Action, Count: len(res.Done), Jobs: res.Done, Failed: []wire.JobBulkFailed{}}
	for _, f := range res.Failed {
		out.Failed = append(out.Failed, wire.JobBulkFailed{ID: f.ID, Error: f.Err.Error()})
	}
	return out, nil
}

// bulkSelect resolves a bulk action's filter to job ids, newest first,
// after checking the confirmed count.
func (a *API) bulkSelect(c *call[wire.JobBulk], f store.JobFilter, expected int64) ([]int64, error) {
	f.AfterID, f.Limit = 0, 0
	n, _, err := a.e.CountJobs(c.ctx(), c.p, f)
	if err != nil {
		return nil, err
	}
	if n != expected {
		return nil, &engine.Error{Kind: engine.KindConflict, Message: "the selection now holds " + strconv.FormatInt(n, 10) + " jobs, not " + strconv.FormatInt(expected, 10) + "; nothing was done, confirm the new count"}
	}
	if n > wire.MaxBatch {
		return nil, field.New("filter", strconv.FormatInt(n, 10)+" jobs", "a bulk action takes at most 1000 jobs; narrow the filter")
	}
	// The jobs the count counted: a text search acts within the same
	// window of the newest jobs (engine.Config.SearchWindow).
	f.Limit, f.ScanLimit = wire.MaxBatch, a.e.SearchWindow()
	jobs, err := a.e.Jobs(c.ctx(), c.p, f)
	if err != nil {
		return nil, err
	}
	ids := make([]int64, len(jobs))
	for i := range jobs {
		ids[i] = jobs[i].ID
	}
	return ids, nil
}

func (a *API) claim(c *call[wire.ClaimRequest]) (*wire.ClaimResult, error) {
	start, req := time.Now(), c.in
	ctx, cancel := context.WithCancel(c.ctx())
	defer cancel()
	select {
	case <-a.draining:
		return &wire.ClaimResult{Jobs: []wire.ClaimedJob{}}, nil
	default:
	}
	go func() {
		select {
		case <-a.draining:
			cancel()
		case <-ctx.Done():
		}
	}()
	if req.WaitMs < 0 || req.WaitMs > wire.MaxWaitMs {
		return nil, field.New("waitMs", strconv.FormatInt(req.WaitMs, 10), "must be from 0 through 30000 milliseconds")
	}
	cs, err := a.e.Claim(ctx, c.p, engine.ClaimRequest{WorkerID: req.WorkerID, Tools: req.Tools, Max: req.Max, Wait: time.Duration(req.WaitMs) * time.Millisecond})
	if err != nil {
		return nil, err
	}
	out := &wire.ClaimResult{Jobs: make([]wire.ClaimedJob, len(cs))}
	for i, cl := range cs {
		out.Jobs[i] = claimedView(cl)
		a.traceClaim(c.r, start, req.WorkerID, cl, &out.Jobs[i])
	}
	return out, nil
}

func (a *API) heartbeat(c *call[wire.Heartbeat]) (*wire.HeartbeatResult, error) {
	id, err := pathInt(c.r, "id")
	if err != nil {
		return nil, err
	}
	j, err := a.e.Heartbeat(c.ctx(), c.p, id, c.in.LeaseToken)
	if err != nil {
		return nil, err
	}
	return &wire.HeartbeatResult{LeaseExpiresAt: ft(j.LeaseExpiresAt), CancelRequested: j.CancelRequested}, nil
}

func reportRequest(b wire.Report, id int64) engine.ReportRequest {
	return engine.ReportRequest{JobID: id, LeaseToken: b.LeaseToken, Report: classify.Report{Success: b.Success, HTTPStatus: b.HTTPStatus, Headers: b.Headers,
		ErrorKind: b.ErrorKind, Retryable: b.Retryable, RetryAfterMs: b.RetryAfterMs, Message: b.Message}}
}

func (a *API) report(c *call[wire.Report]) (*wire.ReportResult, error) {
	start := time.Now()
	id, err := pathInt(c.r, "id")
	if err != nil {
		return nil, err
	}
	if c.in.JobID != 0 && c.in.JobID != id {
		return nil, field.New("jobId", strconv.FormatInt(c.in.JobID, 10), "must be absent or equal the job id of the path ("+strconv.FormatInt(id, 10)+")")
	}
	res, err := a.e.Report(c.ctx(), c.p, reportRequest(c.in, id))
	if err != nil {
		return nil, err
	}
	a.traceReport(c.r, start, res)
	d := res.Decision
	return &wire.ReportResult{Job: jobView(res.Job, nil, nil, false), Duplicate: res.Duplicate,
		Decision: wire.Decision{Outcome: string(d.Outcome), Classification: d.Classification, RetryAfterMs: d.RetryAfterMs, CountsTowardCircuit: d.CountsTowardCircuit, Reason: d.Reason}}, nil
}

func (a *API) reportBatch(c *call[wire.ReportBatch]) (*wire.ReportBatchResult, error) {
	start := time.Now()
	if n := len(c.in.Reports); n == 0 || n > wire.MaxBatch {
		return nil, field.New("reports", strconv.Itoa(n)+" reports", "must hold 1 through 1000 reports")
	}
	var errs field.Errors
	rs := make([]engine.ReportRequest, len(c.in.Reports))
	for i, b := range c.in.Reports {
		if b.JobID <= 0 {
			errs.Add("reports["+strconv.Itoa(i)+"].jobId", strconv.FormatInt(b.JobID, 10), "required: the id of the claimed job")
		}
		rs[i] = reportRequest(b, b.JobID)
	}
	if len(errs) > 0 {
		return nil, errs
	}
	items, err := a.e.ReportBatch(c.ctx(), c.p, rs)
	if err != nil {
		return nil, err
	}
	out := &wire.ReportBatchResult{Results: make([]wire.ReportBatchItem, len(items))}
	for i, it := range items {
		r := wire.ReportBatchItem{JobID: rs[i].JobID}
		if it.Err != nil {
			d := wire.ErrorDetail{Code: "conflict", Message: it.Err.Error()}
			var ee *engine.Error
			if errors.As(it.Err, &ee) && ee.Kind == engine.KindNotFound {
				d.Code = "not_found"
			} else if ee != nil && ee.Kind == engine.KindForbidden {
				d.Code = "forbidden"
			}
			r.Error = &d
			out.Results[i] = r
			continue
		}
		r.OK, r.State, r.Classification, r.Duplicate = true, it.Job.State, it.Decision.Classification, it.Duplicate
		a.traceReport(c.r, start, it.ReportResult)
		if it.Job.State == wire.JobScheduled {
			r.DueAt = ft(it.Job.DueAt)
		}
		out.Results[i] = r
	}
	return out, nil
}

func (a *API) advanceClock(c *call[wire.ClockAdvance]) (*wire.ClockAdvance, error) {
	// Checked in milliseconds, as given: a value past what a
	// time.Duration holds would wrap when converted, and the error would
	// show the wrapped value.
	if c.in.AdvanceMs < 1 || c.in.AdvanceMs > engine.MaxClockAdvanceMs {
		return nil, field.New("advanceMs", strconv.FormatInt(c.in.AdvanceMs, 10), engine.ClockAdvanceAllowed)
	}
	if err := a.e.AdvanceClock(c.ctx(), time.Duration(c.in.AdvanceMs)*time.Millisecond); err != nil {
		return nil, err
	}
	return &wire.ClockAdvance{AdvanceMs: c.in.AdvanceMs, Now: ft(a.e.Clock().Now().UnixMilli())}, nil
}

func (a *API) overview(c *call[none]) (*wire.Overview, error) {
	ovs, err := a.e.Overview(c.ctx(), c.p)
	if err != nil {
		return nil, err
	}
	out := &wire.Overview{Now: ft(a.e.Clock().Now().UnixMilli()), Endpoints: []wire.OverviewEndpoint{}}
	for _, o := range ovs {
		v := wire.OverviewEndpoint{Endpoint: endpointView(o.Endpoint), Running: o.Running, ClaimsInWindow: o.ClaimsInWindow, Scheduled: o.Scheduled,
			Due: o.Due, Outcomes5m: orEmptyMap(o.Outcomes5m), Outcomes1h: orEmptyMap(o.Outcomes1h)}
		if o.HeldBy != "" {
			h := &wire.Hold{Gate: o.HeldBy, Detail: o.HeldDetail}
			if o.HeldUntil > 0 {
				h.Until = ft(o.HeldUntil)
			}
			v.HeldBy = h
		}
		out.Endpoints = append(out.Endpoints, v)
	}
	return out, nil
}

func orEmptyMap[K comparable, V any](m map[K]V) map[K]V {
	if m == nil {
		return map[K]V{}
	}
	return m
}

func (a *API) workers(c *call[none]) (*wire.WorkerList, error) {
	ws, err := a.e.Workers(c.ctx(), c.p)
	if err != nil {
		return nil, err
	}
	out := &wire.WorkerList{Workers: []wire.WorkerStatus{}}
	for i := range ws {
		out.Workers = append(out.Workers, workerView(&ws[i]))
	}
	return out, nil
}

func (a *API) history(c *call[wire.HistoryQuery]) (*wire.History, error) {
	hours := wire.HistoryDefaultHours
	if c.in.Hours != "" {
		n, err := strconv.Atoi(c.in.Hours)
		if err != nil {
			return nil, field.New("hours", strconv.Quote(c.in.Hours), "must be an integer from 1 through "+strconv.Itoa(wire.HistoryMaxHours))
		}
		hours = n
	}
	res, err := a.e.History(c.ctx(), c.p, c.in.Endpoint, hours)
	if err != nil {
		return nil, err
	}
	return historyView(res), nil
}
