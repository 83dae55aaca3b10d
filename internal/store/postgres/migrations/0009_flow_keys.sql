-- Flow keys (docs/flow-control.md): the tenant, account or resource a job
-- is made for, '' for none, and a tool's JSON Pointer into the payload that
-- fills it at enqueue ('' for none). Existing jobs and tools read back
-- without a key. Adding a column with a constant default rewrites no row
-- on either driver.
ALTER TABLE jobs ADD COLUMN flow_key TEXT NOT NULL DEFAULT '';
ALTER TABLE tools ADD COLUMN flow_key_from TEXT NOT NULL DEFAULT '';

-- Both indexes hold keyed jobs only (flow_key <> ''), so a key-less job —
-- every job enqueued before this migration, and every job of a producer
-- that sets no key — costs no index write more than before. A query that
-- is to use them says "flow_key <> ''" itself: neither planner infers it
-- from "flow_key = ?".
--
-- The due jobs of one key of an endpoint in claim order, as jobs_due has
-- them per tool: what a per-key claim (ordered mode, key limits) reads.
CREATE INDEX jobs_flow_due ON jobs (endpoint_id, flow_key, due_at, id) WHERE state = 'scheduled' AND flow_key <> '';
-- The jobs of one key of a project, newest first: the flowKey filter of
-- lists and counts.
CREATE INDEX jobs_flow ON jobs (project_id, flow_key, id) WHERE flow_key <> '';

-- Limits per key (docs/flow-control.md), set on the endpoint: running
-- attempts per key (NULL: no limit), claims per 60 s per key (NULL: no
-- limit), ordered keys (one in flight per key, in enqueue order) and fair
-- sharing across keys. An endpoint with any of them set is keyed: its
-- claims go through flow_keys below.
ALTER TABLE endpoints ADD COLUMN key_max_concurrent BIGINT;
ALTER TABLE endpoints ADD COLUMN key_rate_limit_per_minute BIGINT;
ALTER TABLE endpoints ADD COLUMN key_ordered BIGINT NOT NULL DEFAULT 0;
ALTER TABLE endpoints ADD COLUMN fair_keys BIGINT NOT NULL DEFAULT 0;

-- A finished attempt keeps its job's key: the per-key rate limit counts a
-- key's claims of the last 60 s from here and from its running jobs.
ALTER TABLE attempts ADD COLUMN flow_key TEXT NOT NULL DEFAULT '';
CREATE INDEX attempts_flow ON attempts (endpoint_id, flow_key, claimed_at) WHERE flow_key <> '';
-- A key's running jobs: its in-flight count and its claims still running.
CREATE INDEX jobs_flow_running ON jobs (endpoint_id, flow_key, claimed_at) WHERE state = 'running' AND flow_key <> '';
-- A key's scheduled jobs in enqueue order: the head of an ordered key.
CREATE INDEX jobs_flow_order ON jobs (endpoint_id, flow_key, id) WHERE state = 'scheduled' AND flow_key <> '';

-- The keys of a keyed endpoint that have jobs scheduled, or running at
-- their limit, and when each may next be offered a claim: the time its
-- first job falls due, the time it was last served (so keys take turns,
-- longest waiting first), the time its rate window frees, or parked
-- (9223372036854775807) while it is at its concurrency limit until one of
-- its jobs finishes. A claim reads the first few rows by ready_at, never
-- every key; a key with nothing scheduled loses its row when a claim
-- next looks at it. The key-less jobs of a keyed endpoint are key ''.
CREATE TABLE flow_keys (
    endpoint_id BIGINT NOT NULL,
    flow_key    TEXT   NOT NULL,
    ready_at    BIGINT NOT NULL,
    PRIMARY KEY (endpoint_id, flow_key)
);
CREATE INDEX flow_keys_ready ON flow_keys (endpoint_id, ready_at, flow_key);
