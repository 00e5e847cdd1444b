DROP INDEX tasks_open_assignments;
