-- Credits are money to our users: the database itself refuses a negative balance or a
-- negative amount spent, whatever a future bug in the rules would write. (SQLite cannot
-- add a CHECK to an existing table; triggers do the same.)
CREATE TRIGGER agents_money_not_negative_insert BEFORE INSERT ON agents
WHEN NEW.current_balance < 0 OR NEW.budget_period_spent < 0
BEGIN
    SELECT RAISE(ABORT, 'agents_money_not_negative: balance and spent must not be negative');
END;
CREATE TRIGGER agents_money_not_negative_update BEFORE UPDATE OF current_balance, budget_period_spent ON agents
WHEN NEW.current_balance < 0 OR NEW.budget_period_spent < 0
BEGIN
    SELECT RAISE(ABORT, 'agents_money_not_negative: balance and spent must not be negative');
END;
-- The trust leaderboard (D-65) and its completed-task counts.
CREATE INDEX agents_org_reputation ON agents (org_id, status, reputation_score DESC, agent_id);
CREATE INDEX reputation_events_agent_kind ON reputation_events (agent_id, kind);
