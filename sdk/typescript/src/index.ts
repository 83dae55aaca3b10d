/**
 * The TypeScript SDK of Ratchet, the durable retry scheduler: a typed
 * client for every route of the HTTP API (types generated from
 * openapi.json) and a Worker that runs handlers for tool@version contracts.
 */
export { Client, describe, type ClientOptions, type JobFilter, type RequestOptions } from "./client.js";
export { RatchetError, parseHttpDate, parseRetryAfter, type ErrorCode } from "./errors.js";
export { EventStreamParser, MAX_EVENT_CHARS, type ServerComment, type ServerEvent } from "./sse.js";
export { apiBackoff, sleep } from "./backoff.js";
export {
  HEADERS_OF_INTEREST,
  MAX_HEADERS,
  MAX_HEADER_VALUE_LENGTH,
  JobAbortedError,
  PermanentError,
  ResponseError,
  RetryAfterError,
  checkResponse,
  errorKind,
  permanent,
  reportFromResponse,
  retryAfter,
  toOutcome,
  type AbortCause,
  type HeaderOptions,
  type Outcome,
} from "./outcome.js";
export { Worker, type Handler, type WorkerOptions } from "./worker.js";
export type * from "./types.js";
