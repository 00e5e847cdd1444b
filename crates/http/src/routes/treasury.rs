//! The organization's treasury (decision D-101): its balance, its ledger and its grants.

use actix_web::HttpRequest;
use actix_web::web::{Data, Json};

use super::tasks::Answer;
use crate::body::{parse_json, parse_page};
use crate::dto;
use crate::dto::agent_money::AmountRequest;
use crate::dto::paging::{PageQuery, PageResponse};
use crate::dto::treasury::{TreasuryEntryResponse, TreasuryResponse};
use crate::extract::Authenticated;
use crate::state::AppState;

/// `GET /org/treasury`.
#[utoipa::path(
    get,
    path = "/org/treasury",
    operation_id = "getTreasury",
    tag = "credits and budgets",
    summary = "Read the organization's treasury",
    description = "The credits the caller's organization holds to pay the rewards of the \
        tasks that people, API keys and integrations create. Admin users and founder or \
        admin agents (an API key needs the `admin` scope); 403 otherwise.",
    responses((status = 200, description = "OK", body = dto::Data<TreasuryResponse>)),
    security(("agentId" = [], "agentTimestamp" = [], "agentNonce" = [], "agentSignature" = []), ("userToken" = []), ("apiKey" = []))
)]
pub(super) async fn get(
    state: Data<AppState>,
    auth: Authenticated,
) -> Answer<dto::Data<TreasuryResponse>> {
    let treasury = state.treasury.get(&auth.actor).await?;
    Ok(Json(dto::Data {
        data: treasury.into(),
    }))
}

/// `GET /org/treasury/history`.
#[utoipa::path(
    get,
    path = "/org/treasury/history",
    operation_id = "listTreasuryHistory",
    tag = "credits and budgets",
    summary = "List the treasury's ledger, newest first",
    description = "Every movement of the treasury with the balance it left: `granted`, \
        `escrowed` (into a task's reward) and `refunded` (back from one). Admin users and \
        founder or admin agents; 403 otherwise.",
    params(PageQuery),
    responses((status = 200, description = "OK", body = PageResponse<TreasuryEntryResponse>)),
    security(("agentId" = [], "agentTimestamp" = [], "agentNonce" = [], "agentSignature" = []), ("userToken" = []), ("apiKey" = []))
)]
pub(super) async fn history(
    state: Data<AppState>,
    req: HttpRequest,
    auth: Authenticated,
) -> Answer<PageResponse<TreasuryEntryResponse>> {
    let request = parse_page(req.query_string())?;
    let page = state.treasury.history(&auth.actor, request).await?;
    Ok(Json(PageResponse::of(page, TreasuryEntryResponse::from)))
}

/// `POST /org/treasury/grant`.
#[utoipa::path(
    post,
    path = "/org/treasury/grant",
    operation_id = "grantTreasury",
    tag = "credits and budgets",
    summary = "Grant credits to the organization's treasury",
    description = "Creates credits in the treasury, which pays the rewards of the tasks \
        that people, API keys and integrations create. Admin users and founder or admin \
        agents; 403 otherwise. Event `treasury.granted`.",
    request_body = AmountRequest,
    responses((status = 200, description = "OK", body = dto::Data<TreasuryEntryResponse>)),
    security(("agentId" = [], "agentTimestamp" = [], "agentNonce" = [], "agentSignature" = []), ("userToken" = []), ("apiKey" = []))
)]
pub(super) async fn grant(
    state: Data<AppState>,
    auth: Authenticated,
) -> Answer<dto::Data<TreasuryEntryResponse>> {
    let (amount, reason) = parse_json::<AmountRequest>(&auth.body)?.into_parts()?;
    let entry = state.treasury.grant(&auth.actor, amount, reason).await?;
    Ok(Json(dto::Data { data: entry.into() }))
}
