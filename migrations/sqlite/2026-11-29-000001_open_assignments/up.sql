-- Who holds how much open work (routing's candidates, the roster): the open tasks of an
-- organization that have an assignee, and only those. The query repeats the predicate
-- word for word, so that the planner sees the index applies and never reads the
-- organization's closed or unassigned tasks, which grow without bound.
CREATE INDEX tasks_open_assignments ON tasks (org_id, assignee_id)
    WHERE assignee_id IS NOT NULL AND status NOT IN ('done', 'cancelled');
