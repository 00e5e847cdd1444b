-- What came of a task (a result given with a move) and how a cancelled task ended
-- (failed or rejected; NULL when it was abandoned): A2A's artifacts and final states.
ALTER TABLE tasks ADD COLUMN result TEXT;
ALTER TABLE tasks ADD COLUMN outcome TEXT CHECK (outcome IN ('failed', 'rejected'));
