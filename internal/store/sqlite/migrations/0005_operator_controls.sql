-- Operator controls: an owner may pause an endpoint (its due jobs are held
-- by the gate "paused", checked before every other endpoint gate), and
-- every operator action is written to an audit log.
--
-- paused_at is when the endpoint was paused (unix ms), 0 while it is not;
-- paused_by names the key that paused it (its name, or its prefix when it
-- has none); paused_reason is the free text given, '' for none.
ALTER TABLE endpoints ADD COLUMN paused_at INTEGER NOT NULL DEFAULT 0;
ALTER TABLE endpoints ADD COLUMN paused_by TEXT NOT NULL DEFAULT '';
ALTER TABLE endpoints ADD COLUMN paused_reason TEXT NOT NULL DEFAULT '';
-- circuit_opened_by names the key that opened the circuit by hand, '' when
-- failures opened it (or it is not open).
ALTER TABLE endpoints ADD COLUMN circuit_opened_by TEXT NOT NULL DEFAULT '';

-- One row per operator action, written in the transaction of the action.
-- actor is the acting key's name (or prefix when unnamed), key_prefix its
-- prefix; action is e.g. endpoint.pause, target e.g. endpoint:payments or
-- job:42; detail is one sentence for people. Listed newest first, by id.
CREATE TABLE audit_log (
    id         INTEGER PRIMARY KEY,
    project_id INTEGER NOT NULL REFERENCES projects (id),
    at         INTEGER NOT NULL,
    actor      TEXT   NOT NULL,
    key_prefix TEXT   NOT NULL,
    action     TEXT   NOT NULL,
    target     TEXT   NOT NULL,
    detail     TEXT   NOT NULL DEFAULT ''
);
CREATE INDEX audit_log_project ON audit_log (project_id, id);
CREATE INDEX audit_log_target ON audit_log (project_id, target, id);
