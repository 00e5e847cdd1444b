//! The `codehost-issue` scenario's set-up: a code-host connection whose secret signs
//! the events, and a full issue payload (the API tests' fixture) whose number each
//! request changes, so that every event opens a new task.

use std::net::SocketAddr;

use anyhow::Context;
use muster_client::types::integrations::CreateConnectionBody;

use super::admin::admin;

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
    let connection = CreateConnectionBody {
        installation_id: INSTALLATION,
        name: "bench".to_owned(),
        ..Default::default()
    };
    let created = admin(server)
        .await?
        .create_codehost_connection(&connection)
        .await?;
    let secret = created.webhook_secret.context("no webhookSecret")?;
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
