-- Credits are money to our users: the database itself refuses a negative balance or a
-- negative amount spent, whatever a future bug in the rules would write.
ALTER TABLE agents ADD CONSTRAINT agents_balance_not_negative CHECK (current_balance >= 0);
ALTER TABLE agents ADD CONSTRAINT agents_spent_not_negative CHECK (budget_period_spent >= 0);
-- The trust leaderboard (D-65) and its completed-task counts.
CREATE INDEX agents_org_reputation ON agents (org_id, status, reputation_score DESC, agent_id);
CREATE INDEX reputation_events_agent_kind ON reputation_events (agent_id, kind);
