-- Trace context (docs/operations.md, Traces): the W3C traceparent and
-- tracestate a job was enqueued with (or, with tracing on, those of its
-- ratchet.enqueue span), '' for none. Claims hand them to workers and
-- deliveries send them on, so a job's attempts join its producer's trace.
-- Existing jobs read back without one; a column with a constant default
-- rewrites no row on either driver.
ALTER TABLE jobs ADD COLUMN traceparent TEXT NOT NULL DEFAULT '';
ALTER TABLE jobs ADD COLUMN tracestate TEXT NOT NULL DEFAULT '';
