-- A2A push notification configs are outbound webhooks scoped to one task: they hear only
-- that task's events, and are managed through the A2A endpoints, not /webhooks.
ALTER TABLE webhooks ADD COLUMN task_id uuid REFERENCES tasks (id);
ALTER TABLE webhooks ADD COLUMN push_config_id text;
ALTER TABLE webhooks ADD COLUMN sealed_auth bytea;
CREATE UNIQUE INDEX webhooks_task_push ON webhooks (task_id, push_config_id);
