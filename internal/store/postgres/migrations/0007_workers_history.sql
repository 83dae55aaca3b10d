-- Workers and history (GET /v1/workers, GET /v1/history).
--
-- workers: when each worker of a project was first and last seen claiming,
-- heartbeating and reporting. Each node keeps these times in memory and
-- writes them at most once per second per worker (an upsert keeping the
-- latest times), so the claim path gains no write. last_seen_at is the
-- latest of the three; rows unseen for 24 hours are deleted.
CREATE TABLE workers (
    project_id        BIGINT NOT NULL,
    worker_id         TEXT   NOT NULL,
    first_seen_at     BIGINT NOT NULL,
    last_claim_at     BIGINT NOT NULL DEFAULT 0,
    last_heartbeat_at BIGINT NOT NULL DEFAULT 0,
    last_report_at    BIGINT NOT NULL DEFAULT 0,
    last_seen_at      BIGINT NOT NULL,
    PRIMARY KEY (project_id, worker_id)
);
CREATE INDEX workers_seen ON workers (last_seen_at);

-- An attempt keeps the due time it was claimed at (the job's due_at while
-- it ran), so the due-to-claim lag of finished attempts can be rolled up.
-- 0 for attempts finished before this migration: they have no lag.
ALTER TABLE attempts ADD COLUMN due_at BIGINT NOT NULL DEFAULT 0;

-- history: one row per (project, endpoint, minute) that had claims or
-- finished attempts; idle minutes have no row. Written once per closed
-- minute by whichever node gets there first (INSERT ... ON CONFLICT DO
-- NOTHING), read by GET /v1/history, deleted after --history-retention.
-- lag_sum_ms / lag_count is the average due-to-claim lag.
CREATE TABLE history (
    project_id  BIGINT NOT NULL,
    endpoint_id BIGINT NOT NULL,
    minute      BIGINT NOT NULL,
    claims      BIGINT NOT NULL,
    succeeded   BIGINT NOT NULL,
    failed      BIGINT NOT NULL,
    timed_out   BIGINT NOT NULL,
    lag_sum_ms  BIGINT NOT NULL,
    lag_count   BIGINT NOT NULL,
    lag_max_ms  BIGINT NOT NULL,
    PRIMARY KEY (project_id, endpoint_id, minute)
);
CREATE INDEX history_minute ON history (minute);

-- The first minute not rolled up yet (unix ms of its start; 0 before the
-- first roll-up). The roll-up locks this row, so on PostgreSQL one node
-- at a time computes a minute and the others find it done.
CREATE TABLE history_cursor (
    id          BIGINT PRIMARY KEY,
    next_minute BIGINT NOT NULL
);
INSERT INTO history_cursor (id, next_minute) VALUES (1, 0);
