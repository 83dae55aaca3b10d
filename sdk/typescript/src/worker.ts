import { hostname } from "node:os";
import { apiBackoff, sleep } from "./backoff.js";
import type { Client } from "./client.js";
import { RatchetError } from "./errors.js";
import { JobAbortedError, type Outcome, permanent, reportFromResponse, toOutcome } from "./outcome.js";
import type { ClaimedJob, Report, ReportBatchItem } from "./types.js";

/**
 * A Handler runs one claimed job. Resolve with nothing for success, with an
 * Outcome to decide yourself (reportFromResponse builds one from a fetch
 * Response; a Response returned as it is is read the same way), or throw:
 * a ResponseError (checkResponse) carries the provider's status and
 * headers, permanent(err) fails the job at once, retryAfter(err, ms) asks
 * for a minimum wait, and any other error is classified by its network
 * kind (errorKind). `signal` aborts, with a JobAbortedError as its reason,
 * when the job's lease is lost, its cancel is requested, or the worker
 * shuts down past its grace period: pass it to fetch. Each job has a
 * signal of its own, never handed to another job.
 */
export type Handler = (job: ClaimedJob, signal: AbortSignal) => Promise<Outcome | Response | void> | Outcome | Response | void;

/** Options of a Worker; every one has a default. */
export interface WorkerOptions {
  /** Shown on attempts; default hostname-pid. */
  id?: string;
  /** Handlers running at once; default 4. */
  concurrency?: number;
  /** Most jobs per claim; default concurrency (at most 1000). */
  batch?: number;
  /** Claim requests in flight at once; default 1. More help only when batch is below concurrency. */
  claimers?: number;
  /** Long-poll wait of a claim when nothing is due; default 10000 ms (at most 30000). With 0, an empty claim is followed by a 100 ms pause. */
  waitMs?: number;
  /** Most reports per request; default 100 (at most 1000). */
  reportBatch?: number;
  /** Report requests in flight at once; default claimers. Reports that arrive while they are all busy wait and go in the next batch. */
  reporters?: number;
  /** Heartbeat every this fraction of the job's lease (timeoutMs); default 1/3, as the Go SDK. At least every 100 ms. */
  heartbeatFraction?: number;
  /**
   * On stop: how long running handlers may take to finish; default 30000
   * ms. Then their signals abort (reason "shutdown") and whatever they
   * return within abortWaitMs is reported as a retryable failure, so the
   * job is released for another worker without waiting for its lease.
   */
  graceMs?: number;
  /** After the grace period: how long aborted handlers may take to return; default 2000 ms. Handlers still running then are left: the worker stops heartbeating them and their leases expire (a timed_out attempt). */
  abortWaitMs?: number;
  /** Stop gracefully on SIGTERM and SIGINT while run() runs (a second signal skips the grace period); default true. */
  handleSignals?: boolean;
  /** Told about claim, heartbeat and report errors, which the worker retries by itself. */
  onError?: (err: unknown) => void;
  /** Told about each non-empty claim. */
  onClaimed?: (jobs: ClaimedJob[]) => void;
  /** Told about each acknowledged batch of reports, with the server's results in order. */
  onReported?: (results: ReportBatchItem[], reports: Report[]) => void;
}

interface Active {
  job: ClaimedJob;
  ac: AbortController;
  /** Set when the handler has ended: no more heartbeats. */
  hbStopped: boolean;
  /** The heartbeat in flight, if any, to abort when the handler ends. */
  hbCall?: AbortController;
  /** Heartbeat every this many ms; the next one is due at nextBeat (Date.now() ms), or in flight when 0. */
  every: number;
  nextBeat: number;
  leaseLost: boolean;
  abandoned: boolean;
  done?: Promise<void>;
}

interface Pending {
  report: Report;
  resolve: () => void;
}

const REPORT_KEYS = ["success", "httpStatus", "headers", "errorKind", "retryable", "retryAfterMs", "message"] as const;

/** normalize turns what a handler resolved with into an outcome the API accepts. */
function normalize(r: unknown): Outcome {
  if (r === undefined || r === null) return { success: true };
  if (typeof Response !== "undefined" && r instanceof Response) return reportFromResponse(r);
  if (typeof r !== "object") return { success: true };
  const o = r as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const k of REPORT_KEYS) if (o[k] !== undefined) out[k] = o[k];
  return out as Outcome;
}

/** The reason a heartbeat in flight is aborted with when its handler ends (made once: an abort without a reason builds a DOMException). */
const HANDLER_ENDED = new Error("the handler ended");

/** Resolution of the heartbeat ticker: a heartbeat goes out at most this late. */
const TICK_MS = 50;

const msg = (err: unknown) => (err instanceof Error ? err.message : String(err));

const codeStatus: Record<string, number> = { invalid_request: 400, unauthenticated: 401, forbidden: 403, not_found: 404, conflict: 409, unavailable: 503, internal: 500 };

/**
 * Worker claims jobs for its registered tools and runs their handlers:
 * claims in batches with long polls, at most `concurrency` at once,
 * heartbeats each running job at a fraction of its lease, and sends the
 * outcomes in batched reports.
 *
 *     const w = new Worker(client, { concurrency: 8 });
 *     w.handle("charge@1", async (job, signal) => reportFromResponse(await fetch(url, { signal })));
 *     await w.run(); // until SIGTERM/SIGINT or w.stop(); then drains
 */
export class Worker {
  readonly id: string;
  readonly #c: Client;
  readonly #o: Required<Omit<WorkerOptions, "id" | "onError" | "onClaimed" | "onReported">> & Pick<WorkerOptions, "onError" | "onClaimed" | "onReported">;
  readonly #handlers = new Map<string, Handler>();
  readonly #active = new Set<Active>();
  readonly #stopAc = new AbortController();
  #free = 0;
  #slotWaiters: (() => void)[] = [];
  #stopping = false;
  #run?: Promise<void>;
  #graceTimer?: NodeJS.Timeout;
  #graceOver?: () => void;
  #graceEnded = false;
  #graceP: Promise<void>;
  #ticker?: NodeJS.Timeout;
  #queue: Pending[] = [];
  #sending = 0;
  #idle?: Promise<void>;
  #idleResolve?: () => void;
  #reportDeadline = Infinity;

  constructor(client: Client, options: WorkerOptions = {}) {
    this.#c = client;
    const concurrency = Math.max(1, Math.floor(options.concurrency ?? 4));
    this.id = options.id || `${hostname()}-${process.pid}`;
    this.#o = {
      concurrency,
      batch: Math.min(1000, Math.max(1, Math.floor(options.batch ?? concurrency))),
      claimers: Math.max(1, Math.floor(options.claimers ?? 1)),
      waitMs: Math.min(30_000, Math.max(0, Math.floor(options.waitMs ?? 10_000))),
      reportBatch: Math.min(1000, Math.max(1, Math.floor(options.reportBatch ?? 100))),
      reporters: Math.max(1, Math.floor(options.reporters ?? options.claimers ?? 1)),
      heartbeatFraction: options.heartbeatFraction ?? 1 / 3,
      graceMs: options.graceMs ?? 30_000,
      abortWaitMs: options.abortWaitMs ?? 2_000,
      handleSignals: options.handleSignals ?? true,
      onError: options.onError,
      onClaimed: options.onClaimed,
      onReported: options.onReported,
    };
    this.#graceP = new Promise((resolve) => {
      this.#graceOver = () => {
        this.#graceEnded = true;
        resolve();
      };
    });
  }

  /** Registers the handler of a tool@version. */
  handle(tool: string, handler: Handler): this {
    this.#handlers.set(tool, handler);
    return this;
  }

  /** How many handlers run now. */
  get running(): number {
    return this.#active.size;
  }

  /**
   * Claims and runs jobs until stop() (or SIGTERM/SIGINT). Then it stops
   * claiming, lets running handlers finish within graceMs, sends their
   * reports and resolves. Calling it again returns the same promise.
   */
  run(): Promise<void> {
    this.#run ??= this.#runLoop();
    return this.#run;
  }

  /**
   * Stops gracefully: no more claims; running handlers get graceMs (or
   * options.graceMs, if shorter than what is left) to finish. Resolves when
   * run() has finished.
   */
  stop(options: { graceMs?: number } = {}): Promise<void> {
    if (!this.#stopping) {
      this.#stopping = true;
      this.#stopAc.abort(new Error("the worker is stopping"));
      for (const w of this.#slotWaiters.splice(0)) w();
      // unref: the grace period alone must not keep the process alive.
      this.#graceTimer = setTimeout(() => this.#graceOver!(), options.graceMs ?? this.#o.graceMs).unref();
    } else if (options.graceMs !== undefined && !this.#graceEnded) {
      clearTimeout(this.#graceTimer);
      this.#graceTimer = setTimeout(() => this.#graceOver!(), options.graceMs).unref();
    }
    return this.#run ?? Promise.resolve();
  }

  #error(err: unknown): void {
    if (this.#o.onError) {
      try {
        this.#o.onError(err);
      } catch {
        // an error reporter's own error is nobody's business
      }
    }
  }

  /** #hook calls a user's callback; what it throws goes to onError and changes nothing. */
  #hook<A extends unknown[]>(fn: (...args: A) => void, ...args: A): void {
    try {
      fn(...args);
    } catch (err) {
      this.#error(err);
    }
  }

  async #runLoop(): Promise<void> {
    if (this.#handlers.size === 0) throw new Error("ratchet worker: no handlers registered");
    const tools = [...this.#handlers.keys()];
    this.#free = this.#o.concurrency;
    const onSignal = () => void this.stop(this.#stopping ? { graceMs: 0 } : {});
    if (this.#o.handleSignals) {
      process.on("SIGTERM", onSignal);
      process.on("SIGINT", onSignal);
    }
    try {
      await Promise.all(Array.from({ length: this.#o.claimers }, () => this.#claimLoop(tools)));
      await this.#drain();
    } finally {
      clearTimeout(this.#graceTimer);
      clearInterval(this.#ticker);
      this.#ticker = undefined;
      if (this.#o.handleSignals) {
        process.off("SIGTERM", onSignal);
        process.off("SIGINT", onSignal);
      }
    }
  }

  #release(n: number): void {
    if (n <= 0) return;
    this.#free += n;
    for (const w of this.#slotWaiters.splice(0)) w();
  }

  async #claimLoop(tools: string[]): Promise<void> {
    let failures = 0;
    while (!this.#stopping) {
      if (this.#free === 0) {
        await new Promise<void>((resolve) => this.#slotWaiters.push(resolve));
        continue;
      }
      const max = Math.min(this.#free, this.#o.batch);
      this.#free -= max;
      let jobs: ClaimedJob[];
      try {
        jobs = await this.#c.claim({ workerId: this.id, tools, max, waitMs: this.#o.waitMs }, { signal: this.#stopAc.signal, retry: false });
      } catch (err) {
        this.#release(max);
        if (this.#stopping) break;
        this.#error(new Error(`claim: ${msg(err)}`, { cause: err }));
        await sleep(apiBackoff(failures++, err), this.#stopAc.signal).catch(() => {});
        continue;
      }
      failures = 0;
      this.#release(max - jobs.length);
      // Without a long poll an empty answer comes back at once: do not spin.
      if (jobs.length === 0 && this.#o.waitMs === 0) await sleep(100, this.#stopAc.signal).catch(() => {});
      if (jobs.length > 0 && this.#o.onClaimed) this.#hook(this.#o.onClaimed, jobs);
      for (const j of jobs) this.#start(j);
    }
  }

  #start(job: ClaimedJob): void {
    const every = Math.max(100, Math.floor(job.timeoutMs * this.#o.heartbeatFraction));
    const a: Active = { job, ac: new AbortController(), hbStopped: false, every, nextBeat: Date.now() + every, leaseLost: false, abandoned: false };
    this.#active.add(a);
    a.done = this.#runJob(a);
  }

  /** #runJob runs a's handler and reports its outcome; then a's slot is free again. */
  async #runJob(a: Active): Promise<void> {
    try {
      await this.#handleAndReport(a);
    } finally {
      this.#active.delete(a);
      this.#release(1);
    }
  }

  async #handleAndReport(a: Active): Promise<void> {
    const j = a.job;
    const handler = this.#handlers.get(`${j.tool}@${j.version}`);
    this.#ensureTicker();
    let outcome: Outcome;
    try {
      if (!handler) throw permanent(new Error(`no handler registered for ${j.tool}@${j.version}`));
      outcome = normalize(await handler(j, a.ac.signal));
    } catch (err) {
      outcome = toOutcome(err);
    }
    this.#stopHeartbeat(a);
    // A lost lease is not ours to report (the server refuses it anyway); an
    // abandoned handler's lease is left to expire.
    if (a.leaseLost || a.abandoned) return;
    const why = a.ac.signal.aborted ? a.ac.signal.reason : undefined;
    if (why instanceof JobAbortedError && why.kind === "shutdown" && !outcome.success) {
      // Released: the job goes back to its schedule now instead of when its
      // lease would expire; not a provider failure, so no error kind.
      outcome = { retryable: true, message: `released: the worker stopped before the handler finished (${outcome.message ?? "aborted"})`.slice(0, 1000) };
    }
    const report = outcome as Report;
    report.jobId = j.id;
    report.leaseToken = j.leaseToken;
    await this.#enqueueReport(report);
  }

  #stopHeartbeat(a: Active): void {
    a.hbStopped = true;
    a.hbCall?.abort(HANDLER_ENDED);
  }

  /**
   * #ensureTicker runs one timer for every running job's heartbeats while
   * any runs (cheaper than a timer per job when jobs are many and short):
   * each tick sends the heartbeats that are due.
   */
  #ensureTicker(): void {
    if (this.#ticker) return;
    this.#ticker = setInterval(() => {
      if (this.#active.size === 0) {
        clearInterval(this.#ticker);
        this.#ticker = undefined;
        return;
      }
      const now = Date.now();
      for (const a of this.#active) {
        if (!a.hbStopped && a.nextBeat !== 0 && a.nextBeat <= now) void this.#beat(a);
      }
    }, TICK_MS);
  }

  /** #beat sends one heartbeat of a and schedules the next. */
  async #beat(a: Active): Promise<void> {
    const j = a.job;
    const started = Date.now();
    a.nextBeat = 0;
    // One heartbeat, its retries included, must end before the lease would.
    const call = (a.hbCall = new AbortController());
    const t = setTimeout(() => call.abort(new Error(`heartbeat of job ${j.id} took longer than ${2 * a.every} ms`)), 2 * a.every);
    try {
      const res = await this.#c.heartbeat(j.id, j.leaseToken, { signal: call.signal, timeoutMs: a.every });
      // The handler ended meanwhile: the job is over, and its lease no longer matters.
      if (a.hbStopped) return;
      if (res.cancelRequested) {
        a.hbStopped = true; // as the Go SDK: the handler should end now; stop extending the lease
        a.ac.abort(new JobAbortedError("cancel_requested", `job ${j.id}: its cancel was requested`));
        return;
      }
    } catch (err) {
      if (a.hbStopped) return;
      if (err instanceof RatchetError && (err.status === 409 || err.status === 404)) {
        a.hbStopped = a.leaseLost = true;
        a.ac.abort(new JobAbortedError("lease_lost", `job ${j.id}: the lease was lost (${err.message})`));
        return;
      }
      this.#error(new Error(`heartbeat job ${j.id}: ${msg(err)}`, { cause: err }));
    } finally {
      clearTimeout(t);
      a.hbCall = undefined;
    }
    a.nextBeat = started + a.every;
  }

  #enqueueReport(report: Report): Promise<void> {
    return new Promise((resolve) => {
      this.#queue.push({ report, resolve });
      // Let reports that are ready in this turn join the same batch.
      if (this.#queue.length === 1) queueMicrotask(() => this.#pump());
    });
  }

  /** #pump starts report requests while reports wait and fewer than `reporters` are in flight. */
  #pump(): void {
    while (this.#queue.length > 0 && this.#sending < this.#o.reporters) {
      const batch = this.#queue.splice(0, this.#o.reportBatch);
      this.#sending++;
      void this.#send(batch.map((p) => p.report)).finally(() => {
        this.#sending--;
        for (const p of batch) p.resolve();
        this.#pump();
        if (this.#sending === 0 && this.#queue.length === 0) {
          this.#idleResolve?.();
          this.#idle = this.#idleResolve = undefined;
        }
      });
    }
  }

  /** #flushed resolves when no report waits or is in flight. */
  #flushed(): Promise<void> {
    if (this.#sending === 0 && this.#queue.length === 0) return Promise.resolve();
    this.#idle ??= new Promise((r) => (this.#idleResolve = r));
    return this.#idle;
  }

  async #send(rs: Report[]): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      try {
        const results = await this.#c.reportBatch(rs, { retry: false });
        for (const r of results) {
          if (!r.ok && r.error) this.#error(new Error(`report of job ${r.jobId} rejected: ${r.error.message}`, { cause: RatchetError.fromDetail(codeStatus[r.error.code] ?? 0, r.error) }));
        }
        if (this.#o.onReported) this.#hook(this.#o.onReported, results, rs);
        return;
      } catch (err) {
        if (err instanceof RatchetError && !err.isTransient && err.status !== 500) {
          this.#error(new Error(`reports rejected: ${msg(err)}`, { cause: err }));
          return;
        }
        // The server is unreachable or unavailable: keep the reports and
        // retry; a lease that expires meanwhile is rescued server-side and
        // the late report is refused harmlessly.
        this.#error(new Error(`report: ${msg(err)}`, { cause: err }));
        const wait = apiBackoff(attempt, err);
        if (attempt >= 30 || Date.now() + wait > this.#reportDeadline) return;
        await sleep(wait);
      }
    }
  }

  async #drain(): Promise<void> {
    const all = () => Promise.all([...this.#active].map((a) => a.done));
    if (this.#active.size > 0 && !this.#graceEnded) await Promise.race([all(), this.#graceP]);
    if (this.#active.size > 0) {
      for (const a of this.#active) {
        a.ac.abort(new JobAbortedError("shutdown", `job ${a.job.id}: the worker stopped before the handler finished`));
      }
      await Promise.race([all(), sleep(this.#o.abortWaitMs)]);
      for (const a of this.#active) {
        a.abandoned = true;
        this.#stopHeartbeat(a);
      }
    }
    // Send what is queued; retry a failing server for at most 10 s more.
    this.#reportDeadline = Date.now() + 10_000;
    await this.#flushed();
  }
}
