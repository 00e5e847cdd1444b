-- The live event stream reads the log in the order its writes became final. Each event
-- records its writing transaction (tx_id) and its place in the log (seq); a reader
-- takes only events whose transaction is older than every transaction still running
-- (the snapshot's xmin), in (tx_id, seq) order, so an event committed late by a slow
-- transaction is never passed over. Rows written before this migration share tx_id 0.
ALTER TABLE events ADD COLUMN tx_id BIGINT NOT NULL DEFAULT 0;
ALTER TABLE events ALTER COLUMN tx_id SET DEFAULT (pg_current_xact_id()::text::bigint);
ALTER TABLE events ADD COLUMN seq BIGSERIAL;
CREATE INDEX events_stream ON events (org_id, tx_id, seq);
