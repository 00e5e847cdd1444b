//! Reputation: summary, history, bonus, penalty, trust leaderboard.

use actix_web::HttpRequest;
use actix_web::web::{Data, Json, Path};

use super::agents::agent_id;
use super::tasks::Answer;
use crate::body::{parse_json, parse_query};
use crate::dto;
use crate::dto::agent_skills::{
    HistoryQuery, HistoryResponse, LeaderboardQuery, LeaderboardResponse, ReputationEventResponse,
    ScoreRequest, SummaryResponse,
};
use crate::dto::task_links::DataWithMessage;
use crate::extract::Authenticated;
use crate::state::AppState;

/// `GET /agents/:id/reputation`.
#[utoipa::path(
    get,
    path = "/agents/{id}/reputation",
    operation_id = "getAgentReputation",
    tag = "reputation",
    summary = "Read an agent's reputation score and counts",
    params(("id" = uuid::Uuid, Path, description = "Agent id")),
    responses((status = 200, description = "OK", body = dto::Data<SummaryResponse>)),
    security(("agentId" = [], "agentTimestamp" = [], "agentNonce" = [], "agentSignature" = []), ("userToken" = []), ("apiKey" = []))
)]
pub(super) async fn summary(
    state: Data<AppState>,
    path: Path<String>,
    auth: Authenticated,
) -> Answer<dto::Data<SummaryResponse>> {
    let summary = state
        .agents
        .reputation(&auth.actor, agent_id(&path)?)
        .await?;
    Ok(Json(dto::Data {
        data: summary.into(),
    }))
}

/// `GET /agents/:id/reputation/history`.
#[utoipa::path(
    get,
    path = "/agents/{id}/reputation/history",
    operation_id = "listReputationHistory",
    tag = "reputation",
    summary = "List an agent's reputation events, newest first",
    params(("id" = uuid::Uuid, Path, description = "Agent id"), HistoryQuery),
    responses((status = 200, description = "OK", body = HistoryResponse)),
    security(("agentId" = [], "agentTimestamp" = [], "agentNonce" = [], "agentSignature" = []), ("userToken" = []), ("apiKey" = []))
)]
pub(super) async fn history(
    state: Data<AppState>,
    req: HttpRequest,
    path: Path<String>,
    auth: Authenticated,
) -> Answer<HistoryResponse> {
    let id = agent_id(&path)?;
    let (limit, offset) = parse_query::<HistoryQuery>(req.query_string())?.into_parts()?;
    let (events, total) = state
        .agents
        .reputation_history(&auth.actor, id, limit, offset)
        .await?;
    Ok(Json(HistoryResponse {
        data: events.into_iter().map(Into::into).collect(),
        total,
    }))
}

/// `POST /agents/:id/reputation/bonus`.
#[utoipa::path(
    post,
    path = "/agents/{id}/reputation/bonus",
    operation_id = "awardReputationBonus",
    tag = "reputation",
    summary = "Record a quality bonus for an agent",
    params(("id" = uuid::Uuid, Path, description = "Agent id")),
    request_body = ScoreRequest,
    responses((status = 200, description = "OK", body = DataWithMessage<ReputationEventResponse>)),
    security(("agentId" = [], "agentTimestamp" = [], "agentNonce" = [], "agentSignature" = []), ("userToken" = []), ("apiKey" = []))
)]
pub(super) async fn bonus(
    state: Data<AppState>,
    path: Path<String>,
    auth: Authenticated,
) -> Answer<DataWithMessage<ReputationEventResponse>> {
    let id = agent_id(&path)?;
    let change = parse_json::<ScoreRequest>(&auth.body)?.into_change()?;
    let event = state.agents.bonus(&auth.actor, id, change).await?;
    Ok(Json(DataWithMessage {
        message: format!("Quality bonus of {} recorded", event.amount),
        data: event.into(),
    }))
}

/// `POST /agents/:id/reputation/penalty`.
#[utoipa::path(
    post,
    path = "/agents/{id}/reputation/penalty",
    operation_id = "recordReputationPenalty",
    tag = "reputation",
    summary = "Record a quality penalty for an agent",
    params(("id" = uuid::Uuid, Path, description = "Agent id")),
    request_body = ScoreRequest,
    responses((status = 200, description = "OK", body = DataWithMessage<ReputationEventResponse>)),
    security(("agentId" = [], "agentTimestamp" = [], "agentNonce" = [], "agentSignature" = []), ("userToken" = []), ("apiKey" = []))
)]
pub(super) async fn penalty(
    state: Data<AppState>,
    path: Path<String>,
    auth: Authenticated,
) -> Answer<DataWithMessage<ReputationEventResponse>> {
    let id = agent_id(&path)?;
    let change = parse_json::<ScoreRequest>(&auth.body)?.into_change()?;
    let event = state.agents.penalty(&auth.actor, id, change).await?;
    Ok(Json(DataWithMessage {
        message: format!("Quality penalty of {} recorded", -event.amount),
        data: event.into(),
    }))
}

/// `GET /agents/leaderboard/trust`.
#[utoipa::path(
    get,
    path = "/agents/leaderboard/trust",
    operation_id = "trustLeaderboard",
    tag = "reputation",
    summary = "List the most trusted agents",
    params(LeaderboardQuery),
    responses((status = 200, description = "OK", body = dto::Data<Vec<LeaderboardResponse>>)),
    security(("agentId" = [], "agentTimestamp" = [], "agentNonce" = [], "agentSignature" = []), ("userToken" = []), ("apiKey" = []))
)]
pub(super) async fn leaderboard(
    state: Data<AppState>,
    req: HttpRequest,
    auth: Authenticated,
) -> Answer<dto::Data<Vec<LeaderboardResponse>>> {
    let limit = parse_query::<LeaderboardQuery>(req.query_string())?.limit()?;
    let rows = state.agents.leaderboard(&auth.actor, limit).await?;
    Ok(Json(dto::Data {
        data: rows.into_iter().map(Into::into).collect(),
    }))
}
