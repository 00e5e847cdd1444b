-- Inbound webhook keys (D-80). The key is the URL credential and is shown on reads; the
-- body-signing secret is stored sealed (AES-256-GCM, bound to the row).
CREATE TABLE inbound_webhook_keys (
    id                uuid PRIMARY KEY,
    org_id            uuid NOT NULL REFERENCES organizations (id),
    name              text NOT NULL,
    key               text NOT NULL UNIQUE,
    sealed_secret     bytea NOT NULL,
    default_agent_id  uuid,
    default_priority  text NOT NULL,
    default_tags      jsonb NOT NULL DEFAULT '[]',
    enabled           boolean NOT NULL DEFAULT true,
    last_used_at      timestamptz,
    created_at        timestamptz NOT NULL,
    updated_at        timestamptz NOT NULL
);
CREATE INDEX inbound_webhook_keys_org_newest ON inbound_webhook_keys (org_id, created_at DESC, id DESC);
