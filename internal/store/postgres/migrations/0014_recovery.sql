-- Through an outage (docs/outages.md): when an open circuit half-opens,
-- the recovery ramp, limits learned from the provider's headers, and the
-- throttles an attempt did not spend.

-- When an open circuit half-opens, when a provider's Retry-After asked for
-- longer than circuitOpenMs; 0 for circuit_opened_at + circuit_open_ms.
ALTER TABLE endpoints ADD COLUMN circuit_probe_at BIGINT NOT NULL DEFAULT 0;

-- The recovery ramp (gate recovering): the claims a second admitted, in
-- thousandths (0 while not recovering), the rate of the last cut (slow
-- start doubles below it), when the ramp started, when it last grew or was
-- cut, and when a claim made since then was answered badly.
ALTER TABLE endpoints ADD COLUMN recovery_rate BIGINT NOT NULL DEFAULT 0;
ALTER TABLE endpoints ADD COLUMN recovery_ceiling BIGINT NOT NULL DEFAULT 0;
ALTER TABLE endpoints ADD COLUMN recovery_started_at BIGINT NOT NULL DEFAULT 0;
ALTER TABLE endpoints ADD COLUMN recovery_adjusted_at BIGINT NOT NULL DEFAULT 0;
ALTER TABLE endpoints ADD COLUMN recovery_bad_at BIGINT NOT NULL DEFAULT 0;

-- A job's attempts that were provider throttles not counted against its
-- maxAttempts, and whether an attempt was one.
ALTER TABLE jobs ADD COLUMN throttles BIGINT NOT NULL DEFAULT 0;
ALTER TABLE attempts ADD COLUMN throttle_free BIGINT NOT NULL DEFAULT 0;

-- A limit learned from the provider's rate-limit headers: requests per
-- window (0 for none), the window, when it was last said, until when the
-- provider said none remain, and which header family said it.
ALTER TABLE endpoints ADD COLUMN learned_limit BIGINT NOT NULL DEFAULT 0;
ALTER TABLE endpoints ADD COLUMN learned_window_ms BIGINT NOT NULL DEFAULT 0;
ALTER TABLE endpoints ADD COLUMN learned_at BIGINT NOT NULL DEFAULT 0;
ALTER TABLE endpoints ADD COLUMN learned_reset_at BIGINT NOT NULL DEFAULT 0;
ALTER TABLE endpoints ADD COLUMN learned_source TEXT NOT NULL DEFAULT '';
