DROP INDEX webhooks_remote_agent;
ALTER TABLE webhooks DROP COLUMN remote_callback_url;
ALTER TABLE webhooks DROP COLUMN remote_card_url;
ALTER TABLE webhooks DROP COLUMN remote_agent_id;
