ALTER TABLE organizations DROP COLUMN guard_credits_per_hour;
ALTER TABLE organizations DROP COLUMN guard_actions_per_minute;
ALTER TABLE agents DROP COLUMN guard_credits_since;
ALTER TABLE agents DROP COLUMN guard_credits;
ALTER TABLE agents DROP COLUMN guard_actions_since;
ALTER TABLE agents DROP COLUMN guard_actions;
