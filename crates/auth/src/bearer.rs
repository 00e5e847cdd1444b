//! `Authorization: Bearer` credentials of human users: access tokens (decision D-13) and
//! API keys (decision D-17), each turned into the user's [`Actor`].

use std::fmt;
use std::sync::Arc;

use muster_domain::model::{Actor, ActorKind, KeyAccess};
use muster_domain::ports::{Clock, RepositoryError, TokenMinter as _, UserRepository};
use time::Duration;

use crate::tokens::{API_KEY_PREFIX, TokenService};

/// How stale a key's `lastUsedAt` may get before a use is written down: a busy key
/// costs one write a minute, not one per request.
const LAST_USED_RESOLUTION: Duration = Duration::minutes(1);

/// Why a bearer credential was refused.
#[derive(Debug, thiserror::Error)]
pub enum BearerAuthError {
    /// The access token is past its expiry.
    #[error("access token expired")]
    ExpiredAccessToken,
    /// Not an access token this deployment signed.
    #[error("invalid access token")]
    InvalidAccessToken,
    /// No such key, or it was deleted.
    #[error("invalid API key")]
    InvalidApiKey,
    /// The key is past its expiry.
    #[error("API key expired")]
    ExpiredApiKey,
    /// The key store failed.
    #[error("authentication storage unavailable")]
    Storage(#[source] RepositoryError),
}

impl BearerAuthError {
    /// Every code [`code`](Self::code) can answer (decision D-102).
    pub const CODES: &'static [&'static str] = &[
        "access_token_expired",
        "invalid_access_token",
        "invalid_api_key",
        "api_key_expired",
        "internal",
        "unavailable",
    ];

    /// The stable code of the refusal (decision D-102). An unreachable key store is
    /// `unavailable`, any other storage failure `internal`.
    pub const fn code(&self) -> &'static str {
        match self {
            Self::ExpiredAccessToken => "access_token_expired",
            Self::InvalidAccessToken => "invalid_access_token",
            Self::InvalidApiKey => "invalid_api_key",
            Self::ExpiredApiKey => "api_key_expired",
            Self::Storage(RepositoryError::Unavailable(_)) => "unavailable",
            Self::Storage(_) => "internal",
        }
    }
}

impl From<RepositoryError> for BearerAuthError {
    fn from(err: RepositoryError) -> Self {
        Self::Storage(err)
    }
}

/// Verifies access tokens (no storage read) and API keys (one read, and a write at most
/// once a minute per key for `lastUsedAt`).
pub struct BearerAuthenticator {
    tokens: Arc<TokenService>,
    users: Arc<dyn UserRepository>,
    clock: Arc<dyn Clock>,
}

impl fmt::Debug for BearerAuthenticator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BearerAuthenticator")
            .finish_non_exhaustive()
    }
}

impl BearerAuthenticator {
    /// Wires the authenticator.
    pub fn new(
        tokens: Arc<TokenService>,
        users: Arc<dyn UserRepository>,
        clock: Arc<dyn Clock>,
    ) -> Self {
        Self {
            tokens,
            users,
            clock,
        }
    }

    /// Whether a bearer credential is an API key rather than an access token.
    pub fn is_api_key(credential: &str) -> bool {
        credential.starts_with(API_KEY_PREFIX)
    }

    /// The signed-in user an access token stands for. The role is the one the token
    /// was issued with (tokens live 15 minutes).
    pub fn access_token(&self, token: &str) -> Result<Actor, BearerAuthError> {
        let grant = self
            .tokens
            .verify_access(token, self.clock.now())
            .map_err(|err| {
                if err.is_expired() {
                    BearerAuthError::ExpiredAccessToken
                } else {
                    BearerAuthError::InvalidAccessToken
                }
            })?;
        Ok(Actor {
            org_id: grant.org_id,
            kind: ActorKind::User {
                id: grant.user_id,
                role: grant.role,
                key: None,
            },
        })
    }

    /// The user an API key acts for, with the user's role as stored now (a user demoted
    /// since the key was made loses the powers at once), limited by the key's scope.
    pub async fn api_key(&self, key: &str) -> Result<Actor, BearerAuthError> {
        let hash = self.tokens.hash(key);
        let (api_key, owner) = self
            .users
            .api_key_by_hash(&hash)
            .await?
            .ok_or(BearerAuthError::InvalidApiKey)?;
        let now = self.clock.now();
        if api_key.is_expired(now) {
            return Err(BearerAuthError::ExpiredApiKey);
        }
        let stale = now - LAST_USED_RESOLUTION;
        if api_key.last_used_at.is_none_or(|at| at < stale) {
            self.users.touch_api_key(api_key.id, now, stale).await?;
        }
        Ok(Actor {
            org_id: owner.org_id,
            kind: ActorKind::User {
                id: owner.id,
                role: owner.role,
                key: Some(KeyAccess {
                    id: api_key.id,
                    scope: api_key.strongest_scope(),
                }),
            },
        })
    }
}

#[cfg(test)]
mod tests;
