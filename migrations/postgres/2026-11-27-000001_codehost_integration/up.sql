-- Code-host connections (D-87): one per installation across the deployment (events are
-- routed by installation id); the webhook secret is stored sealed (AES-256-GCM, bound
-- to the row).
CREATE TABLE codehost_connections (
    id               uuid PRIMARY KEY,
    org_id           uuid NOT NULL REFERENCES organizations (id),
    installation_id  bigint NOT NULL,
    name             text NOT NULL,
    repository       text,
    sealed_secret    bytea NOT NULL,
    enabled          boolean NOT NULL DEFAULT true,
    created_at       timestamptz NOT NULL,
    updated_at       timestamptz NOT NULL,
    CONSTRAINT codehost_connections_installation_id_key UNIQUE (installation_id)
);
CREATE INDEX codehost_connections_org_newest ON codehost_connections (org_id, created_at DESC, id DESC);

-- Each issue or pull request of a connection maps to one task.
CREATE TABLE codehost_links (
    connection_id  uuid NOT NULL REFERENCES codehost_connections (id) ON DELETE CASCADE,
    repository     text NOT NULL,
    kind           text NOT NULL CHECK (kind IN ('issue', 'pull_request')),
    number         bigint NOT NULL,
    task_id        uuid NOT NULL REFERENCES tasks (id),
    linked_at      timestamptz NOT NULL,
    PRIMARY KEY (connection_id, repository, kind, number)
);

-- Deliveries already handled, with their answer: a redelivery of the same
-- X-Host-Delivery is answered again without a second effect. The row is inserted
-- first in the transaction of the effect, so a concurrent redelivery waits for it.
CREATE TABLE codehost_deliveries (
    connection_id  uuid NOT NULL REFERENCES codehost_connections (id) ON DELETE CASCADE,
    delivery_id    text NOT NULL,
    received_at    timestamptz NOT NULL,
    action         text,
    task_id        uuid,
    reason         text,
    PRIMARY KEY (connection_id, delivery_id)
);
