//! Credentials of human users: access and refresh tokens (decision D-13), API keys with
//! scopes (D-17) and the state of an identity-provider sign-in (D-16). Secrets travel as
//! [`BearerSecret`], whose `Debug` never shows them, and are stored only as
//! [`TokenHash`]es.

use std::fmt;

use time::OffsetDateTime;

use super::{ApiKeyId, LoginFamilyId, OrgId, RefreshTokenId, User, UserId, UserRole};
use crate::ValidationError;
use crate::validation::{max_chars, no_nul};

/// A secret handed to a client once (a refresh token, an API key, an access token).
/// Its `Debug` output hides it.
#[derive(Clone, PartialEq, Eq)]
pub struct BearerSecret(String);

impl BearerSecret {
    /// Wraps a secret.
    pub fn new(secret: String) -> Self {
        Self(secret)
    }

    /// The secret, to send to its owner or to hash.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for BearerSecret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("BearerSecret(***)")
    }
}

/// The SHA-256 of a bearer secret: what is stored and looked up instead of the secret.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct TokenHash(pub [u8; 32]);

impl fmt::Debug for TokenHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("TokenHash(..)")
    }
}

/// What an API key may do on behalf of its user (decision D-17). Each scope includes the
/// one before it: `read` < `write` < `admin`.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum ApiKeyScope {
    /// `GET` and `HEAD` requests.
    Read,
    /// Read, plus every task, comment, dependency, escalation, template and capability
    /// change.
    Write,
    /// Write, plus agent administration, budgets and credits.
    Admin,
}

impl ApiKeyScope {
    /// Every scope, weakest first.
    pub const ALL: [Self; 3] = [Self::Read, Self::Write, Self::Admin];

    /// The wire name.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Read => "read",
            Self::Write => "write",
            Self::Admin => "admin",
        }
    }

    /// Parses a wire name.
    pub fn parse(value: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.as_str() == value)
    }
}

/// An API key's name: trimmed, 1..=255 characters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiKeyName(String);

impl ApiKeyName {
    /// Trims and checks `value`.
    pub fn new(value: &str) -> Result<Self, ValidationError> {
        let trimmed = value.trim();
        if trimmed.is_empty() {
            return Err(ValidationError::new("name must not be empty"));
        }
        max_chars("name", trimmed, 255)?;
        no_nul("name", trimmed)?;
        Ok(Self(trimmed.to_owned()))
    }

    /// The name.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// A long-lived credential of a user, limited by its scopes (decision D-17).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiKey {
    /// Identity.
    pub id: ApiKeyId,
    /// The owner's organization.
    pub org_id: OrgId,
    /// The user it acts as.
    pub user_id: UserId,
    /// What the owner called it.
    pub name: ApiKeyName,
    /// The key's first 12 characters, shown in listings to recognize it.
    pub key_prefix: String,
    /// SHA-256 of the whole key.
    pub key_hash: TokenHash,
    /// Its scopes, weakest first, without repeats; never empty.
    pub scopes: Vec<ApiKeyScope>,
    /// When it was last used (updated at most once a minute).
    pub last_used_at: Option<OffsetDateTime>,
    /// After this it no longer authenticates; `None` for never.
    pub expires_at: Option<OffsetDateTime>,
    /// When it was created.
    pub created_at: OffsetDateTime,
}

impl ApiKey {
    /// Characters of the key kept as `keyPrefix`.
    pub const PREFIX_CHARS: usize = 12;

    /// The strongest scope the key carries (scopes include the weaker ones).
    pub fn strongest_scope(&self) -> ApiKeyScope {
        self.scopes
            .iter()
            .copied()
            .max()
            .unwrap_or(ApiKeyScope::Read)
    }

    /// Whether the key no longer authenticates at `now`.
    pub fn is_expired(&self, now: OffsetDateTime) -> bool {
        self.expires_at.is_some_and(|at| at <= now)
    }
}

/// One refresh token of a login (decision D-13). Rotating it stores a successor in the
/// same family and marks it replaced; presenting a replaced token again ends the family.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefreshToken {
    /// Identity.
    pub id: RefreshTokenId,
    /// The user's organization.
    pub org_id: OrgId,
    /// The user it signs in.
    pub user_id: UserId,
    /// The login it belongs to.
    pub family_id: LoginFamilyId,
    /// SHA-256 of the token.
    pub token_hash: TokenHash,
    /// When it was issued.
    pub created_at: OffsetDateTime,
    /// After this it is refused.
    pub expires_at: OffsetDateTime,
    /// When it was rotated (a successor was issued).
    pub replaced_at: Option<OffsetDateTime>,
    /// When it was revoked (logout, password change, reuse detected).
    pub revoked_at: Option<OffsetDateTime>,
}

/// What a valid access token says about its bearer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AccessGrant {
    /// The user.
    pub user_id: UserId,
    /// Their organization.
    pub org_id: OrgId,
    /// Their role when the token was issued.
    pub role: UserRole,
}

/// A signed, short-lived access token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AccessToken {
    /// The JWT.
    pub token: BearerSecret,
    /// Seconds until it expires.
    pub expires_in: u64,
}

/// What a successful login or refresh hands out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenPair {
    /// The short-lived access token.
    pub access: AccessToken,
    /// The refresh token that gets the next pair.
    pub refresh_token: BearerSecret,
}

/// The answer to a login attempt with valid credentials.
#[derive(Debug, Clone, PartialEq)]
pub enum LoginOutcome {
    /// Signed in.
    SignedIn {
        /// The tokens.
        tokens: TokenPair,
        /// Who signed in.
        user: Box<User>,
    },
    /// The password was right; a second factor is needed (decision D-15).
    TwoFactorRequired,
}

/// A started identity-provider sign-in (decision D-16): the `state` sent to the provider,
/// stored hashed, with the PKCE verifier that the token exchange needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OAuthState {
    /// SHA-256 of the `state` parameter.
    pub state_hash: TokenHash,
    /// The PKCE code verifier.
    pub code_verifier: BearerSecret,
    /// When the flow started.
    pub created_at: OffsetDateTime,
    /// After this the callback is refused.
    pub expires_at: OffsetDateTime,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scopes_are_ordered_and_named() {
        assert!(ApiKeyScope::Read < ApiKeyScope::Write);
        assert!(ApiKeyScope::Write < ApiKeyScope::Admin);
        for scope in ApiKeyScope::ALL {
            assert_eq!(ApiKeyScope::parse(scope.as_str()), Some(scope));
        }
        assert_eq!(ApiKeyScope::parse("Admin"), None);
    }

    #[test]
    fn secrets_do_not_show_in_debug() {
        let secret = BearerSecret::new("msk_very-secret".into());
        assert_eq!(format!("{secret:?}"), "BearerSecret(***)");
        assert_eq!(format!("{:?}", TokenHash([7; 32])), "TokenHash(..)");
    }

    #[test]
    fn a_key_expires_at_its_expiry_and_never_without_one() {
        use time::macros::datetime;
        let now = datetime!(2026-11-26 12:00 UTC);
        let key = |expires_at| ApiKey {
            id: ApiKeyId::from_uuid(uuid::Uuid::nil()),
            org_id: OrgId::from_uuid(uuid::Uuid::nil()),
            user_id: UserId::from_uuid(uuid::Uuid::nil()),
            name: ApiKeyName::new("ci").unwrap(),
            key_prefix: "msk_abcdefgh".to_owned(),
            key_hash: TokenHash([0; 32]),
            scopes: vec![ApiKeyScope::Read],
            last_used_at: None,
            expires_at,
            created_at: now,
        };
        assert!(!key(None).is_expired(now));
        assert!(!key(Some(now + time::Duration::SECOND)).is_expired(now));
        assert!(key(Some(now)).is_expired(now));
        assert!(key(Some(now - time::Duration::SECOND)).is_expired(now));
    }

    #[test]
    fn key_names_are_trimmed_and_bounded() {
        assert_eq!(ApiKeyName::new("  ci  ").unwrap().as_str(), "ci");
        assert!(ApiKeyName::new("   ").is_err());
        assert!(ApiKeyName::new(&"x".repeat(256)).is_err());
        assert!(ApiKeyName::new("a\0b").is_err());
    }
}
