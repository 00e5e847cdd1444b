//! Handlers of routing (candidates, auto-assign) and templates.

use actix_web::HttpRequest;
use actix_web::web::{Data, Json, Path};
use muster_domain::model::TemplateId;

use super::tasks::{Answer, task_id};
use crate::body::{parse_json, parse_optional_json, parse_page, parse_query};
use crate::dto;
use crate::dto::paging::{PageQuery, PageResponse};
use crate::dto::routing::{
    AutoAssignRequest, CandidateResponse, CandidatesQuery, CreateTemplateRequest,
    InstantiateRequest, TemplateResponse,
};
use crate::dto::tasks::TaskResponse;
use crate::extract::Authenticated;
use crate::state::AppState;

/// `GET /tasks/:id/candidates`.
#[utoipa::path(
    get,
    path = "/tasks/{id}/candidates",
    operation_id = "listTaskCandidates",
    tag = "routing",
    summary = "Rank the agents that could take a task",
    params(("id" = uuid::Uuid, Path, description = "Task id"), CandidatesQuery),
    responses((status = 200, description = "OK", body = dto::Data<Vec<CandidateResponse>>)),
    security(("agentId" = [], "agentTimestamp" = [], "agentNonce" = [], "agentSignature" = []), ("userToken" = []), ("apiKey" = []))
)]
pub(super) async fn candidates(
    state: Data<AppState>,
    path: Path<String>,
    req: HttpRequest,
    auth: Authenticated,
) -> Answer<dto::Data<Vec<CandidateResponse>>> {
    let id = task_id(&path)?;
    let query = parse_query::<CandidatesQuery>(req.query_string())?.into_query()?;
    let ranked = state.tasks.candidates(&auth.actor, id, query).await?;
    Ok(Json(dto::Data {
        data: ranked.into_iter().map(CandidateResponse::from).collect(),
    }))
}

/// `POST /tasks/:id/auto-assign`.
#[utoipa::path(
    post,
    path = "/tasks/{id}/auto-assign",
    operation_id = "autoAssignTask",
    tag = "routing",
    summary = "Assign a task to its best candidate",
    params(("id" = uuid::Uuid, Path, description = "Task id")),
    request_body = Option<AutoAssignRequest>,
    responses((status = 200, description = "OK", body = dto::Data<TaskResponse>)),
    security(("agentId" = [], "agentTimestamp" = [], "agentNonce" = [], "agentSignature" = []), ("userToken" = []), ("apiKey" = []))
)]
pub(super) async fn auto_assign(
    state: Data<AppState>,
    path: Path<String>,
    auth: Authenticated,
) -> Answer<dto::Data<TaskResponse>> {
    let id = task_id(&path)?;
    let request = parse_optional_json::<AutoAssignRequest>(&auth.body)?.into_request()?;
    let task = state.tasks.auto_assign(&auth.actor, id, request).await?;
    Ok(Json(dto::Data { data: task.into() }))
}

/// `POST /tasks/:id/create-template`.
#[utoipa::path(
    post,
    path = "/tasks/{id}/create-template",
    operation_id = "createTaskTemplate",
    tag = "routing",
    summary = "Save a task as a reusable template",
    params(("id" = uuid::Uuid, Path, description = "Task id")),
    request_body = CreateTemplateRequest,
    responses((status = 200, description = "OK", body = dto::Data<TemplateResponse>)),
    security(("agentId" = [], "agentTimestamp" = [], "agentNonce" = [], "agentSignature" = []), ("userToken" = []), ("apiKey" = []))
)]
pub(super) async fn create_template(
    state: Data<AppState>,
    path: Path<String>,
    auth: Authenticated,
) -> Answer<dto::Data<TemplateResponse>> {
    let id = task_id(&path)?;
    let name = parse_json::<CreateTemplateRequest>(&auth.body)?.name()?;
    let template = state.tasks.create_template(&auth.actor, id, name).await?;
    Ok(Json(dto::Data {
        data: template.into(),
    }))
}

/// `GET /tasks/templates`.
#[utoipa::path(
    get,
    path = "/tasks/templates",
    operation_id = "listTaskTemplates",
    tag = "routing",
    summary = "List task templates",
    params(PageQuery),
    responses((status = 200, description = "OK", body = PageResponse<TemplateResponse>)),
    security(("agentId" = [], "agentTimestamp" = [], "agentNonce" = [], "agentSignature" = []), ("userToken" = []), ("apiKey" = []))
)]
pub(super) async fn templates(
    state: Data<AppState>,
    req: HttpRequest,
    auth: Authenticated,
) -> Answer<PageResponse<TemplateResponse>> {
    let request = parse_page(req.query_string())?;
    let page = state.tasks.templates(&auth.actor, request).await?;
    Ok(Json(PageResponse::of(page, TemplateResponse::from)))
}

/// `POST /tasks/templates/:id/instantiate`.
#[utoipa::path(
    post,
    path = "/tasks/templates/{id}/instantiate",
    operation_id = "instantiateTaskTemplate",
    tag = "routing",
    summary = "Create a task from a template",
    params(("id" = uuid::Uuid, Path, description = "Template id")),
    request_body = Option<InstantiateRequest>,
    responses((status = 200, description = "OK", body = dto::Data<TaskResponse>)),
    security(("agentId" = [], "agentTimestamp" = [], "agentNonce" = [], "agentSignature" = []), ("userToken" = []), ("apiKey" = []))
)]
pub(super) async fn instantiate(
    state: Data<AppState>,
    path: Path<String>,
    auth: Authenticated,
) -> Answer<dto::Data<TaskResponse>> {
    let id = crate::body::parse_uuid("id", &path).map(TemplateId::from_uuid)?;
    let overrides = parse_optional_json::<InstantiateRequest>(&auth.body)?.into_overrides()?;
    let task = state.tasks.instantiate(&auth.actor, id, overrides).await?;
    Ok(Json(dto::Data { data: task.into() }))
}
