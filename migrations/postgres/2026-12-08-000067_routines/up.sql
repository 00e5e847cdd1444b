-- Routines (issue 66, decision D-108): work that recurs on a cron schedule. A routine
-- creates a task for each due time; routine_firings keeps one row per (routine, due
-- time), and its primary key is what keeps several instances from firing a due time
-- twice (the firing that loses the race rolls back whole). `task` is the JSON of the
-- task's fields (camelCase), or NULL for a routine that makes its tasks from a template.
-- Keep in step with migrations/sqlite and crates/persistence/src/schema.rs.
CREATE TABLE routines (
    id             uuid PRIMARY KEY,
    org_id         uuid NOT NULL REFERENCES organizations (id),
    name           text NOT NULL,
    schedule       text NOT NULL,
    timezone       text NOT NULL,
    task           text,
    template_id    uuid REFERENCES task_templates (id),
    enabled        boolean NOT NULL,
    catch_up       text NOT NULL CHECK (catch_up IN ('skip', 'one', 'all')),
    owner_agent_id uuid REFERENCES agents (id),
    owner_user_id  uuid REFERENCES users (id),
    next_run_at    timestamptz,
    last_run_at    timestamptz,
    last_task_id   uuid,
    last_error     text,
    paused_reason  text,
    created_at     timestamptz NOT NULL,
    updated_at     timestamptz NOT NULL,
    version        bigint NOT NULL,
    CHECK ((task IS NULL) <> (template_id IS NULL)),
    CHECK ((owner_agent_id IS NULL) <> (owner_user_id IS NULL))
);
-- Ids are UUID v7 (time-ordered): (org_id, id DESC) serves "newest first" keyset paging.
CREATE INDEX routines_org_newest ON routines (org_id, id DESC);
-- The job's question, every second on every instance: which routines are due.
CREATE INDEX routines_due ON routines (enabled, next_run_at);

CREATE TABLE routine_firings (
    routine_id  uuid NOT NULL REFERENCES routines (id) ON DELETE CASCADE,
    org_id      uuid NOT NULL REFERENCES organizations (id),
    due_at      timestamptz NOT NULL,
    task_id     uuid NOT NULL REFERENCES tasks (id),
    fired_at    timestamptz NOT NULL,
    PRIMARY KEY (routine_id, due_at)
);
