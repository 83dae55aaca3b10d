CREATE INDEX jobs_endpoint_state_due ON jobs (project_id, endpoint_id, state, due_at);
DROP INDEX jobs_running;
CREATE INDEX jobs_running ON jobs (endpoint_id) WHERE state = 'running';
INSERT INTO attempts (job_id, number, endpoint_id, worker_id, lease_token, claimed_at)
    SELECT id, attempt, endpoint_id, worker_id, lease_token, claimed_at FROM jobs WHERE state = 'running';
ALTER TABLE jobs DROP COLUMN claimed_at;
DROP INDEX jobs_due;
CREATE INDEX jobs_due ON jobs (endpoint_id, tool_id, due_at) WHERE state = 'scheduled';
