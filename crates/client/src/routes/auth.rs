//! `/auth` (the signed-in user) and `/api-keys`.

use muster_wire::Data;
use muster_wire::auth::{
    ApiKeyResponse, CreateApiKeyBody, MessageResponse, PasswordBody, ProfileBody, RefreshBody,
    RegisterBody, TotpCodeBody, TotpDisableBody, TotpSetupBody, TotpSetupResponse, UserResponse,
    UserSummary,
};
use reqwest::Method;
use uuid::Uuid;

use super::data;
use crate::{Client, Error};

impl Client {
    /// `GET /auth/me`: the signed-in user.
    pub async fn me(&self) -> Result<UserResponse, Error> {
        self.get("/auth/me").await
    }

    /// `POST /auth/register`: a new user of an organization (an admin's call, or the
    /// first user's).
    pub async fn register_user(&self, body: &RegisterBody) -> Result<UserResponse, Error> {
        self.call(Method::POST, "/auth/register", body).await
    }

    /// `POST /auth/logout`: ends this client's session (its refresh token).
    pub async fn logout(&self) -> Result<(), Error> {
        let refresh_token = self.refresh_token().await.ok_or_else(|| {
            Error::Request("logout needs a client signed in with Client::login".to_owned())
        })?;
        self.call(Method::POST, "/auth/logout", &RefreshBody { refresh_token })
            .await
    }

    /// `POST /auth/logout-all`: ends every session of the user.
    pub async fn logout_all(&self) -> Result<(), Error> {
        self.call_empty(Method::POST, "/auth/logout-all").await
    }

    /// `POST /auth/password`.
    pub async fn change_password(&self, body: &PasswordBody) -> Result<(), Error> {
        self.call(Method::POST, "/auth/password", body).await
    }

    /// `POST /auth/profile`.
    pub async fn update_profile(&self, body: &ProfileBody) -> Result<UserSummary, Error> {
        self.call(Method::POST, "/auth/profile", body).await
    }

    /// `POST /auth/totp/setup`: a new TOTP secret (QR code and recovery codes).
    pub async fn set_up_totp(&self, body: &TotpSetupBody) -> Result<TotpSetupResponse, Error> {
        self.call(Method::POST, "/auth/totp/setup", body).await
    }

    /// `POST /auth/totp/verify`: turns TOTP on with a first code.
    pub async fn verify_totp(&self, body: &TotpCodeBody) -> Result<(), Error> {
        self.call(Method::POST, "/auth/totp/verify", body).await
    }

    /// `POST /auth/totp/disable`.
    pub async fn disable_totp(&self, body: &TotpDisableBody) -> Result<(), Error> {
        self.call(Method::POST, "/auth/totp/disable", body).await
    }

    /// `GET /api-keys`: the user's keys (never the keys themselves).
    pub async fn list_api_keys(&self) -> Result<Vec<ApiKeyResponse>, Error> {
        data(self.get::<Data<Vec<ApiKeyResponse>>>("/api-keys").await)
    }

    /// `POST /api-keys`: answers the key itself, once.
    pub async fn create_api_key(&self, body: &CreateApiKeyBody) -> Result<ApiKeyResponse, Error> {
        self.call(Method::POST, "/api-keys", body).await
    }

    /// `GET /api-keys/:id`.
    pub async fn get_api_key(&self, id: Uuid) -> Result<ApiKeyResponse, Error> {
        self.get(&format!("/api-keys/{id}")).await
    }

    /// `DELETE /api-keys/:id`: the key stops working at once.
    pub async fn revoke_api_key(&self, id: Uuid) -> Result<MessageResponse, Error> {
        self.call_empty(Method::DELETE, &format!("/api-keys/{id}"))
            .await
    }
}
