//! Handlers of routing (candidates, auto-assign) and templates.

use actix_web::HttpRequest;
use actix_web::web::{Data, Json, Path};
use muster_domain::model::TemplateId;

use super::tasks::{Answer, task_id};
use crate::body::{parse_json, parse_optional_json, parse_query};
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
pub(super) async fn templates(
    state: Data<AppState>,
    req: HttpRequest,
    auth: Authenticated,
) -> Answer<PageResponse<TemplateResponse>> {
    let query: PageQuery = parse_query(req.query_string())?;
    let page = state.tasks.templates(&auth.actor, query.request()?).await?;
    Ok(Json(PageResponse::of(page, TemplateResponse::from)))
}

/// `POST /tasks/templates/:id/instantiate`.
pub(super) async fn instantiate(
    state: Data<AppState>,
    path: Path<String>,
    auth: Authenticated,
) -> Answer<dto::Data<TaskResponse>> {
    let id = dto::parse_uuid("id", &path).map(TemplateId::from_uuid)?;
    let overrides = parse_optional_json::<InstantiateRequest>(&auth.body)?.into_overrides()?;
    let task = state.tasks.instantiate(&auth.actor, id, overrides).await?;
    Ok(Json(dto::Data { data: task.into() }))
}
