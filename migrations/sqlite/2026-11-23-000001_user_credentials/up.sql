-- Users' second factor, login throttle and last login; the credentials of human users:
-- refresh tokens (decision D-13), recovery codes (D-15), API keys (D-17) and started
-- identity-provider sign-ins (D-16). Keep in step with migrations/postgres and
-- crates/persistence/src/schema.rs. Secrets are stored only as SHA-256 hashes (32-byte
-- BLOBs); uuid and timestamps are TEXT, JSON is TEXT, booleans are 0/1.

ALTER TABLE users ADD COLUMN email_verified INTEGER NOT NULL DEFAULT 0 CHECK (email_verified IN (0, 1));
ALTER TABLE users ADD COLUMN totp_enabled INTEGER NOT NULL DEFAULT 0 CHECK (totp_enabled IN (0, 1));
ALTER TABLE users ADD COLUMN totp_secret BLOB;
ALTER TABLE users ADD COLUMN totp_pending_secret BLOB;
ALTER TABLE users ADD COLUMN totp_last_step INTEGER;
ALTER TABLE users ADD COLUMN failed_logins INTEGER NOT NULL DEFAULT 0 CHECK (failed_logins >= 0);
ALTER TABLE users ADD COLUMN locked_until TEXT;
ALTER TABLE users ADD COLUMN last_login_at TEXT;

CREATE TABLE refresh_tokens (
    id           TEXT PRIMARY KEY NOT NULL,
    org_id       TEXT NOT NULL REFERENCES organizations (id),
    user_id      TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    family_id    TEXT NOT NULL,
    token_hash   BLOB NOT NULL UNIQUE CHECK (length(token_hash) = 32),
    created_at   TEXT NOT NULL,
    expires_at   TEXT NOT NULL,
    replaced_at  TEXT,
    revoked_at   TEXT
) STRICT;
CREATE INDEX refresh_tokens_user ON refresh_tokens (user_id);
CREATE INDEX refresh_tokens_family ON refresh_tokens (family_id);

CREATE TABLE recovery_codes (
    user_id    TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    code_hash  BLOB NOT NULL CHECK (length(code_hash) = 32),
    used_at    TEXT,
    PRIMARY KEY (user_id, code_hash)
) STRICT, WITHOUT ROWID;

CREATE TABLE api_keys (
    id            TEXT PRIMARY KEY NOT NULL,
    org_id        TEXT NOT NULL REFERENCES organizations (id),
    user_id       TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    name          TEXT NOT NULL,
    key_prefix    TEXT NOT NULL,
    key_hash      BLOB NOT NULL UNIQUE CHECK (length(key_hash) = 32),
    scopes        TEXT NOT NULL DEFAULT '[]',
    last_used_at  TEXT,
    expires_at    TEXT,
    created_at    TEXT NOT NULL
) STRICT;
CREATE INDEX api_keys_owner_newest ON api_keys (org_id, user_id, id DESC);

CREATE TABLE oauth_states (
    state_hash     BLOB PRIMARY KEY NOT NULL CHECK (length(state_hash) = 32),
    code_verifier  TEXT NOT NULL,
    created_at     TEXT NOT NULL,
    expires_at     TEXT NOT NULL
) STRICT, WITHOUT ROWID;
