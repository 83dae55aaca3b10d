import { hostname } from "node:os";
import { apiBackoff, sleep } from "./backoff.js";
import { RatchetError } from "./errors.js";
import { JobAbortedError, permanent, reportFromResponse, toOutcome } from "./outcome.js";
const REPORT_KEYS = ["success", "httpStatus", "headers", "errorKind", "retryable", "retryAfterMs", "message"];
/** normalize turns what a handler resolved with into an outcome the API accepts. */
function normalize(r) {
    if (r === undefined || r === null)
        return { success: true };
    if (typeof Response !== "undefined" && r instanceof Response)
        return reportFromResponse(r);
    if (typeof r !== "object")
        return { success: true };
    const o = r;
    const out = {};
    for (const k of REPORT_KEYS)
        if (o[k] !== undefined)
            out[k] = o[k];
    return out;
}
const msg = (err) => (err instanceof Error ? err.message : String(err));
const codeStatus = { invalid_request: 400, unauthenticated: 401, forbidden: 403, not_found: 404, conflict: 409, unavailable: 503, internal: 500 };
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
    id;
    #c;
    #o;
    #handlers = new Map();
    #active = new Set();
    #stopAc = new AbortController();
    #free = 0;
    #slotWaiters = [];
    #stopping = false;
    #run;
    #graceTimer;
    #graceOver;
    #graceEnded = false;
    #graceP;
    #queue = [];
    #reporter;
    #reportDeadline = Infinity;
    constructor(client, options = {}) {
        this.#c = client;
        const concurrency = Math.max(1, Math.floor(options.concurrency ?? 4));
        this.id = options.id || `${hostname()}-${process.pid}`;
        this.#o = {
            concurrency,
            batch: Math.min(1000, Math.max(1, Math.floor(options.batch ?? concurrency))),
            claimers: Math.max(1, Math.floor(options.claimers ?? 1)),
            waitMs: Math.min(30_000, Math.max(0, Math.floor(options.waitMs ?? 10_000))),
            reportBatch: Math.min(1000, Math.max(1, Math.floor(options.reportBatch ?? 100))),
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
    handle(tool, handler) {
        this.#handlers.set(tool, handler);
        return this;
    }
    /** How many handlers run now. */
    get running() {
        return this.#active.size;
    }
    /**
     * Claims and runs jobs until stop() (or SIGTERM/SIGINT). Then it stops
     * claiming, lets running handlers finish within graceMs, sends their
     * reports and resolves. Calling it again returns the same promise.
     */
    run() {
        this.#run ??= this.#runLoop();
        return this.#run;
    }
    /**
     * Stops gracefully: no more claims; running handlers get graceMs (or
     * options.graceMs, if shorter than what is left) to finish. Resolves when
     * run() has finished.
     */
    stop(options = {}) {
        if (!this.#stopping) {
            this.#stopping = true;
            this.#stopAc.abort(new Error("the worker is stopping"));
            for (const w of this.#slotWaiters.splice(0))
                w();
            this.#graceTimer = setTimeout(() => this.#graceOver(), options.graceMs ?? this.#o.graceMs);
        }
        else if (options.graceMs !== undefined) {
            clearTimeout(this.#graceTimer);
            this.#graceTimer = setTimeout(() => this.#graceOver(), options.graceMs);
        }
        return this.#run ?? Promise.resolve();
    }
    #error(err) {
        if (this.#o.onError) {
            try {
                this.#o.onError(err);
            }
            catch {
                // an error reporter's own error is nobody's business
            }
        }
    }
    async #runLoop() {
        if (this.#handlers.size === 0)
            throw new Error("ratchet worker: no handlers registered");
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
        }
        finally {
            clearTimeout(this.#graceTimer);
            if (this.#o.handleSignals) {
                process.off("SIGTERM", onSignal);
                process.off("SIGINT", onSignal);
            }
        }
    }
    #release(n) {
        if (n <= 0)
            return;
        this.#free += n;
        for (const w of this.#slotWaiters.splice(0))
            w();
    }
    async #claimLoop(tools) {
        let failures = 0;
        while (!this.#stopping) {
            if (this.#free === 0) {
                await new Promise((resolve) => this.#slotWaiters.push(resolve));
                continue;
            }
            const max = Math.min(this.#free, this.#o.batch);
            this.#free -= max;
            let jobs;
            try {
                jobs = await this.#c.claim({ workerId: this.id, tools, max, waitMs: this.#o.waitMs }, { signal: this.#stopAc.signal, retry: false });
            }
            catch (err) {
                this.#release(max);
                if (this.#stopping)
                    break;
                this.#error(new Error(`claim: ${msg(err)}`, { cause: err }));
                await sleep(apiBackoff(failures++, err), this.#stopAc.signal).catch(() => { });
                continue;
            }
            failures = 0;
            this.#release(max - jobs.length);
            if (jobs.length > 0)
                this.#o.onClaimed?.(jobs);
            for (const j of jobs)
                this.#start(j);
        }
    }
    #start(job) {
        const a = { job, ac: new AbortController(), hb: new AbortController(), leaseLost: false, abandoned: false };
        this.#active.add(a);
        a.done = this.#runJob(a).finally(() => {
            this.#active.delete(a);
            this.#release(1);
        });
    }
    async #runJob(a) {
        const j = a.job;
        const handler = this.#handlers.get(`${j.tool}@${j.version}`);
        this.#heartbeat(a);
        let outcome;
        try {
            if (!handler)
                throw permanent(new Error(`no handler registered for ${j.tool}@${j.version}`));
            outcome = normalize(await handler(j, a.ac.signal));
        }
        catch (err) {
            outcome = toOutcome(err);
        }
        a.hb.abort();
        clearTimeout(a.timer);
        // A lost lease is not ours to report (the server refuses it anyway); an
        // abandoned handler's lease is left to expire.
        if (a.leaseLost || a.abandoned)
            return;
        const why = a.ac.signal.aborted ? a.ac.signal.reason : undefined;
        if (why instanceof JobAbortedError && why.kind === "shutdown" && !outcome.success) {
            // Released: the job goes back to its schedule now instead of when its
            // lease would expire; not a provider failure, so no error kind.
            outcome = { retryable: true, message: `released: the worker stopped before the handler finished (${outcome.message ?? "aborted"})`.slice(0, 1000) };
        }
        await this.#enqueueReport({ ...outcome, jobId: j.id, leaseToken: j.leaseToken });
    }
    /** #heartbeat extends a's lease every heartbeatFraction of it until the handler ends. */
    #heartbeat(a) {
        const j = a.job;
        const every = Math.max(100, Math.floor(j.timeoutMs * this.#o.heartbeatFraction));
        const tick = async () => {
            const started = Date.now();
            // One heartbeat, its retries included, must end before the lease would.
            const deadline = new AbortController();
            const t = setTimeout(() => deadline.abort(new Error(`heartbeat of job ${j.id} took longer than ${2 * every} ms`)), 2 * every);
            const onStop = () => deadline.abort(a.hb.signal.reason);
            a.hb.signal.addEventListener("abort", onStop, { once: true });
            try {
                const res = await this.#c.heartbeat(j.id, j.leaseToken, { signal: deadline.signal, timeoutMs: every });
                if (res.cancelRequested) {
                    a.ac.abort(new JobAbortedError("cancel_requested", `job ${j.id}: its cancel was requested`));
                    return; // the handler should end now; as the Go SDK, stop extending the lease
                }
            }
            catch (err) {
                if (a.hb.signal.aborted)
                    return;
                if (err instanceof RatchetError && (err.status === 409 || err.status === 404)) {
                    a.leaseLost = true;
                    a.ac.abort(new JobAbortedError("lease_lost", `job ${j.id}: the lease was lost (${err.message})`));
                    return;
                }
                this.#error(new Error(`heartbeat job ${j.id}: ${msg(err)}`, { cause: err }));
            }
            finally {
                clearTimeout(t);
                a.hb.signal.removeEventListener("abort", onStop);
            }
            if (!a.hb.signal.aborted)
                a.timer = setTimeout(tick, Math.max(0, every - (Date.now() - started)));
        };
        a.timer = setTimeout(tick, every);
    }
    #enqueueReport(report) {
        return new Promise((resolve) => {
            this.#queue.push({ report, resolve });
            this.#reporter ??= this.#reportLoop();
        });
    }
    async #reportLoop() {
        // Let reports that are ready in this turn join the first batch.
        await Promise.resolve();
        while (this.#queue.length > 0) {
            const batch = this.#queue.splice(0, this.#o.reportBatch);
            await this.#send(batch.map((p) => p.report));
            for (const p of batch)
                p.resolve();
        }
        this.#reporter = undefined; // synchronously with the empty check: no report is stranded
    }
    async #send(rs) {
        for (let attempt = 0;; attempt++) {
            try {
                const results = await this.#c.reportBatch(rs, { retry: false });
                for (const r of results) {
                    if (!r.ok && r.error)
                        this.#error(new Error(`report of job ${r.jobId} rejected: ${r.error.message}`, { cause: RatchetError.fromDetail(codeStatus[r.error.code] ?? 0, r.error) }));
                }
                this.#o.onReported?.(results, rs);
                return;
            }
            catch (err) {
                if (err instanceof RatchetError && !err.isTransient && err.status !== 500) {
                    this.#error(new Error(`reports rejected: ${msg(err)}`, { cause: err }));
                    return;
                }
                // The server is unreachable or unavailable: keep the reports and
                // retry; a lease that expires meanwhile is rescued server-side and
                // the late report is refused harmlessly.
                this.#error(new Error(`report: ${msg(err)}`, { cause: err }));
                const wait = apiBackoff(attempt, err);
                if (attempt >= 30 || Date.now() + wait > this.#reportDeadline)
                    return;
                await sleep(wait);
            }
        }
    }
    async #drain() {
        const all = () => Promise.all([...this.#active].map((a) => a.done));
        if (this.#active.size > 0 && !this.#graceEnded)
            await Promise.race([all(), this.#graceP]);
        if (this.#active.size > 0) {
            for (const a of this.#active) {
                a.ac.abort(new JobAbortedError("shutdown", `job ${a.job.id}: the worker stopped before the handler finished`));
            }
            await Promise.race([all(), sleep(this.#o.abortWaitMs)]);
            for (const a of this.#active) {
                a.abandoned = true;
                a.hb.abort();
                clearTimeout(a.timer);
            }
        }
        // Send what is queued; retry a failing server for at most 10 s more.
        this.#reportDeadline = Date.now() + 10_000;
        while (this.#reporter)
            await this.#reporter;
    }
}
