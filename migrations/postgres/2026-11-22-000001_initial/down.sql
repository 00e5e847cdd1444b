DROP TABLE nonces;
DROP TRIGGER events_no_truncate ON events;
DROP TRIGGER events_no_update_or_delete ON events;
DROP TABLE events;
DROP FUNCTION muster_events_are_immutable();
DROP TABLE tasks;
DROP TABLE agents;
DROP TABLE users;
DROP TABLE organizations;
