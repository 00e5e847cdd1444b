-- Projects (issue 66): tasks grouped under a name and a goal. A task belongs to at most
-- one project (tasks.project_id); a project is active or archived, and an archived one
-- takes no new tasks (the service checks it under a share lock of the project's row).
-- Keep in step with migrations/postgres and crates/persistence/src/schema.rs.
CREATE TABLE projects (
    id               TEXT PRIMARY KEY NOT NULL,
    org_id           TEXT NOT NULL REFERENCES organizations (id),
    name             TEXT NOT NULL,
    goal             TEXT,
    description      TEXT,
    due_at           TEXT,
    status           TEXT NOT NULL CHECK (status IN ('active', 'archived')),
    -- Its creator is an agent or a user, never both; neither when the service made it.
    creator_agent_id TEXT REFERENCES agents (id),
    creator_user_id  TEXT REFERENCES users (id),
    created_at       TEXT NOT NULL,
    updated_at       TEXT NOT NULL,
    archived_at      TEXT,
    version          INTEGER NOT NULL,
    CHECK (creator_agent_id IS NULL OR creator_user_id IS NULL)
) STRICT;
-- Ids are UUID v7 (time-ordered): (org_id, id DESC) serves "newest first" keyset paging.
CREATE INDEX projects_org_newest ON projects (org_id, id DESC);

ALTER TABLE tasks ADD COLUMN project_id TEXT REFERENCES projects (id);
-- A project's tasks, newest first (GET /tasks?projectId=, progress, claims of a project).
CREATE INDEX tasks_org_project ON tasks (org_id, project_id, id DESC) WHERE project_id IS NOT NULL;
