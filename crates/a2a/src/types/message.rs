use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Who sent a message: the client (`ROLE_USER`) or the agent doing the work.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Role {
    /// Left unset: refused on a request.
    #[serde(rename = "ROLE_UNSPECIFIED")]
    Unspecified,
    /// The client.
    #[serde(rename = "ROLE_USER")]
    User,
    /// The agent (here: whoever works on the task in Muster).
    #[serde(rename = "ROLE_AGENT")]
    Agent,
}

/// One part of a message or an artifact: exactly one of `text`, `raw` (base64), `url`
/// or `data` (any JSON), with optional `mediaType`, `filename` and `metadata`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Part {
    /// Plain text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// File bytes, base64.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw: Option<String>,
    /// A link to the content.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// Structured content.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
    /// Extra information about the part.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
    /// The file's name, for `raw` and `url`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filename: Option<String>,
    /// The content's media type.
    #[serde(default, alias = "media_type", skip_serializing_if = "Option::is_none")]
    pub media_type: Option<String>,
}

impl Part {
    /// A text part.
    pub fn text(text: impl Into<String>) -> Self {
        Self {
            text: Some(text.into()),
            ..Self::default()
        }
    }

    /// How many of `text`, `raw`, `url` and `data` it holds (exactly one is valid).
    pub fn contents(&self) -> usize {
        [
            self.text.is_some(),
            self.raw.is_some(),
            self.url.is_some(),
            self.data.is_some(),
        ]
        .into_iter()
        .filter(|held| *held)
        .count()
    }
}

/// One message of a conversation about a task.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Message {
    /// The sender's id for the message.
    #[serde(default, alias = "message_id")]
    pub message_id: String,
    /// The conversation it belongs to.
    #[serde(default, alias = "context_id", skip_serializing_if = "Option::is_none")]
    pub context_id: Option<String>,
    /// The task it is about.
    #[serde(default, alias = "task_id", skip_serializing_if = "Option::is_none")]
    pub task_id: Option<String>,
    /// Who sent it.
    #[serde(default = "unspecified")]
    pub role: Role,
    /// The content (at least one part).
    #[serde(default)]
    pub parts: Vec<Part>,
    /// Extra information.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
    /// Extensions the message uses.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub extensions: Vec<String>,
    /// Tasks it refers to.
    #[serde(
        default,
        alias = "reference_task_ids",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub reference_task_ids: Vec<String>,
}

const fn unspecified() -> Role {
    Role::Unspecified
}
