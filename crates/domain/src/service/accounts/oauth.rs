//! The sign-in redirect flow (decision D-16): `state` and a PKCE verifier are stored when
//! the browser leaves for the provider; the callback accepts each state once, exchanges
//! the code, and signs in the existing user of the default organization with the
//! provider's verified e-mail.

use time::Duration;

use super::{AccountService, LoginMethod};
use crate::model::{BearerSecret, Email, LoginOutcome, OAuthState};
use crate::ports::{IdentityProvider, ProviderError, transact};
use crate::service::ServiceError;

/// How long a started sign-in may take.
pub const SIGN_IN_TIMEOUT: Duration = Duration::minutes(10);

/// Why a redirect sign-in did not sign anyone in; the browser is sent back with
/// `?error=<code>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum SignInFailure {
    /// Unknown, used or expired `state`.
    #[error("invalid_state")]
    InvalidState,
    /// The provider refused the code, or the user denied consent.
    #[error("provider_error")]
    ProviderRefused,
    /// The provider could not be reached.
    #[error("provider_unavailable")]
    ProviderUnavailable,
    /// The provider did not verify the e-mail.
    #[error("email_not_verified")]
    EmailNotVerified,
    /// No user of the default organization has that e-mail.
    #[error("unknown_user")]
    UnknownUser,
    /// The user turned two-factor authentication on: they sign in with password and
    /// code, not through the provider alone.
    #[error("two_factor_required")]
    TwoFactorRequired,
}

impl AccountService {
    /// Remembers a started sign-in: `state` (stored hashed) and its PKCE verifier.
    pub async fn oauth_begin(
        &self,
        state: &str,
        code_verifier: BearerSecret,
    ) -> Result<(), ServiceError> {
        let now = self.now();
        let started = OAuthState {
            state_hash: self.ports.tokens.hash(state),
            code_verifier,
            created_at: now,
            expires_at: now + SIGN_IN_TIMEOUT,
        };
        transact(self.ports.uow.as_ref(), move |tx| {
            Box::pin(async move {
                tx.insert_oauth_state(&started).await?;
                Ok(())
            })
        })
        .await
    }

    /// Completes a sign-in from the provider's callback.
    pub async fn oauth_complete(
        &self,
        provider: &dyn IdentityProvider,
        state: &str,
        code: &str,
    ) -> Result<Result<LoginOutcome, SignInFailure>, ServiceError> {
        let hash = self.ports.tokens.hash(state);
        let started = transact(self.ports.uow.as_ref(), move |tx| {
            Box::pin(async move { Ok(tx.take_oauth_state(&hash).await?) })
        })
        .await?;
        let Some(started) = started.filter(|s| s.expires_at > self.now()) else {
            return Ok(Err(SignInFailure::InvalidState));
        };
        let identity = match provider
            .identify(code, started.code_verifier.expose())
            .await
        {
            Ok(identity) => identity,
            Err(ProviderError::Refused(_)) => return Ok(Err(SignInFailure::ProviderRefused)),
            Err(ProviderError::Unavailable(_)) => {
                return Ok(Err(SignInFailure::ProviderUnavailable));
            }
        };
        if !identity.email_verified {
            return Ok(Err(SignInFailure::EmailNotVerified));
        }
        let Some(org) = self.default_org().await? else {
            return Ok(Err(SignInFailure::UnknownUser));
        };
        let Ok(email) = Email::new(&identity.email) else {
            return Ok(Err(SignInFailure::UnknownUser));
        };
        let Some(user) = self.ports.users.user_by_email(org, &email).await? else {
            return Ok(Err(SignInFailure::UnknownUser));
        };
        match self
            .complete_login(user.org_id, user.id, None, LoginMethod::OAuth, None)
            .await
        {
            Ok(outcome) => Ok(Ok(outcome)),
            Err(ServiceError::Unauthorized(_)) => Ok(Err(SignInFailure::TwoFactorRequired)),
            Err(other) => Err(other),
        }
    }
}
