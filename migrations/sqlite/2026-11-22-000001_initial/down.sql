DROP TABLE nonces;
DROP TRIGGER events_no_delete;
DROP TRIGGER events_no_update;
DROP TABLE events;
DROP TABLE tasks;
DROP TABLE agents;
DROP TABLE users;
DROP TABLE organizations;
