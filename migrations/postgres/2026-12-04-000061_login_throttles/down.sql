ALTER TABLE users
    ADD COLUMN failed_logins integer NOT NULL DEFAULT 0 CHECK (failed_logins >= 0),
    ADD COLUMN locked_until timestamptz;

DROP TABLE login_throttles;
