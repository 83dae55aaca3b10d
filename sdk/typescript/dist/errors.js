/**
 * An error of Ratchet's API: an error answer (status ≥ 400), or a request
 * that got no answer (status 0, code "network" or "timeout", the cause in
 * `cause`).
 */
export class RatchetError extends Error {
    name = "RatchetError";
    /** The HTTP status; 0 when no answer arrived. */
    status;
    /** invalid_request, unauthenticated, forbidden, not_found, conflict, unavailable, ...; "network" or "timeout" without an answer; http_NNN for an answer that is not Ratchet's error shape. */
    code;
    /** Every rejected field of an invalid request (400), else empty. */
    fields;
    /** The server's Retry-After in milliseconds (on 503 and 429), else undefined. */
    retryAfterMs;
    /** On a 409 for a stale expectedVersion: the endpoint as it is now. */
    current;
    constructor(init) {
        super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
        this.status = init.status;
        this.code = init.code;
        this.fields = init.fields ?? [];
        this.retryAfterMs = init.retryAfterMs;
        this.current = init.current ?? undefined;
    }
    /** The error of one item of a batch answer (e.g. a refused report). */
    static fromDetail(status, d) {
        return new RatchetError({ status, code: d.code, message: d.message, fields: d.fields, current: d.current });
    }
    /** A 409: a stale version, or a lease that is not the job's any more. */
    get isConflict() {
        return this.status === 409;
    }
    /** A 404. */
    get isNotFound() {
        return this.status === 404;
    }
    /**
     * Whether repeating the same request later may succeed: no answer, 429,
     * 502, 503 or 504.
     */
    get isTransient() {
        return this.status === 0 || this.status === 429 || this.status === 502 || this.status === 503 || this.status === 504;
    }
    toString() {
        return `RatchetError: ${this.status} ${this.code}: ${this.message}`;
    }
}
/**
 * parseRetryAfter reads a Retry-After header (delta-seconds or an HTTP
 * date) as milliseconds, at most one hour; undefined when absent or invalid.
 */
export function parseRetryAfter(value, now = Date.now()) {
    if (value == null)
        return undefined;
    const v = value.trim();
    if (v === "")
        return undefined;
    if (/^\d+$/.test(v))
        return Math.min(Number(v), 3600) * 1000;
    const t = Date.parse(v);
    if (Number.isNaN(t))
        return undefined;
    return t > now ? Math.min(t - now, 3_600_000) : undefined;
}
