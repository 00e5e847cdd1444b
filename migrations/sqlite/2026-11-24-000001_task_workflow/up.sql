-- The task workflow beyond create and transition: user creators, approval, the clocks
-- the escalation sweep reads, dependencies (D-31, D-32), comments (D-40), escalations
-- (D-37), templates (D-38), agents' capabilities (D-35), and the credit ledger and
-- reputation history that task outcomes write (D-58, D-63). Keep in step with
-- migrations/postgres and crates/persistence/src/schema.rs.

-- A task's creator is an agent (creator_id) or a user (creator_user_id), never both.
ALTER TABLE tasks ADD COLUMN creator_user_id TEXT REFERENCES users (id);
ALTER TABLE tasks ADD COLUMN approved_by TEXT;
ALTER TABLE tasks ADD COLUMN approved_at TEXT;
ALTER TABLE tasks ADD COLUMN status_changed_at TEXT;
ALTER TABLE tasks ADD COLUMN last_activity_at TEXT;
UPDATE tasks SET status_changed_at = updated_at, last_activity_at = updated_at;
CREATE INDEX tasks_org_creator_user ON tasks (org_id, creator_user_id, id DESC);
-- The sweep's scans: by status and how long ago it changed, and by due date.
CREATE INDEX tasks_status_changed ON tasks (status, status_changed_at);
CREATE INDEX tasks_due ON tasks (due_at) WHERE due_at IS NOT NULL;
CREATE INDEX tasks_assignee_open ON tasks (assignee_id, status) WHERE assignee_id IS NOT NULL;

CREATE TABLE task_dependencies (
    id             TEXT PRIMARY KEY NOT NULL,
    org_id         TEXT NOT NULL REFERENCES organizations (id),
    task_id        TEXT NOT NULL REFERENCES tasks (id),
    depends_on_id  TEXT NOT NULL REFERENCES tasks (id),
    blocking       INTEGER NOT NULL DEFAULT 0 CHECK (blocking IN (0, 1)),
    created_at     TEXT NOT NULL,
    UNIQUE (task_id, depends_on_id),
    CHECK (task_id <> depends_on_id)
) STRICT;
CREATE INDEX task_dependencies_depends_on ON task_dependencies (depends_on_id);

CREATE TABLE task_comments (
    id                 TEXT PRIMARY KEY NOT NULL,
    org_id             TEXT NOT NULL REFERENCES organizations (id),
    task_id            TEXT NOT NULL REFERENCES tasks (id),
    agent_id           TEXT REFERENCES agents (id),
    user_id            TEXT REFERENCES users (id),
    parent_comment_id  TEXT REFERENCES task_comments (id),
    body               TEXT NOT NULL,
    created_at         TEXT NOT NULL,
    CHECK (agent_id IS NULL OR user_id IS NULL)
) STRICT;
CREATE INDEX task_comments_task ON task_comments (task_id, id);

CREATE TABLE escalations (
    id             TEXT PRIMARY KEY NOT NULL,
    org_id         TEXT NOT NULL REFERENCES organizations (id),
    task_id        TEXT NOT NULL REFERENCES tasks (id),
    reason         TEXT NOT NULL CHECK (reason IN ('BLOCKED_TIMEOUT', 'STALE_TASK', 'SLA_BREACH', 'ASSIGNEE_INACTIVE', 'QUALITY_ISSUES', 'MANUAL', 'CAPACITY_OVERFLOW')),
    notes          TEXT,
    from_agent_id  TEXT REFERENCES agents (id),
    to_agent_id    TEXT REFERENCES agents (id),
    actor_id       TEXT,
    automatic      INTEGER NOT NULL DEFAULT 0 CHECK (automatic IN (0, 1)),
    created_at     TEXT NOT NULL
) STRICT;
CREATE INDEX escalations_task ON escalations (task_id, id);
-- The sweep escalates a task at most once per reason, however many instances run it.
CREATE UNIQUE INDEX escalations_automatic_once ON escalations (task_id, reason) WHERE automatic = 1;

CREATE TABLE task_templates (
    id                    TEXT PRIMARY KEY NOT NULL,
    org_id                TEXT NOT NULL REFERENCES organizations (id),
    name                  TEXT NOT NULL,
    name_key              TEXT NOT NULL,
    title                 TEXT NOT NULL,
    description           TEXT,
    priority              TEXT NOT NULL CHECK (priority IN ('urgent', 'high', 'normal', 'low')),
    tags                  TEXT NOT NULL DEFAULT '[]',
    approval_required     INTEGER NOT NULL DEFAULT 0 CHECK (approval_required IN (0, 1)),
    metadata              TEXT NOT NULL DEFAULT '{}',
    created_from_task_id  TEXT REFERENCES tasks (id),
    created_at            TEXT NOT NULL,
    UNIQUE (org_id, name_key)
) STRICT;
CREATE INDEX task_templates_org_newest ON task_templates (org_id, id DESC);

CREATE TABLE agent_capabilities (
    id           TEXT PRIMARY KEY NOT NULL,
    org_id       TEXT NOT NULL REFERENCES organizations (id),
    agent_id     TEXT NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
    capability   TEXT NOT NULL,
    proficiency  TEXT NOT NULL CHECK (proficiency IN ('basic', 'standard', 'expert')),
    created_at   TEXT NOT NULL,
    UNIQUE (agent_id, capability)
) STRICT;
CREATE INDEX agent_capabilities_org ON agent_capabilities (org_id, capability);

CREATE TABLE credit_ledger (
    id               TEXT PRIMARY KEY NOT NULL,
    org_id           TEXT NOT NULL REFERENCES organizations (id),
    agent_id         TEXT NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
    kind             TEXT NOT NULL CHECK (kind IN ('earned', 'fee', 'granted', 'spent', 'transfer_in', 'transfer_out')),
    amount           INTEGER NOT NULL,
    balance_after    INTEGER NOT NULL,
    reason           TEXT,
    task_id          TEXT REFERENCES tasks (id),
    counterparty_id  TEXT,
    created_at       TEXT NOT NULL
) STRICT;
CREATE INDEX credit_ledger_agent_newest ON credit_ledger (agent_id, id DESC);

CREATE TABLE reputation_events (
    id          TEXT PRIMARY KEY NOT NULL,
    org_id      TEXT NOT NULL REFERENCES organizations (id),
    agent_id    TEXT NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
    kind        TEXT NOT NULL,
    amount      INTEGER NOT NULL,
    reason      TEXT NOT NULL,
    task_id     TEXT REFERENCES tasks (id),
    created_at  TEXT NOT NULL
) STRICT;
CREATE INDEX reputation_events_agent_newest ON reputation_events (agent_id, id DESC);
