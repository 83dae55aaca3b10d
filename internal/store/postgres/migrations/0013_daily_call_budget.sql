-- An endpoint's daily call budget (wire.EndpointSettings.DailyCallBudget,
-- the gate daily_budget): claims per UTC day at most, NULL for none.
ALTER TABLE endpoints ADD COLUMN daily_call_budget BIGINT;
