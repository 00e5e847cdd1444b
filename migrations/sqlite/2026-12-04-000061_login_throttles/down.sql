ALTER TABLE users ADD COLUMN failed_logins INTEGER NOT NULL DEFAULT 0 CHECK (failed_logins >= 0);
ALTER TABLE users ADD COLUMN locked_until TEXT;

DROP TABLE login_throttles;
