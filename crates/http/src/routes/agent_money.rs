//! Budgets and credits: budget status and limit, can-spend, alerts, balance, grant,
//! spend, transfer, history.

use actix_web::HttpRequest;
use actix_web::web::{Data, Json, Path};

use super::agents::agent_id;
use super::tasks::Answer;
use crate::body::{parse_json, parse_page, parse_query};
use crate::dto;
use crate::dto::agent_money::{
    AmountRequest, BalanceResponse, BudgetRequest, BudgetResponse, CanSpendQuery, CanSpendResponse,
    LedgerResponse, TransferRequest, TransferResponse,
};
use crate::dto::paging::{PageQuery, PageResponse};
use crate::dto::task_links::DataWithMessage;
use crate::extract::Authenticated;
use crate::state::AppState;

/// `GET /agents/:id/budget`.
#[utoipa::path(
    get,
    path = "/agents/{id}/budget",
    operation_id = "getAgentBudget",
    tag = "credits and budgets",
    summary = "Read an agent's budget and utilization",
    params(("id" = uuid::Uuid, Path, description = "Agent id")),
    responses((status = 200, description = "OK", body = dto::Data<BudgetResponse>)),
    security(("agentId" = [], "agentTimestamp" = [], "agentNonce" = [], "agentSignature" = []), ("userToken" = []), ("apiKey" = []))
)]
pub(super) async fn budget(
    state: Data<AppState>,
    path: Path<String>,
    auth: Authenticated,
) -> Answer<dto::Data<BudgetResponse>> {
    let status = state.agents.budget(&auth.actor, agent_id(&path)?).await?;
    Ok(Json(dto::Data {
        data: status.into(),
    }))
}

/// `PATCH /agents/:id/budget`.
#[utoipa::path(
    patch,
    path = "/agents/{id}/budget",
    operation_id = "setAgentBudget",
    tag = "credits and budgets",
    summary = "Set an agent's budget limit and period",
    params(("id" = uuid::Uuid, Path, description = "Agent id")),
    request_body = BudgetRequest,
    responses((status = 200, description = "OK", body = dto::Data<BudgetResponse>)),
    security(("agentId" = [], "agentTimestamp" = [], "agentNonce" = [], "agentSignature" = []), ("userToken" = []), ("apiKey" = []))
)]
pub(super) async fn set_budget(
    state: Data<AppState>,
    path: Path<String>,
    auth: Authenticated,
) -> Answer<dto::Data<BudgetResponse>> {
    let id = agent_id(&path)?;
    let (limit, reset) = parse_json::<BudgetRequest>(&auth.body)?.into_parts()?;
    let status = state
        .agents
        .set_budget(&auth.actor, id, limit, reset)
        .await?;
    Ok(Json(dto::Data {
        data: status.into(),
    }))
}

/// `GET /agents/:id/budget/can-spend`.
#[utoipa::path(
    get,
    path = "/agents/{id}/budget/can-spend",
    operation_id = "canAgentSpend",
    tag = "credits and budgets",
    summary = "Check whether an agent may spend an amount now",
    params(("id" = uuid::Uuid, Path, description = "Agent id"), CanSpendQuery),
    responses((status = 200, description = "OK", body = dto::Data<CanSpendResponse>)),
    security(("agentId" = [], "agentTimestamp" = [], "agentNonce" = [], "agentSignature" = []), ("userToken" = []), ("apiKey" = []))
)]
pub(super) async fn can_spend(
    state: Data<AppState>,
    req: HttpRequest,
    path: Path<String>,
    auth: Authenticated,
) -> Answer<dto::Data<CanSpendResponse>> {
    let id = agent_id(&path)?;
    let amount = parse_query::<CanSpendQuery>(req.query_string())?.amount()?;
    let verdict = state.agents.can_spend(&auth.actor, id, amount).await?;
    Ok(Json(dto::Data {
        data: verdict.into(),
    }))
}

/// `GET /agents/budget/alerts`.
#[utoipa::path(
    get,
    path = "/agents/budget/alerts",
    operation_id = "listBudgetAlerts",
    tag = "credits and budgets",
    summary = "List agents at or above 80 % of their budget",
    responses((status = 200, description = "OK", body = dto::Data<Vec<BudgetResponse>>)),
    security(("agentId" = [], "agentTimestamp" = [], "agentNonce" = [], "agentSignature" = []), ("userToken" = []), ("apiKey" = []))
)]
pub(super) async fn alerts(
    state: Data<AppState>,
    auth: Authenticated,
) -> Answer<dto::Data<Vec<BudgetResponse>>> {
    let alerts = state.agents.budget_alerts(&auth.actor).await?;
    Ok(Json(dto::Data {
        data: alerts.into_iter().map(Into::into).collect(),
    }))
}

/// `GET /agents/:id/credits/balance`.
#[utoipa::path(
    get,
    path = "/agents/{id}/credits/balance",
    operation_id = "getAgentBalance",
    tag = "credits and budgets",
    summary = "Read an agent's credit balance",
    params(("id" = uuid::Uuid, Path, description = "Agent id")),
    responses((status = 200, description = "OK", body = dto::Data<BalanceResponse>)),
    security(("agentId" = [], "agentTimestamp" = [], "agentNonce" = [], "agentSignature" = []), ("userToken" = []), ("apiKey" = []))
)]
pub(super) async fn balance(
    state: Data<AppState>,
    path: Path<String>,
    auth: Authenticated,
) -> Answer<dto::Data<BalanceResponse>> {
    let agent = state.agents.balance(&auth.actor, agent_id(&path)?).await?;
    Ok(Json(dto::Data {
        data: BalanceResponse::from(&agent),
    }))
}

/// `POST /agents/:id/credits/grant`.
#[utoipa::path(
    post,
    path = "/agents/{id}/credits/grant",
    operation_id = "grantCredits",
    tag = "credits and budgets",
    summary = "Grant credits to an agent",
    params(("id" = uuid::Uuid, Path, description = "Agent id")),
    request_body = AmountRequest,
    responses((status = 200, description = "OK", body = DataWithMessage<LedgerResponse>)),
    security(("agentId" = [], "agentTimestamp" = [], "agentNonce" = [], "agentSignature" = []), ("userToken" = []), ("apiKey" = []))
)]
pub(super) async fn grant(
    state: Data<AppState>,
    path: Path<String>,
    auth: Authenticated,
) -> Answer<DataWithMessage<LedgerResponse>> {
    let id = agent_id(&path)?;
    let (amount, reason) = parse_json::<AmountRequest>(&auth.body)?.into_parts()?;
    let entry = state.agents.grant(&auth.actor, id, amount, reason).await?;
    Ok(Json(DataWithMessage {
        message: format!("Granted {} credits", amount.get()),
        data: entry.into(),
    }))
}

/// `POST /agents/credits/spend`.
#[utoipa::path(
    post,
    path = "/agents/credits/spend",
    operation_id = "spendCredits",
    tag = "credits and budgets",
    summary = "Spend credits from the calling agent's balance",
    request_body = AmountRequest,
    responses((status = 200, description = "OK", body = DataWithMessage<LedgerResponse>)),
    security(("agentId" = [], "agentTimestamp" = [], "agentNonce" = [], "agentSignature" = []), ("userToken" = []), ("apiKey" = []))
)]
pub(super) async fn spend(
    state: Data<AppState>,
    auth: Authenticated,
) -> Answer<DataWithMessage<LedgerResponse>> {
    let (amount, reason) = parse_json::<AmountRequest>(&auth.body)?.into_parts()?;
    let entry = state.agents.spend(&auth.actor, amount, reason).await?;
    Ok(Json(DataWithMessage {
        message: format!("Spent {} credits", amount.get()),
        data: entry.into(),
    }))
}

/// `POST /agents/credits/transfer`.
#[utoipa::path(
    post,
    path = "/agents/credits/transfer",
    operation_id = "transferCredits",
    tag = "credits and budgets",
    summary = "Transfer credits between agents, with the management fee",
    request_body = TransferRequest,
    responses((status = 200, description = "OK", body = dto::Data<TransferResponse>)),
    security(("agentId" = [], "agentTimestamp" = [], "agentNonce" = [], "agentSignature" = []), ("userToken" = []), ("apiKey" = []))
)]
pub(super) async fn transfer(
    state: Data<AppState>,
    auth: Authenticated,
) -> Answer<dto::Data<TransferResponse>> {
    let (to, amount, reason) = parse_json::<TransferRequest>(&auth.body)?.into_parts()?;
    let transfer = state
        .agents
        .transfer(&auth.actor, to, amount, reason)
        .await?;
    Ok(Json(dto::Data {
        data: transfer.into(),
    }))
}

/// `GET /agents/:id/credits/history`.
#[utoipa::path(
    get,
    path = "/agents/{id}/credits/history",
    operation_id = "listCreditHistory",
    tag = "credits and budgets",
    summary = "List an agent's credit ledger, newest first",
    params(("id" = uuid::Uuid, Path, description = "Agent id"), PageQuery),
    responses((status = 200, description = "OK", body = PageResponse<LedgerResponse>)),
    security(("agentId" = [], "agentTimestamp" = [], "agentNonce" = [], "agentSignature" = []), ("userToken" = []), ("apiKey" = []))
)]
pub(super) async fn history(
    state: Data<AppState>,
    req: HttpRequest,
    path: Path<String>,
    auth: Authenticated,
) -> Answer<PageResponse<LedgerResponse>> {
    let id = agent_id(&path)?;
    let request = parse_page(req.query_string())?;
    let page = state.agents.history(&auth.actor, id, request).await?;
    Ok(Json(PageResponse::of(page, LedgerResponse::from)))
}
