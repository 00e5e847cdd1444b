ALTER TABLE runs DROP COLUMN trace_id;
ALTER TABLE webhook_deliveries DROP COLUMN trace_state;
ALTER TABLE webhook_deliveries DROP COLUMN trace_parent;
