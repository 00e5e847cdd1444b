//! Users and their credentials: every field set, millisecond timestamps, UUID v7 ids and
//! unique 32-byte hashes.

use muster_domain::model::{
    ApiKey, ApiKeyId, ApiKeyName, ApiKeyScope, BearerSecret, Email, LoginFamilyId, OAuthState,
    OrgId, RefreshToken, RefreshTokenId, TokenHash, TotpSettings, User, UserId, UserRole,
};
use time::Duration;

use super::{new_id, now_ms};

/// A hash no other test uses, with a NUL and a 0xff byte to prove it is stored as bytes.
pub fn unique_hash() -> TokenHash {
    let mut bytes = [0_u8; 32];
    bytes[..16].copy_from_slice(new_id().as_bytes());
    bytes[16..].copy_from_slice(new_id().as_bytes());
    bytes[30] = 0x00;
    bytes[31] = 0xff;
    TokenHash(bytes)
}

/// A user of `org` with every field set, none of them to its default.
pub fn full_user(org: OrgId) -> User {
    let now = now_ms();
    User {
        id: UserId::from_uuid(new_id()),
        org_id: org,
        email: Email::new(&format!("ada-{}@example.com", new_id().simple())).expect("email"),
        name: "Ada Lovelace, ünïcode".into(),
        role: UserRole::Operator,
        password_hash: "$argon2id$v=19$m=19456,t=2,p=1$c2FsdA$aGFzaA".into(),
        email_verified: true,
        totp: TotpSettings {
            enabled: true,
            secret: Some(vec![0x00, 0x9f, 0xff, 0x10, 0x00]),
            pending_secret: Some(vec![0xfe, 0x00, 0x01]),
            last_step: Some(59_000_000_123),
        },
        last_login_at: Some(now - Duration::hours(2)),
        created_at: now - Duration::days(1),
    }
}

/// `user` with every mutable field changed, and its optional ones empty.
pub fn changed_user(user: &User) -> User {
    User {
        email: Email::new(&format!("grace-{}@example.com", new_id().simple())).expect("email"),
        name: "Grace".into(),
        role: UserRole::Viewer,
        password_hash: "$argon2id$v=19$m=19456,t=2,p=1$b3RoZXI$b3RoZXI".into(),
        email_verified: !user.email_verified,
        totp: TotpSettings {
            enabled: !user.totp.enabled,
            ..TotpSettings::default()
        },
        last_login_at: None,
        ..user.clone()
    }
}

/// An unused, unrevoked refresh token of `user` in the login `family`.
pub fn refresh_token(user: &User, family: LoginFamilyId) -> RefreshToken {
    let now = now_ms();
    RefreshToken {
        id: RefreshTokenId::from_uuid(new_id()),
        org_id: user.org_id,
        user_id: user.id,
        family_id: family,
        token_hash: unique_hash(),
        created_at: now,
        expires_at: now + Duration::days(30),
        replaced_at: None,
        revoked_at: None,
    }
}

/// A new login family.
pub fn new_family() -> LoginFamilyId {
    LoginFamilyId::from_uuid(new_id())
}

/// A never used, never expiring key of `user` with every scope.
pub fn api_key(user: &User) -> ApiKey {
    ApiKey {
        id: ApiKeyId::from_uuid(new_id()),
        org_id: user.org_id,
        user_id: user.id,
        name: ApiKeyName::new("CI deploys ✓").expect("name"),
        key_prefix: "msk_a1b2c3d4".into(),
        key_hash: unique_hash(),
        scopes: ApiKeyScope::ALL.to_vec(),
        last_used_at: None,
        expires_at: None,
        created_at: now_ms(),
    }
}

/// A started sign-in that expires in ten minutes.
pub fn oauth_state() -> OAuthState {
    let now = now_ms();
    OAuthState {
        state_hash: unique_hash(),
        code_verifier: BearerSecret::new(format!("verifier-{}-~._", new_id().simple())),
        created_at: now,
        expires_at: now + Duration::minutes(10),
    }
}
