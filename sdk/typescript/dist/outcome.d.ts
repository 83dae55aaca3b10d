import type { ErrorKind, Report } from "./types.js";
/**
 * What a handler's attempt came to: a report without its job id and lease
 * token, which the worker adds. Return one from a handler (or throw; see
 * toOutcome) to decide yourself.
 */
export type Outcome = Omit<Report, "jobId" | "leaseToken">;
/** Why the worker aborted a handler's signal. */
export type AbortCause = "lease_lost" | "cancel_requested" | "shutdown";
/**
 * JobAbortedError is the reason of a handler's AbortSignal: the job's lease
 * was lost (a heartbeat answered 409: the server rescued or re-leased it),
 * its cancel was requested, or the worker is shutting down past its grace
 * period. Its name is "AbortError", so code that checks for aborts sees one.
 */
export declare class JobAbortedError extends Error {
    /** Why: lease_lost, cancel_requested or shutdown. */
    readonly kind: AbortCause;
    name: string;
    constructor(
    /** Why: lease_lost, cancel_requested or shutdown. */
    kind: AbortCause, message: string);
}
/**
 * ResponseError is a failed provider answer with what Ratchet needs to
 * classify it: the status and the provider's headers, untouched. Throw it
 * from a handler (checkResponse does) or build it with fromResponse.
 */
export declare class ResponseError extends Error {
    readonly status: number;
    readonly headers: Record<string, string>;
    name: string;
    constructor(status: number, headers?: Record<string, string>, message?: string);
    /** fromResponse builds a ResponseError from a fetch Response (its body is not read). */
    static fromResponse(resp: Response, options?: HeaderOptions): ResponseError;
}
/** Which provider headers go to Ratchet. */
export interface HeaderOptions {
    /**
     * "all" sends every header of the answer (but Set-Cookie); a list sends
     * those names. Default: the headers Ratchet's classification reads —
     * Retry-After, Stripe-Should-Retry, webhook-delivery, X-RateLimit-Reset,
     * RateLimit-Reset — as the Go SDK does.
     */
    headers?: "all" | readonly string[];
}
/** The headers Ratchet's classification reads (and the Go SDK passes on). */
export declare const HEADERS_OF_INTEREST: readonly string[];
/**
 * reportFromResponse builds the outcome of an attempt from a provider's
 * fetch Response: a 2xx is a success; any other status is a failure
 * carrying the status and the provider's headers (Retry-After and the
 * others, untouched), which Ratchet classifies. The body is not read.
 *
 *     return reportFromResponse(await fetch(url, { signal }));
 */
export declare function reportFromResponse(resp: Response, options?: HeaderOptions): Outcome;
/** checkResponse throws a ResponseError for an answer that is not 2xx and returns the response otherwise. */
export declare function checkResponse(resp: Response, options?: HeaderOptions): Response;
/** PermanentError marks a failure as not retryable (permanent(err)). */
export declare class PermanentError extends Error {
    name: string;
    constructor(cause: unknown);
}
/** RetryAfterError asks for the next attempt no sooner than retryAfterMs (retryAfter(err, ms)). */
export declare class RetryAfterError extends Error {
    readonly retryAfterMs: number;
    name: string;
    constructor(cause: unknown, retryAfterMs: number);
}
/** permanent marks an error as not retryable: the job fails at once. */
export declare function permanent(err: unknown): PermanentError;
/** retryAfter asks for the next attempt no sooner than ms (the policy's delay still applies when it is longer). */
export declare function retryAfter(err: unknown, ms: number): RetryAfterError;
/**
 * errorKind names the kind of a network error without a response: dns,
 * connect, timeout, reset, tls or other. It reads Node's error codes
 * through the error's causes (fetch wraps them in TypeError "fetch
 * failed"): ENOTFOUND and EAI_* are dns; ECONNREFUSED, EHOSTUNREACH,
 * ENETUNREACH are connect; ETIMEDOUT, UND_ERR_*_TIMEOUT and a TimeoutError
 * (AbortSignal.timeout) are timeout; ECONNRESET, EPIPE, UND_ERR_SOCKET are
 * reset; CERT_*, ERR_TLS_*, ERR_SSL_* and the self-signed ones are tls.
 * Anything else, a plain AbortError included, is other. Checked in the Go
 * SDK's order: dns, tls, reset, timeout, connect.
 */
export declare function errorKind(err: unknown): ErrorKind;
/**
 * toOutcome maps what a handler threw to an outcome, as the Go SDK's
 * ToReport does: the explicit decision of permanent and retryAfter, the
 * status and headers of a ResponseError, otherwise the kind of a network
 * error. Markers are found anywhere in the cause chain, so
 * permanent(new ResponseError(400)) carries both.
 */
export declare function toOutcome(err: unknown): Outcome;
