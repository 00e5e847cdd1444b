-- Inbound webhook keys (D-80). The key is the URL credential and is shown on reads; the
-- body-signing secret is stored sealed (AES-256-GCM, bound to the row).
CREATE TABLE inbound_webhook_keys (
    id                TEXT PRIMARY KEY NOT NULL,
    org_id            TEXT NOT NULL REFERENCES organizations (id),
    name              TEXT NOT NULL,
    key               TEXT NOT NULL UNIQUE,
    sealed_secret     BLOB NOT NULL,
    default_agent_id  TEXT,
    default_priority  TEXT NOT NULL,
    default_tags      TEXT NOT NULL DEFAULT '[]',
    enabled           INTEGER NOT NULL DEFAULT 1,
    last_used_at      TEXT,
    created_at        TEXT NOT NULL,
    updated_at        TEXT NOT NULL
) STRICT;
CREATE INDEX inbound_webhook_keys_org_newest ON inbound_webhook_keys (org_id, created_at DESC, id DESC);
