//! The `codehost-issue` scenario's set-up: a code-host connection whose secret signs
//! the events, and a full issue payload (the API tests' fixture) whose number each
//! request changes, so that every event opens a new task.

use std::net::SocketAddr;

use anyhow::Context;
use hyper::{Method, StatusCode};

use super::client::{Call, Client};
use super::hooks::admin_token;
use super::sign::Credentials;

/// The installation the bench connects.
const INSTALLATION: i64 = 1;
/// Where each request's issue number goes in [`HostEvents::template`].
const NUMBER: &str = "\"__NUMBER__\"";

/// What a worker needs to send code-host events.
#[derive(Debug)]
pub struct HostEvents {
    /// The connection's webhook secret.
    pub secret: String,
    /// The `issues` `opened` payload, compact, with [`NUMBER`] for the issue number.
    pub template: String,
}

impl HostEvents {
    /// The payload of issue `number`.
    pub fn issue(&self, number: u64) -> String {
        self.template.replacen(NUMBER, &number.to_string(), 1)
    }
}

/// Connects the bench installation as the bench admin.
pub async fn connect(server: SocketAddr) -> anyhow::Result<HostEvents> {
    let mut client = Client::new(server);
    let token = admin_token(&mut client).await?;
    let call = Call::bearer(
        Method::POST,
        "/api/v1/integrations/codehost/connections",
        serde_json::json!({"installationId": INSTALLATION, "name": "bench"}).to_string(),
        &token,
    );
    let answer = client.send(&call, &Credentials::none()).await?;
    anyhow::ensure!(
        answer.status == StatusCode::OK,
        "{}",
        answer.describe(&call)
    );
    let body: serde_json::Value = serde_json::from_slice(&answer.body)?;
    let secret = body["webhookSecret"]
        .as_str()
        .context("no webhookSecret")?
        .to_owned();
    let mut payload: serde_json::Value = serde_json::from_str(include_str!(
        "../../../crates/server/tests/api/fixtures/codehost/issues.json"
    ))?;
    payload["installation"]["id"] = serde_json::json!(INSTALLATION);
    payload["issue"]["number"] = serde_json::json!("__NUMBER__");
    Ok(HostEvents {
        secret,
        template: payload.to_string(),
    })
}
