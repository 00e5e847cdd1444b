-- A2A push configs are found by their task (webhooks.task_id, indexed) when the task
-- moves, not through subscription rows: the organization-wide read of subscriptions that
-- every appended event makes then never grows with the number of push configs.
DELETE FROM webhook_subscriptions
WHERE webhook_id IN (SELECT id FROM webhooks WHERE task_id IS NOT NULL);
