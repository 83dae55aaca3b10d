// Package backoff is the arithmetic of Ratchet: retry policies, their
// validation and presets, the delay after a failed attempt, and the backoff
// calculator's schedules. It is pure: no I/O, no clock, no global randomness,
// and no dependencies outside the standard library. Callers pass the random
// sample in, so every result is reproducible.
//
// # Retry policies
//
// After failed attempt n (from 1), with jitter j percent and a sample u in
// [0, 1]:
//
//	base     = min(maxDelayMs, initialDelayMs × multiplier^(n−1))
//	jittered = round(base × (1 − j/100 + u × 2j/100))
//	selected = min(86_400_000, max(jittered, retryAfterMs or 0))
//
// Rounding is JavaScript's Math.round (half up). The cap applies before
// jitter, so a 600-second cap with 20 % jitter can select 720 seconds. A
// provider's retry-after hint is a floor that jitter never lowers. The
// 24-hour safety limit applies last. When n has used up maxAttempts there is
// no delay: the job is exhausted.
//
// The custom policy {maxAttempts 6, initialDelayMs 10000, multiplier 2,
// maxDelayMs 600000, jitterPercent 20} gives:
//
//	| Failed attempt | Base delay | Jitter range | Next execution |
//	|---|---|---|---|
//	| 1 | 10 seconds | 8–12 seconds | Attempt 2 |
//	| 2 | 20 seconds | 16–24 seconds | Attempt 3 |
//	| 3 | 40 seconds | 32–48 seconds | Attempt 4 |
//	| 4 | 80 seconds | 64–96 seconds | Attempt 5 |
//	| 5 | 160 seconds | 128–192 seconds | Attempt 6 |
//	| 6 | None | None | Exhausted; no automatic attempt 7 |
//	With zero jitter, those five waits total 310 seconds.
//
// A 60-second hint after attempt 1 is selected (60 s beats 8–12 s); after
// attempt 5 it loses to the 128–192-second normal delay.
//
// Validation accepts 1–10 attempts; an integer initial delay of
// 1,000–1,800,000 ms; a multiplier of 1–4; an integer maximum delay from the
// initial delay through 86,400,000 ms; and jitter of 0–50 %. Unknown fields
// are rejected, CUSTOM requires every field and the built-in presets forbid
// them. ParsePolicy reports every problem of a document at once, each naming
// the field, the value and what is allowed.
//
//	| Preset     | Total attempts | Initial delay | Multiplier | Cap before jitter | Jitter |
//	|------------|----------------|---------------|------------|-------------------|--------|
//	| STANDARD   | 5              | 30 seconds    | 2          | 15 minutes        | ±20%   |
//	| AGGRESSIVE | 8              | 5 seconds     | 2          | 5 minutes         | ±20%   |
//	| RELAXED    | 3              | 2 minutes     | 2          | 30 minutes        | ±20%   |
//
// # The backoff calculator
//
// Calculate lists the wait before each retry for a base delay, a multiplier
// ("factor") and a cap, with one of four jitter modes:
//
//	none          wait = min(cap, base × factor^attempt)
//	full          temp = min(cap, base × factor^attempt); wait = random(0, temp)
//	equal         temp = min(cap, base × factor^attempt); wait = temp/2 + random(0, temp/2)
//	decorrelated  wait = min(cap, random(base, previous × 3)), previous starts at base
//
// attempt starts at 0 (the first wait is the base) or at 1 (the first wait is
// base × factor, as in the simulator of the 2015 "Exponential Backoff And
// Jitter" study). random(min, max) is min + (max − min) × u with u in [0, 1)
// from Mulberry32(seed), one draw per retry in order. Each wait is rounded to
// 0.001 ms and the cumulative column adds the rounded waits. With the sample
// (base 1000 ms, factor 2, cap 30000 ms, 4 attempts) and full jitter, seed 1:
//
//	attempt 0, retry 1: 627.074 ms (cumulative 627.074 ms)
//	attempt 1, retry 2: 5.471 ms (cumulative 632.545 ms)
//	attempt 2, retry 3: 2109.788 ms (cumulative 2742.333 ms)
//	attempt 3, retry 4: 7848.408 ms (cumulative 10590.741 ms)
//
// Powers are computed by repeated multiplication rather than math.Pow so the
// browser page, which runs the same loop, agrees to the bit.
package backoff
