-- 1. The last finished attempt's classification and the last failed
-- attempt's message live on the job row, written by the engine as an
-- attempt finishes, so that lists show them and search reads them without
-- a join on attempts.
ALTER TABLE jobs ADD COLUMN last_classification TEXT NOT NULL DEFAULT '';
ALTER TABLE jobs ADD COLUMN last_error TEXT NOT NULL DEFAULT '';
UPDATE jobs SET
    last_classification = COALESCE((SELECT a.classification FROM attempts a WHERE a.job_id = jobs.id AND a.finished_at > 0
        ORDER BY a.number DESC LIMIT 1), ''),
    last_error = COALESCE((SELECT a.message FROM attempts a WHERE a.job_id = jobs.id AND a.finished_at > 0 AND a.outcome <> 'succeeded'
        ORDER BY a.number DESC LIMIT 1), '')
    WHERE attempt > 0;

-- 2. Counters of jobs per (project, endpoint, tool, state), so the overview, the
-- state counts and metrics never count jobs one by one (at a million jobs
-- a count per state read every row). Triggers keep them in the same
-- transaction as every insert, change of state and delete of a job,
-- whichever statement makes it (enqueue, claim, report, rescue, cancel,
-- replay, prune).
--
-- The triggers run once per statement, not per row: a report of 1,000
-- jobs or a claim of 100 applies one aggregated delta per (project,
-- endpoint, state). A counter row is locked by the transaction that
-- changes it until commit, so a single row per key would serialise every
-- claim and report of an endpoint across nodes: each key has 8 slots, a
-- transaction uses the slot of its transaction id, and readers sum the
-- slots. Deltas are applied in key order, so two statements never lock the
-- same rows in opposite orders.
LOCK TABLE jobs IN SHARE ROW EXCLUSIVE MODE; -- no writes between the backfill and the triggers

CREATE TABLE job_counts (
    project_id  BIGINT   NOT NULL,
    endpoint_id BIGINT   NOT NULL,
    tool_id     BIGINT   NOT NULL,
    state       TEXT     NOT NULL,
    slot        SMALLINT NOT NULL,
    n           BIGINT   NOT NULL,
    PRIMARY KEY (project_id, endpoint_id, tool_id, state, slot)
);
INSERT INTO job_counts (project_id, endpoint_id, tool_id, state, slot, n)
    SELECT project_id, endpoint_id, tool_id, state, 0, count(*) FROM jobs GROUP BY project_id, endpoint_id, tool_id, state;

CREATE FUNCTION job_counts_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO job_counts (project_id, endpoint_id, tool_id, state, slot, n)
        SELECT project_id, endpoint_id, tool_id, state, txid_current() % 8, count(*) FROM new_jobs
        GROUP BY project_id, endpoint_id, tool_id, state ORDER BY project_id, endpoint_id, tool_id, state
        ON CONFLICT (project_id, endpoint_id, tool_id, state, slot) DO UPDATE SET n = job_counts.n + EXCLUDED.n;
    RETURN NULL;
END $$;

CREATE FUNCTION job_counts_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO job_counts (project_id, endpoint_id, tool_id, state, slot, n)
        SELECT project_id, endpoint_id, tool_id, state, txid_current() % 8, -count(*) FROM old_jobs
        GROUP BY project_id, endpoint_id, tool_id, state ORDER BY project_id, endpoint_id, tool_id, state
        ON CONFLICT (project_id, endpoint_id, tool_id, state, slot) DO UPDATE SET n = job_counts.n + EXCLUDED.n;
    RETURN NULL;
END $$;

-- Every UPDATE of jobs fires it (a trigger with transition tables cannot
-- name columns); one that changes no state, such as a heartbeat, writes
-- nothing.
CREATE FUNCTION job_counts_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO job_counts (project_id, endpoint_id, tool_id, state, slot, n)
        SELECT d.project_id, d.endpoint_id, d.tool_id, d.state, txid_current() % 8, sum(d.n) FROM (
            SELECT o.project_id, o.endpoint_id, o.tool_id, o.state, -1 AS n FROM old_jobs o JOIN new_jobs j ON j.id = o.id WHERE j.state <> o.state
            UNION ALL
            SELECT j.project_id, j.endpoint_id, j.tool_id, j.state, 1 FROM old_jobs o JOIN new_jobs j ON j.id = o.id WHERE j.state <> o.state
        ) AS d
        GROUP BY d.project_id, d.endpoint_id, d.tool_id, d.state HAVING sum(d.n) <> 0
        ORDER BY d.project_id, d.endpoint_id, d.tool_id, d.state
        ON CONFLICT (project_id, endpoint_id, tool_id, state, slot) DO UPDATE SET n = job_counts.n + EXCLUDED.n;
    RETURN NULL;
END $$;

CREATE TRIGGER jobs_count_insert AFTER INSERT ON jobs REFERENCING NEW TABLE AS new_jobs
    FOR EACH STATEMENT EXECUTE FUNCTION job_counts_insert();
CREATE TRIGGER jobs_count_update AFTER UPDATE ON jobs REFERENCING OLD TABLE AS old_jobs NEW TABLE AS new_jobs
    FOR EACH STATEMENT EXECUTE FUNCTION job_counts_update();
CREATE TRIGGER jobs_count_delete AFTER DELETE ON jobs REFERENCING OLD TABLE AS old_jobs
    FOR EACH STATEMENT EXECUTE FUNCTION job_counts_delete();

-- 3. A run's jobs, newest first (GET /v1/jobs?runId=): without it the
-- first page of a run walked the project's jobs from the newest. Partial,
-- so jobs without a run (most) never enter it. Filters by state, endpoint
-- and tool read jobs_project_state and test the rest row by row; an index
-- per filter was measured at a third of the PostgreSQL burn-down (each is
-- written at every change of state), and the counters answer the counts.
CREATE INDEX jobs_run ON jobs (run_id, id) WHERE run_id <> 0;
