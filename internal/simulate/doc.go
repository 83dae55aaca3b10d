// Package simulate is Ratchet's contention simulator: it rebuilds the
// experiment of "Exponential Backoff And Jitter" by Marc Brooker (AWS
// Architecture Blog, 4 March 2015) and lets the same experiment run on
// Ratchet retry policies and backoff calculator settings. It is pure: no
// I/O, no clock, no global randomness; it imports only the backoff package.
//
// # The model
//
// N clients start together at time 0 and each wants to update one row once,
// with optimistic concurrency. A try is four network hops, each taking
// |Normal(10 ms, 2 ms)|: the read reaches the resource (which notes the
// row's version), the reply comes back, the write goes out, and the write's
// answer comes back. The write succeeds only if nobody wrote since this
// client's read. A client whose write failed draws the hop of its next read,
// waits its backoff and tries again. This is the study's simulator step for
// step, including its first exponential wait of 10 ms (the exponent starts at
// 1 with multiplier 2, base 5 ms, cap 2000 ms):
//
//	none          wait = 0
//	exponential   wait = min(cap, base × 2^n)                 n = failed tries, from 1
//	full          wait = random(0, min(cap, base × 2^n))
//	equal         wait = v/2 + random(0, v/2), v = min(cap, base × 2^n)
//	decorrelated  wait = min(cap, random(base, previous × 3)), previous from base
//	policy        wait = the Ratchet policy's selected delay (seed 000 formula); gives up when exhausted
//	calc          wait = row n of the calculator's schedule for the client's seed; gives up after the last row
//
// The simulation is discrete-event: a heap holds, per client, the moment its
// next write reaches the resource. Reads need no event of their own (a write
// succeeds exactly when no write succeeded since its read), so a try costs one
// heap operation; a test checks that this agrees exactly with a literal port
// of the study's four-event simulator. Policy delays are milliseconds like
// everything else, so a STANDARD policy's 30-second first wait is a what-if
// at that scale, not a claim about production.
//
// Randomness is splitmix64, one stream per client seeded from (seed, number
// of clients, run, client), and normal draws by Marsaglia's polar method with
// a logarithm written in basic IEEE operations, so a seed gives the same
// result on every machine and for any number of goroutines. Modes share the
// streams (common random numbers). Sweep spreads the runs over all CPUs.
//
// # Beyond the study
//
// Budget is a retry token bucket like the AWS SDKs' retry quota (500 tokens,
// 5 per retry, 1 back per success), shared by the run's clients as requests
// through one SDK client would share it. When a retry would overdraw it, the
// retry is refused: the client gives up, counts in Failed, and its time is
// when its last answer arrived. Tokens are taken when the resource answers.
// It cuts work sharply at high contention, at the price of failed clients.
//
// RetryAfter makes the resource, when more than Overload writes reached it in
// the last WindowMs, answer a conflict with "come back in Ms milliseconds".
// Clients honour the hint as a floor, as Ratchet does: wait = max(backoff,
// hint). A fixed hint is not jittered, so clients that honour it come back
// together: it trades time for work and brings back some of the
// synchronisation jitter removes.
//
// # Reading the result
//
// Each Point gives, over Config.Runs runs: Calls, the writes the resource
// served (the work); TimeMs, when the last client finished; the 50th, 90th
// and 99th percentiles of one client's calls and finishing time (per run,
// averaged); and Failed. Stat carries the mean, the standard deviation and
// the 5th and 95th percentiles over runs; the standard error of a mean is
// Sd/√Runs. The default sweep, 10 to 190 clients, 100 runs, seed 1:
//
//	| clients | mode         | calls (mean ± sd) | time ms (mean ± sd) |
//	|---------|--------------|-------------------|---------------------|
//	|      50 | none         |     692.5 ±  17.6 |     1,137 ±     44  |
//	|      50 | exponential  |     629.0 ±  34.1 |    36,993 ±  3,620  |
//	|      50 | full         |     332.6 ±   5.1 |     2,890 ±    536  |
//	|      50 | equal        |     347.3 ±   6.8 |     4,155 ±    563  |
//	|      50 | decorrelated |     375.0 ±  13.2 |     2,155 ±    448  |
//	|     190 | full         |   1,773.8 ±  12.6 |     7,483 ±    556  |
//	|     190 | equal        |   1,762.3 ±  11.6 |     9,512 ±    592  |
//	|     190 | decorrelated |   2,436.8 ±  62.5 |     8,026 ±    978  |
//
// The study's orderings hold: exponential backoff without jitter is the
// clear loser, doing more work than every jittered mode and taking ten times
// as long; equal jitter does slightly more work than full jitter and takes
// longer; full jitter does less work than decorrelated but takes slightly
// more time; and in every mode the calls per client still grow with the
// number of clients (no backoff does the most work but finishes first, since
// it never waits). Two of these are claims about the study's range of
// clients. Past about 150 clients the 2000 ms cap binds for most retries:
// equal jitter's capped waits average 1500 ms against full jitter's 1000, so
// it thins the contention enough to do slightly less work than full, and
// decorrelated jitter, whose waits stay long once they reach the cap,
// finishes before full. TestStudyOrdering checks each ordering, and these
// reversals, by more than three standard errors.//
// # Recovery
//
// SimulateRecovery is a second scenario, at a provider rather than a row:
// a provider was down, the endpoint's circuit held Backlog jobs, and at
// time 0 it comes back with a capacity of CapacityPerS requests per second
// (a fixed one-second window: the first CapacityPerS requests to reach it
// in a second are served, the rest answered 429 with Retry-After). Each
// request takes two hops of |Normal(40 ms, 10 ms)| and at most
// MaxConcurrent are in flight. A throttled job waits max(its policy's
// delay, Retry-After) and, when throttles spend attempts, is exhausted at
// the policy's maxAttempts. The strategies:
//
//	at-once   every held job is due when the circuit closes (Ratchet before paced recovery)
//	ramp      admitted rate r: start max(1, 10 % of the limit); per clean second ×2 until
//	          the first throttle, then + 10 % of the limit; a second with a throttle,
//	          a 5xx or a timeout: r × 0.7 (once); never above the limit
//	learned   ramp, and the first answer's RateLimit headers set r (and its ceiling)
//	          to the provider's stated limit, capped by the configured one
//
// The default scenario (5,000 jobs, 100 per second, Retry-After 1 s, 50 in
// flight, AGGRESSIVE, ramp limit 200 per second, seed 1; the pace is 50 s):
//
//	| strategy | requests | refused | busiest second | drain          | exhausted |
//	|----------|----------|---------|----------------|----------------|-----------|
//	| at-once  |   16,451 |  69.6 % |            636 | 94.8 s, 1.90 × |         0 |
//	| ramp     |    5,112 |   2.2 % |            159 | 64.3 s, 1.29 × |         0 |
//	| learned  |    5,010 |   0.2 % |            102 | 56.7 s, 1.13 × |         0 |
//
// Released at once, the backlog reaches the provider at the pace of the
// in-flight limit (about 625 a second), seven in ten requests are refused,
// and the throttled jobs come back in waves after their backoff. The ramp
// refuses few and drains within 1.3 × the provider's pace: its additive
// step is a tenth of the rate of its last cut (the pace at which the
// provider last pushed back), as the engine's ramp, so a configured limit
// far above the capacity does not widen its saw. Learned limits hold the
// rate at the capacity. TestRecoveryFigures keeps these
// claims true; every figure is simulated time, seeded and exact.
package simulate
