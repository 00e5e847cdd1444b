-- Outbound webhooks (D-81..D-85). The audit log is the outbox: appending an event inserts
-- one webhook_deliveries row per enabled post-hook subscribed to its type, in the same
-- transaction, so a crash never loses a notification.
CREATE TABLE webhooks (
    id                    uuid PRIMARY KEY,
    org_id                uuid NOT NULL REFERENCES organizations (id),
    name                  text NOT NULL,
    url                   text NOT NULL,
    sealed_secret         bytea,
    events                jsonb NOT NULL,
    hook_type             text NOT NULL CHECK (hook_type IN ('pre', 'post')),
    can_block             boolean NOT NULL DEFAULT false,
    timeout_ms            integer NOT NULL CHECK (timeout_ms BETWEEN 1000 AND 30000),
    enabled               boolean NOT NULL DEFAULT true,
    consecutive_failures  integer NOT NULL DEFAULT 0 CHECK (consecutive_failures >= 0),
    last_error            text,
    -- Which worker delivers to the hook, until when: one at a time, in event order.
    lease_holder          uuid,
    lease_until           timestamptz,
    created_at            timestamptz NOT NULL,
    updated_at            timestamptz NOT NULL
);
CREATE INDEX webhooks_org_newest ON webhooks (org_id, created_at DESC, id DESC);

-- One row per subscribed type ('*' for all), so that appending an event finds its
-- hooks with an index.
CREATE TABLE webhook_subscriptions (
    webhook_id  uuid NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
    org_id      uuid NOT NULL,
    event_type  text NOT NULL,
    PRIMARY KEY (webhook_id, event_type)
);
CREATE INDEX webhook_subscriptions_org_type ON webhook_subscriptions (org_id, event_type);

-- Pending post-hook deliveries; a row leaves when delivered or out of attempts. No
-- foreign key to events: it would stand in front of the append-only trigger's refusal of
-- TRUNCATE, and events are never deleted anyway.
CREATE TABLE webhook_deliveries (
    webhook_id       uuid NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
    event_id         uuid NOT NULL,
    event_at         timestamptz NOT NULL,
    attempts         integer NOT NULL DEFAULT 0,
    next_attempt_at  timestamptz NOT NULL,
    PRIMARY KEY (webhook_id, event_id)
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at);
CREATE INDEX webhook_deliveries_order ON webhook_deliveries (webhook_id, event_at, event_id);

-- The delivery log: every call of a hook (post-hook attempts, pre-hook questions, tests).
CREATE TABLE webhook_attempts (
    id           uuid PRIMARY KEY,
    org_id       uuid NOT NULL,
    webhook_id   uuid NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
    event_id     uuid,
    event_type   text NOT NULL,
    delivery_id  uuid NOT NULL,
    attempt      integer NOT NULL,
    status_code  integer,
    duration_ms  integer NOT NULL,
    error        text,
    created_at   timestamptz NOT NULL
);
CREATE INDEX webhook_attempts_newest ON webhook_attempts (webhook_id, created_at DESC, id DESC);
