//! The bench admin through the Rust client (`muster-client`): set-up calls before a run
//! (API keys, hooks, code-host connections, fuzzing seeds) are typed calls rather than
//! hand-built requests. The load itself goes through the raw client in `client.rs`.

use std::net::SocketAddr;

use anyhow::Context;
use muster_client::types::auth::CreateApiKeyBody;
use muster_client::types::model::ApiKeyScope;
use muster_client::{Client, login_body};

use super::server::{ADMIN_EMAIL, ADMIN_PASSWORD};

/// The bootstrap admin, signed in.
pub async fn admin(server: SocketAddr) -> anyhow::Result<Client> {
    let body = login_body(ADMIN_EMAIL, ADMIN_PASSWORD);
    Client::login(&format!("http://{server}"), &body)
        .await
        .context("the bench admin cannot sign in")
}

/// A new API key of the admin with `scopes`: its secret.
pub async fn api_key(admin: &Client, name: &str, scopes: &[ApiKeyScope]) -> anyhow::Result<String> {
    let key = admin
        .create_api_key(&CreateApiKeyBody {
            name: name.to_owned(),
            scopes: Some(scopes.to_vec()),
            ..Default::default()
        })
        .await
        .with_context(|| format!("cannot create the {name} API key"))?;
    key.secret.context("a new API key without its secret")
}

/// A fresh access token of the bench admin (the dashboard's session cookie holds one).
pub async fn access_token(server: SocketAddr) -> anyhow::Result<String> {
    let body = serde_json::to_string(&login_body(ADMIN_EMAIL, ADMIN_PASSWORD))?;
    let call = super::client::Call::public_post("/auth/login", body);
    let nobody = super::sign::Credentials {
        agent_id: String::new(),
        secret: String::new(),
    };
    let answer = super::client::Client::new(server)
        .send(&call, &nobody)
        .await
        .context("the bench admin cannot sign in")?;
    let reply: serde_json::Value = serde_json::from_slice(&answer.body)?;
    reply["accessToken"]
        .as_str()
        .map(str::to_owned)
        .with_context(|| format!("no access token in the login answer ({})", answer.status))
}
