-- Claims with leases: until when the claiming agent holds a task in progress. The
-- partial index serves the expiry sweep, which looks only at leased tasks.
ALTER TABLE tasks ADD COLUMN lease_expires_at timestamptz;
CREATE INDEX tasks_lease_expiry ON tasks (lease_expires_at) WHERE lease_expires_at IS NOT NULL;
-- The claim's candidates, in claim order: open, unassigned work of an organization,
-- urgent first, then oldest. The claim query repeats this expression and predicate
-- word for word so that the planner walks the index instead of sorting every task.
CREATE INDEX tasks_claimable ON tasks (
    org_id,
    (CASE priority WHEN 'urgent' THEN 0 WHEN 'high' THEN 1 WHEN 'normal' THEN 2 ELSE 3 END),
    created_at,
    id
) WHERE status = 'todo' AND assignee_id IS NULL;
