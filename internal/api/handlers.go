package api

// The route table: every route of the API, its scopes and its handler.
// The handlers live in the file of their area (keys.go, endpoints.go,
// tools.go, runs.go, jobs.go, work.go, observe.go, operator.go,
// schedules.go, failures.go); TestHandlersIsTheRouteTable keeps it so.

import (
	"net/http"
	"reflect"

	"github.com/getratchet/ratchet/internal/simulate"
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
	sim.readRecovery = func(w http.ResponseWriter, r *http.Request) ([]byte, error) {
		c := &call[simulate.Recovery]{r: r}
		err := admit(a, w, c, "/api/simulate/recovery", nil, decodeOwn)
		return c.body, err
	}
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
		route(a, "GET", "/v1/endpoints/{name}/events", "List the endpoint's event log, newest first: each change of its circuit, its pause, its recovery and its learned limits, with the facts known then", producer, 200, a.endpointEvents, inQuery()),
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
		{Method: "POST", Path: "/api/simulate/recovery", Summary: "Run the simulator's recovery scenario (no key; Content-Type: application/json; body: the scenario of ratchet simulate --scenario recovery, e.g. {\"backlog\":5000,\"capacityPerS\":100}; shares the one-at-a-time slot of /api/simulate)",
			Status: 200, request: reflect.TypeFor[simulate.Recovery](), response: reflect.TypeFor[simulate.RecoveryResult](), handler: sim.serveRecovery},
	}, a.scheduleRoutes()...)
}
