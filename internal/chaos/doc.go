// Package chaos is a fault-injection run of a whole Ratchet deployment
// that anyone can repeat: `ratchet chaos` (and, short, TestShortRun).
//
// It starts several real `ratchet serve` processes (nodes) on one
// PostgreSQL database, in a schema of the run's own, the last node with its
// clock deliberately ahead (ratchet serve --clock-offset); worker processes
// (`ratchet chaos worker`, the Go SDK's Worker) that claim jobs from any
// node and call a provider; and that provider, in this process, which
// answers by a class drawn for each job (80 % succeed, 15 % succeed after
// one 503 with Retry-After, 3 % are refused with 400, 2 % always get 503)
// and records every call: job, attempt, idempotency key, worker, arrival
// and answer. Everything listens on 127.0.0.1.
//
// Two endpoints share the work. "main" takes 95 % of the jobs; its
// maxConcurrent (32 by default) is below the workers' handler slots, so
// the concurrency gate binds. "metered" takes 5 % with a rateLimitPerMinute
// (by default the metered jobs over the minutes of the run, 500 for 5,000
// jobs in 10 minutes: below the pace they are enqueued at) that binds all
// run long. With Keys (--keys), main's jobs carry flow keys drawn from the
// seed and main has a keyMaxConcurrent (KeyMaxConcurrent, default 2); the
// workers send each job's key and the provider counts calls per key too.
//
// Over 85 % of the run's duration a producer enqueues the jobs in batches, each
// through the next node that answers and sent again with the same
// idempotency keys until a node acknowledges it, while the faults, drawn
// from the seed, go on: a node killed with SIGKILL every 15–30 s and
// started again on its port after 0.5–2 s; PostgreSQL stopped in
// immediate mode (a crash) and started again, evenly spread; a worker
// killed with SIGKILL every 15–30 s in the middle of a provider call (so
// it holds leases), a new one taking its place. Then the faults stop and
// the run waits until every job has finished.
//
// It then checks, from the provider's records and the database:
//
//   - no acknowledged enqueue is lost: every job a node acknowledged is in
//     the database under the id it was acknowledged with;
//   - no job succeeds twice: no job has two succeeded attempts, and every
//     succeeded attempt was answered 200 by the provider;
//   - the provider never has more calls of an endpoint in progress than its
//     maxConcurrent, nor more calls in any 59 s than its rateLimitPerMinute
//     (60 s less DeliveryAllowance: the limit is on claims, and a call
//     arrives a varying few milliseconds after its claim);
//   - the database agrees: no more attempts running at once, by their
//     claim and finish times, than maxConcurrent, and no more claims in any
//     60 s than the rate limit;
//   - with Keys, no key has more calls in progress at the provider, nor
//     attempts running in the database, than keyMaxConcurrent, and every
//     call comes from a job claimed with the key it was enqueued with;
//   - every job ends succeeded, failed or exhausted once the faults stop;
//   - no node or worker exits by itself.
//
// The report prints these figures with the faults made, the final states
// by provider class, attempts and expired leases, duplicate deliveries
// (at least once: the idempotency key lets the provider deduplicate) and
// throughput. A run whose invariants held drops its schema and its
// temporary log directory; one that failed keeps both, and the provider's
// calls as CSV, for inspection.
package chaos
