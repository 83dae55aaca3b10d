import type { AuditList, ClaimRequest, ClaimedJob, ClockAdvance, Endpoint, EndpointCreate, EndpointPolicyUpdate, Health, HeartbeatResult, History, Hold, Job, JobBatchItem, JobBulkResult, JobEnqueue, JobCounts, JobList, JobState, Key, KeyCreate, Me, Overview, Readiness, Report, ReportBatchItem, ReportResult, Run, RunCreate, SimulateConfig, SimulateResult, Tool, ToolPublish, WorkerList } from "./types.js";
/** Options of a Client. */
export interface ClientOptions {
    /** A fetch to send requests with (tests, proxies, other runtimes); by default the client uses node:http and node:https with keep-alive agents of its own, which costs about half the CPU per call. The stream uses fetch either way. */
    fetch?: typeof fetch;
    /** How long one request may take before it fails with code "timeout"; default 30000 ms (a claim adds its waitMs). */
    timeoutMs?: number;
    /** Most retries of a request that is safe to repeat; default 4. */
    maxRetries?: number;
    /** A Retry-After longer than this is not waited for: the error is thrown; default 30000 ms. */
    maxRetryWaitMs?: number;
    /** Headers sent with every request (e.g. User-Agent). */
    headers?: Record<string, string>;
}
/** Options of one call. */
export interface RequestOptions {
    /** Aborts the request (and its retries); the call rejects with the signal's reason. */
    signal?: AbortSignal;
    /** Overrides the client's timeoutMs for this call. */
    timeoutMs?: number;
    /**
     * Whether transient failures (no answer, 429, 502, 503, 504) are retried
     * with jittered backoff. The default is true only for calls that are safe
     * to repeat: reads, claims, heartbeats, reports (idempotent per lease
     * token) and enqueues that carry an idempotency key.
     */
    retry?: boolean;
}
/** A job selection for list, count and bulk; every field is optional. */
export interface JobFilter {
    state?: JobState | JobState[];
    /** "name" or "name@version". */
    tool?: string;
    endpoint?: string;
    runId?: number;
    /** Inclusive. */
    createdAfter?: Date | string;
    /** Exclusive. */
    createdBefore?: Date | string;
    cursor?: string;
    /** 1–500, default 100. */
    limit?: number;
    /** Search: a job id, an exact idempotency key, tool or endpoint name, or text in the payload or the last error. */
    q?: string;
}
/**
 * Client talks to one Ratchet server with one API key. Every route of the
 * API has a method; every method is async and takes RequestOptions last
 * (an AbortSignal, a timeout, retry on or off).
 *
 *     const c = new Client("http://127.0.0.1:8080", process.env.RATCHET_KEY);
 *     const { job } = await c.enqueue({ tool: "charge@1", payload: { orderId: 42 }, idempotencyKey: "order-42" });
 */
export declare class Client {
    #private;
    readonly baseUrl: string;
    constructor(baseUrl: string, key?: string, options?: ClientOptions);
    /**
     * Closes the client's idle keep-alive connections (they would not keep
     * the process alive anyway). The client stays usable: a later request
     * opens a new connection.
     */
    close(): void;
    /** The calling key and its project. */
    me(o?: RequestOptions): Promise<Me>;
    /** Creates a key: scope owner, producer, or worker with its tools. The answer's `key` is the secret, shown once. */
    createKey(req: KeyCreate, o?: RequestOptions): Promise<Key>;
    /** Lists the project's keys. */
    listKeys(o?: RequestOptions): Promise<Key[]>;
    /** Revokes a key. */
    revokeKey(keyId: number, o?: RequestOptions): Promise<void>;
    /** Creates an endpoint; settings left out take the server's defaults. */
    createEndpoint(req: EndpointCreate, o?: RequestOptions): Promise<Endpoint>;
    /** Reads an endpoint. */
    getEndpoint(name: string, o?: RequestOptions): Promise<Endpoint>;
    /** Lists endpoints. */
    listEndpoints(o?: RequestOptions): Promise<Endpoint[]>;
    /**
     * Replaces an endpoint's policy if req.expectedVersion is current; a stale
     * version rejects with a RatchetError of status 409 whose `current` is the
     * endpoint as it is now.
     */
    updateEndpointPolicy(name: string, req: EndpointPolicyUpdate, o?: RequestOptions): Promise<Endpoint>;
    /** Pauses an endpoint (owner key): its due jobs wait (gate "paused") until resumeEndpoint. Pausing a paused endpoint keeps the first pause. */
    pauseEndpoint(name: string, reason?: string, o?: RequestOptions): Promise<Endpoint>;
    /** Resumes a paused endpoint (owner key). */
    resumeEndpoint(name: string, o?: RequestOptions): Promise<Endpoint>;
    /** Closes an endpoint's circuit now and clears its failure count (owner key). */
    closeCircuit(name: string, o?: RequestOptions): Promise<Endpoint>;
    /** Opens an endpoint's circuit now for its circuitOpenMs (owner key); then it half-opens as usual. */
    openCircuit(name: string, o?: RequestOptions): Promise<Endpoint>;
    /** Lists the endpoint's due jobs that one of its gates holds now, newest first, each with heldBy. */
    heldJobs(name: string, page?: {
        cursor?: string;
        limit?: number;
    }, o?: RequestOptions): Promise<JobList>;
    /** Lists operator actions newest first (owner key); target selects e.g. "endpoint:payments" or "job:42". */
    audit(q?: {
        target?: string;
        cursor?: string;
        limit?: number;
    }, o?: RequestOptions): Promise<AuditList>;
    /** Publishes a tool contract (immutable). */
    publishTool(spec: ToolPublish, o?: RequestOptions): Promise<Tool>;
    /** Reads a tool contract. */
    getTool(name: string, version: string, o?: RequestOptions): Promise<Tool>;
    /** Lists tool contracts. */
    listTools(o?: RequestOptions): Promise<Tool[]>;
    /** Opens a run. */
    startRun(req?: RunCreate, o?: RequestOptions): Promise<Run>;
    /** Reads a run with its steps and counts. */
    getRun(runId: number, o?: RequestOptions): Promise<Run>;
    /** Closes a run. */
    finishRun(runId: number, o?: RequestOptions): Promise<Run>;
    /**
     * Stores a job. `created` is false when the idempotency key returned an
     * existing job. Retried on transient failures only when it carries an
     * idempotency key (in req, or in options.idempotencyKey, sent as the
     * Idempotency-Key header).
     */
    enqueue(req: JobEnqueue, o?: RequestOptions & {
        idempotencyKey?: string;
    }): Promise<{
        job: Job;
        created: boolean;
    }>;
    /** Stores 1 to 1000 jobs in one transaction; retried only when every job carries an idempotency key. */
    enqueueBatch(jobs: JobEnqueue[], o?: RequestOptions): Promise<JobBatchItem[]>;
    /** Lists jobs newest first; pass nextCursor as filter.cursor for the next page. */
    listJobs(filter?: JobFilter, o?: RequestOptions): Promise<JobList>;
    /** Every job of a filter, page after page. */
    jobs(filter?: JobFilter, o?: RequestOptions): AsyncGenerator<Job>;
    /** Counts the jobs of a filter (its cursor and limit are ignored). A text search (`q` not a job id) counts within the newest 50,000 jobs of the other filters: a lower bound when older jobs exist (the answer's `capped`). */
    countJobs(filter?: JobFilter, o?: RequestOptions): Promise<number>;
    /**
     * How many jobs are in each state, with the total: of the project, of one
     * endpoint, or of one tool ("name" or "name@version"). Without a tool the
     * server reads counters it keeps with every change of a job.
     */
    jobCounts(filter?: {
        endpoint?: string;
        tool?: string;
    }, o?: RequestOptions): Promise<JobCounts>;
    /**
     * Cancels or replays every job of a filter (at most 1000). expectedCount
     * is the count the person confirmed (countJobs); when the selection holds
     * another count nothing is done and it rejects with 409.
     */
    bulkJobs(action: "cancel" | "replay" | "run_now", filter: JobFilter, expectedCount: number, o?: RequestOptions): Promise<JobBulkResult>;
    /** Cancels, replays or runs now (run_now: owner key) the jobs listed by id (1–1000). */
    bulkJobIds(action: "cancel" | "replay" | "run_now", ids: number[], o?: RequestOptions): Promise<JobBulkResult>;
    /** Makes a scheduled job due now (owner key); gates still apply and the attempt count stays. Rejects with 409 naming the state otherwise. */
    runNow(jobId: number, o?: RequestOptions): Promise<Job>;
    /** Reads a job with its attempts, payload and what holds it. */
    getJob(jobId: number, o?: RequestOptions): Promise<Job>;
    /** Says which gate holds a job. */
    explainJob(jobId: number, o?: RequestOptions): Promise<Hold>;
    /** Cancels a job: at once when scheduled, at the running attempt's end otherwise (its worker is told by the next heartbeat). */
    cancelJob(jobId: number, o?: RequestOptions): Promise<Job>;
    /** Replays a failed, exhausted or cancelled job as a new job. */
    replayJob(jobId: number, o?: RequestOptions): Promise<Job>;
    /** Leases due jobs; with waitMs it long-polls up to 30 s when none is due. */
    claim(req: ClaimRequest, o?: RequestOptions): Promise<ClaimedJob[]>;
    /** Extends a lease; the answer says whether the job's cancel was requested. A lost lease rejects with 409. */
    heartbeat(jobId: number, leaseToken: string, o?: RequestOptions): Promise<HeartbeatResult>;
    /** Reports the outcome of one attempt (report.jobId is required). A stale lease rejects with 409. */
    report(report: Report & {
        jobId: number;
    }, o?: RequestOptions): Promise<ReportResult>;
    /** Reports 1 to 1000 outcomes; each stands on its own (see each result's ok and error). */
    reportBatch(reports: Report[], o?: RequestOptions): Promise<ReportBatchItem[]>;
    /** Per-endpoint live state, as the dashboard shows it. */
    overview(o?: RequestOptions): Promise<Overview>;
    /** Workers seen in the last 24 hours, latest activity first, with the running jobs each holds (owner key). */
    workers(o?: RequestOptions): Promise<WorkerList>;
    /** Per-minute claims, outcomes and due-to-claim lag of one endpoint (or every one) over the last hours (1–48, default 6). */
    history(q?: {
        endpoint?: string;
        hours?: number;
    }, o?: RequestOptions): Promise<History>;
    /**
     * Follows GET /v1/stream: yields each event as `{ event, data }` —
     * `"job"` with the Job for `{ job: id }`, `"overview"` with the Overview
     * for `{ view: "overview" }`, `"jobs"` with `{ changed, counts, total }`
     * for `{ view: "jobs", ...filters }` (the filters of listJobs, no cursor).
     * The first event is the view as it is; later ones come only when it
     * changed; ping comments are skipped. It ends when the server ends the
     * stream (shutdown; a revoked key sends `"error"` first) or when
     * `o.signal` aborts. A Ratchet error before the stream starts is thrown
     * as RatchetError; so is a stream that sent nothing, not even a ping,
     * for `o.silenceMs` (default 60000; the server pings every 15 s): code
     * "timeout". The time the consumer spends between events is not silence.
     * Not retried: reconnect as you see fit.
     */
    stream(q: {
        job: number;
    } | ({
        view: "overview" | "jobs";
    } & Omit<JobFilter, "cursor" | "limit">), o?: {
        signal?: AbortSignal;
        silenceMs?: number;
    }): AsyncGenerator<{
        event: string;
        data: unknown;
    }>;
    /** Moves the clock of a server started with --dev-clock; the answer carries the new now. */
    advanceClock(advanceMs: number, o?: RequestOptions): Promise<ClockAdvance>;
    /** Runs the contention simulator (no key needed; one sweep at a time, 503 while busy). */
    simulate(config: SimulateConfig, o?: RequestOptions): Promise<SimulateResult>;
    /** Liveness: the process serves HTTP ({ status: "ok" }). */
    healthz(o?: RequestOptions): Promise<Health>;
    /**
     * Readiness: whether the store answers. A 503 is an answer here, not an
     * error: it comes back as { status: "unavailable" } at once, unretried,
     * so a health check sees it.
     */
    readyz(o?: RequestOptions): Promise<Readiness>;
    /** The OpenAPI document the server serves. */
    openapi(o?: RequestOptions): Promise<Record<string, unknown>>;
}
/** describe names a fetch failure by its innermost cause ("connect ECONNREFUSED 127.0.0.1:1"). */
export declare function describe(err: unknown): string;
