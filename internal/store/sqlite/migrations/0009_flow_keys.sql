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
