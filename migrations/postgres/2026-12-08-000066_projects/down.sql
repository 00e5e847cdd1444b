DROP INDEX tasks_org_project;
ALTER TABLE tasks DROP COLUMN project_id;
DROP TABLE projects;
