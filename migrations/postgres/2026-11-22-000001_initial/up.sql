-- Muster's first schema on PostgreSQL. Keep in step with migrations/sqlite and
-- crates/persistence/src/schema.rs (a contract test selects every column on both engines).

CREATE TABLE organizations (
    id          uuid PRIMARY KEY,
    name        text NOT NULL,
    is_default  boolean NOT NULL DEFAULT false,
    created_at  timestamptz NOT NULL
);
-- At most one default organization (decision D-14).
CREATE UNIQUE INDEX organizations_one_default ON organizations (is_default) WHERE is_default;

CREATE TABLE users (
    id             uuid PRIMARY KEY,
    org_id         uuid NOT NULL REFERENCES organizations (id),
    email          text NOT NULL,
    name           text NOT NULL,
    role           text NOT NULL CHECK (role IN ('admin', 'operator', 'viewer')),
    password_hash  text NOT NULL,
    created_at     timestamptz NOT NULL,
    updated_at     timestamptz NOT NULL,
    UNIQUE (org_id, email)
);

CREATE TABLE agents (
    id                   uuid PRIMARY KEY,
    org_id               uuid NOT NULL REFERENCES organizations (id),
    agent_id             text NOT NULL UNIQUE,
    name                 text NOT NULL,
    level                integer NOT NULL CHECK (level BETWEEN 1 AND 10),
    model                text,
    role                 text NOT NULL CHECK (role IN ('worker', 'hr', 'founder', 'admin')),
    mode                 text NOT NULL CHECK (mode IN ('worker', 'orchestrator', 'observer')),
    status               text NOT NULL CHECK (status IN ('pending', 'active', 'suspended', 'revoked')),
    parent_id            uuid REFERENCES agents (id),
    current_balance      bigint NOT NULL DEFAULT 0,
    budget_period_limit  bigint CHECK (budget_period_limit >= 0),
    budget_period_spent  bigint NOT NULL DEFAULT 0,
    budget_period_start  timestamptz NOT NULL,
    management_fee_pct   integer NOT NULL DEFAULT 0 CHECK (management_fee_pct BETWEEN 0 AND 50),
    reputation_score     integer NOT NULL DEFAULT 50 CHECK (reputation_score BETWEEN 0 AND 100),
    metadata             jsonb NOT NULL DEFAULT '{}',
    encrypted_secret     bytea NOT NULL,
    created_at           timestamptz NOT NULL,
    updated_at           timestamptz NOT NULL
);
CREATE INDEX agents_org ON agents (org_id, id);
CREATE INDEX agents_parent ON agents (parent_id);

CREATE TABLE tasks (
    id                 uuid PRIMARY KEY,
    org_id             uuid NOT NULL REFERENCES organizations (id),
    title              text NOT NULL,
    description        text,
    status             text NOT NULL CHECK (status IN ('backlog', 'todo', 'in_progress', 'review', 'done', 'blocked', 'cancelled')),
    priority           text NOT NULL CHECK (priority IN ('urgent', 'high', 'normal', 'low')),
    assignee_id        uuid REFERENCES agents (id),
    creator_id         uuid REFERENCES agents (id),
    parent_task_id     uuid REFERENCES tasks (id),
    approval_required  boolean NOT NULL DEFAULT false,
    due_at             timestamptz,
    tags               jsonb NOT NULL DEFAULT '[]',
    metadata           jsonb NOT NULL DEFAULT '{}',
    created_at         timestamptz NOT NULL,
    updated_at         timestamptz NOT NULL,
    version            bigint NOT NULL DEFAULT 1
);
-- Ids are UUID v7 (time-ordered): (org_id, id DESC) serves "newest first" keyset paging.
CREATE INDEX tasks_org_newest ON tasks (org_id, id DESC);
CREATE INDEX tasks_org_status ON tasks (org_id, status, id DESC);
CREATE INDEX tasks_org_assignee ON tasks (org_id, assignee_id, id DESC);
CREATE INDEX tasks_org_creator ON tasks (org_id, creator_id, id DESC);
CREATE INDEX tasks_org_parent ON tasks (org_id, parent_task_id, id DESC);

CREATE TABLE events (
    id           uuid PRIMARY KEY,
    org_id       uuid NOT NULL REFERENCES organizations (id),
    type         text NOT NULL,
    actor_id     uuid,
    entity_type  text NOT NULL,
    entity_id    uuid NOT NULL,
    severity     text NOT NULL CHECK (severity IN ('info', 'warning', 'error')),
    payload      jsonb NOT NULL DEFAULT '{}',
    created_at   timestamptz NOT NULL
);
CREATE INDEX events_org_newest ON events (org_id, created_at DESC, id DESC);
CREATE INDEX events_org_type ON events (org_id, type, created_at DESC);
CREATE INDEX events_org_entity ON events (org_id, entity_id, created_at DESC);
CREATE INDEX events_org_actor ON events (org_id, actor_id, created_at DESC);

-- The audit log is append-only, even for someone with SQL access (decision D-70).
CREATE FUNCTION muster_events_are_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'events are append-only: % is not allowed', TG_OP;
END
$$;
CREATE TRIGGER events_no_update_or_delete BEFORE UPDATE OR DELETE ON events
    FOR EACH ROW EXECUTE FUNCTION muster_events_are_immutable();
CREATE TRIGGER events_no_truncate BEFORE TRUNCATE ON events
    FOR EACH STATEMENT EXECUTE FUNCTION muster_events_are_immutable();

CREATE TABLE nonces (
    agent_id    uuid NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
    nonce       text NOT NULL,
    expires_at  timestamptz NOT NULL,
    PRIMARY KEY (agent_id, nonce)
);
CREATE INDEX nonces_expiry ON nonces (expires_at);
