-- A remote A2A agent's hand-over channel is an outbound webhook that names the agent
-- standing for it: an append that assigns a task finds the channel of its assignee with
-- one seek on webhooks (remote_agent_id). The card's URL and Muster's callback base are
-- kept with it; its Authorization is sealed in sealed_auth, as a push config's is.
-- No foreign key: SQLite cannot drop a column that has one (down.sql).
ALTER TABLE webhooks ADD COLUMN remote_agent_id TEXT;
ALTER TABLE webhooks ADD COLUMN remote_card_url TEXT;
ALTER TABLE webhooks ADD COLUMN remote_callback_url TEXT;
CREATE UNIQUE INDEX webhooks_remote_agent ON webhooks (remote_agent_id);
