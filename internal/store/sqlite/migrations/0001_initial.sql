CREATE TABLE projects (
    id         INTEGER PRIMARY KEY,
    name       TEXT    NOT NULL,
    plan       TEXT    NOT NULL CHECK (plan IN ('FREE', 'BASIC', 'PRO')),
    created_at INTEGER NOT NULL
);

CREATE TABLE api_keys (
    id         INTEGER PRIMARY KEY,
    project_id INTEGER NOT NULL REFERENCES projects (id),
    name       TEXT    NOT NULL DEFAULT '',
    scope      TEXT    NOT NULL CHECK (scope IN ('owner', 'producer', 'worker')),
    hash       TEXT    NOT NULL UNIQUE,
    prefix     TEXT    NOT NULL,
    tools      TEXT    NOT NULL DEFAULT '[]',
    created_at INTEGER NOT NULL,
    revoked_at INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE endpoints (
    id                    INTEGER PRIMARY KEY,
    project_id            INTEGER NOT NULL REFERENCES projects (id),
    name                  TEXT    NOT NULL,
    policy                TEXT    NOT NULL,
    default_timeout_ms    INTEGER NOT NULL,
    max_concurrent        INTEGER NOT NULL,
    rate_limit_per_minute INTEGER,
    circuit_threshold     INTEGER NOT NULL,
    circuit_open_ms       INTEGER NOT NULL,
    version               INTEGER NOT NULL,
    created_at            INTEGER NOT NULL,
    updated_at            INTEGER NOT NULL,
    circuit_state         TEXT    NOT NULL DEFAULT 'closed',
    circuit_failures      INTEGER NOT NULL DEFAULT 0,
    circuit_opened_at     INTEGER NOT NULL DEFAULT 0,
    circuit_probe_job     INTEGER NOT NULL DEFAULT 0,
    UNIQUE (project_id, name)
);

CREATE TABLE tools (
    id           INTEGER PRIMARY KEY,
    project_id   INTEGER NOT NULL REFERENCES projects (id),
    name         TEXT    NOT NULL,
    version      TEXT    NOT NULL,
    endpoint_id  INTEGER NOT NULL REFERENCES endpoints (id),
    description  TEXT    NOT NULL DEFAULT '',
    schema       TEXT,
    timeout_ms   INTEGER,
    retry_policy TEXT,
    created_at   INTEGER NOT NULL,
    UNIQUE (project_id, name, version)
);

CREATE TABLE runs (
    id          INTEGER PRIMARY KEY,
    project_id  INTEGER NOT NULL REFERENCES projects (id),
    name        TEXT    NOT NULL DEFAULT '',
    state       TEXT    NOT NULL,
    created_at  INTEGER NOT NULL,
    finished_at INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE jobs (
    id               INTEGER PRIMARY KEY,
    project_id       INTEGER NOT NULL,
    tool_id          INTEGER NOT NULL,
    tool             TEXT    NOT NULL,
    version          TEXT    NOT NULL,
    endpoint_id      INTEGER NOT NULL,
    endpoint         TEXT    NOT NULL,
    run_id           INTEGER NOT NULL DEFAULT 0,
    payload          TEXT    NOT NULL,
    idempotency_key  TEXT,
    policy           TEXT    NOT NULL,
    max_attempts     INTEGER NOT NULL,
    timeout_ms       INTEGER NOT NULL,
    attempt          INTEGER NOT NULL DEFAULT 0,
    state            TEXT    NOT NULL,
    due_at           INTEGER NOT NULL,
    lease_token      TEXT    NOT NULL DEFAULT '',
    lease_expires_at INTEGER NOT NULL DEFAULT 0,
    worker_id        TEXT    NOT NULL DEFAULT '',
    cancel_requested INTEGER NOT NULL DEFAULT 0,
    replay_of        INTEGER NOT NULL DEFAULT 0,
    created_at       INTEGER NOT NULL,
    updated_at       INTEGER NOT NULL,
    finished_at      INTEGER NOT NULL DEFAULT 0
);
CREATE UNIQUE INDEX jobs_idempotency ON jobs (project_id, idempotency_key) WHERE idempotency_key IS NOT NULL;
CREATE INDEX jobs_due ON jobs (endpoint_id, tool_id, due_at) WHERE state = 'scheduled';
CREATE INDEX jobs_running ON jobs (endpoint_id) WHERE state = 'running';
CREATE INDEX jobs_lease ON jobs (lease_expires_at) WHERE state = 'running';
CREATE INDEX jobs_finished ON jobs (finished_at) WHERE finished_at > 0;
CREATE INDEX jobs_project ON jobs (project_id, id);
CREATE INDEX jobs_project_state ON jobs (project_id, state, id);

CREATE TABLE attempts (
    job_id          INTEGER NOT NULL,
    number          INTEGER NOT NULL,
    endpoint_id     INTEGER NOT NULL,
    worker_id       TEXT    NOT NULL,
    lease_token     TEXT    NOT NULL,
    claimed_at      INTEGER NOT NULL,
    finished_at     INTEGER NOT NULL DEFAULT 0,
    outcome         TEXT    NOT NULL DEFAULT '',
    classification  TEXT    NOT NULL DEFAULT '',
    http_status     INTEGER NOT NULL DEFAULT 0,
    retry_after_ms  INTEGER NOT NULL DEFAULT 0,
    message         TEXT    NOT NULL DEFAULT '',
    base_delay_ms   REAL    NOT NULL DEFAULT 0,
    jitter_sample   REAL    NOT NULL DEFAULT 0,
    min_delay_ms    INTEGER NOT NULL DEFAULT 0,
    max_delay_ms    INTEGER NOT NULL DEFAULT 0,
    selected_ms     INTEGER NOT NULL DEFAULT 0,
    next_due_at     INTEGER NOT NULL DEFAULT 0,
    counted         INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (job_id, number)
);
CREATE INDEX attempts_claims ON attempts (endpoint_id, claimed_at);
