import type { Client } from "./client.js";
import { type Outcome } from "./outcome.js";
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
 * shuts down past its grace period: pass it to fetch.
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
export declare class Worker {
    #private;
    readonly id: string;
    constructor(client: Client, options?: WorkerOptions);
    /** Registers the handler of a tool@version. */
    handle(tool: string, handler: Handler): this;
    /** How many handlers run now. */
    get running(): number;
    /**
     * Claims and runs jobs until stop() (or SIGTERM/SIGINT). Then it stops
     * claiming, lets running handlers finish within graceMs, sends their
     * reports and resolves. Calling it again returns the same promise.
     */
    run(): Promise<void>;
    /**
     * Stops gracefully: no more claims; running handlers get graceMs (or
     * options.graceMs, if shorter than what is left) to finish. Resolves when
     * run() has finished.
     */
    stop(options?: {
        graceMs?: number;
    }): Promise<void>;
}
