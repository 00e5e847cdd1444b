-- Login throttling per account and client address (decision D-14, hardened by issue 61):
-- one failure streak per (account or typed e-mail, client address), named by a SHA-256
-- of both, so that neither e-mails nor addresses are stored here. Anyone can start a
-- streak (one per e-mail typed), so streaks are purged a day after their last failure,
-- oldest first, along the index. The users' own counters go: a stranger's failures no
-- longer lock an account for everyone. Keep in step with migrations/sqlite and
-- crates/persistence/src/schema.rs.
CREATE TABLE login_throttles (
    key_hash         bytea PRIMARY KEY CHECK (octet_length(key_hash) = 32),
    failures         integer NOT NULL CHECK (failures >= 0),
    last_failure_at  timestamptz NOT NULL
);
CREATE INDEX login_throttles_last_failure ON login_throttles (last_failure_at);

ALTER TABLE users
    DROP COLUMN failed_logins,
    DROP COLUMN locked_until;
