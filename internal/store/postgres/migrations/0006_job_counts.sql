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
