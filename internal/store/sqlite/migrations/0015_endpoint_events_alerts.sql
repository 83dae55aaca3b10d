-- The endpoint event log and alerts (docs/alerts.md).
--
-- endpoint_events: every change of an endpoint's circuit, pause, recovery
-- and learned limit, written in the transaction of the change, with the
-- facts known then; pruned by the retention service. facts is a JSON
-- object of numbers a kind has no column for ('' for none).
CREATE TABLE endpoint_events (
    id            INTEGER PRIMARY KEY,
    project_id    INTEGER NOT NULL REFERENCES projects (id),
    endpoint_id   INTEGER NOT NULL REFERENCES endpoints (id),
    at            INTEGER NOT NULL,
    kind          TEXT    NOT NULL,
    failures      INTEGER NOT NULL DEFAULT 0,
    threshold     INTEGER NOT NULL DEFAULT 0,
    opened_at     INTEGER NOT NULL DEFAULT 0,
    next_probe_at INTEGER NOT NULL DEFAULT 0,
    probe_job     INTEGER NOT NULL DEFAULT 0,
    held_jobs     INTEGER NOT NULL DEFAULT 0,
    actor         TEXT    NOT NULL DEFAULT '',
    detail        TEXT    NOT NULL DEFAULT '',
    facts         TEXT    NOT NULL DEFAULT ''
);
CREATE INDEX endpoint_events_endpoint ON endpoint_events (project_id, endpoint_id, id);
CREATE INDEX endpoint_events_at ON endpoint_events (at);

-- alert_sinks: where a project's alerts go. kind is webhook (signed with
-- Standard Webhooks by secret), slack or teams.
CREATE TABLE alert_sinks (
    id         INTEGER PRIMARY KEY,
    project_id INTEGER NOT NULL REFERENCES projects (id),
    name       TEXT    NOT NULL,
    kind       TEXT    NOT NULL,
    url        TEXT    NOT NULL,
    secret     TEXT    NOT NULL DEFAULT '',
    created_at INTEGER NOT NULL,
    UNIQUE (project_id, name)
);

-- alert_settings: a project's thresholds; no row means the defaults.
CREATE TABLE alert_settings (
    project_id           INTEGER PRIMARY KEY REFERENCES projects (id),
    paused_after_ms      INTEGER NOT NULL,
    failure_rate_percent INTEGER NOT NULL,
    failure_rate_min     INTEGER NOT NULL,
    window_ms            INTEGER NOT NULL,
    max_per_window       INTEGER NOT NULL,
    updated_at           INTEGER NOT NULL
);

-- alerts: each alert raised, once per dedup key. count is what the alert
-- groups (exhausted jobs of a window, alerts a cap suppressed), read
-- when it is sent; body is its facts as JSON.
CREATE TABLE alerts (
    id          INTEGER PRIMARY KEY,
    project_id  INTEGER NOT NULL REFERENCES projects (id),
    endpoint_id INTEGER NOT NULL DEFAULT 0,
    kind        TEXT    NOT NULL,
    at          INTEGER NOT NULL,
    dedup_key   TEXT    NOT NULL,
    event_id    INTEGER NOT NULL DEFAULT 0,
    count       INTEGER NOT NULL DEFAULT 0,
    body        TEXT    NOT NULL DEFAULT '',
    UNIQUE (project_id, dedup_key)
);
CREATE INDEX alerts_endpoint ON alerts (project_id, endpoint_id, at);

-- alert_deliveries: the outbox, one row per alert and sink, retried with
-- backoff until delivered or out of attempts; lease_until keeps two nodes
-- from sending one row at once.
CREATE TABLE alert_deliveries (
    id           INTEGER PRIMARY KEY,
    alert_id     INTEGER NOT NULL REFERENCES alerts (id),
    sink_id      INTEGER NOT NULL,
    state        TEXT    NOT NULL,
    attempts     INTEGER NOT NULL DEFAULT 0,
    due_at       INTEGER NOT NULL,
    lease_until  INTEGER NOT NULL DEFAULT 0,
    last_status  INTEGER NOT NULL DEFAULT 0,
    last_error   TEXT    NOT NULL DEFAULT '',
    delivered_at INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX alert_deliveries_due ON alert_deliveries (state, due_at);
CREATE INDEX alert_deliveries_alert ON alert_deliveries (alert_id);

-- alert_feed: how far alerts have read endpoint_events (one row).
CREATE TABLE alert_feed (
    id            INTEGER PRIMARY KEY,
    last_event_id INTEGER NOT NULL
);
INSERT INTO alert_feed (id, last_event_id) VALUES (1, 0);
