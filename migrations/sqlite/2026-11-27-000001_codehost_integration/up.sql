-- Code-host connections (D-87): one per installation across the deployment (events are
-- routed by installation id); the webhook secret is stored sealed (AES-256-GCM, bound
-- to the row).
CREATE TABLE codehost_connections (
    id               TEXT PRIMARY KEY NOT NULL,
    org_id           TEXT NOT NULL REFERENCES organizations (id),
    installation_id  INTEGER NOT NULL UNIQUE,
    name             TEXT NOT NULL,
    repository       TEXT,
    sealed_secret    BLOB NOT NULL,
    enabled          INTEGER NOT NULL DEFAULT 1,
    created_at       TEXT NOT NULL,
    updated_at       TEXT NOT NULL
) STRICT;
CREATE INDEX codehost_connections_org_newest ON codehost_connections (org_id, created_at DESC, id DESC);

-- Each issue or pull request of a connection maps to one task.
CREATE TABLE codehost_links (
    connection_id  TEXT NOT NULL REFERENCES codehost_connections (id) ON DELETE CASCADE,
    repository     TEXT NOT NULL,
    kind           TEXT NOT NULL CHECK (kind IN ('issue', 'pull_request')),
    number         INTEGER NOT NULL,
    task_id        TEXT NOT NULL REFERENCES tasks (id),
    linked_at      TEXT NOT NULL,
    PRIMARY KEY (connection_id, repository, kind, number)
) STRICT;

-- Deliveries already handled, with their answer: a redelivery of the same
-- X-Host-Delivery is answered again without a second effect.
CREATE TABLE codehost_deliveries (
    connection_id  TEXT NOT NULL REFERENCES codehost_connections (id) ON DELETE CASCADE,
    delivery_id    TEXT NOT NULL,
    received_at    TEXT NOT NULL,
    action         TEXT,
    task_id        TEXT,
    reason         TEXT,
    PRIMARY KEY (connection_id, delivery_id)
) STRICT;
