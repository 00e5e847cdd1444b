//! Access tokens and opaque bearer secrets of human users (decision D-13, D-17).
//!
//! [`TokenService`] is the adapter of the domain's [`TokenMinter`] port:
//!
//! - access tokens are JWTs signed with HS256 under
//!   [`ServerKey::jwt_signing_key`], valid for [`ACCESS_TOKEN_TTL_SECS`], with exactly
//!   the claims `sub` (user UUID), `org` (organization UUID), `role`, `typ` (`access`),
//!   `iss`, `aud`, `iat` and `exp`; [`TokenService::verify_access`] checks them;
//! - refresh tokens are `mrt_` and API keys `msk_`, each followed by 32 random bytes in
//!   base64url without padding (43 characters);
//! - secrets are stored as their SHA-256 ([`token_hash`]).

use std::fmt;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use muster_domain::model::{
    AccessGrant, AccessToken, BearerSecret, OrgId, TokenHash, UserId, UserRole,
};
use muster_domain::ports::{BoxError, SecretKind, TokenMinter};
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use uuid::Uuid;

use crate::keys::{ServerKey, random_bytes, sha256};

/// Lifetime of an access token, in seconds (15 minutes).
pub const ACCESS_TOKEN_TTL_SECS: u64 = 900;

/// The `iss` claim unless configured otherwise.
pub const DEFAULT_ISSUER: &str = "muster";

/// The `aud` claim unless configured otherwise.
pub const DEFAULT_AUDIENCE: &str = "muster-api";

/// Prefix of refresh tokens.
pub const REFRESH_TOKEN_PREFIX: &str = "mrt_";

/// Prefix of API keys.
pub const API_KEY_PREFIX: &str = "msk_";

/// The `typ` claim of access tokens.
const ACCESS_TYP: &str = "access";

/// Random bytes in a refresh token or API key.
const SECRET_BYTES: usize = 32;

/// Why an access token was refused. The messages are what a client may be told: they
/// say nothing about which check failed beyond expiry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum AccessTokenError {
    /// The token is authentic but its `exp` has passed.
    #[error("access token expired")]
    Expired,
    /// Anything else: malformed, another algorithm, bad signature, wrong issuer,
    /// audience or type, or unparseable claims.
    #[error("invalid access token")]
    Invalid,
}

impl AccessTokenError {
    /// Whether the token was refused only for being past its expiry.
    pub const fn is_expired(self) -> bool {
        matches!(self, Self::Expired)
    }
}

/// The claims of an access token, exactly.
#[derive(Debug, Serialize, Deserialize)]
struct AccessClaims {
    sub: Uuid,
    org: Uuid,
    role: String,
    typ: String,
    iss: String,
    aud: String,
    iat: i64,
    exp: i64,
}

/// Mints and verifies access tokens, mints refresh tokens and API keys, and hashes
/// secrets: the adapter of [`TokenMinter`]. Its `Debug` output shows no key material.
#[derive(Clone)]
pub struct TokenService {
    encoding_key: EncodingKey,
    decoding_key: DecodingKey,
    validation: Validation,
    issuer: String,
    audience: String,
}

impl TokenService {
    /// A service signing with `key`'s access-token subkey, with the default `iss`
    /// ([`DEFAULT_ISSUER`]) and `aud` ([`DEFAULT_AUDIENCE`]).
    pub fn new(key: &ServerKey) -> Self {
        Self::with_names(key, DEFAULT_ISSUER, DEFAULT_AUDIENCE)
    }

    /// A service signing with `key`'s access-token subkey that writes and demands the
    /// given `iss` and `aud` claims.
    pub fn with_names(key: &ServerKey, issuer: &str, audience: &str) -> Self {
        let signing_key = key.jwt_signing_key();
        let mut validation = Validation::new(Algorithm::HS256);
        validation.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
        validation.set_issuer(&[issuer]);
        validation.set_audience(&[audience]);
        validation.leeway = 0;
        // jsonwebtoken checks `exp` against the system clock; `verify_access` checks it
        // against the caller's `now` instead.
        validation.validate_exp = false;
        validation.validate_nbf = false;
        Self {
            encoding_key: EncodingKey::from_secret(&signing_key),
            decoding_key: DecodingKey::from_secret(&signing_key),
            validation,
            issuer: issuer.to_owned(),
            audience: audience.to_owned(),
        }
    }

    /// The grant an access token carries, if it is valid at `now`: signed with HS256
    /// (no other algorithm is accepted) under this service's key, with its
    /// `iss` and `aud`, `typ` `access`, and `now` before `exp` (no leeway).
    pub fn verify_access(
        &self,
        token: &str,
        now: OffsetDateTime,
    ) -> Result<AccessGrant, AccessTokenError> {
        let claims =
            jsonwebtoken::decode::<AccessClaims>(token, &self.decoding_key, &self.validation)
                .map_err(|_| AccessTokenError::Invalid)?
                .claims;
        if claims.typ != ACCESS_TYP {
            return Err(AccessTokenError::Invalid);
        }
        let role = UserRole::parse(&claims.role).ok_or(AccessTokenError::Invalid)?;
        if now.unix_timestamp() >= claims.exp {
            return Err(AccessTokenError::Expired);
        }
        Ok(AccessGrant {
            user_id: UserId::from_uuid(claims.sub),
            org_id: OrgId::from_uuid(claims.org),
            role,
        })
    }

    /// The `iss` claim this service writes and demands.
    pub fn issuer(&self) -> &str {
        &self.issuer
    }

    /// The `aud` claim this service writes and demands.
    pub fn audience(&self) -> &str {
        &self.audience
    }
}

impl TokenMinter for TokenService {
    fn access_token(
        &self,
        grant: &AccessGrant,
        now: OffsetDateTime,
    ) -> Result<AccessToken, BoxError> {
        let iat = now.unix_timestamp();
        let claims = AccessClaims {
            sub: grant.user_id.as_uuid(),
            org: grant.org_id.as_uuid(),
            role: grant.role.as_str().to_owned(),
            typ: ACCESS_TYP.to_owned(),
            iss: self.issuer.clone(),
            aud: self.audience.clone(),
            iat,
            exp: iat.saturating_add_unsigned(ACCESS_TOKEN_TTL_SECS),
        };
        let token =
            jsonwebtoken::encode(&Header::new(Algorithm::HS256), &claims, &self.encoding_key)?;
        Ok(AccessToken {
            token: BearerSecret::new(token),
            expires_in: ACCESS_TOKEN_TTL_SECS,
        })
    }

    fn new_secret(&self, kind: SecretKind) -> Result<BearerSecret, BoxError> {
        Ok(BearerSecret::new(new_secret(kind)?))
    }

    fn hash(&self, secret: &str) -> TokenHash {
        token_hash(secret)
    }
}

impl fmt::Debug for TokenService {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TokenService")
            .field("algorithm", &"HS256")
            .field("issuer", &self.issuer)
            .field("audience", &self.audience)
            .finish_non_exhaustive()
    }
}

/// A fresh secret of `kind`: its prefix and 32 random bytes in base64url without
/// padding (47 characters in all).
pub fn new_secret(kind: SecretKind) -> Result<String, crate::keys::KeyError> {
    let prefix = match kind {
        SecretKind::RefreshToken => REFRESH_TOKEN_PREFIX,
        SecretKind::ApiKey => API_KEY_PREFIX,
    };
    let bytes: [u8; SECRET_BYTES] = random_bytes()?;
    Ok(format!("{prefix}{}", URL_SAFE_NO_PAD.encode(bytes)))
}

/// The stored form of a bearer secret: the SHA-256 of its UTF-8 text.
pub fn token_hash(secret: &str) -> TokenHash {
    TokenHash(sha256(secret.as_bytes()))
}

#[cfg(test)]
mod tests;
