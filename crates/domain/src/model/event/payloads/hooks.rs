use serde::Serialize;

/// `webhook.created` and `webhook.updated`. Never the hook's secret.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WebhookChanged {
    /// The hook's name.
    pub name: String,
    /// Where it delivers.
    pub url: String,
    /// `pre` or `post`.
    pub hook_type: String,
    /// The event types it subscribes to (`["*"]` for all).
    pub events: Vec<String>,
}

/// `webhook.deleted`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WebhookDeleted {
    /// The hook's name.
    pub name: String,
}

/// `webhook.disabled`: switched off after consecutive failed deliveries.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WebhookDisabled {
    /// The hook's name.
    pub name: String,
    /// How many deliveries failed in a row.
    pub consecutive_failures: u32,
    /// The last failure.
    pub last_error: Option<String>,
}

/// `webhook.blocked`: a pre-hook refused an action.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WebhookBlocked {
    /// The hook's name.
    pub name: String,
    /// The type of the event the action would have written.
    pub blocked_event_type: String,
    /// The hook's reason.
    pub reason: Option<String>,
}

/// `inbound_webhook.created`, `.updated`, `.rotated` and `.deleted`. Never the key or
/// the secret.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct InboundWebhookChanged {
    /// The inbound key's name.
    pub name: String,
}

/// `codehost_connection.created`, `.updated` and `.deleted`. Never the secret.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CodeHostConnectionChanged {
    /// The connection's name.
    pub name: String,
    /// The code host's installation id.
    pub installation_id: i64,
    /// The one repository it listens to, if limited.
    pub repository: Option<String>,
    /// Whether its events have effects.
    pub enabled: bool,
}
