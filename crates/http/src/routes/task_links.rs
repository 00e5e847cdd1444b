//! Handlers of what hangs off a task: dependencies, comments, escalations.

use actix_web::HttpRequest;
use actix_web::web::{Data, Json, Path};
use muster_domain::model::{DependencyId, TaskId};

use super::tasks::{Answer, task_id};
use crate::answers;
use crate::body::{parse_json, parse_page};
use crate::dto;
use crate::dto::paging::{PageQuery, PageResponse};
use crate::dto::task_links::{
    CommentRequest, CommentResponse, DataWithMessage, DependencyRequest, DependencyResponse,
    EscalateRequest, EscalationResponse,
};
use crate::extract::Authenticated;
use crate::state::AppState;

/// `POST /tasks/:id/dependencies`.
#[utoipa::path(
    post,
    path = "/tasks/{id}/dependencies",
    operation_id = "addTaskDependency",
    tag = "tasks",
    summary = "Make a task depend on another",
    params(("id" = uuid::Uuid, Path, description = "Task id")),
    request_body = DependencyRequest,
    responses((status = 200, description = "OK", body = dto::Data<DependencyResponse>)),
    security(("agentId" = [], "agentTimestamp" = [], "agentNonce" = [], "agentSignature" = []), ("userToken" = []), ("apiKey" = []))
)]
pub(super) async fn add_dependency(
    state: Data<AppState>,
    path: Path<String>,
    auth: Authenticated,
) -> Answer<dto::Data<DependencyResponse>> {
    let id = task_id(&path)?;
    let request: DependencyRequest = parse_json(&auth.body)?;
    let dependency = state
        .tasks
        .add_dependency(
            &auth.actor,
            id,
            TaskId::from_uuid(request.depends_on_id),
            request.blocking,
        )
        .await?;
    Ok(Json(dto::Data {
        data: dependency.into(),
    }))
}

/// `GET /tasks/:id/dependencies` (beyond the contract: what `POST` added).
#[utoipa::path(
    get,
    path = "/tasks/{id}/dependencies",
    operation_id = "listTaskDependencies",
    tag = "tasks",
    summary = "List what a task depends on",
    params(("id" = uuid::Uuid, Path, description = "Task id")),
    responses((status = 200, description = "OK", body = dto::Data<Vec<DependencyResponse>>)),
    security(("agentId" = [], "agentTimestamp" = [], "agentNonce" = [], "agentSignature" = []), ("userToken" = []), ("apiKey" = []))
)]
pub(super) async fn dependencies(
    state: Data<AppState>,
    path: Path<String>,
    auth: Authenticated,
) -> Answer<dto::Data<Vec<DependencyResponse>>> {
    let id = task_id(&path)?;
    let list = state.tasks.dependencies(&auth.actor, id).await?;
    Ok(Json(dto::Data {
        data: list.into_iter().map(DependencyResponse::from).collect(),
    }))
}

/// `DELETE /tasks/:id/dependencies/:depId`.
#[utoipa::path(
    delete,
    path = "/tasks/{id}/dependencies/{depId}",
    operation_id = "removeTaskDependency",
    tag = "tasks",
    summary = "Remove a dependency",
    params(("id" = uuid::Uuid, Path, description = "Task id"), ("depId" = uuid::Uuid, Path, description = "The dependency's own id (as `id` in the dependency list), not the id of the task depended on")),
    responses((status = 200, description = "OK", body = DataWithMessage<DependencyResponse>)),
    security(("agentId" = [], "agentTimestamp" = [], "agentNonce" = [], "agentSignature" = []), ("userToken" = []), ("apiKey" = []))
)]
pub(super) async fn remove_dependency(
    state: Data<AppState>,
    path: Path<(String, String)>,
    auth: Authenticated,
) -> Answer<DataWithMessage<DependencyResponse>> {
    let (task, dependency) = path.into_inner();
    let id = task_id(&task)?;
    let dependency = crate::body::parse_uuid("depId", &dependency).map(DependencyId::from_uuid)?;
    let removed = state
        .tasks
        .remove_dependency(&auth.actor, id, dependency)
        .await?;
    Ok(Json(DataWithMessage {
        data: removed.into(),
        message: "Dependency removed".to_owned(),
    }))
}

/// `POST /tasks/:id/comments`.
#[utoipa::path(
    post,
    path = "/tasks/{id}/comments",
    operation_id = "commentOnTask",
    tag = "tasks",
    summary = "Comment on a task",
    params(("id" = uuid::Uuid, Path, description = "Task id")),
    request_body = CommentRequest,
    responses((status = 200, description = "OK", body = dto::Data<CommentResponse>)),
    security(("agentId" = [], "agentTimestamp" = [], "agentNonce" = [], "agentSignature" = []), ("userToken" = []), ("apiKey" = []))
)]
pub(super) async fn comment(
    state: Data<AppState>,
    path: Path<String>,
    auth: Authenticated,
) -> Answer<dto::Data<CommentResponse>> {
    let id = task_id(&path)?;
    let (body, parent) = parse_json::<CommentRequest>(&auth.body)?.into_parts()?;
    let comment = state.tasks.comment(&auth.actor, id, body, parent).await?;
    Ok(Json(dto::Data {
        data: comment.into(),
    }))
}

/// `GET /tasks/:id/comments`.
#[utoipa::path(
    get,
    path = "/tasks/{id}/comments",
    operation_id = "listTaskComments",
    tag = "tasks",
    summary = "List a task's comments",
    params(("id" = uuid::Uuid, Path, description = "Task id"), PageQuery),
    responses((status = 200, description = "OK", body = PageResponse<CommentResponse>)),
    security(("agentId" = [], "agentTimestamp" = [], "agentNonce" = [], "agentSignature" = []), ("userToken" = []), ("apiKey" = []))
)]
pub(super) async fn comments(
    state: Data<AppState>,
    path: Path<String>,
    req: HttpRequest,
    auth: Authenticated,
) -> Answer<PageResponse<CommentResponse>> {
    let id = task_id(&path)?;
    let request = parse_page(req.query_string())?;
    let page = state.tasks.comments(&auth.actor, id, request).await?;
    Ok(Json(PageResponse::of(page, CommentResponse::from)))
}

/// `POST /tasks/:id/escalate`.
#[utoipa::path(
    post,
    path = "/tasks/{id}/escalate",
    operation_id = "escalateTask",
    tag = "tasks",
    summary = "Escalate a task to a human or a higher agent",
    params(("id" = uuid::Uuid, Path, description = "Task id")),
    request_body = EscalateRequest,
    responses((status = 200, description = "OK", body = DataWithMessage<EscalationResponse>)),
    security(("agentId" = [], "agentTimestamp" = [], "agentNonce" = [], "agentSignature" = []), ("userToken" = []), ("apiKey" = []))
)]
pub(super) async fn escalate(
    state: Data<AppState>,
    path: Path<String>,
    auth: Authenticated,
) -> Answer<DataWithMessage<EscalationResponse>> {
    let id = task_id(&path)?;
    let new = parse_json::<EscalateRequest>(&auth.body)?.into_escalation()?;
    let escalation = state.tasks.escalate(&auth.actor, id, new).await?;
    Ok(Json(answers::escalated(escalation)))
}

/// `GET /tasks/:id/escalations`.
#[utoipa::path(
    get,
    path = "/tasks/{id}/escalations",
    operation_id = "listTaskEscalations",
    tag = "tasks",
    summary = "List a task's escalations",
    description = "Newest first, by pages (`limit`, `cursor`; `meta.nextCursor` when more remain).",
    params(("id" = uuid::Uuid, Path, description = "Task id"), PageQuery),
    responses((status = 200, description = "OK", body = PageResponse<EscalationResponse>)),
    security(("agentId" = [], "agentTimestamp" = [], "agentNonce" = [], "agentSignature" = []), ("userToken" = []), ("apiKey" = []))
)]
pub(super) async fn escalations(
    state: Data<AppState>,
    path: Path<String>,
    req: HttpRequest,
    auth: Authenticated,
) -> Answer<PageResponse<EscalationResponse>> {
    let id = task_id(&path)?;
    let request = parse_page(req.query_string())?;
    let page = state.tasks.escalations(&auth.actor, id, request).await?;
    Ok(Json(PageResponse::of(page, EscalationResponse::from)))
}
