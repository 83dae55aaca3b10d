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
export class JobAbortedError extends Error {
  override name = "AbortError";
  constructor(
    /** Why: lease_lost, cancel_requested or shutdown. */
    readonly kind: AbortCause,
    message: string,
  ) {
    super(message);
  }
}

/**
 * ResponseError is a failed provider answer with what Ratchet needs to
 * classify it: the status and the provider's headers, untouched. Throw it
 * from a handler (checkResponse does) or build it with fromResponse.
 */
export class ResponseError extends Error {
  override name = "ResponseError";
  constructor(
    readonly status: number,
    readonly headers: Record<string, string> = {},
    message?: string,
  ) {
    super(message ?? `provider answered ${status}`);
  }

  /** fromResponse builds a ResponseError from a fetch Response (its body is not read). */
  static fromResponse(resp: Response, options?: HeaderOptions): ResponseError {
    return new ResponseError(resp.status, pickHeaders(resp.headers, options), `provider answered ${resp.status}${resp.statusText ? ` ${resp.statusText}` : ""}`);
  }
}

/** Which provider headers go to Ratchet. */
export interface HeaderOptions {
  /**
   * "all" sends every header of the answer (but Set-Cookie), at most
   * MAX_HEADERS of them; a list sends those names. Default: the headers
   * Ratchet reads — Retry-After, Stripe-Should-Retry, webhook-delivery and
   * the rate-limit headers (RateLimit, RateLimit-Policy, RateLimit-*,
   * X-RateLimit-*) — as the Go and Python SDKs do.
   */
  headers?: "all" | readonly string[];
}

/**
 * The headers Ratchet reads (and the Go and Python SDKs pass on): those its
 * classification reads and the rate-limit headers it learns a provider's
 * limit from (docs/errors.md, "Rate-limit headers Ratchet reads").
 */
export const HEADERS_OF_INTEREST: readonly string[] = [
  "Retry-After", "Stripe-Should-Retry", "webhook-delivery",
  "RateLimit", "RateLimit-Policy", "RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset",
  "X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "X-RateLimit-Reset-After",
  "X-Rate-Limit-Limit", "X-Rate-Limit-Remaining", "X-Rate-Limit-Reset",
];

/** The most headers an outcome carries. */
export const MAX_HEADERS = 64;

/**
 * The longest header value an outcome carries: one character over the
 * 8 KiB Ratchet reads, so a longer value is refused there as too large
 * rather than read cut short.
 */
export const MAX_HEADER_VALUE_LENGTH = 8192 + 1;

function pickHeaders(h: Headers, options?: HeaderOptions): Record<string, string> {
  const out: Record<string, string> = {};
  let n = 0;
  const keep = (name: string, value: string) => {
    if (n >= MAX_HEADERS) return;
    out[name] = value.slice(0, MAX_HEADER_VALUE_LENGTH);
    n++;
  };
  const which = options?.headers ?? HEADERS_OF_INTEREST;
  if (which === "all") {
    h.forEach((value, name) => {
      if (name !== "set-cookie") keep(name, value);
    });
    return out;
  }
  for (const name of which) {
    const v = h.get(name); // several values come joined by ", ", as Ratchet expects
    if (v !== null) keep(name, v);
  }
  return out;
}

/**
 * reportFromResponse builds the outcome of an attempt from a provider's
 * fetch Response: a 2xx is a success, carrying the rate-limit headers when
 * the provider sent some; any other status is a failure carrying the
 * status and the provider's headers (Retry-After and the others,
 * untouched), which Ratchet classifies. The body is not read.
 *
 *     return reportFromResponse(await fetch(url, { signal }));
 */
export function reportFromResponse(resp: Response, options?: HeaderOptions): Outcome {
  if (resp.status >= 200 && resp.status <= 299) {
    const headers = pickHeaders(resp.headers, options);
    return Object.keys(headers).length > 0 ? { success: true, httpStatus: resp.status, headers } : { success: true, httpStatus: resp.status };
  }
  return toOutcome(ResponseError.fromResponse(resp, options));
}

/** checkResponse throws a ResponseError for an answer that is not 2xx and returns the response otherwise. */
export function checkResponse(resp: Response, options?: HeaderOptions): Response {
  if (resp.status >= 200 && resp.status <= 299) return resp;
  throw ResponseError.fromResponse(resp, options);
}

/** PermanentError marks a failure as not retryable (permanent(err)). */
export class PermanentError extends Error {
  override name = "PermanentError";
  constructor(cause: unknown) {
    super(messageOf(cause), { cause });
  }
}

/** RetryAfterError asks for the next attempt no sooner than retryAfterMs (retryAfter(err, ms)). */
export class RetryAfterError extends Error {
  override name = "RetryAfterError";
  constructor(
    cause: unknown,
    readonly retryAfterMs: number,
  ) {
    super(messageOf(cause), { cause });
  }
}

/** permanent marks an error as not retryable: the job fails at once. */
export function permanent(err: unknown): PermanentError {
  return new PermanentError(err);
}

/** retryAfter asks for the next attempt no sooner than ms (the policy's delay still applies when it is longer). */
export function retryAfter(err: unknown, ms: number): RetryAfterError {
  return new RetryAfterError(err, ms);
}

function messageOf(err: unknown): string {
  if (err instanceof Error) return err.message;
  return String(err);
}

/** chain lists an error and its causes (and an AggregateError's errors), outermost first. */
function chain(err: unknown): unknown[] {
  const out: unknown[] = [];
  const queue: unknown[] = [err];
  while (queue.length > 0 && out.length < 32) {
    const e = queue.shift();
    if (e == null || out.includes(e)) continue;
    out.push(e);
    if (typeof e === "object") {
      const o = e as { cause?: unknown; errors?: unknown };
      if (o.cause !== undefined) queue.push(o.cause);
      if (Array.isArray(o.errors)) queue.push(...o.errors);
    }
  }
  return out;
}

const DNS = new Set(["ENOTFOUND", "EAI_AGAIN", "EAI_NONAME", "EAI_FAIL", "EAI_NODATA", "EAI_ADDRFAMILY", "ENODATA", "ESERVFAIL"]);
const RESET = new Set(["ECONNRESET", "EPIPE", "ECONNABORTED", "UND_ERR_SOCKET", "UND_ERR_CLOSED", "ERR_STREAM_PREMATURE_CLOSE", "ERR_HTTP2_STREAM_ERROR", "ERR_HTTP2_SESSION_ERROR"]);
const TIMEOUT = new Set(["ETIMEDOUT", "ESOCKETTIMEDOUT", "UND_ERR_CONNECT_TIMEOUT", "UND_ERR_HEADERS_TIMEOUT", "UND_ERR_BODY_TIMEOUT", "ERR_SOCKET_CONNECTION_TIMEOUT"]);
const CONNECT = new Set(["ECONNREFUSED", "EHOSTUNREACH", "ENETUNREACH", "EHOSTDOWN", "ENETDOWN", "EADDRNOTAVAIL", "EADDRINUSE", "UND_ERR_CONNECT"]);

function isTLS(code: string): boolean {
  return (
    code.startsWith("ERR_TLS_") ||
    code.startsWith("ERR_SSL_") ||
    code.startsWith("CERT_") ||
    code.includes("_CERT") ||
    code === "EPROTO" ||
    code === "DEPTH_ZERO_SELF_SIGNED_CERT" ||
    code === "SELF_SIGNED_CERT_IN_CHAIN" ||
    code === "UNABLE_TO_VERIFY_LEAF_SIGNATURE" ||
    code === "HOSTNAME_MISMATCH" ||
    code === "ERR_TLS_CERT_ALTNAME_INVALID"
  );
}

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
export function errorKind(err: unknown): ErrorKind {
  const codes: string[] = [];
  const names: string[] = [];
  for (const e of chain(err)) {
    if (typeof e !== "object" || e === null) continue;
    const o = e as { code?: unknown; name?: unknown };
    if (typeof o.code === "string") codes.push(o.code);
    if (typeof o.name === "string") names.push(o.name);
  }
  if (codes.some((c) => DNS.has(c))) return "dns";
  if (codes.some(isTLS)) return "tls";
  if (codes.some((c) => RESET.has(c))) return "reset";
  if (codes.some((c) => TIMEOUT.has(c)) || names.includes("TimeoutError")) return "timeout";
  if (codes.some((c) => CONNECT.has(c))) return "connect";
  return "other";
}

/**
 * toOutcome maps what a handler threw to an outcome, as the Go SDK's
 * ToReport does: the explicit decision of permanent and retryAfter, the
 * status and headers of a ResponseError, otherwise the kind of a network
 * error. Markers are found anywhere in the cause chain, so
 * permanent(new ResponseError(400)) carries both.
 */
export function toOutcome(err: unknown): Outcome {
  const out: Outcome = { message: messageOf(err).slice(0, 1000) };
  const all = chain(err);
  if (all.some((e) => e instanceof PermanentError)) out.retryable = false;
  const ra = all.find((e): e is RetryAfterError => e instanceof RetryAfterError);
  if (ra) out.retryAfterMs = Math.max(0, Math.round(ra.retryAfterMs));
  const re = all.find((e): e is ResponseError => e instanceof ResponseError);
  if (re) {
    out.httpStatus = re.status;
    if (Object.keys(re.headers).length > 0) out.headers = { ...re.headers };
    return out;
  }
  out.errorKind = errorKind(err);
  return out;
}
