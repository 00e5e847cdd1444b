DELETE FROM webhooks WHERE task_id IS NOT NULL;
DROP INDEX webhooks_task_push;
ALTER TABLE webhooks DROP COLUMN sealed_auth;
ALTER TABLE webhooks DROP COLUMN push_config_id;
ALTER TABLE webhooks DROP COLUMN task_id;
