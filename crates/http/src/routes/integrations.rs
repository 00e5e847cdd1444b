//! Public integration routes (decisions D-86 to D-88, D-100): the chat platform's
//! messages.

use actix_web::HttpRequest;
use actix_web::http::header::HeaderValue;
use actix_web::web::{Data, Json};

use crate::body::parse_json;
use crate::dto::Data as Envelope;
use crate::dto::chat::ChatMessageBody;
use crate::dto::integrations::IntegrationAnswerResponse;
use crate::error::{ApiError, ErrorBody};
use crate::extract::RawBody;
use crate::state::AppState;

/// `POST /api/v1/webhooks/chat`: off (404, as any unknown path) until a token is
/// configured (decision D-100); then `X-Chat-Token` first, then the body.
#[utoipa::path(
    post,
    path = "/api/v1/webhooks/chat",
    operation_id = "receiveChatMessage",
    tag = "integrations",
    summary = "Receive a chat message (commands create and move tasks)",
    request_body = ChatMessageBody,
    responses(
        (status = 200, description = "OK", body = crate::dto::Data<IntegrationAnswerResponse>),
        (status = 401, description = "`X-Chat-Token` is missing or wrong", body = ErrorBody),
        (status = 404, description = "The chat integration is off (no `MUSTER_CHAT_TOKEN`)", body = ErrorBody)
    ),
    security(("chatToken" = []))
)]
pub(super) async fn chat(
    state: Data<AppState>,
    req: HttpRequest,
    body: RawBody,
) -> Result<Json<Envelope<IntegrationAnswerResponse>>, ApiError> {
    if !state.chat.is_on() {
        return Err(crate::fallback::no_route(&req));
    }
    // The raw bytes: a token is compared as configured, never through a lossy decoding.
    let token = req.headers().get("x-chat-token").map(HeaderValue::as_bytes);
    let caller = state.chat.check_token(token)?;
    let message: ChatMessageBody = parse_json(&body.0)?;
    let answer = state.chat.handle(&caller, &message.into()).await?;
    Ok(Json(Envelope {
        data: answer.into(),
    }))
}
