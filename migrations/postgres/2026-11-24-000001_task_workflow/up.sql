-- The task workflow beyond create and transition: user creators, approval, the clocks
-- the escalation sweep reads, dependencies (D-31, D-32), comments (D-40), escalations
-- (D-37), templates (D-38), agents' capabilities (D-35), and the credit ledger and
-- reputation history that task outcomes write (D-58, D-63). Keep in step with
-- migrations/sqlite and crates/persistence/src/schema.rs.

-- A task's creator is an agent (creator_id) or a user (creator_user_id), never both.
ALTER TABLE tasks ADD COLUMN creator_user_id uuid REFERENCES users (id);
ALTER TABLE tasks ADD COLUMN approved_by uuid;
ALTER TABLE tasks ADD COLUMN approved_at timestamptz;
ALTER TABLE tasks ADD COLUMN status_changed_at timestamptz;
ALTER TABLE tasks ADD COLUMN last_activity_at timestamptz;
UPDATE tasks SET status_changed_at = updated_at, last_activity_at = updated_at;
CREATE INDEX tasks_org_creator_user ON tasks (org_id, creator_user_id, id DESC);
-- The sweep's scans: by status and how long ago it changed, and by due date.
CREATE INDEX tasks_status_changed ON tasks (status, status_changed_at);
CREATE INDEX tasks_due ON tasks (due_at) WHERE due_at IS NOT NULL;
CREATE INDEX tasks_assignee_open ON tasks (assignee_id, status) WHERE assignee_id IS NOT NULL;

CREATE TABLE task_dependencies (
    id             uuid PRIMARY KEY,
    org_id         uuid NOT NULL REFERENCES organizations (id),
    task_id        uuid NOT NULL REFERENCES tasks (id),
    depends_on_id  uuid NOT NULL REFERENCES tasks (id),
    blocking       boolean NOT NULL DEFAULT false,
    created_at     timestamptz NOT NULL,
    UNIQUE (task_id, depends_on_id),
    CHECK (task_id <> depends_on_id)
);
CREATE INDEX task_dependencies_depends_on ON task_dependencies (depends_on_id);

CREATE TABLE task_comments (
    id                 uuid PRIMARY KEY,
    org_id             uuid NOT NULL REFERENCES organizations (id),
    task_id            uuid NOT NULL REFERENCES tasks (id),
    agent_id           uuid REFERENCES agents (id),
    user_id            uuid REFERENCES users (id),
    parent_comment_id  uuid REFERENCES task_comments (id),
    body               text NOT NULL,
    created_at         timestamptz NOT NULL,
    CHECK (agent_id IS NULL OR user_id IS NULL)
);
CREATE INDEX task_comments_task ON task_comments (task_id, id);

CREATE TABLE escalations (
    id             uuid PRIMARY KEY,
    org_id         uuid NOT NULL REFERENCES organizations (id),
    task_id        uuid NOT NULL REFERENCES tasks (id),
    reason         text NOT NULL CHECK (reason IN ('BLOCKED_TIMEOUT', 'STALE_TASK', 'SLA_BREACH', 'ASSIGNEE_INACTIVE', 'QUALITY_ISSUES', 'MANUAL', 'CAPACITY_OVERFLOW')),
    notes          text,
    from_agent_id  uuid REFERENCES agents (id),
    to_agent_id    uuid REFERENCES agents (id),
    actor_id       uuid,
    automatic      boolean NOT NULL DEFAULT false,
    created_at     timestamptz NOT NULL
);
CREATE INDEX escalations_task ON escalations (task_id, id);
-- The sweep escalates a task at most once per reason, however many instances run it.
CREATE UNIQUE INDEX escalations_automatic_once ON escalations (task_id, reason) WHERE automatic;

CREATE TABLE task_templates (
    id                    uuid PRIMARY KEY,
    org_id                uuid NOT NULL REFERENCES organizations (id),
    name                  text NOT NULL,
    name_key              text NOT NULL,
    title                 text NOT NULL,
    description           text,
    priority              text NOT NULL CHECK (priority IN ('urgent', 'high', 'normal', 'low')),
    tags                  jsonb NOT NULL DEFAULT '[]',
    approval_required     boolean NOT NULL DEFAULT false,
    metadata              jsonb NOT NULL DEFAULT '{}',
    created_from_task_id  uuid REFERENCES tasks (id),
    created_at            timestamptz NOT NULL,
    UNIQUE (org_id, name_key)
);
CREATE INDEX task_templates_org_newest ON task_templates (org_id, id DESC);

CREATE TABLE agent_capabilities (
    id           uuid PRIMARY KEY,
    org_id       uuid NOT NULL REFERENCES organizations (id),
    agent_id     uuid NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
    capability   text NOT NULL,
    proficiency  text NOT NULL CHECK (proficiency IN ('basic', 'standard', 'expert')),
    created_at   timestamptz NOT NULL,
    UNIQUE (agent_id, capability)
);
CREATE INDEX agent_capabilities_org ON agent_capabilities (org_id, capability);

CREATE TABLE credit_ledger (
    id               uuid PRIMARY KEY,
    org_id           uuid NOT NULL REFERENCES organizations (id),
    agent_id         uuid NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
    kind             text NOT NULL CHECK (kind IN ('earned', 'fee', 'granted', 'spent', 'transfer_in', 'transfer_out')),
    amount           bigint NOT NULL,
    balance_after    bigint NOT NULL,
    reason           text,
    task_id          uuid REFERENCES tasks (id),
    counterparty_id  uuid,
    created_at       timestamptz NOT NULL
);
CREATE INDEX credit_ledger_agent_newest ON credit_ledger (agent_id, id DESC);

CREATE TABLE reputation_events (
    id          uuid PRIMARY KEY,
    org_id      uuid NOT NULL REFERENCES organizations (id),
    agent_id    uuid NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
    kind        text NOT NULL,
    amount      integer NOT NULL,
    reason      text NOT NULL,
    task_id     uuid REFERENCES tasks (id),
    created_at  timestamptz NOT NULL
);
CREATE INDEX reputation_events_agent_newest ON reputation_events (agent_id, id DESC);
