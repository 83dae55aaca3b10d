// Package classify decides what one attempt of a job means: succeeded, retry
// or fail; with which stable classification code; with which minimum wait
// (the hint backoff takes as a floor); and whether it counts toward the
// endpoint's circuit breaker. It is pure: no I/O, no clock (the caller passes
// now), no imports outside the standard library.
//
// The engine validates a worker's report with ValidateReport, calls Classify
// with it, and calls LeaseExpired when a lease runs out with no report.
//
// # Decision table
//
// Rules are tried in order; the first that matches decides the outcome, the
// code and the hint. The circuit column is computed separately (see below).
//
//	| #  | When                                          | Outcome   | Classification                  | Hint (RetryAfterMs)       |
//	|----|-----------------------------------------------|-----------|---------------------------------|---------------------------|
//	| 0  | Success, status 0 or 2xx                      | Succeeded | success                         | 0                         |
//	| 1a | Retryable = false                             | Fail      | worker_fail                     | 0                         |
//	| 1b | RetryAfterMs set (>= 0)                       | Retry     | worker_retry_after              | RetryAfterMs              |
//	| 1c | Retryable = true                              | Retry     | worker_retry                    | Retry-After if valid      |
//	| 2  | status 2xx (failure report)                   | Succeeded | success                         | 0                         |
//	| 3a | webhook-delivery: abort-message               | Fail      | webhook_abort                   | 0                         |
//	| 3b | Stripe-Should-Retry: false                    | Fail      | stripe_should_not_retry         | 0                         |
//	| 3c | Stripe-Should-Retry: true                     | Retry     | stripe_should_retry             | Retry-After if valid      |
//	| 3d | valid Retry-After (any non-2xx status, or 0)  | Retry     | retry_after                     | Retry-After               |
//	| 4  | 408                                           | Retry     | request_timeout                 | 0                         |
//	|    | 425                                           | Retry     | too_early                       | 0                         |
//	|    | 429                                           | Retry     | throttled                       | 0                         |
//	|    | 500, 502, 503, 504, other 5xx                 | Retry     | server_error                    | 0                         |
//	|    | 501                                           | Fail      | not_implemented                 | 0                         |
//	|    | 505                                           | Fail      | http_version_not_supported      | 0                         |
//	|    | 511                                           | Fail      | network_authentication_required | 0                         |
//	|    | 3xx                                           | Fail      | redirect                        | 0                         |
//	|    | other 4xx                                     | Fail      | client_error                    | 0                         |
//	|    | 1xx                                           | Fail      | unexpected_status               | 0                         |
//	| 5  | no status; error kind dns                     | Retry     | network_dns                     | 0                         |
//	|    | … connect / timeout / reset / tls / other     | Retry     | network_<kind>                  | 0                         |
//	| 6  | none of the above                             | Retry     | unknown                         | 0                         |
//	| —  | lease expired (LeaseExpired)                  | Retry     | timed_out                       | 0                         |
//
// "Valid Retry-After" means ParseRetryAfter accepts it; an invalid value is
// ignored, the rules fall through, and the Reason says it was ignored. A
// success report whose status is neither 0 nor 2xx is contradicted by the
// provider and goes through rules 1–6 as a failure ("the worker reported
// success but …"). When a status is present the error kind is not consulted.
//
// # Circuit
//
// CountsTowardCircuit is true only when the provider itself looked unhealthy,
// judged from what the provider did and never from the worker's decision (a
// worker that gives up on a 503 still saw a sick provider; one that insists on
// retrying a 404 did not):
//
//	| Provider did                                          | Counts |
//	|-------------------------------------------------------|--------|
//	| 408                                                   | yes    |
//	| 5xx other than 501, 505, 511 (the retryable ones)     | yes    |
//	| 503, with or without a valid Retry-After              | yes    |
//	| 2xx, 1xx, 3xx, 4xx other than 408 (so never 429)      | no     |
//	| no response: dns, connect, timeout, reset, tls        | yes    |
//	| no response: other, or no error kind                  | no     |
//	| lease expired (timed_out)                             | yes    |
//	| any Succeeded decision                                | no     |
//
// # Decisions where the design left room
//
//   - 2xx before headers. DESIGN.md lists headers before the status, but a
//     Retry-After or Stripe-Should-Retry on a 2xx answer has nothing to
//     retry, and retrying a request the provider accepted would repeat its
//     side effect. So a 2xx decides success before the headers are read, and
//     a failure report carrying a 2xx is a success unless the worker made an
//     explicit decision (rule 1), which still wins.
//   - Retry-After on a non-retryable status. The header wins, as DESIGN.md
//     orders it: a 403 or 400 with a valid Retry-After is retried with the
//     hint. Providers use exactly this to say "not now, later" (GitHub's
//     secondary rate limits answer 403 with Retry-After; RFC 9110 allows
//     Retry-After on 413 for a temporary condition). The retry is still
//     bounded by maxAttempts, and a 4xx never counts toward the circuit.
//     Stripe-Should-Retry: false and webhook-delivery: abort-message are
//     stronger than Retry-After and fail even when one is present.
//   - 503 with Retry-After counts toward the circuit. The hint says when to
//     come back, not that the provider is well: a provider answering every
//     call 503 with Retry-After is down, and before it counted the endpoint
//     stayed "closed, 0 failures" while its jobs spent their attempts. The
//     delay still honours the hint. A 429 is the throttle, and never counts.
//   - tls retries and counts. A failed handshake is usually the provider's
//     (expired certificate, broken chain) and gets fixed; retrying under
//     backoff while the open circuit holds claims means jobs do not burn their
//     attempts meanwhile. A worker that knows better says retryable: false.
//   - dns and reset count. The endpoint's name not resolving, or the provider
//     dropping connections, makes it as unreachable as a refused connect.
//   - other retries but does not count. The cause is unknown and may be the
//     worker's own bug, so it must not open the circuit for every worker, but
//     a durable scheduler prefers one more bounded attempt to dropping a job.
//   - A failure with nothing to go on (rule 6, "unknown") retries, not
//     counted, for the same reason.
//   - 425 Too Early retries (DESIGN.md) but does not count: it is the server
//     refusing early data, not a sick server.
//   - 1xx as a final status is a broken worker or proxy; it fails rather than
//     repeating the same bug, and is not counted.
//   - Both RetryAfterMs and Retryable = true: the explicit wait wins
//     (worker_retry_after). Retryable = false wins over RetryAfterMs.
//   - Hints are capped at MaxRetryAfterMs (24 h, backoff's safety limit on
//     any delay); the Reason says when a hint was capped.
//
// # Retry-After
//
// ParseRetryAfter accepts delta-seconds ("120") and the three HTTP-date forms
// of RFC 9110 §5.6.7:
//
//	IMF-fixdate  Sun, 06 Nov 1994 08:49:37 GMT
//	RFC 850      Sunday, 06-Nov-94 08:49:37 GMT
//	asctime      Sun Nov  6 08:49:37 1994
//
// A date at or before now is a wait of 0; a future date is rounded up to the
// millisecond. Fractional seconds ("1.5"), signs, lists ("120, 120") and
// empty values are invalid and ignored: RFC 9110 delta-seconds is 1*DIGIT,
// and a fraction could as well be milliseconds, so guessing is worse than
// falling through to the status rule. Huge values saturate at
// MaxRetryAfterMs instead of overflowing.
//
// # Headers
//
// Header names match case-insensitively. If a map holds the same name in
// several spellings, their values are joined by ", " in byte order of the
// spellings (so the result never depends on map order). Stripe-Should-Retry
// is "true" or "false" in any case, surrounded by optional spaces; any other
// value is ignored. webhook-delivery aborts when any of its comma-separated
// members is "abort-message" (any case).
//
// # Rate-limit headers
//
// ReadQuota reads what a provider said about its rate limit (a Quota:
// limit, window, requests left, time to the reset) from three header
// families, in this precedence: the IETF draft's RateLimit and
// RateLimit-Policy Structured Fields, the earlier draft's RateLimit-Limit,
// -Remaining and -Reset, and X-RateLimit-* (GitHub, X, Discord). It does
// not decide anything: the engine paces by it. Values it refuses are
// returned as reasons from the fixed QuotaIgnoreReasons set, and change
// nothing. A reset written as one number is delta-seconds below 10^9,
// epoch seconds below 10^12 and epoch milliseconds above:
//
//	| X-RateLimit-Reset | Read as                          | ResetMs at 2026-12-07 12:00:00 UTC |
//	|-------------------|----------------------------------|------------------------------------|
//	| 42                | delta-seconds                    | 42000                              |
//	| 1796644860        | epoch seconds: 12:01:00          | 60000                              |
//	| 1796644860.5      | epoch seconds with a fraction    | 60500                              |
//	| 1796644860000     | epoch milliseconds               | 60000                              |
//	| 1796644700        | epoch seconds, in the past       | 0                                  |
//	| 1828180800        | epoch seconds, a year away       | refused: reset_too_far             |
package classify
