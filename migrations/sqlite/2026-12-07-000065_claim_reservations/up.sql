-- Credits reserved at claim (issue 64, decision D-106): `POST /tasks/claim
-- {reserveCredits}` holds credits of the claiming agent for the task while it holds the
-- task in progress; the first run it starts on the task takes them over, and they go back
-- when the task leaves the agent without one. A task holds at most one reservation (its
-- primary key); the agent's reserved_credits counts it.
-- Keep in step with migrations/postgres and crates/persistence/src/schema.rs.
CREATE TABLE claim_reservations (
    task_id     TEXT PRIMARY KEY NOT NULL REFERENCES tasks (id),
    org_id      TEXT NOT NULL REFERENCES organizations (id),
    agent_id    TEXT NOT NULL REFERENCES agents (id),
    credits     INTEGER NOT NULL CHECK (credits > 0),
    created_at  TEXT NOT NULL
) STRICT, WITHOUT ROWID;
CREATE INDEX claim_reservations_org_agent ON claim_reservations (org_id, agent_id);
