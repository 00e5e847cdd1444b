//! `POST /agents/remote`: registering an outside A2A agent from its Agent Card.

use muster_domain::ValidationError;
use muster_domain::model::{AgentHandle, HookUrl, PushAuth};
use muster_domain::service::{NewRemoteAgent, RemoteRegistered};
use serde::{Deserialize, Serialize};

use crate::agents::AgentResponse;

/// What the remote agent is sent in `Authorization` with every task.
#[derive(Default, Deserialize, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RemoteAuthentication {
    /// An HTTP authentication scheme (`Bearer`, `Basic`, ...).
    #[cfg_attr(
        feature = "openapi",
        schema(
            min_length = 1,
            max_length = 64,
            pattern = r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$"
        )
    )]
    pub scheme: String,
    /// Its credentials (write-only: never answered).
    #[cfg_attr(
        feature = "openapi",
        schema(min_length = 1, max_length = 4096, pattern = r"^[ -~]+$")
    )]
    pub credentials: String,
}

impl std::fmt::Debug for RemoteAuthentication {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteAuthentication")
            .field("scheme", &self.scheme)
            .finish_non_exhaustive()
    }
}

/// Body of `POST /agents/remote`.
#[derive(Debug, Default, Deserialize, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RegisterRemoteRequest {
    /// Where the agent's A2A Agent Card is (`https://…/.well-known/agent-card.json`).
    #[cfg_attr(feature = "openapi", schema(min_length = 1, max_length = 2048))]
    pub card_url: String,
    /// The `agentId` of the agent that stands for it; `a2a-<card name>-<8 hex>` when
    /// absent.
    #[cfg_attr(feature = "openapi", schema(min_length = 1, max_length = 100))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<String>,
    /// This server's base URL as the remote agent reaches it: its updates are pushed
    /// under it. The server's public URL, as the Agent Card names it, when absent.
    #[cfg_attr(feature = "openapi", schema(min_length = 1, max_length = 2048))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub callback_url: Option<String>,
    /// Sent to the remote agent in `Authorization` with every task.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub authentication: Option<RemoteAuthentication>,
}

impl RegisterRemoteRequest {
    /// Validates every field; `base` is the callback when none is given.
    pub fn into_new(self, base: String) -> Result<NewRemoteAgent, ValidationError> {
        Ok(NewRemoteAgent {
            card_url: HookUrl::new(&self.card_url)
                .map_err(|e| ValidationError::new(format!("cardUrl: {e}")))?,
            handle: self.agent_id.as_deref().map(AgentHandle::new).transpose()?,
            callback_url: self.callback_url.unwrap_or(base),
            auth: self
                .authentication
                .map(|a| PushAuth::new(&a.scheme, Some(a.credentials.as_str())))
                .transpose()?,
        })
    }
}

/// What the card said.
#[derive(Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct RemoteCardResponse {
    /// The agent's name.
    pub name: String,
    /// What it says it does.
    pub description: String,
    /// Its JSON-RPC endpoint, where tasks are sent.
    pub endpoint: String,
    /// Its skill ids.
    pub skills: Vec<String>,
}

/// `{data, card, cardUrl, callbackUrl, message}`: a registered remote agent.
#[derive(Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct RemoteAgentResponse {
    /// The agent that stands for it (assign tasks to its `id`).
    pub data: AgentResponse,
    /// What its card said.
    pub card: RemoteCardResponse,
    /// Where the card was read.
    pub card_url: String,
    /// Where its updates are pushed.
    pub callback_url: String,
    /// A sentence for people.
    pub message: String,
}

impl From<RemoteRegistered> for RemoteAgentResponse {
    fn from(registered: RemoteRegistered) -> Self {
        Self {
            data: registered.view.into(),
            card: RemoteCardResponse {
                name: registered.card.name,
                description: registered.card.description,
                endpoint: registered.card.endpoint,
                skills: registered.card.skills,
            },
            card_url: registered.link.card_url,
            callback_url: registered.link.callback_url,
            message: "Remote agent registered. Tasks assigned to it are sent to it over A2A."
                .to_owned(),
        }
    }
}
