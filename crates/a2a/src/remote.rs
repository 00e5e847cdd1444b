//! Muster as an A2A client of remote agents: reading their Agent Cards, the
//! `SendMessage` that hands a task over, and their push notifications read back as
//! reports on the task.

use muster_domain::model::Task;
use muster_domain::ports::RemoteCard;
use muster_domain::rules::remote::RemoteState;
use muster_domain::service::RemoteReport;
use serde_json::{Map, Value, json};
use uuid::Uuid;

use crate::types::{Message, Part, Role};

/// The binding Muster speaks to remote agents.
const JSON_RPC: &str = "JSONRPC";

/// The Muster task a hand-over is about, in the message's and request's metadata.
pub const TASK_METADATA_KEY: &str = "musterTaskId";

/// The parts of a card Muster needs: its name, description, JSON-RPC endpoint (the
/// `JSONRPC` entry of its `supportedInterfaces` that speaks A2A 1.x: Muster hands tasks
/// over in 1.0, so a 0.3 card, with only a `url`, is refused) and skill ids.
///
/// ```
/// let card = br#"{"name": "Echo", "description": "echoes",
///   "supportedInterfaces": [{"url": "https://a.example/rest", "protocolBinding": "HTTP+JSON"},
///                           {"url": "https://a.example/rpc", "protocolBinding": "JSONRPC"}],
///   "skills": [{"id": "echo"}]}"#;
/// let card = muster_a2a::remote::parse_card(card).unwrap();
/// assert_eq!(card.endpoint, "https://a.example/rpc");
/// assert_eq!(card.skills, ["echo"]);
/// ```
pub fn parse_card(body: &[u8]) -> Result<RemoteCard, String> {
    let card: Value =
        serde_json::from_slice(body).map_err(|_| "the agent card is not JSON".to_owned())?;
    let card = card
        .as_object()
        .ok_or_else(|| "the agent card is not a JSON object".to_owned())?;
    let text = |key: &str| card.get(key).and_then(Value::as_str).map(str::to_owned);
    let name = text("name").ok_or_else(|| "the agent card has no name".to_owned())?;
    let interfaces = card
        .get("supportedInterfaces")
        .or_else(|| card.get("supported_interfaces"))
        .and_then(Value::as_array);
    let interfaces = interfaces.ok_or_else(|| {
        "the agent card has no supportedInterfaces (an A2A 0.3 card?): tasks are handed \
         over in A2A 1.0"
            .to_owned()
    })?;
    let endpoint = interfaces
        .iter()
        .find_map(|interface| {
            let field = |camel: &str, snake: &str| {
                interface
                    .get(camel)
                    .or_else(|| interface.get(snake))
                    .and_then(Value::as_str)
            };
            let speaks_1 = field("protocolVersion", "protocol_version")
                .is_none_or(|version| version == "1" || version.starts_with("1."));
            (field("protocolBinding", "protocol_binding")?.eq_ignore_ascii_case(JSON_RPC)
                && speaks_1)
                .then(|| interface.get("url").and_then(Value::as_str))
                .flatten()
                .map(str::to_owned)
        })
        .ok_or_else(|| "the agent card offers no A2A 1.0 JSON-RPC interface".to_owned())?;
    let skills = card
        .get("skills")
        .and_then(Value::as_array)
        .map(|skills| {
            skills
                .iter()
                .filter_map(|skill| skill.get("id").and_then(Value::as_str))
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    Ok(RemoteCard {
        name,
        description: text("description").unwrap_or_default(),
        endpoint,
        skills,
    })
}

/// The JSON-RPC `SendMessage` request (id `request_id`) that hands `task` over: its
/// title and description as the message's text, its id in the metadata, and a push
/// config asking for its updates at `push_url` with `token`. The message id is the
/// request id, so that a retried hand-over is the same message.
pub fn handover_request(task: &Task, request_id: Uuid, push_url: &str, token: &str) -> Value {
    let mut text = task.title.as_str().to_owned();
    if let Some(description) = task.description.as_ref().map(|d| d.as_str().trim())
        && !description.is_empty()
    {
        text.push_str("\n\n");
        text.push_str(description);
    }
    let mut metadata = Map::new();
    metadata.insert(TASK_METADATA_KEY.to_owned(), task.id.to_string().into());
    let message = Message {
        message_id: request_id.to_string(),
        context_id: None,
        task_id: None,
        role: Role::User,
        parts: vec![Part::text(text)],
        metadata: Some(metadata.clone()),
        extensions: Vec::new(),
        reference_task_ids: Vec::new(),
    };
    json!({
        "jsonrpc": "2.0",
        "id": request_id.to_string(),
        "method": "SendMessage",
        "params": {
            "message": message,
            "configuration": {
                "returnImmediately": true,
                "taskPushNotificationConfig": {"url": push_url, "token": token},
            },
            "metadata": metadata,
        },
    })
}

/// What a push notification reports: the state and status message of a
/// `statusUpdate` or a `task` (a v1.0 `StreamResponse`, or a v0.3 bare task).
/// `Ok(None)` for what does not report a state (an artifact update, a message).
pub fn parse_report(body: &[u8]) -> Result<Option<RemoteReport>, String> {
    let push: Value =
        serde_json::from_slice(body).map_err(|_| "the push is not valid JSON".to_owned())?;
    let push = push
        .as_object()
        .ok_or_else(|| "the push is not a JSON object".to_owned())?;
    let status = match (push.get("statusUpdate"), push.get("task")) {
        (Some(update), _) => update.get("status"),
        (None, Some(task)) => task.get("status"),
        // v0.3 pushes the task itself.
        (None, None) if push.contains_key("id") => push.get("status"),
        (None, None) => return Ok(None),
    }
    .and_then(Value::as_object)
    .ok_or_else(|| "the push has no status".to_owned())?;
    let state = status
        .get("state")
        .and_then(Value::as_str)
        .ok_or_else(|| "the push's status has no state".to_owned())?;
    let state = remote_state(state).ok_or_else(|| format!("unknown task state `{state}`"))?;
    let message = status
        .get("message")
        .and_then(|m| m.get("parts"))
        .and_then(Value::as_array)
        .map(|parts| {
            parts
                .iter()
                .filter_map(|part| part.get("text").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join("\n")
        })
        .filter(|text| !text.trim().is_empty());
    Ok(Some(RemoteReport { state, message }))
}

/// A task state by its v1.0 name (`TASK_STATE_WORKING`) or its v0.3 one (`working`).
fn remote_state(name: &str) -> Option<RemoteState> {
    let short = name
        .strip_prefix("TASK_STATE_")
        .unwrap_or(name)
        .to_ascii_lowercase()
        .replace('_', "-");
    Some(match short.as_str() {
        "submitted" => RemoteState::Submitted,
        "working" => RemoteState::Working,
        "input-required" => RemoteState::InputRequired,
        "auth-required" => RemoteState::AuthRequired,
        "completed" => RemoteState::Completed,
        "canceled" | "cancelled" => RemoteState::Canceled,
        "failed" => RemoteState::Failed,
        "rejected" => RemoteState::Rejected,
        _ => return None,
    })
}
