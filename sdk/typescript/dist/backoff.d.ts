/**
 * apiBackoff is the wait in milliseconds before retry n (from 0) of a
 * failed call to Ratchet itself: full jitter, a uniform draw from 0 to
 * min(5 s, 100 ms × 2^n), so that workers that lost the server together do
 * not come back together; and never less than the Retry-After of a 503 or
 * 429. It is the Go SDK's apiBackoff.
 */
export declare function apiBackoff(n: number, err?: unknown, random?: () => number): number;
/** sleep resolves after ms, or rejects with the signal's reason when it aborts first. */
export declare function sleep(ms: number, signal?: AbortSignal): Promise<void>;
