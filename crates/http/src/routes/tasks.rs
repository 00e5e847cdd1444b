use actix_web::HttpRequest;
use actix_web::web::{Data, Json, Path};
use muster_domain::model::TaskId;

use muster_domain::model::AgentId;

use crate::body::{parse_json, parse_optional_json, parse_query};
use crate::dto;
use crate::dto::paging::PageResponse;
use crate::dto::task_links::{AssignRequest, EmptyRequest};
use crate::dto::tasks::{
    CreateTaskRequest, ListTasksQuery, PatchTaskRequest, TaskResponse, TransitionRequest,
};
use crate::error::ApiError;
use crate::extract::Authenticated;
use crate::state::AppState;

pub(super) type Answer<T> = Result<Json<T>, ApiError>;

pub(super) fn task_id(path: &str) -> Result<TaskId, ApiError> {
    crate::body::parse_uuid("id", path).map(TaskId::from_uuid)
}

/// `POST /tasks`.
#[utoipa::path(
    post,
    path = "/tasks",
    operation_id = "createTask",
    tag = "tasks",
    summary = "Create a task",
    request_body = CreateTaskRequest,
    responses((status = 200, description = "OK", body = dto::Data<TaskResponse>)),
    security(("agentId" = [], "agentTimestamp" = [], "agentNonce" = [], "agentSignature" = []), ("userToken" = []), ("apiKey" = []))
)]
pub(super) async fn create(
    state: Data<AppState>,
    auth: Authenticated,
) -> Answer<dto::Data<TaskResponse>> {
    let new = parse_json::<CreateTaskRequest>(&auth.body)?.into_new_task()?;
    let task = state.tasks.create(&auth.actor, new).await?;
    Ok(Json(dto::Data { data: task.into() }))
}

/// `GET /tasks`.
#[utoipa::path(
    get,
    path = "/tasks",
    operation_id = "listTasks",
    tag = "tasks",
    summary = "List tasks, filtered and paged",
    params(ListTasksQuery),
    responses((status = 200, description = "OK", body = PageResponse<TaskResponse>)),
    security(("agentId" = [], "agentTimestamp" = [], "agentNonce" = [], "agentSignature" = []), ("userToken" = []), ("apiKey" = []))
)]
pub(super) async fn list(
    state: Data<AppState>,
    req: HttpRequest,
    auth: Authenticated,
) -> Answer<PageResponse<TaskResponse>> {
    let query: ListTasksQuery = parse_query(req.query_string())?;
    let page = state
        .tasks
        .list(
            &auth.actor,
            &query.filter()?,
            query.cursor()?,
            query.limit(),
        )
        .await?;
    Ok(Json(PageResponse::of(page, TaskResponse::from)))
}

/// `GET /tasks/:id`.
#[utoipa::path(
    get,
    path = "/tasks/{id}",
    operation_id = "getTask",
    tag = "tasks",
    summary = "Read a task",
    params(("id" = uuid::Uuid, Path, description = "Task id")),
    responses((status = 200, description = "OK", body = dto::Data<TaskResponse>)),
    security(("agentId" = [], "agentTimestamp" = [], "agentNonce" = [], "agentSignature" = []), ("userToken" = []), ("apiKey" = []))
)]
pub(super) async fn get(
    state: Data<AppState>,
    path: Path<String>,
    auth: Authenticated,
) -> Answer<dto::Data<TaskResponse>> {
    let task = state.tasks.get(&auth.actor, task_id(&path)?).await?;
    Ok(Json(dto::Data { data: task.into() }))
}

/// `POST /tasks/:id/transition`.
#[utoipa::path(
    post,
    path = "/tasks/{id}/transition",
    operation_id = "transitionTask",
    tag = "tasks",
    summary = "Move a task to another status",
    params(("id" = uuid::Uuid, Path, description = "Task id")),
    request_body = TransitionRequest,
    responses((status = 200, description = "OK", body = dto::Data<TaskResponse>)),
    security(("agentId" = [], "agentTimestamp" = [], "agentNonce" = [], "agentSignature" = []), ("userToken" = []), ("apiKey" = []))
)]
pub(super) async fn transition(
    state: Data<AppState>,
    path: Path<String>,
    auth: Authenticated,
) -> Answer<dto::Data<TaskResponse>> {
    let id = task_id(&path)?;
    let request: TransitionRequest = parse_json(&auth.body)?;
    let task = state
        .tasks
        .transition_with(&auth.actor, id, request.into_move()?)
        .await?;
    Ok(Json(dto::Data { data: task.into() }))
}

/// `PATCH /tasks/:id`.
#[utoipa::path(
    patch,
    path = "/tasks/{id}",
    operation_id = "updateTask",
    tag = "tasks",
    summary = "Change a task's fields",
    params(("id" = uuid::Uuid, Path, description = "Task id")),
    request_body = PatchTaskRequest,
    responses((status = 200, description = "OK", body = dto::Data<TaskResponse>)),
    security(("agentId" = [], "agentTimestamp" = [], "agentNonce" = [], "agentSignature" = []), ("userToken" = []), ("apiKey" = []))
)]
pub(super) async fn update(
    state: Data<AppState>,
    path: Path<String>,
    auth: Authenticated,
) -> Answer<dto::Data<TaskResponse>> {
    let id = task_id(&path)?;
    let changes = parse_json::<PatchTaskRequest>(&auth.body)?.into_patch()?;
    let task = state.tasks.update(&auth.actor, id, changes).await?;
    Ok(Json(dto::Data { data: task.into() }))
}

/// `POST /tasks/:id/approve`.
#[utoipa::path(
    post,
    path = "/tasks/{id}/approve",
    operation_id = "approveTask",
    tag = "tasks",
    summary = "Approve a task that needs approval",
    params(("id" = uuid::Uuid, Path, description = "Task id")),
    request_body = Option<EmptyRequest>,
    responses((status = 200, description = "OK", body = dto::Data<TaskResponse>)),
    security(("agentId" = [], "agentTimestamp" = [], "agentNonce" = [], "agentSignature" = []), ("userToken" = []), ("apiKey" = []))
)]
pub(super) async fn approve(
    state: Data<AppState>,
    path: Path<String>,
    auth: Authenticated,
) -> Answer<dto::Data<TaskResponse>> {
    let id = task_id(&path)?;
    parse_optional_json::<EmptyRequest>(&auth.body)?;
    let task = state.tasks.approve(&auth.actor, id).await?;
    Ok(Json(dto::Data { data: task.into() }))
}

/// `POST /tasks/:id/assign`.
#[utoipa::path(
    post,
    path = "/tasks/{id}/assign",
    operation_id = "assignTask",
    tag = "tasks",
    summary = "Assign a task to an agent",
    params(("id" = uuid::Uuid, Path, description = "Task id")),
    request_body = AssignRequest,
    responses((status = 200, description = "OK", body = dto::Data<TaskResponse>)),
    security(("agentId" = [], "agentTimestamp" = [], "agentNonce" = [], "agentSignature" = []), ("userToken" = []), ("apiKey" = []))
)]
pub(super) async fn assign(
    state: Data<AppState>,
    path: Path<String>,
    auth: Authenticated,
) -> Answer<dto::Data<TaskResponse>> {
    let id = task_id(&path)?;
    let request: AssignRequest = parse_json(&auth.body)?;
    let task = state
        .tasks
        .assign(&auth.actor, id, AgentId::from_uuid(request.assignee_id))
        .await?;
    Ok(Json(dto::Data { data: task.into() }))
}
