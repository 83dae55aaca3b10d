import { apiBackoff, sleep } from "./backoff.js";
import { RatchetError, parseRetryAfter } from "./errors.js";
import { EventStreamParser, type ServerEvent } from "./sse.js";
import { fetchTransport, nodeTransport, type Transport } from "./transport.js";
import type { paths } from "./schema.js";
import type {
  AlertDeliveryList,
  AlertSettings,
  AlertSink,
  AlertSinkCreate,
  AlertSinkList,
  AlertTestResult,
  AuditList,
  EndpointEventList,
  RunList,
  ClaimRequest,
  ClaimedJob,
  ClockAdvance,
  Endpoint,
  EndpointCreate,
  EndpointPolicyUpdate,
  ErrorBody,
  FailureGroupList,
  FailureReplay,
  FailureReplayResult,
  FlowKeyList,
  Health,
  HeartbeatResult,
  History,
  Hold,
  Job,
  JobBatchItem,
  JobBulkResult,
  JobEnqueue,
  JobCounts,
  JobList,
  JobQuery,
  JobSort,
  JobState,
  Key,
  KeyCreate,
  Me,
  Overview,
  Readiness,
  Report,
  ReportBatchItem,
  ReportResult,
  Run,
  RunCreate,
  Schedule,
  ScheduleCreate,
  ScheduleFire,
  ScheduleList,
  ScheduleTick,
  ScheduleTickList,
  SimulateConfig,
  SimulateResult,
  Tool,
  ToolPublish,
  WorkerList,
} from "./types.js";

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
  /** Jobs of this flow key (exact match). */
  flowKey?: string;
  /** Inclusive. */
  createdAfter?: Date | string;
  /** Exclusive. */
  createdBefore?: Date | string;
  cursor?: string;
  /** 1–500, default 100. */
  limit?: number;
  /** Search: a job id, an exact idempotency key, tool or endpoint name, or text in the payload or the last error. */
  q?: string;
  /** The order of listJobs: newest first when left out; "finished_desc" and "finished_asc" need a state of failed and/or exhausted. A cursor continues the sort it came from only. Counts and bulk actions ignore it. */
  sort?: JobSort;
}

type Method = "get" | "post" | "put" | "delete";
type Op<P extends keyof paths, M extends Method> = NonNullable<paths[P][M]>;
type JsonOf<C> = C extends { content: { "application/json": infer T } } ? T : never;
type BodyOf<O> = O extends { requestBody: infer B } ? JsonOf<NonNullable<B>> : O extends { requestBody?: infer B } ? JsonOf<NonNullable<B>> : never;
type OkOf<O> = O extends { responses: infer R }
  ? 200 extends keyof R
    ? JsonOf<R[200]>
    : 201 extends keyof R
      ? JsonOf<R[201]>
      : void
  : never;

interface Call<B> {
  body?: B;
  query?: URLSearchParams;
  headers?: Record<string, string>;
  safe: boolean;
  timeoutMs?: number;
  text?: boolean;
  /** statuses of 400 and above that are answers of the route, not errors */
  accept?: number[];
}

const id = (n: number) => {
  if (!Number.isSafeInteger(n)) throw new TypeError(`ratchet: an id must be an integer, not ${String(n)}`);
  return String(n);
};
const seg = encodeURIComponent;

function toQuery(f: JobFilter = {}): JobQuery {
  const q: JobQuery = {};
  if (f.state !== undefined) q.state = Array.isArray(f.state) ? f.state.join(",") : f.state;
  if (f.tool) q.tool = f.tool;
  if (f.endpoint) q.endpoint = f.endpoint;
  if (f.runId !== undefined) q.runId = String(f.runId);
  if (f.flowKey) q.flowKey = f.flowKey;
  if (f.createdAfter !== undefined) q.createdAfter = f.createdAfter instanceof Date ? f.createdAfter.toISOString() : f.createdAfter;
  if (f.createdBefore !== undefined) q.createdBefore = f.createdBefore instanceof Date ? f.createdBefore.toISOString() : f.createdBefore;
  if (f.cursor) q.cursor = f.cursor;
  if (f.limit !== undefined) q.limit = String(f.limit);
  if (f.q) q.q = f.q;
  if (f.sort) q.sort = f.sort;
  return q;
}

function params(q: JobQuery | Record<string, string | undefined>): URLSearchParams {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(q)) if (v !== undefined && v !== "") p.set(k, v);
  return p;
}

/**
 * Client talks to one Ratchet server with one API key. Every route of the
 * API has a method; every method is async and takes RequestOptions last
 * (an AbortSignal, a timeout, retry on or off).
 *
 *     const c = new Client("http://127.0.0.1:8080", process.env.RATCHET_KEY);
 *     const { job } = await c.enqueue({ tool: "charge@1", payload: { orderId: 42 }, idempotencyKey: "order-42" });
 */
export class Client {
  readonly baseUrl: string;
  readonly #key: string;
  readonly #fetch: typeof fetch;
  readonly #transport: Transport;
  readonly #closeTransport: () => void;
  readonly #timeoutMs: number;
  readonly #maxRetries: number;
  readonly #maxRetryWaitMs: number;
  readonly #headers: Record<string, string>;

  constructor(baseUrl: string, key = "", options: ClientOptions = {}) {
    this.baseUrl = baseUrl.replace(/\/+$/, "");
    this.#key = key;
    this.#fetch = options.fetch ?? globalThis.fetch;
    if (options.fetch) {
      this.#transport = fetchTransport(options.fetch);
      this.#closeTransport = () => {};
    } else {
      const t = nodeTransport();
      this.#transport = t.send;
      this.#closeTransport = t.close;
    }
    this.#timeoutMs = options.timeoutMs ?? 30_000;
    this.#maxRetries = options.maxRetries ?? 4;
    this.#maxRetryWaitMs = options.maxRetryWaitMs ?? 30_000;
    this.#headers = { ...options.headers };
  }

  /**
   * Closes the client's idle keep-alive connections (they would not keep
   * the process alive anyway). The client stays usable: a later request
   * opens a new connection.
   */
  close(): void {
    this.#closeTransport();
  }

  /** The calling key and its project. */
  async me(o?: RequestOptions): Promise<Me> {
    return (await this.#do("get", "/v1/me", "/v1/me", { safe: true }, o)).data;
  }

  /** Creates a key: scope owner, producer, or worker with its tools. The answer's `key` is the secret, shown once. */
  async createKey(req: KeyCreate, o?: RequestOptions): Promise<Key> {
    return (await this.#do("post", "/v1/keys", "/v1/keys", { body: req, safe: false }, o)).data;
  }

  /** Lists the project's keys. */
  async listKeys(o?: RequestOptions): Promise<Key[]> {
    return (await this.#do("get", "/v1/keys", "/v1/keys", { safe: true }, o)).data.keys;
  }

  /** Revokes a key. */
  async revokeKey(keyId: number, o?: RequestOptions): Promise<void> {
    await this.#do("delete", "/v1/keys/{id}", `/v1/keys/${id(keyId)}`, { safe: false }, o);
  }

  /** Creates an endpoint; settings left out take the server's defaults. */
  async createEndpoint(req: EndpointCreate, o?: RequestOptions): Promise<Endpoint> {
    return (await this.#do("post", "/v1/endpoints", "/v1/endpoints", { body: req, safe: false }, o)).data;
  }

  /** Reads an endpoint. */
  async getEndpoint(name: string, o?: RequestOptions): Promise<Endpoint> {
    return (await this.#do("get", "/v1/endpoints/{name}", `/v1/endpoints/${seg(name)}`, { safe: true }, o)).data;
  }

  /** Lists endpoints. */
  async listEndpoints(o?: RequestOptions): Promise<Endpoint[]> {
    return (await this.#do("get", "/v1/endpoints", "/v1/endpoints", { safe: true }, o)).data.endpoints;
  }

  /**
   * Replaces an endpoint's policy if req.expectedVersion is current; a stale
   * version rejects with a RatchetError of status 409 whose `current` is the
   * endpoint as it is now.
   */
  async updateEndpointPolicy(name: string, req: EndpointPolicyUpdate, o?: RequestOptions): Promise<Endpoint> {
    return (await this.#do("put", "/v1/endpoints/{name}/policy", `/v1/endpoints/${seg(name)}/policy`, { body: req, safe: false }, o)).data;
  }

  /** Pauses an endpoint (owner key): its due jobs wait (gate "paused") until resumeEndpoint. Pausing a paused endpoint keeps the first pause. */
  async pauseEndpoint(name: string, reason = "", o?: RequestOptions): Promise<Endpoint> {
    return (await this.#do("post", "/v1/endpoints/{name}/pause", `/v1/endpoints/${seg(name)}/pause`, { body: reason ? { reason } : {}, safe: false }, o)).data;
  }

  /** Resumes a paused endpoint (owner key). */
  async resumeEndpoint(name: string, o?: RequestOptions): Promise<Endpoint> {
    return (await this.#do("post", "/v1/endpoints/{name}/resume", `/v1/endpoints/${seg(name)}/resume`, { safe: false }, o)).data;
  }

  /** Closes an endpoint's circuit now and clears its failure count (owner key). */
  async closeCircuit(name: string, o?: RequestOptions): Promise<Endpoint> {
    return (await this.#do("post", "/v1/endpoints/{name}/circuit/close", `/v1/endpoints/${seg(name)}/circuit/close`, { safe: false }, o)).data;
  }

  /** Opens an endpoint's circuit now for its circuitOpenMs (owner key); then it half-opens as usual. */
  async openCircuit(name: string, o?: RequestOptions): Promise<Endpoint> {
    return (await this.#do("post", "/v1/endpoints/{name}/circuit/open", `/v1/endpoints/${seg(name)}/circuit/open`, { safe: false }, o)).data;
  }

  /** Lists the endpoint's due jobs that one of its gates holds now, newest first, each with heldBy. */
  async heldJobs(name: string, page: { cursor?: string; limit?: number } = {}, o?: RequestOptions): Promise<JobList> {
    const q = params({ cursor: page.cursor, limit: page.limit === undefined ? undefined : String(page.limit) });
    return (await this.#do("get", "/v1/endpoints/{name}/held", `/v1/endpoints/${seg(name)}/held`, { query: q, safe: true }, o)).data;
  }

  /** Lists the endpoint's busiest flow keys (most running and scheduled jobs first) with the due jobs each key's own limits hold now; limit 1–100, default 10. */
  async flowKeys(name: string, q: { limit?: number } = {}, o?: RequestOptions): Promise<FlowKeyList> {
    const query = params({ limit: q.limit === undefined ? undefined : String(q.limit) });
    return (await this.#do("get", "/v1/endpoints/{name}/keys", `/v1/endpoints/${seg(name)}/keys`, { query, safe: true }, o)).data;
  }

  /**
   * Groups the endpoint's failed and exhausted jobs of [since, until) by
   * classification and message fingerprint, the largest group first, each
   * with a sparkline of `buckets` counts (defaults: until now, since 24
   * hours before, 24 buckets; at most the latest 10,000 are read).
   */
  async failures(name: string, q: { since?: Date | string; until?: Date | string; buckets?: number } = {}, o?: RequestOptions): Promise<FailureGroupList> {
    const t = (v?: Date | string) => (v instanceof Date ? v.toISOString() : v);
    const query = params({ since: t(q.since), until: t(q.until), buckets: q.buckets === undefined ? undefined : String(q.buckets) });
    return (await this.#do("get", "/v1/endpoints/{name}/failures", `/v1/endpoints/${seg(name)}/failures`, { query, safe: true }, o)).data;
  }

  /** Counts, changing nothing, the failed and exhausted jobs the filter selects that no job replays yet: the count replayFailures expects. */
  async previewReplayFailures(filter: Omit<FailureReplay, "preview" | "expectedCount"> = {}, o?: RequestOptions): Promise<FailureReplayResult> {
    const body = { ...filter, preview: true, expectedCount: undefined };
    return (await this.#do("post", "/v1/failures/replay", "/v1/failures/replay", { body, safe: true }, o)).data;
  }

  /**
   * Replays, as new jobs paced by their endpoints' gates, the jobs the
   * filter selects; expectedCount is the preview's count the person
   * confirmed (another count rejects with 409 and nothing is done; at most
   * 1000).
   */
  async replayFailures(filter: Omit<FailureReplay, "preview" | "expectedCount">, expectedCount: number, o?: RequestOptions): Promise<FailureReplayResult> {
    const body = { ...filter, preview: false, expectedCount };
    return (await this.#do("post", "/v1/failures/replay", "/v1/failures/replay", { body, safe: false }, o)).data;
  }

  /** Lists operator actions newest first (owner key); target selects e.g. "endpoint:payments" or "job:42". */
  async audit(q: { target?: string; cursor?: string; limit?: number } = {}, o?: RequestOptions): Promise<AuditList> {
    const p = params({ target: q.target, cursor: q.cursor, limit: q.limit === undefined ? undefined : String(q.limit) });
    return (await this.#do("get", "/v1/audit", "/v1/audit", { query: p, safe: true }, o)).data;
  }

  /** Publishes a tool contract (immutable). */
  async publishTool(spec: ToolPublish, o?: RequestOptions): Promise<Tool> {
    return (await this.#do("post", "/v1/tools", "/v1/tools", { body: spec, safe: false }, o)).data;
  }

  /** Reads a tool contract. */
  async getTool(name: string, version: string, o?: RequestOptions): Promise<Tool> {
    return (await this.#do("get", "/v1/tools/{name}/{version}", `/v1/tools/${seg(name)}/${seg(version)}`, { safe: true }, o)).data;
  }

  /** Lists tool contracts. */
  async listTools(o?: RequestOptions): Promise<Tool[]> {
    return (await this.#do("get", "/v1/tools", "/v1/tools", { safe: true }, o)).data.tools;
  }

  /** Opens a run. */
  async startRun(req: RunCreate = {}, o?: RequestOptions): Promise<Run> {
    return (await this.#do("post", "/v1/runs", "/v1/runs", { body: req, safe: false }, o)).data;
  }

  /** Creates a schedule: one job per tick of a cron expression (owner key; docs/schedules.md). */
  async createSchedule(req: ScheduleCreate, o?: RequestOptions): Promise<Schedule> {
    return (await this.#do("post", "/v1/schedules", "/v1/schedules", { body: req, safe: false }, o)).data;
  }

  /** Lists every schedule of the project by name, each with its latest ticks, reading page after page. */
  async schedules(o?: RequestOptions): Promise<Schedule[]> {
    const all: Schedule[] = [];
    for (let cursor: string | undefined; ; ) {
      const page = await this.schedulePage({ cursor, limit: 500 }, o);
      all.push(...page.schedules);
      if (page.nextCursor === null) return all;
      cursor = page.nextCursor;
    }
  }

  /** Lists one page of the schedules by name (limit 1–500, default 100); cursor is the previous page's nextCursor. */
  async schedulePage(q: { cursor?: string; limit?: number } = {}, o?: RequestOptions): Promise<ScheduleList> {
    const query = params({ cursor: q.cursor, limit: q.limit === undefined ? undefined : String(q.limit) });
    return (await this.#do("get", "/v1/schedules", "/v1/schedules", { query, safe: true }, o)).data;
  }

  /** Lists one page of a schedule's ticks, newest first (limit 1–500, default 100). */
  async scheduleTicks(name: string, q: { cursor?: string; limit?: number } = {}, o?: RequestOptions): Promise<ScheduleTickList> {
    const query = params({ cursor: q.cursor, limit: q.limit === undefined ? undefined : String(q.limit) });
    return (await this.#do("get", "/v1/schedules/{name}/ticks", `/v1/schedules/${seg(name)}/ticks`, { query, safe: true }, o)).data;
  }

  /** Fires a tick of the schedule now, even while it is paused: one job due now (owner key; audited). */
  async fireSchedule(name: string, o?: RequestOptions): Promise<ScheduleTick> {
    return (await this.#do("post", "/v1/schedules/{name}/fire", `/v1/schedules/${seg(name)}/fire`, { safe: false }, o)).data;
  }

  /** Reads a schedule with its latest ticks and their jobs. */
  async getSchedule(name: string, o?: RequestOptions): Promise<Schedule> {
    return (await this.#do("get", "/v1/schedules/{name}", `/v1/schedules/${seg(name)}`, { safe: true }, o)).data;
  }

  /** The schedule's next fire times (count 1–100, default 10), each its tick plus the spread offset. */
  async previewSchedule(name: string, q: { count?: number } = {}, o?: RequestOptions): Promise<ScheduleFire[]> {
    const query = params({ count: q.count === undefined ? undefined : String(q.count) });
    return (await this.#do("get", "/v1/schedules/{name}/preview", `/v1/schedules/${seg(name)}/preview`, { query, safe: true }, o)).data.fires;
  }

  /** Pauses a schedule: no tick fires until it is resumed (owner key). */
  async pauseSchedule(name: string, o?: RequestOptions): Promise<Schedule> {
    return (await this.#do("post", "/v1/schedules/{name}/pause", `/v1/schedules/${seg(name)}/pause`, { safe: false }, o)).data;
  }

  /** Resumes a schedule from its next tick after now (owner key). */
  async resumeSchedule(name: string, o?: RequestOptions): Promise<Schedule> {
    return (await this.#do("post", "/v1/schedules/{name}/resume", `/v1/schedules/${seg(name)}/resume`, { safe: false }, o)).data;
  }

  /** Lists an endpoint's event log newest first (each change of its circuit, pause, recovery and learned limits); since is an RFC 3339 time. */
  async endpointEvents(name: string, q: { since?: string; cursor?: string; limit?: number } = {}, o?: RequestOptions): Promise<EndpointEventList> {
    const p = params({ since: q.since, cursor: q.cursor, limit: q.limit === undefined ? undefined : String(q.limit) });
    return (await this.#do("get", "/v1/endpoints/{name}/events", `/v1/endpoints/${seg(name)}/events`, { query: p, safe: true }, o)).data;
  }

  /** Adds an alert sink (owner key); a webhook sink's answer carries its signing secret, this once (docs/alerts.md). */
  async createAlertSink(req: AlertSinkCreate, o?: RequestOptions): Promise<AlertSink> {
    return (await this.#do("post", "/v1/alerts/sinks", "/v1/alerts/sinks", { body: req, safe: false }, o)).data;
  }

  /** Lists the project's alert sinks (no secrets) and its alert thresholds. */
  async alertSinks(o?: RequestOptions): Promise<AlertSinkList> {
    return (await this.#do("get", "/v1/alerts/sinks", "/v1/alerts/sinks", { safe: true }, o)).data;
  }

  /** Deletes an alert sink and its alerts not sent yet. */
  async deleteAlertSink(name: string, o?: RequestOptions): Promise<void> {
    await this.#do("delete", "/v1/alerts/sinks/{name}", `/v1/alerts/sinks/${seg(name)}`, { safe: false }, o);
  }

  /** Queues a test alert for the sink, sent as any alert. */
  async testAlertSink(name: string, o?: RequestOptions): Promise<AlertTestResult> {
    // 202 Accepted: the typed answer of #do covers 200 and 201 only.
    return (await this.#do("post", "/v1/alerts/sinks/{name}/test", `/v1/alerts/sinks/${seg(name)}/test`, { safe: false }, o)).data as unknown as AlertTestResult;
  }

  /** Replaces the project's alert thresholds (every field). */
  async setAlertSettings(req: AlertSettings, o?: RequestOptions): Promise<AlertSettings> {
    return (await this.#do("put", "/v1/alerts/settings", "/v1/alerts/settings", { body: req, safe: false }, o)).data;
  }

  /** Lists the project's latest alert deliveries, newest first. */
  async alerts(q: { limit?: number } = {}, o?: RequestOptions): Promise<AlertDeliveryList> {
    const p = params({ limit: q.limit === undefined ? undefined : String(q.limit) });
    return (await this.#do("get", "/v1/alerts", "/v1/alerts", { query: p, safe: true }, o)).data;
  }

  /** Deletes a schedule and its ticks; the jobs it made stay (owner key). */
  async deleteSchedule(name: string, o?: RequestOptions): Promise<void> {
    await this.#do("delete", "/v1/schedules/{name}", `/v1/schedules/${seg(name)}`, { safe: false }, o);
  }

  /** Lists the project's runs newest first, without their steps; cursor is the previous page's nextCursor. */
  async listRuns(q: { cursor?: string; limit?: number } = {}, o?: RequestOptions): Promise<RunList> {
    const p = params({ cursor: q.cursor, limit: q.limit === undefined ? undefined : String(q.limit) });
    return (await this.#do("get", "/v1/runs", "/v1/runs", { query: p, safe: true }, o)).data;
  }

  /** Reads a run with its steps and counts. */
  async getRun(runId: number, o?: RequestOptions): Promise<Run> {
    return (await this.#do("get", "/v1/runs/{id}", `/v1/runs/${id(runId)}`, { safe: true }, o)).data;
  }

  /** Closes a run. */
  async finishRun(runId: number, o?: RequestOptions): Promise<Run> {
    return (await this.#do("post", "/v1/runs/{id}/finish", `/v1/runs/${id(runId)}/finish`, { safe: false }, o)).data;
  }

  /**
   * Stores a job. `created` is false when the idempotency key returned an
   * existing job. Retried on transient failures only when it carries an
   * idempotency key (in req, or in options.idempotencyKey, sent as the
   * Idempotency-Key header).
   */
  async enqueue(req: JobEnqueue, o?: RequestOptions & { idempotencyKey?: string }): Promise<{ job: Job; created: boolean }> {
    const headers: Record<string, string> = {};
    if (o?.idempotencyKey) headers["Idempotency-Key"] = o.idempotencyKey;
    const safe = Boolean(req.idempotencyKey || o?.idempotencyKey);
    const r = await this.#do("post", "/v1/jobs", "/v1/jobs", { body: req, headers, safe }, o);
    return { job: r.data, created: r.status === 201 };
  }

  /** Stores 1 to 1000 jobs in one transaction; retried only when every job carries an idempotency key. */
  async enqueueBatch(jobs: JobEnqueue[], o?: RequestOptions): Promise<JobBatchItem[]> {
    const safe = jobs.length > 0 && jobs.every((j) => Boolean(j.idempotencyKey));
    return (await this.#do("post", "/v1/jobs/batch", "/v1/jobs/batch", { body: { jobs }, safe }, o)).data.jobs;
  }

  /** Lists jobs newest first, or in filter.sort's order; pass nextCursor as filter.cursor (with the same sort) for the next page. */
  async listJobs(filter: JobFilter = {}, o?: RequestOptions): Promise<JobList> {
    return (await this.#do("get", "/v1/jobs", "/v1/jobs", { query: params(toQuery(filter)), safe: true }, o)).data;
  }

  /** Every job of a filter, page after page. */
  async *jobs(filter: JobFilter = {}, o?: RequestOptions): AsyncGenerator<Job> {
    let cursor = filter.cursor;
    for (;;) {
      const page = await this.listJobs({ ...filter, cursor }, o);
      yield* page.jobs;
      if (!page.nextCursor) return;
      cursor = page.nextCursor;
    }
  }

  /** Counts the jobs of a filter (its cursor and limit are ignored). A text search (`q` not a job id) counts within the newest 50,000 jobs of the other filters: a lower bound when older jobs exist (the answer's `capped`). */
  async countJobs(filter: JobFilter = {}, o?: RequestOptions): Promise<number> {
    const q = toQuery({ ...filter, cursor: undefined, limit: undefined });
    return (await this.#do("get", "/v1/jobs/count", "/v1/jobs/count", { query: params(q), safe: true }, o)).data.count;
  }

  /**
   * How many jobs are in each state, with the total: of the project, of one
   * endpoint, or of one tool ("name" or "name@version"). Without a tool the
   * server reads counters it keeps with every change of a job.
   */
  async jobCounts(filter: { endpoint?: string; tool?: string } = {}, o?: RequestOptions): Promise<JobCounts> {
    const p = new URLSearchParams();
    if (filter.endpoint) p.set("endpoint", filter.endpoint);
    if (filter.tool) p.set("tool", filter.tool);
    return (await this.#do("get", "/v1/jobs/counts", "/v1/jobs/counts", { query: p, safe: true }, o)).data;
  }

  /**
   * Cancels or replays every job of a filter (at most 1000). expectedCount
   * is the count the person confirmed (countJobs); when the selection holds
   * another count nothing is done and it rejects with 409.
   */
  async bulkJobs(action: "cancel" | "replay" | "run_now", filter: JobFilter, expectedCount: number, o?: RequestOptions): Promise<JobBulkResult> {
    const q = toQuery({ ...filter, cursor: undefined, limit: undefined });
    return (await this.#do("post", "/v1/jobs/bulk", "/v1/jobs/bulk", { body: { action, filter: q, expectedCount }, safe: false }, o)).data;
  }

  /** Cancels, replays or runs now (run_now: owner key) the jobs listed by id (1–1000). */
  async bulkJobIds(action: "cancel" | "replay" | "run_now", ids: number[], o?: RequestOptions): Promise<JobBulkResult> {
    return (await this.#do("post", "/v1/jobs/bulk", "/v1/jobs/bulk", { body: { action, ids, expectedCount: ids.length }, safe: false }, o)).data;
  }

  /** Makes a scheduled job due now (owner key); gates still apply and the attempt count stays. Rejects with 409 naming the state otherwise. */
  async runNow(jobId: number, o?: RequestOptions): Promise<Job> {
    return (await this.#do("post", "/v1/jobs/{id}/run-now", `/v1/jobs/${id(jobId)}/run-now`, { safe: false }, o)).data;
  }

  /** Reads a job with its attempts, payload and what holds it. */
  async getJob(jobId: number, o?: RequestOptions): Promise<Job> {
    return (await this.#do("get", "/v1/jobs/{id}", `/v1/jobs/${id(jobId)}`, { safe: true }, o)).data;
  }

  /** Says which gate holds a job. */
  async explainJob(jobId: number, o?: RequestOptions): Promise<Hold> {
    return (await this.#do("get", "/v1/jobs/{id}/explain", `/v1/jobs/${id(jobId)}/explain`, { safe: true }, o)).data;
  }

  /** Cancels a job: at once when scheduled, at the running attempt's end otherwise (its worker is told by the next heartbeat). */
  async cancelJob(jobId: number, o?: RequestOptions): Promise<Job> {
    return (await this.#do("post", "/v1/jobs/{id}/cancel", `/v1/jobs/${id(jobId)}/cancel`, { safe: false }, o)).data;
  }

  /** Replays a failed, exhausted or cancelled job as a new job. */
  async replayJob(jobId: number, o?: RequestOptions): Promise<Job> {
    return (await this.#do("post", "/v1/jobs/{id}/replay", `/v1/jobs/${id(jobId)}/replay`, { safe: false }, o)).data;
  }

  /** Leases due jobs; with waitMs it long-polls up to 30 s when none is due. */
  async claim(req: ClaimRequest, o?: RequestOptions): Promise<ClaimedJob[]> {
    const timeoutMs = o?.timeoutMs ?? this.#timeoutMs + (req.waitMs ?? 0);
    return (await this.#do("post", "/v1/claims", "/v1/claims", { body: req, safe: true, timeoutMs }, o)).data.jobs;
  }

  /** Extends a lease; the answer says whether the job's cancel was requested. A lost lease rejects with 409. */
  async heartbeat(jobId: number, leaseToken: string, o?: RequestOptions): Promise<HeartbeatResult> {
    return (await this.#do("post", "/v1/jobs/{id}/heartbeat", `/v1/jobs/${id(jobId)}/heartbeat`, { body: { leaseToken }, safe: true }, o)).data;
  }

  /** Reports the outcome of one attempt (report.jobId is required). A stale lease rejects with 409. */
  async report(report: Report & { jobId: number }, o?: RequestOptions): Promise<ReportResult> {
    const { jobId, ...body } = report;
    return (await this.#do("post", "/v1/jobs/{id}/report", `/v1/jobs/${id(jobId)}/report`, { body, safe: true }, o)).data;
  }

  /** Reports 1 to 1000 outcomes; each stands on its own (see each result's ok and error). */
  async reportBatch(reports: Report[], o?: RequestOptions): Promise<ReportBatchItem[]> {
    return (await this.#do("post", "/v1/reports", "/v1/reports", { body: { reports }, safe: true }, o)).data.results;
  }

  /** Per-endpoint live state, as the dashboard shows it. */
  async overview(o?: RequestOptions): Promise<Overview> {
    return (await this.#do("get", "/v1/overview", "/v1/overview", { safe: true }, o)).data;
  }

  /** Workers seen in the last 24 hours, latest activity first, with the running jobs each holds (owner key). */
  async workers(o?: RequestOptions): Promise<WorkerList> {
    return (await this.#do("get", "/v1/workers", "/v1/workers", { safe: true }, o)).data;
  }

  /** Per-minute claims, outcomes and due-to-claim lag of one endpoint (or every one) over the last hours (1–48, default 6). */
  async history(q: { endpoint?: string; hours?: number } = {}, o?: RequestOptions): Promise<History> {
    const query = new URLSearchParams();
    if (q.endpoint) query.set("endpoint", q.endpoint);
    if (q.hours !== undefined) query.set("hours", String(q.hours));
    return (await this.#do("get", "/v1/history", "/v1/history", { query, safe: true }, o)).data;
  }

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
  async *stream(
    q: { job: number } | ({ view: "overview" | "jobs" } & Omit<JobFilter, "cursor" | "limit">),
    o: { signal?: AbortSignal; silenceMs?: number } = {},
  ): AsyncGenerator<{ event: string; data: unknown }> {
    const query = "job" in q ? params({ job: id(q.job) }) : params({ view: q.view, ...toQuery(q) });
    const headers: Record<string, string> = { ...this.#headers, Accept: "text/event-stream" };
    if (this.#key) headers["Authorization"] = `Bearer ${this.#key}`;
    const ac = new AbortController();
    const onAbort = () => ac.abort(o.signal!.reason);
    o.signal?.addEventListener("abort", onAbort, { once: true });
    const silenceMs = o.silenceMs ?? 60_000;
    let silent = false;
    let watchdog: ReturnType<typeof setTimeout> | undefined;
    const wind = () => {
      clearTimeout(watchdog);
      watchdog = setTimeout(() => {
        silent = true;
        ac.abort();
      }, silenceMs);
    };
    const silence = () => new RatchetError({ status: 0, code: "timeout", message: `GET /v1/stream: nothing heard for ${silenceMs} ms, not even a ping` });
    wind();
    try {
      let resp: Response;
      try {
        resp = await this.#fetch(`${this.baseUrl}/v1/stream?${query}`, { method: "GET", headers, signal: ac.signal });
      } catch (err) {
        if (o.signal?.aborted) throw o.signal.reason;
        if (silent) throw silence();
        throw new RatchetError({ status: 0, code: "network", message: `GET /v1/stream: ${describe(err)}`, cause: err });
      }
      if (resp.status >= 400) throw errorOf(resp.status, await resp.text(), parseRetryAfter(resp.headers.get("Retry-After")));
      if (!resp.body) return;
      const decoder = new TextDecoder();
      const parser = new EventStreamParser();
      const reader = resp.body.getReader();
      try {
        for (;;) {
          let chunk: Awaited<ReturnType<typeof reader.read>>;
          try {
            chunk = await reader.read();
          } catch (err) {
            if (o.signal?.aborted) return;
            if (silent) throw silence();
            throw new RatchetError({ status: 0, code: "network", message: `GET /v1/stream: ${describe(err)}`, cause: err });
          }
          if (chunk.done) return;
          wind();
          let events: ServerEvent[];
          try {
            events = parser.push(decoder.decode(chunk.value, { stream: true }));
          } catch (err) {
            throw new RatchetError({ status: 0, code: "bad_stream", message: `GET /v1/stream: ${describe(err)}`, cause: err });
          }
          for (const e of events) {
            let data: unknown;
            try {
              data = e.data === "" ? undefined : JSON.parse(e.data);
            } catch (err) {
              throw new RatchetError({ status: 0, code: "bad_stream", message: `GET /v1/stream: event ${e.event} is not JSON: ${describe(err)}`, cause: err });
            }
            clearTimeout(watchdog); // the consumer's time is not silence
            yield { event: e.event, data };
            wind();
          }
        }
      } finally {
        ac.abort();
        reader.releaseLock();
      }
    } finally {
      clearTimeout(watchdog);
      o.signal?.removeEventListener("abort", onAbort);
    }
  }

  /** Moves the clock of a server started with --dev-clock; the answer carries the new now. */
  async advanceClock(advanceMs: number, o?: RequestOptions): Promise<ClockAdvance> {
    return (await this.#do("post", "/v1/dev/clock", "/v1/dev/clock", { body: { advanceMs }, safe: false }, o)).data;
  }

  /** Runs the contention simulator (no key needed; one sweep at a time, 503 while busy). */
  async simulate(config: SimulateConfig, o?: RequestOptions): Promise<SimulateResult> {
    return (await this.#do("post", "/api/simulate", "/api/simulate", { body: config, safe: false }, o)).data;
  }

  /** Liveness: the process serves HTTP ({ status: "ok" }). */
  async healthz(o?: RequestOptions): Promise<Health> {
    return (await this.#do("get", "/healthz", "/healthz", { safe: true }, o)).data;
  }

  /**
   * Readiness: whether the store answers. A 503 is an answer here, not an
   * error: it comes back as { status: "unavailable" } at once, unretried,
   * so a health check sees it.
   */
  async readyz(o?: RequestOptions): Promise<Readiness> {
    return (await this.#do("get", "/readyz", "/readyz", { safe: false, accept: [503] }, o)).data as Readiness;
  }

  /** The OpenAPI document the server serves. */
  async openapi(o?: RequestOptions): Promise<Record<string, unknown>> {
    return (await this.#do("get", "/openapi.json", "/openapi.json", { safe: true }, o)).data;
  }

  /** #do sends a call of the document: template names the route, so the body and answer types are the document's. */
  async #do<P extends keyof paths, M extends Method>(
    method: M,
    _template: P,
    path: string,
    call: Call<BodyOf<Op<P, M>>>,
    o?: RequestOptions,
  ): Promise<{ status: number; data: OkOf<Op<P, M>> }> {
    const r = await this.#send(method.toUpperCase(), path, call, o);
    return r as { status: number; data: OkOf<Op<P, M>> };
  }

  async #send<B>(method: string, path: string, call: Call<B>, o: RequestOptions = {}): Promise<{ status: number; data: unknown }> {
    const retry = o.retry ?? call.safe;
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.#once(method, path, call, o);
      } catch (err) {
        if (!retry || !(err instanceof RatchetError) || !err.isTransient || attempt >= this.#maxRetries) throw err;
        const wait = apiBackoff(attempt, err);
        if (wait > this.#maxRetryWaitMs) throw err;
        await sleep(wait, o.signal);
      }
    }
  }

  async #once<B>(method: string, path: string, call: Call<B>, o: RequestOptions): Promise<{ status: number; data: unknown }> {
    o.signal?.throwIfAborted();
    const timeoutMs = o.timeoutMs ?? call.timeoutMs ?? this.#timeoutMs;
    const ac = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      ac.abort();
    }, timeoutMs);
    const onAbort = () => ac.abort(o.signal!.reason);
    o.signal?.addEventListener("abort", onAbort, { once: true });
    const headers: Record<string, string> = { ...this.#headers, ...call.headers };
    if (this.#key) headers["Authorization"] = `Bearer ${this.#key}`;
    if (call.body !== undefined) headers["Content-Type"] = "application/json";
    const qs = call.query?.toString();
    const url = this.baseUrl + path + (qs ? `?${qs}` : "");
    const what = `${method} ${path}`;
    try {
      let status = 0;
      let text: string;
      let retryAfter: string | null = null;
      try {
        const a = await this.#transport(url, {
          method,
          headers,
          body: call.body === undefined ? undefined : JSON.stringify(call.body),
          signal: ac.signal,
        });
        status = a.status;
        retryAfter = a.retryAfter;
        text = a.text;
      } catch (err) {
        if (o.signal?.aborted) throw o.signal.reason;
        if (timedOut) {
          throw new RatchetError({ status: 0, code: "timeout", message: `${what}: no answer within ${timeoutMs} ms`, cause: err });
        }
        throw new RatchetError({ status: 0, code: "network", message: `${what}: ${describe(err)}`, cause: err });
      }
      if (status >= 400 && !call.accept?.includes(status)) throw errorOf(status, text, parseRetryAfter(retryAfter));
      if (call.text) return { status, data: text };
      if (text === "") return { status, data: undefined };
      try {
        return { status, data: JSON.parse(text) };
      } catch (err) {
        throw new RatchetError({ status, code: `http_${status}`, message: `${what}: the answer is not JSON: ${text.slice(0, 200)}`, cause: err });
      }
    } finally {
      clearTimeout(timer);
      o.signal?.removeEventListener("abort", onAbort);
    }
  }
}

function errorOf(status: number, text: string, retryAfterMs: number | undefined): RatchetError {
  try {
    const b = JSON.parse(text) as Partial<ErrorBody>;
    if (b && typeof b === "object" && b.error && typeof b.error.code === "string" && (b.error.code as string) !== "") {
      const e = b.error;
      return new RatchetError({ status, code: e.code, message: e.message, fields: e.fields, current: e.current, retryAfterMs });
    }
  } catch {
    // Not Ratchet's error shape (a proxy's page, say): keep its text.
  }
  return new RatchetError({ status, code: `http_${status}`, message: text.trim().slice(0, 1000) || `HTTP ${status}`, retryAfterMs });
}

/** describe names a fetch failure by its innermost cause ("connect ECONNREFUSED 127.0.0.1:1"). */
export function describe(err: unknown): string {
  let e: unknown = err;
  for (let i = 0; i < 5 && e instanceof Error && e.cause instanceof Error; i++) e = e.cause;
  if (e instanceof Error) return e.message || e.name;
  return String(e);
}
