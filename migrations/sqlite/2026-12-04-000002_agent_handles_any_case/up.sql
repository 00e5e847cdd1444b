-- An agent's handle (agent_id, its `agentId`) is unique regardless of case: `Bob-1`
-- cannot be registered beside `bob-1`, a look-alike in X-Agent-ID, lists and logs.
-- Handles are visible ASCII, so lower() is their case folding (the same on PostgreSQL).
--
-- A database may already hold handles that differ only by case, registered before this
-- rule: they are kept and go on signing as before, and the migration does not fail on
-- them. The oldest of each such group holds the folded handle in the index; each younger
-- one carries its own id in agent_id_case_twin, which sets its index entry apart. No new
-- agent can take any case of the group. Nothing else reads or writes the column.
ALTER TABLE agents ADD COLUMN agent_id_case_twin TEXT;
UPDATE agents SET agent_id_case_twin = id
WHERE id IN (
    SELECT id FROM (
        SELECT id, row_number() OVER (PARTITION BY lower(agent_id) ORDER BY created_at, id) AS n
        FROM agents
    ) AS ranked
    WHERE n > 1
);
CREATE UNIQUE INDEX agents_agent_id_folded
    ON agents (lower(agent_id), coalesce(agent_id_case_twin, ''));
