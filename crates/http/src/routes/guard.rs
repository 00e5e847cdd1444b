//! The runaway guard's thresholds for the caller's organization.

use actix_web::web::{Data, Json};

use super::tasks::Answer;
use crate::body::parse_json;
use crate::dto;
use crate::dto::guard::{GuardRequest, GuardResponse};
use crate::extract::Authenticated;
use crate::state::AppState;

/// `GET /agents/guard`.
#[utoipa::path(
    get,
    path = "/agents/guard",
    operation_id = "getRunawayGuard",
    tag = "agents",
    summary = "Read the runaway guard's thresholds",
    description = "The writes per minute and credits per hour an agent of the caller's \
        organization may reach before it is suspended, where each comes from (the \
        organization's own choice or the deployment's default), and the defaults. `0` is off.",
    responses((status = 200, description = "OK", body = dto::Data<GuardResponse>)),
    security(("agentId" = [], "agentTimestamp" = [], "agentNonce" = [], "agentSignature" = []), ("userToken" = []), ("apiKey" = []))
)]
pub(super) async fn get(
    state: Data<AppState>,
    auth: Authenticated,
) -> Answer<dto::Data<GuardResponse>> {
    let view = state.guard.settings(&auth.actor).await?;
    Ok(Json(dto::Data { data: view.into() }))
}

/// `PATCH /agents/guard`.
#[utoipa::path(
    patch,
    path = "/agents/guard",
    operation_id = "setRunawayGuard",
    tag = "agents",
    summary = "Change the runaway guard's thresholds",
    description = "Admin users and founder or admin agents. A field left out stays as it \
        is, `null` returns it to the deployment's default, `0` switches the breaker off. \
        Applies at once on this instance and within a second on the others; writes a \
        `guard.updated` event.",
    request_body = GuardRequest,
    responses((status = 200, description = "OK", body = dto::Data<GuardResponse>)),
    security(("agentId" = [], "agentTimestamp" = [], "agentNonce" = [], "agentSignature" = []), ("userToken" = []), ("apiKey" = []))
)]
pub(super) async fn update(
    state: Data<AppState>,
    auth: Authenticated,
) -> Answer<dto::Data<GuardResponse>> {
    let patch = parse_json::<GuardRequest>(&auth.body)?.into_patch()?;
    let view = state.guard.update(&auth.actor, patch).await?;
    Ok(Json(dto::Data { data: view.into() }))
}
