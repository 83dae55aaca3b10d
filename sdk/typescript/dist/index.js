/**
 * The TypeScript SDK of Ratchet, the durable retry scheduler: a typed
 * client for every route of the HTTP API (types generated from
 * openapi.json) and a Worker that runs handlers for tool@version contracts.
 */
export { Client, describe } from "./client.js";
export { RatchetError, parseHttpDate, parseRetryAfter } from "./errors.js";
export { EventStreamParser, MAX_EVENT_CHARS } from "./sse.js";
export { apiBackoff, sleep } from "./backoff.js";
export { HEADERS_OF_INTEREST, JobAbortedError, PermanentError, ResponseError, RetryAfterError, checkResponse, errorKind, permanent, reportFromResponse, retryAfter, toOutcome, } from "./outcome.js";
export { Worker } from "./worker.js";
