-- Idempotency-Key: a POST's response kept for its retries, per credential, method, path
-- and key, for 24 hours (a background job purges older keys). A row without a status is
-- a request still being handled.
CREATE TABLE idempotency_keys (
    scope          TEXT NOT NULL,
    method         TEXT NOT NULL,
    path           TEXT NOT NULL,
    key            TEXT NOT NULL,
    fingerprint    BLOB NOT NULL,
    status_code    INTEGER,
    content_type   TEXT,
    response_body  BLOB,
    created_at     TEXT NOT NULL,
    PRIMARY KEY (scope, method, path, key)
) STRICT;
CREATE INDEX idempotency_keys_age ON idempotency_keys (created_at);
