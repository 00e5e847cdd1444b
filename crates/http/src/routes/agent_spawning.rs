//! Agents making agents: spawn, capacity, pending, activate, reject, hierarchy.

use actix_web::HttpRequest;
use actix_web::web::{Data, Json, Path};
use muster_domain::service::Page;
use muster_domain::service::agent_limits::hierarchy_depth;

use super::agents::{agent_id, status_answer, status_target};
use super::tasks::Answer;
use crate::body::{parse_json, parse_optional_json, parse_page, parse_query};
use crate::dto;
use crate::dto::agents::{
    CapacityResponse, HierarchyQuery, HierarchyResponse, PendingResponse, ReasonRequest,
    SpawnRequest, StatusResponse, WithSecret,
};
use crate::dto::auth::MessageResponse;
use crate::dto::paging::{PageQuery, PageResponse};
use crate::dto::task_links::DataWithMessage;
use crate::error::ApiError;
use crate::extract::Authenticated;
use crate::state::AppState;

/// `POST /agents/spawn`.
#[utoipa::path(
    post,
    path = "/agents/spawn",
    operation_id = "spawnAgent",
    tag = "agents",
    summary = "Spawn a child agent (pending until activated when the parent may not activate it)",
    request_body = SpawnRequest,
    responses((status = 200, description = "OK", body = WithSecret)),
    security(("agentId" = [], "agentTimestamp" = [], "agentNonce" = [], "agentSignature" = []), ("userToken" = []), ("apiKey" = []))
)]
pub(super) async fn spawn(
    state: Data<AppState>,
    auth: Authenticated,
) -> Result<Json<WithSecret>, ApiError> {
    let new = parse_json::<SpawnRequest>(&auth.body)?.into_new_child()?;
    let spawned = state.agents.spawn(&auth.actor, new).await?;
    Ok(Json(WithSecret::spawned(spawned)))
}

/// `GET /agents/capacity`.
#[utoipa::path(
    get,
    path = "/agents/capacity",
    operation_id = "getSpawnCapacity",
    tag = "agents",
    summary = "Read how many more agents the caller may spawn",
    responses((status = 200, description = "OK", body = dto::Data<CapacityResponse>)),
    security(("agentId" = [], "agentTimestamp" = [], "agentNonce" = [], "agentSignature" = []), ("userToken" = []), ("apiKey" = []))
)]
pub(super) async fn capacity(
    state: Data<AppState>,
    auth: Authenticated,
) -> Answer<dto::Data<CapacityResponse>> {
    let capacity = state.agents.capacity(&auth.actor).await?;
    Ok(Json(dto::Data {
        data: capacity.into(),
    }))
}

/// `GET /agents/pending`.
#[utoipa::path(
    get,
    path = "/agents/pending",
    operation_id = "listPendingAgents",
    tag = "agents",
    summary = "List spawned agents waiting for activation",
    description = "Newest first, by pages (`limit`, `cursor`; `meta.nextCursor` when more remain).",
    params(PageQuery),
    responses((status = 200, description = "OK", body = PageResponse<PendingResponse>)),
    security(("agentId" = [], "agentTimestamp" = [], "agentNonce" = [], "agentSignature" = []), ("userToken" = []), ("apiKey" = []))
)]
pub(super) async fn pending(
    state: Data<AppState>,
    req: HttpRequest,
    auth: Authenticated,
) -> Answer<PageResponse<PendingResponse>> {
    let request = parse_page(req.query_string())?;
    let agents = state.agents.pending(&auth.actor).await?;
    let page = Page::of_newest_first(agents, &request, |a| a.id)?;
    Ok(Json(PageResponse::of(page, Into::into)))
}

/// `POST /agents/:id/activate`.
#[utoipa::path(
    post,
    path = "/agents/{id}/activate",
    operation_id = "activateAgent",
    tag = "agents",
    summary = "Activate a pending agent",
    params(("id" = uuid::Uuid, Path, description = "Agent id")),
    responses((status = 200, description = "OK", body = DataWithMessage<StatusResponse>)),
    security(("agentId" = [], "agentTimestamp" = [], "agentNonce" = [], "agentSignature" = []), ("userToken" = []), ("apiKey" = []))
)]
pub(super) async fn activate(
    state: Data<AppState>,
    path: Path<String>,
    auth: Authenticated,
) -> Answer<DataWithMessage<StatusResponse>> {
    let agent = state
        .agents
        .activate(&auth.actor, status_target(&path, &auth)?)
        .await?;
    Ok(status_answer(agent, "Agent activated"))
}

/// `DELETE /agents/:id/reject`.
#[utoipa::path(
    delete,
    path = "/agents/{id}/reject",
    operation_id = "rejectAgent",
    tag = "agents",
    summary = "Reject a pending agent",
    params(("id" = uuid::Uuid, Path, description = "Agent id")),
    request_body = Option<ReasonRequest>,
    responses((status = 200, description = "OK", body = MessageResponse)),
    security(("agentId" = [], "agentTimestamp" = [], "agentNonce" = [], "agentSignature" = []), ("userToken" = []), ("apiKey" = []))
)]
pub(super) async fn reject(
    state: Data<AppState>,
    path: Path<String>,
    auth: Authenticated,
) -> Answer<MessageResponse> {
    let id = agent_id(&path)?;
    let reason = parse_optional_json::<ReasonRequest>(&auth.body)?.reason()?;
    let agent = state.agents.reject(&auth.actor, id, reason).await?;
    Ok(Json(MessageResponse {
        message: format!("Agent {} rejected", agent.handle.as_str()).into(),
    }))
}

/// `GET /agents/:id/hierarchy`.
#[utoipa::path(
    get,
    path = "/agents/{id}/hierarchy",
    operation_id = "getAgentHierarchy",
    tag = "agents",
    summary = "Read an agent's subtree of spawned agents",
    params(("id" = uuid::Uuid, Path, description = "Agent id"), HierarchyQuery),
    responses((status = 200, description = "OK", body = dto::Data<HierarchyResponse>)),
    security(("agentId" = [], "agentTimestamp" = [], "agentNonce" = [], "agentSignature" = []), ("userToken" = []), ("apiKey" = []))
)]
pub(super) async fn hierarchy(
    state: Data<AppState>,
    req: HttpRequest,
    path: Path<String>,
    auth: Authenticated,
) -> Answer<dto::Data<HierarchyResponse>> {
    let id = agent_id(&path)?;
    let query: HierarchyQuery = parse_query(req.query_string())?;
    let depth = hierarchy_depth(query.depth)?;
    let tree = state.agents.hierarchy(&auth.actor, id, depth).await?;
    Ok(Json(dto::Data { data: tree.into() }))
}
