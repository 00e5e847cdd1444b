//! Answers without a DTO of their own: health, and the two shapes of a login.

use serde::Serialize;

use crate::dto::auth::{TokensResponse, TwoFactorRequired};

/// `{status}` of `/health` and `/ready`.
#[derive(Serialize, utoipa::ToSchema)]
pub(crate) struct StatusBody {
    /// `ok` (`/health`) or `ready` (`/ready`).
    pub(crate) status: &'static str,
}

/// What `POST /auth/login` answers: tokens, or a request for the second factor.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(untagged)]
pub(crate) enum LoginAnswer {
    /// Signed in.
    Tokens(TokensResponse),
    /// The account has TOTP on: send the same body again with `totpCode`.
    TwoFactor(TwoFactorRequired),
}
