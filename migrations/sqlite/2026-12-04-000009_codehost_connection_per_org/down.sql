-- Back to one connection per installation across the deployment (fails while two
-- organizations connect the same id); rebuilt as the up migration explains.
CREATE TABLE codehost_connections_prev (
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
INSERT INTO codehost_connections_prev
    (id, org_id, installation_id, name, repository, sealed_secret, enabled, created_at, updated_at)
SELECT id, org_id, installation_id, name, repository, sealed_secret, enabled, created_at, updated_at
FROM codehost_connections;

CREATE TABLE codehost_links_prev (
    connection_id  TEXT NOT NULL REFERENCES codehost_connections_prev (id) ON DELETE CASCADE,
    repository     TEXT NOT NULL,
    kind           TEXT NOT NULL CHECK (kind IN ('issue', 'pull_request')),
    number         INTEGER NOT NULL,
    task_id        TEXT NOT NULL REFERENCES tasks (id),
    linked_at      TEXT NOT NULL,
    PRIMARY KEY (connection_id, repository, kind, number)
) STRICT;
INSERT INTO codehost_links_prev (connection_id, repository, kind, number, task_id, linked_at)
SELECT connection_id, repository, kind, number, task_id, linked_at FROM codehost_links;

CREATE TABLE codehost_deliveries_prev (
    connection_id  TEXT NOT NULL REFERENCES codehost_connections_prev (id) ON DELETE CASCADE,
    delivery_id    TEXT NOT NULL,
    received_at    TEXT NOT NULL,
    action         TEXT,
    task_id        TEXT,
    reason         TEXT,
    PRIMARY KEY (connection_id, delivery_id)
) STRICT;
INSERT INTO codehost_deliveries_prev
    (connection_id, delivery_id, received_at, action, task_id, reason)
SELECT connection_id, delivery_id, received_at, action, task_id, reason FROM codehost_deliveries;

DROP TABLE codehost_deliveries;
DROP TABLE codehost_links;
DROP TABLE codehost_connections;
ALTER TABLE codehost_connections_prev RENAME TO codehost_connections;
ALTER TABLE codehost_links_prev RENAME TO codehost_links;
ALTER TABLE codehost_deliveries_prev RENAME TO codehost_deliveries;
CREATE INDEX codehost_connections_org_newest ON codehost_connections (org_id, created_at DESC, id DESC);
