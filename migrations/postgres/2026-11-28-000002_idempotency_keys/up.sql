-- Idempotency-Key: a POST's response kept for its retries, per credential, method, path
-- and key, for 24 hours (a background job purges older keys). A row without a status is
-- a request still being handled.
CREATE TABLE idempotency_keys (
    scope          text NOT NULL,
    method         text NOT NULL,
    path           text NOT NULL,
    key            text NOT NULL,
    fingerprint    bytea NOT NULL,
    status_code    integer,
    content_type   text,
    response_body  bytea,
    created_at     timestamptz NOT NULL,
    PRIMARY KEY (scope, method, path, key)
);
CREATE INDEX idempotency_keys_age ON idempotency_keys (created_at);
