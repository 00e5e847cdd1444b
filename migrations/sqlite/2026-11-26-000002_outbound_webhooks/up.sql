-- Outbound webhooks (D-81..D-85). The audit log is the outbox: appending an event inserts
-- one webhook_deliveries row per enabled post-hook subscribed to its type, in the same
-- transaction, so a crash never loses a notification.
CREATE TABLE webhooks (
    id                    TEXT PRIMARY KEY NOT NULL,
    org_id                TEXT NOT NULL REFERENCES organizations (id),
    name                  TEXT NOT NULL,
    url                   TEXT NOT NULL,
    sealed_secret         BLOB,
    events                TEXT NOT NULL,
    hook_type             TEXT NOT NULL CHECK (hook_type IN ('pre', 'post')),
    can_block             INTEGER NOT NULL DEFAULT 0,
    timeout_ms            INTEGER NOT NULL CHECK (timeout_ms BETWEEN 1000 AND 30000),
    enabled               INTEGER NOT NULL DEFAULT 1,
    consecutive_failures  INTEGER NOT NULL DEFAULT 0 CHECK (consecutive_failures >= 0),
    last_error            TEXT,
    -- Which worker delivers to the hook, until when: one at a time, in event order.
    lease_holder          TEXT,
    lease_until           TEXT,
    created_at            TEXT NOT NULL,
    updated_at            TEXT NOT NULL
) STRICT;
CREATE INDEX webhooks_org_newest ON webhooks (org_id, created_at DESC, id DESC);

-- One row per subscribed type ('*' for all), so that appending an event finds its
-- hooks with an index.
CREATE TABLE webhook_subscriptions (
    webhook_id  TEXT NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
    org_id      TEXT NOT NULL,
    event_type  TEXT NOT NULL,
    PRIMARY KEY (webhook_id, event_type)
) STRICT;
CREATE INDEX webhook_subscriptions_org_type ON webhook_subscriptions (org_id, event_type);

-- Pending post-hook deliveries; a row leaves when delivered or out of attempts. No
-- foreign key to events: it would stand in front of the append-only trigger's refusal of
-- TRUNCATE, and events are never deleted anyway.
CREATE TABLE webhook_deliveries (
    webhook_id       TEXT NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
    event_id         TEXT NOT NULL,
    event_at         TEXT NOT NULL,
    attempts         INTEGER NOT NULL DEFAULT 0,
    next_attempt_at  TEXT NOT NULL,
    PRIMARY KEY (webhook_id, event_id)
) STRICT;
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at);
CREATE INDEX webhook_deliveries_order ON webhook_deliveries (webhook_id, event_at, event_id);

-- The delivery log: every call of a hook (post-hook attempts, pre-hook questions, tests).
CREATE TABLE webhook_attempts (
    id           TEXT PRIMARY KEY NOT NULL,
    org_id       TEXT NOT NULL,
    webhook_id   TEXT NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
    event_id     TEXT,
    event_type   TEXT NOT NULL,
    delivery_id  TEXT NOT NULL,
    attempt      INTEGER NOT NULL,
    status_code  INTEGER,
    duration_ms  INTEGER NOT NULL,
    error        TEXT,
    created_at   TEXT NOT NULL
) STRICT;
CREATE INDEX webhook_attempts_newest ON webhook_attempts (webhook_id, created_at DESC, id DESC);
