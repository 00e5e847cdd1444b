DROP INDEX events_stream;
ALTER TABLE events DROP COLUMN seq;
ALTER TABLE events DROP COLUMN tx_id;
