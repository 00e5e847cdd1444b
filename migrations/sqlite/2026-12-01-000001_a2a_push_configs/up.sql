-- A2A push notification configs are outbound webhooks scoped to one task: they hear only
-- that task's events, and are managed through the A2A endpoints, not /webhooks.
-- No foreign key: SQLite cannot drop a column that has one (down.sql); the service
-- checks the task under its lock.
ALTER TABLE webhooks ADD COLUMN task_id TEXT;
ALTER TABLE webhooks ADD COLUMN push_config_id TEXT;
ALTER TABLE webhooks ADD COLUMN sealed_auth BLOB;
CREATE UNIQUE INDEX webhooks_task_push ON webhooks (task_id, push_config_id);
