-- Users' second factor, login throttle and last login; the credentials of human users:
-- refresh tokens (decision D-13), recovery codes (D-15), API keys (D-17) and started
-- identity-provider sign-ins (D-16). Keep in step with migrations/sqlite and
-- crates/persistence/src/schema.rs. Secrets are stored only as SHA-256 hashes (32 bytes).

ALTER TABLE users
    ADD COLUMN email_verified       boolean NOT NULL DEFAULT false,
    ADD COLUMN totp_enabled         boolean NOT NULL DEFAULT false,
    ADD COLUMN totp_secret          bytea,
    ADD COLUMN totp_pending_secret  bytea,
    ADD COLUMN totp_last_step       bigint,
    ADD COLUMN failed_logins        integer NOT NULL DEFAULT 0 CHECK (failed_logins >= 0),
    ADD COLUMN locked_until         timestamptz,
    ADD COLUMN last_login_at        timestamptz;

CREATE TABLE refresh_tokens (
    id           uuid PRIMARY KEY,
    org_id       uuid NOT NULL REFERENCES organizations (id),
    user_id      uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    family_id    uuid NOT NULL,
    token_hash   bytea NOT NULL UNIQUE CHECK (octet_length(token_hash) = 32),
    created_at   timestamptz NOT NULL,
    expires_at   timestamptz NOT NULL,
    replaced_at  timestamptz,
    revoked_at   timestamptz
);
CREATE INDEX refresh_tokens_user ON refresh_tokens (user_id);
CREATE INDEX refresh_tokens_family ON refresh_tokens (family_id);

CREATE TABLE recovery_codes (
    user_id    uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    code_hash  bytea NOT NULL CHECK (octet_length(code_hash) = 32),
    used_at    timestamptz,
    PRIMARY KEY (user_id, code_hash)
);

CREATE TABLE api_keys (
    id            uuid PRIMARY KEY,
    org_id        uuid NOT NULL REFERENCES organizations (id),
    user_id       uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    name          text NOT NULL,
    key_prefix    text NOT NULL,
    key_hash      bytea NOT NULL UNIQUE CHECK (octet_length(key_hash) = 32),
    scopes        jsonb NOT NULL DEFAULT '[]',
    last_used_at  timestamptz,
    expires_at    timestamptz,
    created_at    timestamptz NOT NULL
);
-- Ids are UUID v7 (time-ordered): this serves "a user's keys, newest first".
CREATE INDEX api_keys_owner_newest ON api_keys (org_id, user_id, id DESC);

CREATE TABLE oauth_states (
    state_hash     bytea PRIMARY KEY CHECK (octet_length(state_hash) = 32),
    code_verifier  text NOT NULL,
    created_at     timestamptz NOT NULL,
    expires_at     timestamptz NOT NULL
);
