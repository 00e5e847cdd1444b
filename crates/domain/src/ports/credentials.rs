//! The cryptography of user credentials, behind ports so that the use cases that decide
//! with them stay pure and testable: password hashing, token minting, one-time codes and
//! the identity provider of the sign-in redirect flow. `muster-auth` and
//! `muster-outbound` implement them.

use async_trait::async_trait;
use time::OffsetDateTime;

use super::BoxError;
use crate::model::{AccessGrant, AccessToken, BearerSecret, Email, TokenHash, UserId};

/// Hashes and checks passwords. Deliberately slow: adapters run it off the executor.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait PasswordHasher: Send + Sync {
    /// A PHC string of `password` with a fresh salt.
    async fn hash(&self, password: &str) -> Result<String, BoxError>;

    /// Whether `password` matches `phc`. With `None` (no such user) it does the same
    /// work against a stand-in hash and answers `false`, so that an unknown e-mail costs
    /// what a wrong password costs.
    async fn verify(&self, password: &str, phc: Option<String>) -> Result<bool, BoxError>;
}

/// The two kinds of opaque bearer secret the service hands out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SecretKind {
    /// A refresh token (`mrt_` + 43 base64url characters).
    RefreshToken,
    /// An API key (`msk_` + 43 base64url characters).
    ApiKey,
}

/// Mints access tokens and opaque secrets, and hashes secrets for storage.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
pub trait TokenMinter: Send + Sync {
    /// A signed access token for `grant`, issued at `now`.
    fn access_token(
        &self,
        grant: &AccessGrant,
        now: OffsetDateTime,
    ) -> Result<AccessToken, BoxError>;

    /// A fresh random secret of `kind`.
    fn new_secret(&self, kind: SecretKind) -> Result<BearerSecret, BoxError>;

    /// The stored form of a secret (SHA-256).
    fn hash(&self, secret: &str) -> TokenHash;
}

/// A new TOTP secret, sealed for storage, with what the user scans.
#[derive(Clone, PartialEq, Eq)]
pub struct NewTotpSecret {
    /// The secret sealed for the user (stored as the pending secret).
    pub sealed: Vec<u8>,
    /// A `data:image/png;base64,` QR code of the `otpauth://` URI.
    pub qr_code: String,
    /// The secret in base32, for typing into an app that cannot scan the code.
    pub manual_key: BearerSecret,
}

impl std::fmt::Debug for NewTotpSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("NewTotpSecret(***)")
    }
}

/// Time-based one-time passwords (RFC 6238, SHA-1, 6 digits, 30 s; decision D-15) and
/// recovery codes.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
pub trait TotpAuthority: Send + Sync {
    /// A new secret for `user`, whose authenticator will show it as `email`.
    fn new_secret(&self, user: UserId, email: &Email) -> Result<NewTotpSecret, BoxError>;

    /// The time step `code` is valid for at `now` (one step either way tolerated), or
    /// `None` when it matches none. `sealed` is the user's sealed secret.
    fn check(
        &self,
        user: UserId,
        sealed: &[u8],
        code: &str,
        now: OffsetDateTime,
    ) -> Result<Option<i64>, BoxError>;

    /// Ten fresh recovery codes, `XXXX-XXXX`.
    fn recovery_codes(&self) -> Result<Vec<BearerSecret>, BoxError>;
}

/// The address an identity provider vouches for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExternalIdentity {
    /// The e-mail the provider returned.
    pub email: String,
    /// Whether the provider verified it.
    pub email_verified: bool,
}

/// Why the identity provider gave no identity.
#[derive(Debug, thiserror::Error)]
pub enum ProviderError {
    /// The provider refused (bad code, denied consent): the user's flow failed.
    #[error("the identity provider refused: {0}")]
    Refused(String),
    /// The provider could not be reached or answered nonsense.
    #[error("the identity provider failed")]
    Unavailable(#[source] BoxError),
}

/// The provider of the sign-in redirect flow (decision D-16).
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait IdentityProvider: Send + Sync {
    /// The consent-screen URL to send the browser to.
    fn authorize_url(&self, state: &str, code_challenge: &str) -> String;

    /// Exchanges an authorization `code` (with the PKCE `code_verifier`) for the
    /// identity it stands for.
    async fn identify(
        &self,
        code: &str,
        code_verifier: &str,
    ) -> Result<ExternalIdentity, ProviderError>;
}
