INSERT INTO webhook_subscriptions (webhook_id, org_id, event_type)
SELECT id, org_id, 'task.transitioned' FROM webhooks WHERE task_id IS NOT NULL;
