-- What a `POST /tasks/:id/transition` sends, statement for statement (the nonce batch aside).
\set n random(1, 10000)
BEGIN;
SELECT * FROM tasks WHERE org_id = :org AND id = ('00000000-0000-7000-8000-' || lpad(to_hex(:n::bigint), 12, '0'))::uuid FOR NO KEY UPDATE;
SELECT d.depends_on_id FROM task_dependencies d INNER JOIN tasks t ON t.id = d.depends_on_id WHERE d.org_id = :org AND d.task_id = ('00000000-0000-7000-8000-' || lpad(to_hex(:n::bigint), 12, '0'))::uuid AND d.blocking = true AND t.status != 'done' ORDER BY d.id;
UPDATE tasks SET status = CASE status WHEN 'todo' THEN 'in_progress' ELSE 'todo' END, updated_at = now(), version = version + 1, status_changed_at = now(), last_activity_at = now() WHERE org_id = :org AND id = ('00000000-0000-7000-8000-' || lpad(to_hex(:n::bigint), 12, '0'))::uuid;
INSERT INTO events (id, org_id, type, actor_id, entity_type, entity_id, severity, payload, created_at) VALUES (('00000000-0000-7000-8000-' || lpad(to_hex(nextval('pg_shape_ids')), 12, '0'))::uuid, :org, 'task.status_changed', :agent, 'task', ('00000000-0000-7000-8000-' || lpad(to_hex(:n::bigint), 12, '0'))::uuid, 'info', '{"from":"todo","to":"in_progress"}', now());
SELECT ws.org_id, ws.webhook_id, ws.event_type FROM webhook_subscriptions ws INNER JOIN webhooks ON ws.webhook_id = webhooks.id WHERE ws.org_id = ANY(ARRAY[:org::uuid]) AND ws.event_type = ANY(ARRAY['task.status_changed', '*']) AND webhooks.enabled = true AND webhooks.hook_type = 'post';
SELECT webhooks.org_id, webhooks.id, webhooks.task_id FROM webhooks WHERE webhooks.task_id = ANY(ARRAY[('00000000-0000-7000-8000-' || lpad(to_hex(:n::bigint), 12, '0'))::uuid]) AND webhooks.enabled = true;
COMMIT;
