//! What runs used and cost, added up (decision D-106): the organization's, and one
//! agent's.

use actix_web::HttpRequest;
use actix_web::web::{Data, Json, Path};
use muster_domain::ports::UsageGroupBy;

use super::agents::agent_id;
use super::tasks::Answer;
use crate::body::parse_query;
use crate::dto::runs::{UsageQueryParams, UsageSummaryResponse};
use crate::extract::Authenticated;
use crate::state::AppState;

/// `GET /usage`.
#[utoipa::path(
    get,
    path = "/usage",
    operation_id = "getUsage",
    tag = "runs",
    summary = "Add up the organization's usage",
    description = "The usage reports of the caller's organization, filtered by agent, \
        task and when they were recorded, added up per `groupBy` (default `agent`), \
        ordered by key: tokens, cost (`null` while none was priced), the tokens of \
        unpriced reports, credits charged and unfunded, reports and runs.",
    params(UsageQueryParams),
    responses((status = 200, description = "OK", body = UsageSummaryResponse)),
    security(("agentId" = [], "agentTimestamp" = [], "agentNonce" = [], "agentSignature" = []), ("userToken" = []), ("apiKey" = []))
)]
pub(super) async fn summary(
    state: Data<AppState>,
    req: HttpRequest,
    auth: Authenticated,
) -> Answer<UsageSummaryResponse> {
    let params: UsageQueryParams = parse_query(req.query_string())?;
    let query = params.query(UsageGroupBy::Agent)?;
    let groups = state.runs.usage(&auth.actor, &query).await?;
    Ok(Json(UsageSummaryResponse {
        data: groups.into_iter().map(Into::into).collect(),
    }))
}

/// `GET /agents/:id/usage`.
#[utoipa::path(
    get,
    path = "/agents/{id}/usage",
    operation_id = "getAgentUsage",
    tag = "runs",
    summary = "Add up one agent's usage",
    description = "As `GET /usage`, of the agent's reports only (an `agentId` in the \
        query is overridden), grouped by `model` unless `groupBy` says otherwise. 404 \
        when the agent is not there.",
    params(("id" = uuid::Uuid, Path, description = "Agent UUID"), UsageQueryParams),
    responses((status = 200, description = "OK", body = UsageSummaryResponse)),
    security(("agentId" = [], "agentTimestamp" = [], "agentNonce" = [], "agentSignature" = []), ("userToken" = []), ("apiKey" = []))
)]
pub(super) async fn of_agent(
    state: Data<AppState>,
    path: Path<String>,
    req: HttpRequest,
    auth: Authenticated,
) -> Answer<UsageSummaryResponse> {
    let agent = agent_id(&path)?;
    let params: UsageQueryParams = parse_query(req.query_string())?;
    let mut query = params.query(UsageGroupBy::Model)?;
    query.agent = Some(agent);
    // The agent must be there (and the caller's): an empty summary would not say so.
    state.agents.get(&auth.actor, agent).await?;
    let groups = state.runs.usage(&auth.actor, &query).await?;
    Ok(Json(UsageSummaryResponse {
        data: groups.into_iter().map(Into::into).collect(),
    }))
}
