-- What came of a task (a result given with a move) and how a cancelled task ended
-- (failed or rejected; NULL when it was abandoned): A2A's artifacts and final states.
ALTER TABLE tasks ADD COLUMN result text;
ALTER TABLE tasks ADD COLUMN outcome text CHECK (outcome IN ('failed', 'rejected'));
