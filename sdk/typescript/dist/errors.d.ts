import type { Endpoint, ErrorDetail, FieldError } from "./types.js";
/** The code of an error answer, or of a failure to get one. */
export type ErrorCode = ErrorDetail["code"] | "network" | "timeout" | "bad_stream" | `http_${number}`;
/**
 * An error of Ratchet's API: an error answer (status ≥ 400), or a request
 * that got no answer (status 0, code "network" or "timeout", the cause in
 * `cause`).
 */
export declare class RatchetError extends Error {
    name: string;
    /** The HTTP status; 0 when no answer arrived. */
    readonly status: number;
    /** invalid_request, unauthenticated, forbidden, not_found, conflict, unavailable, ...; "network" or "timeout" without an answer; "bad_stream" when a stream sent what is not an event stream of JSON; http_NNN for an answer that is not Ratchet's error shape. */
    readonly code: ErrorCode;
    /** Every rejected field of an invalid request (400), else empty. */
    readonly fields: FieldError[];
    /** The server's Retry-After in milliseconds (on 503 and 429), else undefined. */
    readonly retryAfterMs: number | undefined;
    /** On a 409 for a stale expectedVersion: the endpoint as it is now. */
    readonly current: Endpoint | undefined;
    constructor(init: {
        status: number;
        code: ErrorCode;
        message: string;
        fields?: FieldError[] | undefined;
        retryAfterMs?: number | undefined;
        current?: Endpoint | null | undefined;
        cause?: unknown;
    });
    /** The error of one item of a batch answer (e.g. a refused report). */
    static fromDetail(status: number, d: ErrorDetail): RatchetError;
    /** A 409: a stale version, or a lease that is not the job's any more. */
    get isConflict(): boolean;
    /** A 404. */
    get isNotFound(): boolean;
    /**
     * Whether repeating the same request later may succeed: no answer, 429,
     * 502, 503 or 504.
     */
    get isTransient(): boolean;
    toString(): string;
}
/**
 * parseHttpDate reads an HTTP date in the three forms RFC 9110 names
 * (IMF-fixdate, RFC 850, asctime) as epoch milliseconds; undefined for
 * anything else — Date.parse would also take "May 5" or "1 apple".
 */
export declare function parseHttpDate(v: string): number | undefined;
/**
 * parseRetryAfter reads a Retry-After header (delta-seconds or an HTTP
 * date) as milliseconds, at most one hour; undefined when absent, invalid
 * or in the past.
 */
export declare function parseRetryAfter(value: string | null | undefined, now?: number): number | undefined;
