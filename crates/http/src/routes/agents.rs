//! `/agents`: register, list, read, edit, revoke, suspend, unsuspend, demote.

use actix_web::HttpRequest;
use actix_web::web::{Data, Json, Path};
use muster_domain::model::{Agent, AgentId};

use super::tasks::Answer;
use crate::body::{parse_json, parse_optional_json, parse_query};
use crate::dto;
use crate::dto::agents::{
    AgentResponse, ListAgentsQuery, PatchAgentRequest, ReasonRequest, RegisterRequest,
    StatusResponse, WithSecret,
};
use crate::dto::paging::PageResponse;
use crate::dto::task_links::{DataWithMessage, EmptyRequest};
use crate::error::ApiError;
use crate::extract::Authenticated;
use crate::state::AppState;

/// The agent id of a path segment.
pub(super) fn agent_id(path: &str) -> Result<AgentId, ApiError> {
    crate::body::parse_uuid("id", path).map(AgentId::from_uuid)
}

/// The agent of a status route (`/revoke`, `/activate`, ...), whose body may only be
/// empty or `{}`.
pub(super) fn status_target(path: &str, auth: &Authenticated) -> Result<AgentId, ApiError> {
    let id = agent_id(path)?;
    parse_optional_json::<EmptyRequest>(&auth.body)?;
    Ok(id)
}

/// `{data: {id, agentId, status, level}, message}`: the answer of a status change.
pub(super) fn status_answer(
    agent: Agent,
    message: impl Into<String>,
) -> Json<DataWithMessage<StatusResponse>> {
    Json(DataWithMessage {
        data: agent.into(),
        message: message.into(),
    })
}

/// `POST /agents/register`.
#[utoipa::path(
    post,
    path = "/agents/register",
    operation_id = "registerAgent",
    tag = "agents",
    summary = "Register an agent; its secret is answered once",
    request_body = RegisterRequest,
    responses((status = 200, description = "OK", body = WithSecret)),
    security(("agentId" = [], "agentTimestamp" = [], "agentNonce" = [], "agentSignature" = []), ("userToken" = []), ("apiKey" = []))
)]
pub(super) async fn register(
    state: Data<AppState>,
    auth: Authenticated,
) -> Result<Json<WithSecret>, ApiError> {
    let new = parse_json::<RegisterRequest>(&auth.body)?.into_new_agent()?;
    let registered = state.agents.register(&auth.actor, new).await?;
    Ok(Json(WithSecret::registered(registered)))
}

/// `GET /agents`.
#[utoipa::path(
    get,
    path = "/agents",
    operation_id = "listAgents",
    tag = "agents",
    summary = "List the organization's agents",
    params(ListAgentsQuery),
    responses((status = 200, description = "OK", body = PageResponse<AgentResponse>)),
    security(("agentId" = [], "agentTimestamp" = [], "agentNonce" = [], "agentSignature" = []), ("userToken" = []), ("apiKey" = []))
)]
pub(super) async fn list(
    state: Data<AppState>,
    req: HttpRequest,
    auth: Authenticated,
) -> Answer<PageResponse<AgentResponse>> {
    let query: ListAgentsQuery = parse_query(req.query_string())?;
    let page = state
        .agents
        .list(&auth.actor, &query.filter(), query.page()?)
        .await?;
    Ok(Json(PageResponse::of(page, AgentResponse::from)))
}

/// `GET /agents/:id`.
#[utoipa::path(
    get,
    path = "/agents/{id}",
    operation_id = "getAgent",
    tag = "agents",
    summary = "Read an agent",
    params(("id" = uuid::Uuid, Path, description = "Agent id")),
    responses((status = 200, description = "OK", body = dto::Data<AgentResponse>)),
    security(("agentId" = [], "agentTimestamp" = [], "agentNonce" = [], "agentSignature" = []), ("userToken" = []), ("apiKey" = []))
)]
pub(super) async fn get(
    state: Data<AppState>,
    path: Path<String>,
    auth: Authenticated,
) -> Answer<dto::Data<AgentResponse>> {
    let view = state.agents.get(&auth.actor, agent_id(&path)?).await?;
    Ok(Json(dto::Data { data: view.into() }))
}

/// `PATCH /agents/:id`.
#[utoipa::path(
    patch,
    path = "/agents/{id}",
    operation_id = "updateAgent",
    tag = "agents",
    summary = "Change an agent's fields",
    params(("id" = uuid::Uuid, Path, description = "Agent id")),
    request_body = PatchAgentRequest,
    responses((status = 200, description = "OK", body = dto::Data<AgentResponse>)),
    security(("agentId" = [], "agentTimestamp" = [], "agentNonce" = [], "agentSignature" = []), ("userToken" = []), ("apiKey" = []))
)]
pub(super) async fn update(
    state: Data<AppState>,
    path: Path<String>,
    auth: Authenticated,
) -> Answer<dto::Data<AgentResponse>> {
    let id = agent_id(&path)?;
    let changes = parse_json::<PatchAgentRequest>(&auth.body)?.into_patch()?;
    let view = state.agents.update(&auth.actor, id, changes).await?;
    Ok(Json(dto::Data { data: view.into() }))
}

/// `POST /agents/:id/revoke`.
#[utoipa::path(
    post,
    path = "/agents/{id}/revoke",
    operation_id = "revokeAgent",
    tag = "agents",
    summary = "Revoke an agent for good",
    params(("id" = uuid::Uuid, Path, description = "Agent id")),
    responses((status = 200, description = "OK", body = DataWithMessage<StatusResponse>)),
    security(("agentId" = [], "agentTimestamp" = [], "agentNonce" = [], "agentSignature" = []), ("userToken" = []), ("apiKey" = []))
)]
pub(super) async fn revoke(
    state: Data<AppState>,
    path: Path<String>,
    auth: Authenticated,
) -> Answer<DataWithMessage<StatusResponse>> {
    let agent = state
        .agents
        .revoke(&auth.actor, status_target(&path, &auth)?)
        .await?;
    Ok(status_answer(agent, "Agent revoked"))
}

/// `POST /agents/:id/suspend`.
#[utoipa::path(
    post,
    path = "/agents/{id}/suspend",
    operation_id = "suspendAgent",
    tag = "agents",
    summary = "Suspend an agent",
    params(("id" = uuid::Uuid, Path, description = "Agent id")),
    responses((status = 200, description = "OK", body = DataWithMessage<StatusResponse>)),
    security(("agentId" = [], "agentTimestamp" = [], "agentNonce" = [], "agentSignature" = []), ("userToken" = []), ("apiKey" = []))
)]
pub(super) async fn suspend(
    state: Data<AppState>,
    path: Path<String>,
    auth: Authenticated,
) -> Answer<DataWithMessage<StatusResponse>> {
    let agent = state
        .agents
        .suspend(&auth.actor, status_target(&path, &auth)?)
        .await?;
    Ok(status_answer(agent, "Agent suspended"))
}

/// `POST /agents/:id/unsuspend`.
#[utoipa::path(
    post,
    path = "/agents/{id}/unsuspend",
    operation_id = "unsuspendAgent",
    tag = "agents",
    summary = "Unsuspend an agent",
    params(("id" = uuid::Uuid, Path, description = "Agent id")),
    responses((status = 200, description = "OK", body = DataWithMessage<StatusResponse>)),
    security(("agentId" = [], "agentTimestamp" = [], "agentNonce" = [], "agentSignature" = []), ("userToken" = []), ("apiKey" = []))
)]
pub(super) async fn unsuspend(
    state: Data<AppState>,
    path: Path<String>,
    auth: Authenticated,
) -> Answer<DataWithMessage<StatusResponse>> {
    let agent = state
        .agents
        .unsuspend(&auth.actor, status_target(&path, &auth)?)
        .await?;
    Ok(status_answer(agent, "Agent unsuspended"))
}

/// `POST /agents/:id/demote`.
#[utoipa::path(
    post,
    path = "/agents/{id}/demote",
    operation_id = "demoteAgent",
    tag = "agents",
    summary = "Demote an agent one level",
    params(("id" = uuid::Uuid, Path, description = "Agent id")),
    request_body = Option<ReasonRequest>,
    responses((status = 200, description = "OK", body = DataWithMessage<StatusResponse>)),
    security(("agentId" = [], "agentTimestamp" = [], "agentNonce" = [], "agentSignature" = []), ("userToken" = []), ("apiKey" = []))
)]
pub(super) async fn demote(
    state: Data<AppState>,
    path: Path<String>,
    auth: Authenticated,
) -> Answer<DataWithMessage<StatusResponse>> {
    let id = agent_id(&path)?;
    let reason = parse_optional_json::<ReasonRequest>(&auth.body)?.reason()?;
    let agent = state.agents.demote(&auth.actor, id, reason).await?;
    let message = format!("Agent demoted to level {}", agent.level.get());
    Ok(status_answer(agent, message))
}
