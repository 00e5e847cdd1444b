//! The request bodies of A2A's HTTP+JSON binding, and the query values it reads, written
//! out: the protocol's shapes (`muster-a2a`'s types) carry no schema, and each field's
//! rule here is the one the server applies, so a body these schemas call valid is one
//! the server reads.
//!
//! What they cannot say, because it depends on the server's state: `message.taskId`
//! and `message.contextId` must name tasks of the caller's organization (a reply, a
//! sub-task), a reply's task must still be open, and a push config's `url` must be
//! one the webhook rules allow (https, a public address).

use muster_a2a::mapping::MAX_MESSAGE_ID_CHARS;
use muster_a2a::types::TaskState;
use muster_domain::model::{Description, HookUrl, MAX_PUSH_TOKEN_CHARS, PushAuth, PushConfigId};
use serde_json::{Value, json};

use super::rules::{NO_NUL, NON_BLANK};

/// (request body pointer, component) of the bodies described here.
const BODIES: &[(&str, &str)] = &[
    (
        "/paths/~1a2a~1rest~1message:send/post/requestBody/content/application~1json/schema",
        "A2aSendMessageRequest",
    ),
    (
        "/paths/~1a2a~1rest~1message:stream/post/requestBody/content/application~1json/schema",
        "A2aSendMessageRequest",
    ),
    (
        "/paths/~1a2a~1rest~1tasks~1{target}/post/requestBody/content/application~1json/schema",
        "A2aCancelTaskRequest",
    ),
    (
        "/paths/~1a2a~1rest~1tasks~1{target}~1pushNotificationConfigs/post/requestBody/content/application~1json/schema",
        "A2aTaskPushNotificationConfig",
    ),
];

/// Adds the A2A components, points the bodies at them and states the query values the
/// server reads (a state name, a token it gave); answers the pointers that are not in
/// the document (a bug here, which the document's tests catch).
pub(super) fn add_bodies(doc: &mut Value) -> Vec<String> {
    let components = [
        ("A2aSendMessageRequest", send_message_request()),
        ("A2aSendMessageConfiguration", configuration()),
        ("A2aMessage", message()),
        ("A2aPart", part()),
        ("A2aTaskPushNotificationConfig", push_config()),
        ("A2aAuthenticationInfo", authentication()),
        ("A2aCancelTaskRequest", cancel_request()),
    ];
    for (name, schema) in components {
        doc["components"]["schemas"][name] = schema;
    }
    let mut missing = Vec::new();
    for (pointer, component) in BODIES {
        match doc.pointer_mut(pointer) {
            Some(schema) => *schema = reference(component),
            None => missing.push((*pointer).to_owned()),
        }
    }
    let states: Vec<&str> = std::iter::once("")
        .chain(TaskState::ALL.into_iter().map(TaskState::as_str))
        .collect();
    let queries = [
        (
            "~1a2a~1rest~1tasks",
            "status",
            json!({"type": "string", "enum": states}),
        ),
        (
            "~1a2a~1rest~1tasks",
            "pageToken",
            json!({"type": "string", "anyOf": [{"maxLength": 0}, {"format": "uuid"}]}),
        ),
        (
            "~1a2a~1rest~1tasks~1{target}~1pushNotificationConfigs",
            "pageToken",
            json!({"type": "string", "maxLength": 0}),
        ),
    ];
    for (path, name, schema) in queries {
        let pointer = format!("/paths/{path}/get/parameters");
        let parameter = doc
            .pointer_mut(&pointer)
            .and_then(Value::as_array_mut)
            .and_then(|all| all.iter_mut().find(|p| p["name"] == name));
        match parameter {
            Some(parameter) => parameter["schema"] = schema,
            None => missing.push(format!("{pointer} {name}")),
        }
    }
    missing
}

fn reference(component: &str) -> Value {
    json!({"$ref": format!("#/components/schemas/{component}")})
}

/// A field the server ignores unless it is set: `tenant` (one endpoint per deployment).
fn no_tenant() -> Value {
    json!({
        "type": ["string", "null"],
        "maxLength": 0,
        "description": "Not used by this server: left out, null or empty."
    })
}

/// A JSON object, or null for none.
fn object_or_null(description: &str) -> Value {
    json!({"type": ["object", "null"], "description": description})
}

fn send_message_request() -> Value {
    json!({
        "type": "object",
        "description": "`SendMessage` / `SendStreamingMessage`. Without `message.taskId` the \
            message creates a task (a sub-task of `message.contextId`'s task when given); \
            with it, the message is a comment on that task, which must be open.",
        "required": ["message"],
        "properties": {
            "tenant": no_tenant(),
            "message": reference("A2aMessage"),
            "configuration": {"anyOf": [reference("A2aSendMessageConfiguration"), {"type": "null"}]},
            "metadata": object_or_null("Extra information (not stored).")
        }
    })
}

fn configuration() -> Value {
    json!({
        "type": "object",
        "description": "How the sender wants the message handled.",
        "properties": {
            "acceptedOutputModes": {"type": "array", "items": {"type": "string"}},
            "historyLength": {
                "type": ["integer", "null"], "format": "int32", "minimum": 0,
                "maximum": i32::MAX,
                "description": "The most messages of history to answer; all when left out."
            },
            "returnImmediately": {
                "type": ["boolean", "null"],
                "description": "Ignored: the answer always comes at once."
            },
            "taskPushNotificationConfig": {
                "anyOf": [reference("A2aTaskPushNotificationConfig"), {"type": "null"}],
                "description": "A push config for the message's task; its `taskId` is empty \
                    or the message's."
            }
        }
    })
}

fn message() -> Value {
    json!({
        "type": "object",
        "required": ["messageId", "role", "parts"],
        "properties": {
            "messageId": {
                "type": "string", "maxLength": MAX_MESSAGE_ID_CHARS, "pattern": NON_BLANK,
                "description": "The sender's id for the message (kept on the task it creates)."
            },
            "contextId": {
                "type": ["string", "null"],
                "description": "The task this one is a sub-task of (a task id this server gave); empty for none."
            },
            "taskId": {
                "type": ["string", "null"],
                "description": "The open task to comment on; empty to create a task."
            },
            "role": {"type": "string", "enum": ["ROLE_USER", "ROLE_AGENT"]},
            "parts": {
                "type": "array", "minItems": 1, "items": reference("A2aPart"),
                "description": format!(
                    "The content: its parts' text, one paragraph each, is the task's \
                     description (at most {} characters) or the comment.",
                    Description::MAX_CHARS
                )
            },
            "metadata": object_or_null("Extra information (not stored)."),
            "extensions": {"type": "array", "items": {"type": "string"}},
            "referenceTaskIds": {"type": "array", "items": {"type": "string"}}
        }
    })
}

/// Exactly one of `text`, `url` and `data` holds a value; `raw` (file bytes) is
/// refused: Muster keeps no files. A field set to `null` holds nothing.
fn part() -> Value {
    let held = |field: &str| json!({"required": [field], "properties": {field: {"not": {"type": "null"}}}});
    let only = |field: &str| {
        let others: Vec<Value> = ["text", "url", "data", "raw"]
            .into_iter()
            .filter(|other| *other != field)
            .map(held)
            .collect();
        let mut schema = held(field);
        schema["not"] = json!({"anyOf": others});
        schema
    };
    let mut url = only("url");
    url["properties"]["filename"] = json!({"type": ["string", "null"], "pattern": NO_NUL});
    json!({
        "type": "object",
        "description": "One part of a message: exactly one of `text`, `url` (a link, shown \
            as `[filename](url)`) and `data` (any JSON, kept as a fenced block). `raw` file \
            bytes are refused.",
        "properties": {
            "text": {"type": ["string", "null"], "pattern": NO_NUL},
            "url": {"type": ["string", "null"], "pattern": NO_NUL},
            "data": {"description": "Any JSON value but null."},
            "raw": {"type": ["string", "null"], "description": "Refused: send a `url` part instead."},
            "filename": {"type": ["string", "null"]},
            "mediaType": {"type": ["string", "null"]},
            "metadata": object_or_null("Extra information about the part (not stored).")
        },
        "oneOf": [only("text"), url, only("data")]
    })
}

fn push_config() -> Value {
    json!({
        "type": "object",
        "description": "A push notification config: the task's status updates are POSTed to \
            `url`. `token` and `authentication` are write-only.",
        "required": ["url"],
        "properties": {
            "tenant": no_tenant(),
            "id": {
                "type": ["string", "null"],
                "pattern": format!("^[A-Za-z0-9._~:-]{{0,{}}}$", PushConfigId::MAX_CHARS),
                "description": "Its id within the task; the server picks one when left out \
                    or empty. Setting an id again replaces that config."
            },
            "taskId": {
                "type": "string",
                "description": "The task: the path's, or empty."
            },
            "url": {
                "type": "string", "format": "uri", "maxLength": HookUrl::MAX_CHARS,
                "description": "Where the updates go: https and a public address, as webhooks."
            },
            "token": {
                "type": ["string", "null"],
                "pattern": format!("^[!-~]{{0,{MAX_PUSH_TOKEN_CHARS}}}$"),
                "description": "Sent back in `X-A2A-Notification-Token` (and the key the \
                    body is signed with): printable ASCII without spaces; empty for none."
            },
            "authentication": {"anyOf": [reference("A2aAuthenticationInfo"), {"type": "null"}]}
        }
    })
}

fn authentication() -> Value {
    json!({
        "type": "object",
        "description": "Sent as `Authorization: <scheme> <credentials>` with every push \
            (only when both are given).",
        "required": ["scheme"],
        "properties": {
            "scheme": {
                "type": "string",
                "pattern": format!(
                    "^[A-Za-z0-9!#$%&'*+.^_`|~-]{{1,{}}}$",
                    PushAuth::MAX_SCHEME_CHARS
                )
            },
            "credentials": {
                "type": ["string", "null"],
                "pattern": format!("^[ -~]{{0,{}}}$", PushAuth::MAX_CREDENTIAL_CHARS)
            }
        }
    })
}

fn cancel_request() -> Value {
    json!({
        "type": "object",
        "description": "`CancelTask` (the body may be left out).",
        "properties": {
            "tenant": no_tenant(),
            "id": {"type": "string", "description": "The task: the path's, or empty."},
            "metadata": object_or_null("Extra information (not stored).")
        }
    })
}
