-- Failure groups and replay by filter (docs/failures.md): the failed and
-- exhausted jobs of an endpoint, or of a project, newest failure first,
-- read through their own partial indexes so a bounded read costs its
-- bound; and whether some job replays a job (jobs.replay_of), read per
-- failed job, through a partial index of the replays.
CREATE INDEX jobs_failed ON jobs (project_id, endpoint_id, finished_at, id) WHERE state IN ('failed', 'exhausted');
CREATE INDEX jobs_failed_project ON jobs (project_id, finished_at, id) WHERE state IN ('failed', 'exhausted');
CREATE INDEX jobs_replay_of ON jobs (replay_of) WHERE replay_of <> 0;
