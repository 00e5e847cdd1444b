DROP INDEX events_stream;
