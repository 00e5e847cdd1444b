-- The runaway guard. Each agent's two breaker windows live on its row, so that counting
-- is exact across instances: `guard_actions` writes since `guard_actions_since` (a
-- window of one minute), `guard_credits` credits spent since `guard_credits_since` (one
-- hour). Only the guard's own statement changes them.
ALTER TABLE agents ADD COLUMN guard_actions integer NOT NULL DEFAULT 0;
ALTER TABLE agents ADD COLUMN guard_actions_since timestamptz;
ALTER TABLE agents ADD COLUMN guard_credits bigint NOT NULL DEFAULT 0;
ALTER TABLE agents ADD COLUMN guard_credits_since timestamptz;
-- An organization's own thresholds; NULL follows the deployment's default, 0 is off.
ALTER TABLE organizations ADD COLUMN guard_actions_per_minute integer
    CHECK (guard_actions_per_minute >= 0);
ALTER TABLE organizations ADD COLUMN guard_credits_per_hour bigint
    CHECK (guard_credits_per_hour >= 0);
