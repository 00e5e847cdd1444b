-- Projects (issue 66): tasks grouped under a name and a goal. A task belongs to at most
-- one project (tasks.project_id); a project is active or archived, and an archived one
-- takes no new tasks (the service checks it under a share lock of the project's row).
-- Keep in step with migrations/sqlite and crates/persistence/src/schema.rs.
CREATE TABLE projects (
    id               uuid PRIMARY KEY,
    org_id           uuid NOT NULL REFERENCES organizations (id),
    name             text NOT NULL,
    goal             text,
    description      text,
    due_at           timestamptz,
    status           text NOT NULL CHECK (status IN ('active', 'archived')),
    -- Its creator is an agent or a user, never both; neither when the service made it.
    creator_agent_id uuid REFERENCES agents (id),
    creator_user_id  uuid REFERENCES users (id),
    created_at       timestamptz NOT NULL,
    updated_at       timestamptz NOT NULL,
    archived_at      timestamptz,
    version          bigint NOT NULL,
    CHECK (creator_agent_id IS NULL OR creator_user_id IS NULL)
);
-- Ids are UUID v7 (time-ordered): (org_id, id DESC) serves "newest first" keyset paging.
CREATE INDEX projects_org_newest ON projects (org_id, id DESC);

ALTER TABLE tasks ADD COLUMN project_id uuid REFERENCES projects (id);
-- A project's tasks, newest first (GET /tasks?projectId=, progress, claims of a project).
CREATE INDEX tasks_org_project ON tasks (org_id, project_id, id DESC) WHERE project_id IS NOT NULL;
