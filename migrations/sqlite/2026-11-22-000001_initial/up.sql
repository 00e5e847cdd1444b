-- Muster's first schema on SQLite. Keep in step with migrations/postgres and
-- crates/persistence/src/schema.rs. Portable types: uuid and timestamps are TEXT
-- (timestamps as fixed-width RFC 3339 UTC with milliseconds, so text order is time
-- order), JSON is TEXT, booleans are 0/1.

CREATE TABLE organizations (
    id          TEXT PRIMARY KEY NOT NULL,
    name        TEXT NOT NULL,
    is_default  INTEGER NOT NULL DEFAULT 0 CHECK (is_default IN (0, 1)),
    created_at  TEXT NOT NULL
) STRICT;
CREATE UNIQUE INDEX organizations_one_default ON organizations (is_default) WHERE is_default = 1;

CREATE TABLE users (
    id             TEXT PRIMARY KEY NOT NULL,
    org_id         TEXT NOT NULL REFERENCES organizations (id),
    email          TEXT NOT NULL,
    name           TEXT NOT NULL,
    role           TEXT NOT NULL CHECK (role IN ('admin', 'operator', 'viewer')),
    password_hash  TEXT NOT NULL,
    created_at     TEXT NOT NULL,
    updated_at     TEXT NOT NULL,
    UNIQUE (org_id, email)
) STRICT;

CREATE TABLE agents (
    id                   TEXT PRIMARY KEY NOT NULL,
    org_id               TEXT NOT NULL REFERENCES organizations (id),
    agent_id             TEXT NOT NULL UNIQUE,
    name                 TEXT NOT NULL,
    level                INTEGER NOT NULL CHECK (level BETWEEN 1 AND 10),
    model                TEXT,
    role                 TEXT NOT NULL CHECK (role IN ('worker', 'hr', 'founder', 'admin')),
    mode                 TEXT NOT NULL CHECK (mode IN ('worker', 'orchestrator', 'observer')),
    status               TEXT NOT NULL CHECK (status IN ('pending', 'active', 'suspended', 'revoked')),
    parent_id            TEXT REFERENCES agents (id),
    current_balance      INTEGER NOT NULL DEFAULT 0,
    budget_period_limit  INTEGER CHECK (budget_period_limit >= 0),
    budget_period_spent  INTEGER NOT NULL DEFAULT 0,
    budget_period_start  TEXT NOT NULL,
    management_fee_pct   INTEGER NOT NULL DEFAULT 0 CHECK (management_fee_pct BETWEEN 0 AND 50),
    reputation_score     INTEGER NOT NULL DEFAULT 50 CHECK (reputation_score BETWEEN 0 AND 100),
    metadata             TEXT NOT NULL DEFAULT '{}',
    encrypted_secret     BLOB NOT NULL,
    created_at           TEXT NOT NULL,
    updated_at           TEXT NOT NULL
) STRICT;
CREATE INDEX agents_org ON agents (org_id, id);
CREATE INDEX agents_parent ON agents (parent_id);

CREATE TABLE tasks (
    id                 TEXT PRIMARY KEY NOT NULL,
    org_id             TEXT NOT NULL REFERENCES organizations (id),
    title              TEXT NOT NULL,
    description        TEXT,
    status             TEXT NOT NULL CHECK (status IN ('backlog', 'todo', 'in_progress', 'review', 'done', 'blocked', 'cancelled')),
    priority           TEXT NOT NULL CHECK (priority IN ('urgent', 'high', 'normal', 'low')),
    assignee_id        TEXT REFERENCES agents (id),
    creator_id         TEXT REFERENCES agents (id),
    parent_task_id     TEXT REFERENCES tasks (id),
    approval_required  INTEGER NOT NULL DEFAULT 0 CHECK (approval_required IN (0, 1)),
    due_at             TEXT,
    tags               TEXT NOT NULL DEFAULT '[]',
    metadata           TEXT NOT NULL DEFAULT '{}',
    created_at         TEXT NOT NULL,
    updated_at         TEXT NOT NULL,
    version            INTEGER NOT NULL DEFAULT 1
) STRICT;
CREATE INDEX tasks_org_newest ON tasks (org_id, id DESC);
CREATE INDEX tasks_org_status ON tasks (org_id, status, id DESC);
CREATE INDEX tasks_org_assignee ON tasks (org_id, assignee_id, id DESC);
CREATE INDEX tasks_org_creator ON tasks (org_id, creator_id, id DESC);
CREATE INDEX tasks_org_parent ON tasks (org_id, parent_task_id, id DESC);

CREATE TABLE events (
    id           TEXT PRIMARY KEY NOT NULL,
    org_id       TEXT NOT NULL REFERENCES organizations (id),
    type         TEXT NOT NULL,
    actor_id     TEXT,
    entity_type  TEXT NOT NULL,
    entity_id    TEXT NOT NULL,
    severity     TEXT NOT NULL CHECK (severity IN ('info', 'warning', 'error')),
    payload      TEXT NOT NULL DEFAULT '{}',
    created_at   TEXT NOT NULL
) STRICT;
CREATE INDEX events_org_newest ON events (org_id, created_at DESC, id DESC);
CREATE INDEX events_org_type ON events (org_id, type, created_at DESC);
CREATE INDEX events_org_entity ON events (org_id, entity_id, created_at DESC);
CREATE INDEX events_org_actor ON events (org_id, actor_id, created_at DESC);

-- The audit log is append-only, even for someone with SQL access (decision D-70).
CREATE TRIGGER events_no_update BEFORE UPDATE ON events
BEGIN
    SELECT RAISE(ABORT, 'events are append-only: UPDATE is not allowed');
END;
CREATE TRIGGER events_no_delete BEFORE DELETE ON events
BEGIN
    SELECT RAISE(ABORT, 'events are append-only: DELETE is not allowed');
END;

CREATE TABLE nonces (
    agent_id    TEXT NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
    nonce       TEXT NOT NULL,
    expires_at  TEXT NOT NULL,
    PRIMARY KEY (agent_id, nonce)
) STRICT, WITHOUT ROWID;
CREATE INDEX nonces_expiry ON nonces (expires_at);
