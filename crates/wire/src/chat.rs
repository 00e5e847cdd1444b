//! The chat platform's message (a third-party payload: unknown fields are ignored,
//! decision D-3).

use muster_domain::service::ChatMessage;
use serde::{Deserialize, Serialize};

/// Body of `POST /api/v1/webhooks/chat`.
#[derive(Debug, Default, Deserialize, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ChatMessageBody {
    #[serde(default)]
    pub id: String,
    #[serde(default)]
    pub channel_id: String,
    pub author: ChatAuthorBody,
    pub content: String,
}

/// The message's author.
#[derive(Debug, Default, Deserialize, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ChatAuthorBody {
    pub id: String,
    #[serde(default)]
    pub bot: bool,
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
