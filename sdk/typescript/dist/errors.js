/**
 * An error of Ratchet's API: an error answer (status ≥ 400), or a request
 * that got no answer (status 0, code "network" or "timeout", the cause in
 * `cause`).
 */
export class RatchetError extends Error {
    name = "RatchetError";
    /** The HTTP status; 0 when no answer arrived. */
    status;
    /** invalid_request, unauthenticated, forbidden, not_found, conflict, unavailable, ...; "network" or "timeout" without an answer; "bad_stream" when a stream sent what is not an event stream of JSON; http_NNN for an answer that is not Ratchet's error shape. */
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
const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
const DAY = "(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)";
const LONG_DAY = "(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)";
const MON = `(${MONTHS.join("|")})`;
const IMF_FIXDATE = new RegExp(`^${DAY}, (\\d{2}) ${MON} (\\d{4}) (\\d{2}):(\\d{2}):(\\d{2}) GMT$`);
const RFC850 = new RegExp(`^${LONG_DAY}, (\\d{2})-${MON}-(\\d{2}) (\\d{2}):(\\d{2}):(\\d{2}) GMT$`);
const ASCTIME = new RegExp(`^${DAY} ${MON} ( \\d|\\d{2}) (\\d{2}):(\\d{2}):(\\d{2}) (\\d{4})$`);
/**
 * parseHttpDate reads an HTTP date in the three forms RFC 9110 names
 * (IMF-fixdate, RFC 850, asctime) as epoch milliseconds; undefined for
 * anything else — Date.parse would also take "May 5" or "1 apple".
 */
export function parseHttpDate(v) {
    // [day, month, year, hour, minute, second] as text
    let f;
    let x;
    if ((x = IMF_FIXDATE.exec(v))) {
        f = x.slice(1, 7);
    }
    else if ((x = RFC850.exec(v))) {
        f = x.slice(1, 7);
        const yy = Number(f[2]);
        f[2] = String(yy < 69 ? 2000 + yy : 1900 + yy);
    }
    else if ((x = ASCTIME.exec(v))) {
        const g = x.slice(1, 7);
        f = [g[1], g[0], g[5], g[2], g[3], g[4]];
    }
    else {
        return undefined;
    }
    const [day, mon, year, h, m, s] = f;
    const d = Number(day.trim()), hh = Number(h), mm = Number(m), ss = Number(s);
    if (d < 1 || hh > 23 || mm > 59 || ss > 59)
        return undefined;
    const t = Date.UTC(Number(year), MONTHS.indexOf(mon), d, hh, mm, ss);
    if (new Date(t).getUTCDate() !== d)
        return undefined; // 31 Feb
    return t;
}
/**
 * parseRetryAfter reads a Retry-After header (delta-seconds or an HTTP
 * date) as milliseconds, at most one hour; undefined when absent, invalid
 * or in the past.
 */
export function parseRetryAfter(value, now = Date.now()) {
    if (value == null)
        return undefined;
    const v = value.trim();
    if (v === "")
        return undefined;
    if (/^\d+$/.test(v))
        return Math.min(Number(v), 3600) * 1000;
    const t = parseHttpDate(v);
    if (t === undefined)
        return undefined;
    return t > now ? Math.min(t - now, 3_600_000) : undefined;
}
