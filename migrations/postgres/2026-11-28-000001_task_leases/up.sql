-- Claims with leases: until when the claiming agent holds a task in progress. The
-- partial index serves the expiry sweep, which looks only at leased tasks.
ALTER TABLE tasks ADD COLUMN lease_expires_at timestamptz;
CREATE INDEX tasks_lease_expiry ON tasks (lease_expires_at) WHERE lease_expires_at IS NOT NULL;
-- The claim's candidates: open, unassigned work of an organization by priority and age.
CREATE INDEX tasks_claimable ON tasks (org_id, created_at, id) WHERE status = 'todo' AND assignee_id IS NULL;
