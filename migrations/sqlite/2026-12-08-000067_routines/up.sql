-- Routines (issue 66, decision D-108): work that recurs on a cron schedule. A routine
-- creates a task for each due time; routine_firings keeps one row per (routine, due
-- time), and its primary key is what keeps several instances from firing a due time
-- twice (the firing that loses the race rolls back whole). `task` is the JSON of the
-- task's fields (camelCase), or NULL for a routine that makes its tasks from a template.
-- Keep in step with migrations/postgres and crates/persistence/src/schema.rs.
CREATE TABLE routines (
    id             TEXT PRIMARY KEY NOT NULL,
    org_id         TEXT NOT NULL REFERENCES organizations (id),
    name           TEXT NOT NULL,
    schedule       TEXT NOT NULL,
    timezone       TEXT NOT NULL,
    task           TEXT,
    template_id    TEXT REFERENCES task_templates (id),
    enabled        INTEGER NOT NULL CHECK (enabled IN (0, 1)),
    catch_up       TEXT NOT NULL CHECK (catch_up IN ('skip', 'one', 'all')),
    owner_agent_id TEXT REFERENCES agents (id),
    owner_user_id  TEXT REFERENCES users (id),
    next_run_at    TEXT,
    last_run_at    TEXT,
    last_task_id   TEXT,
    last_error     TEXT,
    paused_reason  TEXT,
    created_at     TEXT NOT NULL,
    updated_at     TEXT NOT NULL,
    version        INTEGER NOT NULL,
    CHECK ((task IS NULL) <> (template_id IS NULL)),
    CHECK ((owner_agent_id IS NULL) <> (owner_user_id IS NULL))
) STRICT;
-- Ids are UUID v7 (time-ordered): (org_id, id DESC) serves "newest first" keyset paging.
CREATE INDEX routines_org_newest ON routines (org_id, id DESC);
-- The job's question, every second on every instance: which routines are due.
CREATE INDEX routines_due ON routines (enabled, next_run_at);

CREATE TABLE routine_firings (
    routine_id  TEXT NOT NULL REFERENCES routines (id) ON DELETE CASCADE,
    org_id      TEXT NOT NULL REFERENCES organizations (id),
    due_at      TEXT NOT NULL,
    task_id     TEXT NOT NULL REFERENCES tasks (id),
    fired_at    TEXT NOT NULL,
    PRIMARY KEY (routine_id, due_at)
) STRICT, WITHOUT ROWID;
