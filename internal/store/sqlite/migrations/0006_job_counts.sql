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
-- replay, prune). slot is always 0 here: SQLite has one writer, so a
-- counter row is never contended (PostgreSQL shards it, see there).
CREATE TABLE job_counts (
    project_id  INTEGER NOT NULL,
    endpoint_id INTEGER NOT NULL,
    tool_id     INTEGER NOT NULL,
    state       TEXT    NOT NULL,
    slot        INTEGER NOT NULL,
    n           INTEGER NOT NULL,
    PRIMARY KEY (project_id, endpoint_id, tool_id, state, slot)
);
INSERT INTO job_counts (project_id, endpoint_id, tool_id, state, slot, n)
    SELECT project_id, endpoint_id, tool_id, state, 0, count(*) FROM jobs GROUP BY project_id, endpoint_id, tool_id, state;

CREATE TRIGGER jobs_count_insert AFTER INSERT ON jobs BEGIN
    INSERT INTO job_counts (project_id, endpoint_id, tool_id, state, slot, n) VALUES (NEW.project_id, NEW.endpoint_id, NEW.tool_id, NEW.state, 0, 1)
        ON CONFLICT (project_id, endpoint_id, tool_id, state, slot) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER jobs_count_update AFTER UPDATE OF state ON jobs WHEN OLD.state <> NEW.state BEGIN
    UPDATE job_counts SET n = n - 1
        WHERE project_id = OLD.project_id AND endpoint_id = OLD.endpoint_id AND tool_id = OLD.tool_id AND state = OLD.state AND slot = 0;
    INSERT INTO job_counts (project_id, endpoint_id, tool_id, state, slot, n) VALUES (NEW.project_id, NEW.endpoint_id, NEW.tool_id, NEW.state, 0, 1)
        ON CONFLICT (project_id, endpoint_id, tool_id, state, slot) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER jobs_count_delete AFTER DELETE ON jobs BEGIN
    UPDATE job_counts SET n = n - 1
        WHERE project_id = OLD.project_id AND endpoint_id = OLD.endpoint_id AND tool_id = OLD.tool_id AND state = OLD.state AND slot = 0;
END;

-- 3. A run's jobs, newest first (GET /v1/jobs?runId=): without it the
-- first page of a run walked the project's jobs from the newest. Partial,
-- so jobs without a run (most) never enter it. Filters by state, endpoint
-- and tool read jobs_project_state and test the rest row by row; an index
-- per filter was measured at a third of the PostgreSQL burn-down (each is
-- written at every change of state), and the counters answer the counts.
CREATE INDEX jobs_run ON jobs (run_id, id) WHERE run_id <> 0;
