use serde::Serialize;

use crate::model::UserRole;

/// `user.created`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UserCreated {
    /// The login e-mail.
    pub email: String,
    /// The role.
    pub role: UserRole,
}

/// `user.login`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UserLogin {
    /// `password`, `oauth` or `local`.
    pub method: String,
    /// Whether a second factor was checked.
    pub two_factor: bool,
}

/// `user.login_failed`. Never the password or code that was tried.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UserLoginFailed {
    /// Why, such as `invalid_credentials`, `invalid_totp` or `locked`.
    pub reason: String,
}

/// `user.logout`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UserLogout {
    /// Whether every session of the user ended (`/auth/logout-all`).
    pub all_sessions: bool,
}

/// `user.password_changed`, `user.totp_enabled` and `user.totp_disabled`: the fact
/// alone. Secrets never appear in events.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct UserSecurityChanged {}

/// `api_key.created`. Never the key itself.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ApiKeyCreated {
    /// The key's name.
    pub name: String,
    /// Its first 12 characters, as shown in listings.
    pub key_prefix: String,
    /// Its scopes (`read`, `write`, `admin`).
    pub scopes: Vec<String>,
}

/// `api_key.revoked`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ApiKeyRevoked {
    /// The key's first 12 characters.
    pub key_prefix: String,
}
