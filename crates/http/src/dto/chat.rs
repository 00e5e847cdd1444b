//! The chat platform's message (a third-party payload: unknown fields are ignored,
//! decision D-3) and the integration's answer (decision D-86).

use muster_domain::service::{ChatAnswer, ChatMessage};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// Body of `POST /api/v1/webhooks/chat`.
#[derive(Debug, Deserialize)]
pub struct ChatMessageBody {
    #[serde(default)]
    id: String,
    #[serde(default)]
    channel_id: String,
    author: ChatAuthorBody,
    content: String,
}

/// The message's author.
#[derive(Debug, Deserialize)]
pub struct ChatAuthorBody {
    id: String,
    #[serde(default)]
    bot: bool,
}

impl From<ChatMessageBody> for ChatMessage {
    fn from(body: ChatMessageBody) -> Self {
        Self {
            id: body.id,
            channel_id: body.channel_id,
            author_id: body.author.id,
            bot: body.author.bot,
            content: body.content,
        }
    }
}

/// `{action, taskId, reason}`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ChatAnswerResponse {
    action: &'static str,
    task_id: Option<Uuid>,
    reason: Option<String>,
}

impl From<ChatAnswer> for ChatAnswerResponse {
    fn from(answer: ChatAnswer) -> Self {
        Self {
            action: answer.action,
            task_id: answer.task_id.map(muster_domain::model::TaskId::as_uuid),
            reason: answer.reason,
        }
    }
}
