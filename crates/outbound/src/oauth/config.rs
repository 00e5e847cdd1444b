//! Where the OAuth provider lives and who we are to it; Google's endpoints by default.

/// Google's consent screen.
pub const GOOGLE_AUTHORIZE_URL: &str = "https://accounts.google.com/o/oauth2/v2/auth";
/// Google's token endpoint.
pub const GOOGLE_TOKEN_URL: &str = "https://oauth2.googleapis.com/token";
/// Google's `OpenID` Connect userinfo endpoint.
pub const GOOGLE_USERINFO_URL: &str = "https://openidconnect.googleapis.com/v1/userinfo";
/// The scopes asked for by default: enough for the e-mail and whether it is verified.
pub const DEFAULT_SCOPES: &str = "openid email profile";

/// Where the provider lives and who we are to it. `Debug` hides the client secret.
#[derive(Clone, PartialEq, Eq)]
pub struct OAuthProviderConfig {
    /// The consent-screen URL the browser is sent to.
    pub authorize_url: String,
    /// The endpoint that exchanges a code for an access token.
    pub token_url: String,
    /// The endpoint that answers the e-mail of an access token's owner.
    pub userinfo_url: String,
    /// The client id registered with the provider.
    pub client_id: String,
    /// The client secret registered with the provider.
    pub client_secret: String,
    /// The callback URL registered with the provider (`redirect_uri`).
    pub redirect_url: String,
    /// The space-separated scopes asked for.
    pub scopes: String,
}

impl OAuthProviderConfig {
    /// Google's endpoints and [`DEFAULT_SCOPES`] with the given client.
    pub fn google(
        client_id: impl Into<String>,
        client_secret: impl Into<String>,
        redirect_url: impl Into<String>,
    ) -> Self {
        Self {
            authorize_url: GOOGLE_AUTHORIZE_URL.to_owned(),
            token_url: GOOGLE_TOKEN_URL.to_owned(),
            userinfo_url: GOOGLE_USERINFO_URL.to_owned(),
            client_id: client_id.into(),
            client_secret: client_secret.into(),
            redirect_url: redirect_url.into(),
            scopes: DEFAULT_SCOPES.to_owned(),
        }
    }
}

impl std::fmt::Debug for OAuthProviderConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthProviderConfig")
            .field("authorize_url", &self.authorize_url)
            .field("token_url", &self.token_url)
            .field("userinfo_url", &self.userinfo_url)
            .field("client_id", &self.client_id)
            .field("client_secret", &"***")
            .field("redirect_url", &self.redirect_url)
            .field("scopes", &self.scopes)
            .finish()
    }
}
