import { RatchetError } from "./errors.js";

/**
 * apiBackoff is the wait in milliseconds before retry n (from 0) of a
 * failed call to Ratchet itself: full jitter, a uniform draw from 0 to
 * min(5 s, 100 ms × 2^n), so that workers that lost the server together do
 * not come back together; and never less than the Retry-After of a 503 or
 * 429. It is the Go SDK's apiBackoff.
 */
export function apiBackoff(n: number, err?: unknown, random: () => number = Math.random): number {
  const ceiling = Math.min(100 * 2 ** Math.min(n, 16), 5000);
  let d = Math.floor(random() * (ceiling + 1));
  if (err instanceof RatchetError && err.retryAfterMs !== undefined && err.retryAfterMs > d) {
    d = err.retryAfterMs;
  }
  return d;
}

/** sleep resolves after ms, or rejects with the signal's reason when it aborts first. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = () => {
      clearTimeout(t);
      reject(signal!.reason);
    };
    const t = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
