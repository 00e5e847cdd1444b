//! `/auth` and `/api-keys` shapes. These routes answer bare objects (decision D-9);
//! lists are `{data: [...]}`.

use muster_domain::model::{ApiKey, ApiKeyScope, BearerSecret, TokenPair, User, UserRole};
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use uuid::Uuid;

/// `Debug` that shows the type's name only: these shapes carry passwords, codes or
/// tokens, which must never reach a log.
macro_rules! secret_debug {
    ($($name:ident),+ $(,)?) => {$(
        impl std::fmt::Debug for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(concat!(stringify!($name), "(***)"))
            }
        }
    )+};
}

secret_debug!(
    LoginBody,
    RefreshBody,
    PasswordBody,
    RegisterBody,
    TotpSetupBody,
    TotpCodeBody,
    TotpDisableBody,
    TokensResponse,
    TotpSetupResponse,
    ApiKeyResponse,
);

/// Body of `POST /auth/login`. In auth mode `local`, `password` alone.
#[derive(Default, Deserialize, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct LoginBody {
    /// Login e-mail (the document says required: only auth mode `local` lets it out).
    #[cfg_attr(feature = "openapi", schema(value_type = String, required = true, format = Email))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub email: Option<String>,
    /// Password.
    #[cfg_attr(feature = "openapi", schema(max_length = 128))]
    pub password: String,
    /// TOTP or recovery code.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub totp_code: Option<String>,
    /// Organization; the default one when absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub org_id: Option<Uuid>,
}

/// Body of `/auth/refresh` and `/auth/logout`.
#[derive(Default, Deserialize, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RefreshBody {
    /// The refresh token.
    pub refresh_token: String,
}

/// Body of `POST /auth/profile`.
#[derive(Debug, Default, Deserialize, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ProfileBody {
    /// New display name.
    #[cfg_attr(feature = "openapi", schema(min_length = 1))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// New e-mail.
    #[cfg_attr(feature = "openapi", schema(format = Email))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub email: Option<String>,
}

/// Body of `POST /auth/password`.
#[derive(Default, Deserialize, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct PasswordBody {
    /// The password now.
    pub current_password: String,
    /// The password to set.
    #[cfg_attr(feature = "openapi", schema(min_length = 8, max_length = 128))]
    pub new_password: String,
}

/// Body of `POST /auth/register`.
#[derive(Default, Deserialize, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RegisterBody {
    /// Login e-mail.
    #[cfg_attr(feature = "openapi", schema(format = Email))]
    pub email: String,
    /// Initial password.
    #[cfg_attr(feature = "openapi", schema(min_length = 8, max_length = 128))]
    pub password: String,
    /// Display name.
    #[cfg_attr(feature = "openapi", schema(min_length = 1))]
    pub name: String,
    /// Organization (the caller's own).
    pub org_id: Uuid,
    /// Role, `operator` by default.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub role: Option<UserRole>,
}

/// Body of `POST /auth/totp/setup`.
#[derive(Default, Deserialize, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct TotpSetupBody {
    /// The current password.
    pub password: String,
}

/// Body of `POST /auth/totp/verify`.
#[derive(Default, Deserialize, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct TotpCodeBody {
    /// A code from the authenticator.
    pub code: String,
}

/// Body of `POST /auth/totp/disable`.
#[derive(Default, Deserialize, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct TotpDisableBody {
    /// The current password.
    pub password: String,
    /// A code from the authenticator, or a recovery code.
    pub code: String,
}

/// `{accessToken, refreshToken, expiresIn}`.
#[derive(Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct TokensResponse {
    pub access_token: String,
    pub refresh_token: String,
    pub expires_in: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[serde(default)]
    pub user: Option<UserSummary>,
}

impl TokensResponse {
    /// The pair, with the user on login.
    pub fn new(tokens: &TokenPair, user: Option<&User>) -> Self {
        Self {
            access_token: tokens.access.token.expose().to_owned(),
            refresh_token: tokens.refresh_token.expose().to_owned(),
            expires_in: tokens.access.expires_in,
            user: user.map(UserSummary::from),
        }
    }
}

/// `{requiresTwoFactor: true, message}`.
#[derive(Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct TwoFactorRequired {
    pub requires_two_factor: bool,
    pub message: &'static str,
}

impl Default for TwoFactorRequired {
    fn default() -> Self {
        Self {
            requires_two_factor: true,
            message: "Two-factor authentication code required",
        }
    }
}

/// `{id, email, name, role}`.
#[derive(Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct UserSummary {
    pub id: Uuid,
    pub email: String,
    pub name: String,
    pub role: UserRole,
}

impl From<&User> for UserSummary {
    fn from(user: &User) -> Self {
        Self {
            id: user.id.as_uuid(),
            email: user.email.as_str().to_owned(),
            name: user.name.clone(),
            role: user.role,
        }
    }
}

/// The whole User of the contract.
#[derive(Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct UserResponse {
    pub id: Uuid,
    pub email: String,
    pub name: String,
    pub role: UserRole,
    pub org_id: Uuid,
    pub totp_enabled: bool,
    pub email_verified: bool,
    #[serde(with = "super::time::option")]
    pub last_login_at: Option<OffsetDateTime>,
    #[serde(with = "super::time::rfc3339")]
    pub created_at: OffsetDateTime,
}

impl From<&User> for UserResponse {
    fn from(user: &User) -> Self {
        Self {
            id: user.id.as_uuid(),
            email: user.email.as_str().to_owned(),
            name: user.name.clone(),
            role: user.role,
            org_id: user.org_id.as_uuid(),
            totp_enabled: user.totp.enabled,
            email_verified: user.email_verified,
            last_login_at: user.last_login_at,
            created_at: user.created_at,
        }
    }
}

/// `{qrCode, recoveryCodes, message}`.
#[derive(Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct TotpSetupResponse {
    /// PNG data URL.
    pub qr_code: String,
    /// Single-use codes.
    pub recovery_codes: Vec<String>,
    /// What to do next.
    pub message: String,
}

/// Body of `POST /api-keys`.
#[derive(Debug, Default, Deserialize, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct CreateApiKeyBody {
    /// Name.
    pub name: String,
    /// Scopes, `[read]` by default.
    #[cfg_attr(feature = "openapi", schema(min_items = 1))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scopes: Option<Vec<ApiKeyScope>>,
    /// Lifetime in days; no expiry when absent.
    #[cfg_attr(feature = "openapi", schema(minimum = 1, maximum = 3650))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expires_in_days: Option<i64>,
}

/// An API key without its secret; with it only in the creation answer.
#[derive(Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ApiKeyResponse {
    pub id: Uuid,
    pub name: String,
    pub key_prefix: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[serde(default)]
    pub secret: Option<String>,
    pub scopes: Vec<ApiKeyScope>,
    #[serde(with = "super::time::option")]
    pub last_used_at: Option<OffsetDateTime>,
    #[serde(with = "super::time::option", skip_serializing_if = "Option::is_none")]
    #[serde(default)]
    pub expires_at: Option<OffsetDateTime>,
    #[serde(with = "super::time::rfc3339")]
    pub created_at: OffsetDateTime,
}

impl ApiKeyResponse {
    /// The key, with its secret when just created.
    pub fn new(key: &ApiKey, secret: Option<&BearerSecret>) -> Self {
        Self {
            id: key.id.as_uuid(),
            name: key.name.as_str().to_owned(),
            key_prefix: key.key_prefix.clone(),
            secret: secret.map(|s| s.expose().to_owned()),
            scopes: key.scopes.clone(),
            last_used_at: key.last_used_at,
            expires_at: key.expires_at,
            created_at: key.created_at,
        }
    }
}

/// `{message}`.
#[derive(Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct MessageResponse {
    /// What happened.
    pub message: std::borrow::Cow<'static, str>,
}
