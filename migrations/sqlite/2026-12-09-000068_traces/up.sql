-- Traces (issue #68): a queued delivery keeps the W3C trace context of the change that
-- queued it, so that its calls continue that trace; a run keeps the trace id of the
-- request that started it (the worker's trace), for the dashboard to link to.
ALTER TABLE webhook_deliveries ADD COLUMN trace_parent TEXT;
ALTER TABLE webhook_deliveries ADD COLUMN trace_state TEXT;
ALTER TABLE runs ADD COLUMN trace_id TEXT;
