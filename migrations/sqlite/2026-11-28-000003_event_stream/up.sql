-- The live event stream reads the log in rowid order: SQLite runs one write transaction
-- at a time, so rowids are handed out in the order writes become final. This index holds
-- (org_id, rowid) and serves "this organization's events after rowid N".
CREATE INDEX events_stream ON events (org_id);
