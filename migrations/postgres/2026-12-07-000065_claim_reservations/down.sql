-- Back to before claim reservations: what they held stays counted in the agents'
-- reserved_credits, so take it off first.
UPDATE agents SET reserved_credits = GREATEST(0, reserved_credits - held.credits)
FROM (SELECT agent_id, SUM(credits) AS credits FROM claim_reservations GROUP BY agent_id) AS held
WHERE agents.id = held.agent_id;
DROP TABLE claim_reservations;
