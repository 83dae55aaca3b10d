-- The claim path, measured on PostgreSQL (ratchet bench, issue 5).
--
-- 1. Claims take the oldest due jobs first: ORDER BY due_at, id. jobs_due
-- had no id, so among jobs due at the same millisecond (every job of a
-- batch enqueue) PostgreSQL read and sorted the whole group before locking
-- the first row: about 30 ms per claim with 20,000 jobs due. With id in the
-- index the scan returns rows in claim order and stops at the limit.
-- (SQLite keeps the rowid in every index; the drivers keep one schema.)
DROP INDEX jobs_due;
CREATE INDEX jobs_due ON jobs (endpoint_id, tool_id, due_at, id) WHERE state = 'scheduled';

-- 2. An attempt is written once, when it finishes. While it runs, the job
-- row's claim columns (attempt, worker_id, lease_token, claimed_at) are the
-- attempt; the store reads them as one. Inserting the attempt at the claim
-- and updating it at the report wrote every attempt twice.
ALTER TABLE jobs ADD COLUMN claimed_at BIGINT NOT NULL DEFAULT 0;
UPDATE jobs SET claimed_at = (SELECT a.claimed_at FROM attempts a WHERE a.job_id = jobs.id AND a.number = jobs.attempt)
    WHERE state = 'running';
DELETE FROM attempts WHERE finished_at = 0;
-- Running jobs by endpoint (maxConcurrent) and by claim time (the rate
-- limit's window also counts the running attempts).
DROP INDEX jobs_running;
CREATE INDEX jobs_running ON jobs (endpoint_id, claimed_at) WHERE state = 'running';

-- 3. The overview counts an endpoint's scheduled and due jobs from jobs_due
-- (CountScheduled), so 0002's index over every job (project, endpoint,
-- state, due) goes: it was written at every change of state, about 6 % of
-- the burn-down.
DROP INDEX jobs_endpoint_state_due;
