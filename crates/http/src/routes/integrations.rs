//! Public integration routes (decisions D-86 to D-88): the chat platform's messages.

use actix_web::HttpRequest;
use actix_web::web::{Data, Json};

use crate::ApiError;
use crate::body::parse_json;
use crate::dto::Data as Envelope;
use crate::dto::chat::ChatMessageBody;
use crate::dto::integrations::IntegrationAnswerResponse;
use crate::extract::RawBody;
use crate::state::AppState;

/// `POST /api/v1/webhooks/chat`: `X-Chat-Token` first (when configured), then the body.
#[utoipa::path(
    post,
    path = "/api/v1/webhooks/chat",
    operation_id = "receiveChatMessage",
    tag = "integrations",
    summary = "Receive a chat message (commands create and move tasks)",
    request_body = ChatMessageBody,
    responses((status = 200, description = "OK", body = crate::dto::Data<IntegrationAnswerResponse>)),
    security((), ("chatToken" = []))
)]
pub(super) async fn chat(
    state: Data<AppState>,
    req: HttpRequest,
    body: RawBody,
) -> Result<Json<Envelope<IntegrationAnswerResponse>>, ApiError> {
    let token = req
        .headers()
        .get("x-chat-token")
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
    state.chat.check_token(token.as_deref())?;
    let message: ChatMessageBody = parse_json(&body.0)?;
    let answer = state.chat.handle(&message.into()).await?;
    Ok(Json(Envelope {
        data: answer.into(),
    }))
}
