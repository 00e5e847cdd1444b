use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// What an A2A agent is, where it listens and how to authenticate: served at
/// `/.well-known/agent-card.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentCard {
    /// A name for people.
    pub name: String,
    /// What it does.
    pub description: String,
    /// Its endpoints, the preferred first.
    pub supported_interfaces: Vec<AgentInterface>,
    /// Who runs it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<AgentProvider>,
    /// The software's version.
    pub version: String,
    /// Where its documentation is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub documentation_url: Option<String>,
    /// What optional parts of the protocol it speaks.
    pub capabilities: AgentCapabilities,
    /// The credential schemes, by name.
    pub security_schemes: BTreeMap<String, SecurityScheme>,
    /// Which schemes a request may use (any one of them).
    pub security_requirements: Vec<SecurityRequirement>,
    /// Media types it reads.
    pub default_input_modes: Vec<String>,
    /// Media types it answers with.
    pub default_output_modes: Vec<String>,
    /// What it can be asked to do.
    pub skills: Vec<AgentSkill>,
}

/// One endpoint and its protocol binding.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentInterface {
    /// Its absolute URL.
    pub url: String,
    /// `JSONRPC` or `HTTP+JSON`.
    pub protocol_binding: String,
    /// The protocol version (`1.0`).
    pub protocol_version: String,
}

/// Who runs the agent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentProvider {
    /// The provider's site.
    pub url: String,
    /// The provider's name.
    pub organization: String,
}

/// Optional parts of the protocol.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentCapabilities {
    /// `SendStreamingMessage` and `SubscribeToTask`.
    pub streaming: bool,
    /// Push notification configs.
    pub push_notifications: bool,
    /// `GetExtendedAgentCard` for authenticated clients.
    pub extended_agent_card: bool,
    /// Extensions it supports.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub extensions: Vec<AgentExtension>,
}

/// An extension of the protocol.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentExtension {
    /// Its identifier.
    pub uri: String,
    /// What it does.
    pub description: String,
    /// Whether clients must use it.
    pub required: bool,
    /// Its settings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<Map<String, Value>>,
}

/// One thing the agent can be asked to do.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentSkill {
    /// Its identifier.
    pub id: String,
    /// A name for people.
    pub name: String,
    /// What it does.
    pub description: String,
    /// Keywords.
    pub tags: Vec<String>,
    /// Example requests.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub examples: Vec<String>,
}

/// A credential scheme. Muster's are HTTP bearer tokens (a user's access token or an
/// API key); its agents' request signatures are an extension.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SecurityScheme {
    /// `Authorization: Bearer <token>`.
    pub http_auth_security_scheme: HttpAuthSecurityScheme,
}

/// HTTP authentication.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HttpAuthSecurityScheme {
    /// What the token is.
    pub description: String,
    /// `Bearer`.
    pub scheme: String,
}

/// Schemes that together authenticate a request, each with its scopes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SecurityRequirement {
    /// Scheme name to its scope list (`{"list": [...]}`).
    pub schemes: BTreeMap<String, Map<String, Value>>,
}
