DROP INDEX reputation_events_agent_kind;
DROP INDEX agents_org_reputation;
ALTER TABLE agents DROP CONSTRAINT agents_spent_not_negative;
ALTER TABLE agents DROP CONSTRAINT agents_balance_not_negative;
