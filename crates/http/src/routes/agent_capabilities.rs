//! Capabilities: per agent, unique names, match and best match.

use actix_web::HttpRequest;
use actix_web::web::{Data, Json, Path};
use muster_domain::model::CapabilityId;

use super::agents::agent_id;
use super::tasks::Answer;
use crate::body::{parse_json, parse_query};
use crate::dto;
use crate::dto::agent_skills::{
    AddCapabilityRequest, MatchRequest, MatchResponse, ProficiencyRequest,
};
use crate::dto::agents::CapabilityResponse;
use crate::dto::auth::MessageResponse;
use crate::error::ApiError;
use crate::extract::Authenticated;
use crate::state::AppState;

fn capability_id(path: &str) -> Result<CapabilityId, ApiError> {
    crate::body::parse_uuid("capabilityId", path).map(CapabilityId::from_uuid)
}

/// `GET /agents/capabilities`.
#[utoipa::path(
    get,
    path = "/agents/capabilities",
    operation_id = "listCapabilityNames",
    tag = "agents",
    summary = "List the capability names agents of the organization declare",
    responses((status = 200, description = "OK", body = dto::Data<Vec<String>>)),
    security(("agentId" = [], "agentTimestamp" = [], "agentNonce" = [], "agentSignature" = []), ("userToken" = []), ("apiKey" = []))
)]
pub(super) async fn names(
    state: Data<AppState>,
    auth: Authenticated,
) -> Answer<dto::Data<Vec<String>>> {
    let names = state.agents.capability_names(&auth.actor).await?;
    Ok(Json(dto::Data {
        data: names.into_iter().map(|n| n.as_str().to_owned()).collect(),
    }))
}

/// `GET /agents/capabilities/match`.
#[utoipa::path(
    get,
    path = "/agents/capabilities/match",
    operation_id = "matchAgents",
    tag = "agents",
    summary = "Find agents that have the given capabilities",
    params(MatchRequest),
    responses((status = 200, description = "OK", body = dto::Data<Vec<MatchResponse>>)),
    security(("agentId" = [], "agentTimestamp" = [], "agentNonce" = [], "agentSignature" = []), ("userToken" = []), ("apiKey" = []))
)]
pub(super) async fn matching(
    state: Data<AppState>,
    req: HttpRequest,
    auth: Authenticated,
) -> Answer<dto::Data<Vec<MatchResponse>>> {
    let query = parse_query::<MatchRequest>(req.query_string())?.into_query()?;
    let matches = state.agents.matching(&auth.actor, &query).await?;
    Ok(Json(dto::Data {
        data: matches.into_iter().map(Into::into).collect(),
    }))
}

/// `GET /agents/capabilities/best-match`.
#[utoipa::path(
    get,
    path = "/agents/capabilities/best-match",
    operation_id = "bestMatchAgent",
    tag = "agents",
    summary = "Find the one agent that best covers the given capabilities",
    params(MatchRequest),
    responses((status = 200, description = "OK", body = dto::Data<MatchResponse>)),
    security(("agentId" = [], "agentTimestamp" = [], "agentNonce" = [], "agentSignature" = []), ("userToken" = []), ("apiKey" = []))
)]
pub(super) async fn best_match(
    state: Data<AppState>,
    req: HttpRequest,
    auth: Authenticated,
) -> Answer<dto::Data<MatchResponse>> {
    let query = parse_query::<MatchRequest>(req.query_string())?.into_query()?;
    let best = state
        .agents
        .matching(&auth.actor, &query)
        .await?
        .into_iter()
        .next()
        .ok_or(muster_domain::service::ServiceError::NoMatchingAgent)?;
    Ok(Json(dto::Data { data: best.into() }))
}

/// `GET /agents/:id/capabilities`.
#[utoipa::path(
    get,
    path = "/agents/{id}/capabilities",
    operation_id = "listAgentCapabilities",
    tag = "agents",
    summary = "List an agent's capabilities",
    params(("id" = uuid::Uuid, Path, description = "Agent id")),
    responses((status = 200, description = "OK", body = dto::Data<Vec<CapabilityResponse>>)),
    security(("agentId" = [], "agentTimestamp" = [], "agentNonce" = [], "agentSignature" = []), ("userToken" = []), ("apiKey" = []))
)]
pub(super) async fn of_agent(
    state: Data<AppState>,
    path: Path<String>,
    auth: Authenticated,
) -> Answer<dto::Data<Vec<CapabilityResponse>>> {
    let list = state
        .agents
        .capabilities(&auth.actor, agent_id(&path)?)
        .await?;
    Ok(Json(dto::Data {
        data: list.into_iter().map(Into::into).collect(),
    }))
}

/// `POST /agents/:id/capabilities`.
#[utoipa::path(
    post,
    path = "/agents/{id}/capabilities",
    operation_id = "addAgentCapability",
    tag = "agents",
    summary = "Add a capability to an agent",
    params(("id" = uuid::Uuid, Path, description = "Agent id")),
    request_body = AddCapabilityRequest,
    responses((status = 200, description = "OK", body = dto::Data<CapabilityResponse>)),
    security(("agentId" = [], "agentTimestamp" = [], "agentNonce" = [], "agentSignature" = []), ("userToken" = []), ("apiKey" = []))
)]
pub(super) async fn add(
    state: Data<AppState>,
    path: Path<String>,
    auth: Authenticated,
) -> Answer<dto::Data<CapabilityResponse>> {
    let id = agent_id(&path)?;
    let (name, proficiency) = parse_json::<AddCapabilityRequest>(&auth.body)?.into_parts()?;
    let capability = state
        .agents
        .add_capability(&auth.actor, id, name, proficiency)
        .await?;
    Ok(Json(dto::Data {
        data: capability.into(),
    }))
}

/// `PATCH /agents/capabilities/:capabilityId`.
#[utoipa::path(
    patch,
    path = "/agents/capabilities/{capability_id}",
    operation_id = "updateAgentCapability",
    tag = "agents",
    summary = "Change a capability's proficiency",
    params(("capability_id" = uuid::Uuid, Path, description = "Capability id")),
    request_body = ProficiencyRequest,
    responses((status = 200, description = "OK", body = dto::Data<CapabilityResponse>)),
    security(("agentId" = [], "agentTimestamp" = [], "agentNonce" = [], "agentSignature" = []), ("userToken" = []), ("apiKey" = []))
)]
pub(super) async fn update(
    state: Data<AppState>,
    path: Path<String>,
    auth: Authenticated,
) -> Answer<dto::Data<CapabilityResponse>> {
    let id = capability_id(&path)?;
    let request: ProficiencyRequest = parse_json(&auth.body)?;
    let capability = state
        .agents
        .update_capability(&auth.actor, id, request.proficiency)
        .await?;
    Ok(Json(dto::Data {
        data: capability.into(),
    }))
}

/// `DELETE /agents/capabilities/:capabilityId`.
#[utoipa::path(
    delete,
    path = "/agents/capabilities/{capability_id}",
    operation_id = "removeAgentCapability",
    tag = "agents",
    summary = "Remove a capability from its agent",
    params(("capability_id" = uuid::Uuid, Path, description = "Capability id")),
    responses((status = 200, description = "OK", body = MessageResponse)),
    security(("agentId" = [], "agentTimestamp" = [], "agentNonce" = [], "agentSignature" = []), ("userToken" = []), ("apiKey" = []))
)]
pub(super) async fn remove(
    state: Data<AppState>,
    path: Path<String>,
    auth: Authenticated,
) -> Answer<MessageResponse> {
    let id = capability_id(&path)?;
    let capability = state.agents.remove_capability(&auth.actor, id).await?;
    Ok(Json(MessageResponse {
        message: format!("Capability {} removed", capability.name.as_str()).into(),
    }))
}
