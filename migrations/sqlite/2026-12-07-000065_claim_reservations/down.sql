-- Back to before claim reservations: what they held stays counted in the agents'
-- reserved_credits, so take it off first.
UPDATE agents SET reserved_credits = MAX(0, reserved_credits - (
    SELECT SUM(credits) FROM claim_reservations WHERE claim_reservations.agent_id = agents.id))
WHERE id IN (SELECT agent_id FROM claim_reservations);
DROP TABLE claim_reservations;
