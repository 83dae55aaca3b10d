-- Budgets and quiet hours (docs/flow-control.md): an endpoint's monthly
-- call budget (the gate monthly_budget), the time zone whose days and
-- months renew its budgets and whose clock reads its quiet hours (UTC
-- until set, as the daily budget was), its quiet hours ("HH:MM-HH:MM",
-- '' for none; the gate delivery_window) and the daily and monthly
-- budgets of each of its flow keys (key_daily_budget, key_monthly_budget).
-- NULL budgets are none.
ALTER TABLE endpoints ADD COLUMN monthly_call_budget BIGINT;
ALTER TABLE endpoints ADD COLUMN budget_time_zone TEXT NOT NULL DEFAULT 'UTC';
ALTER TABLE endpoints ADD COLUMN quiet_hours TEXT NOT NULL DEFAULT '';
ALTER TABLE endpoints ADD COLUMN key_daily_call_budget BIGINT;
ALTER TABLE endpoints ADD COLUMN key_monthly_call_budget BIGINT;

-- The claims of attempts that retention deleted, per endpoint, flow key
-- and quarter hour of their claim (claimed_at floored to 900000 ms):
-- JobsPrune adds to it before it deletes attempts, so a budget still
-- counts them (every zone's midnight falls on a quarter hour). Rows older
-- than 40 days are deleted by JobsPrune too.
CREATE TABLE claims_pruned (
    endpoint_id BIGINT NOT NULL,
    flow_key    TEXT   NOT NULL,
    bucket_at   BIGINT NOT NULL,
    n           BIGINT NOT NULL,
    PRIMARY KEY (endpoint_id, flow_key, bucket_at)
);
CREATE INDEX claims_pruned_since ON claims_pruned (endpoint_id, bucket_at);
CREATE INDEX claims_pruned_age ON claims_pruned (bucket_at);
