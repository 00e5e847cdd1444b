DROP INDEX tasks_claimable;
DROP INDEX tasks_lease_expiry;
ALTER TABLE tasks DROP COLUMN lease_expires_at;
