DROP INDEX agents_agent_id_folded;
ALTER TABLE agents DROP COLUMN agent_id_case_twin;
