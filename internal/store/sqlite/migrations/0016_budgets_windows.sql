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
