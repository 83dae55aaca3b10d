-- Schedules (docs/schedules.md): a recurring job, one job per tick of a
-- cron expression. next_tick_at is the next tick (unix ms) and
-- next_fire_at that tick plus the schedule's spread offset, when its job is
-- due; a node that fires a tick moves next_tick_at only if it still holds
-- the value it read (compare-and-set), in the transaction that makes the
-- job, so however many nodes look, one makes the tick's job. The job's
-- idempotency key (schedule:<id>:<tick ms>) is the second guard.
CREATE TABLE schedules (
    id             BIGSERIAL PRIMARY KEY,
    project_id     BIGINT NOT NULL REFERENCES projects (id),
    name           TEXT    NOT NULL,
    cron           TEXT    NOT NULL,
    time_zone      TEXT    NOT NULL,
    tool           TEXT    NOT NULL,
    payload        TEXT    NOT NULL DEFAULT '',
    flow_key       TEXT    NOT NULL DEFAULT '',
    paused         BIGINT  NOT NULL DEFAULT 0,
    overlap        TEXT    NOT NULL,
    catch_up       TEXT    NOT NULL,
    catch_up_limit BIGINT NOT NULL,
    spread_ms      BIGINT NOT NULL DEFAULT 0,
    spread_offset_ms BIGINT NOT NULL DEFAULT 0,
    next_tick_at   BIGINT NOT NULL,
    next_fire_at   BIGINT NOT NULL,
    last_job_id    BIGINT NOT NULL DEFAULT 0,
    created_at     BIGINT NOT NULL,
    updated_at     BIGINT NOT NULL,
    UNIQUE (project_id, name)
);
-- The ticker's question: which active schedules are due.
CREATE INDEX schedules_due ON schedules (next_fire_at) WHERE paused = 0;

-- What each tick did. job_id is 0 when the tick made no job; jobs are
-- pruned with their retention, ticks with their schedule.
CREATE TABLE schedule_ticks (
    id              BIGSERIAL PRIMARY KEY,
    schedule_id     BIGINT NOT NULL REFERENCES schedules (id) ON DELETE CASCADE,
    tick_at         BIGINT NOT NULL,
    fire_at         BIGINT NOT NULL,
    fired_at        BIGINT NOT NULL,
    outcome         TEXT    NOT NULL,
    overlap         TEXT    NOT NULL,
    job_id          BIGINT NOT NULL DEFAULT 0,
    previous_job_id BIGINT NOT NULL DEFAULT 0,
    missed          BIGINT NOT NULL DEFAULT 0,
    error           TEXT    NOT NULL DEFAULT '',
    UNIQUE (schedule_id, tick_at)
);
