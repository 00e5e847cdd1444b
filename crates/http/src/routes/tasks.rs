use actix_web::HttpRequest;
use actix_web::web::{Data, Json, Path};
use muster_domain::model::TaskId;

use crate::ApiError;
use crate::body::{parse_json, parse_query};
use crate::dto;
use crate::dto::tasks::{
    CreateTaskRequest, ListTasksQuery, TaskListMeta, TaskPageResponse, TaskResponse,
    TransitionRequest,
};
use crate::extract::Authenticated;
use crate::state::AppState;

type Answer<T> = Result<Json<T>, ApiError>;

fn task_id(path: &str) -> Result<TaskId, ApiError> {
    dto::parse_uuid("id", path).map(TaskId::from_uuid)
}

/// `POST /tasks`.
pub(super) async fn create(
    state: Data<AppState>,
    auth: Authenticated,
) -> Answer<dto::Data<TaskResponse>> {
    let new = parse_json::<CreateTaskRequest>(&auth.body)?.into_new_task()?;
    let task = state.tasks.create(&auth.actor, new).await?;
    Ok(Json(dto::Data { data: task.into() }))
}

/// `GET /tasks`.
pub(super) async fn list(
    state: Data<AppState>,
    req: HttpRequest,
    auth: Authenticated,
) -> Answer<TaskPageResponse> {
    let query: ListTasksQuery = parse_query(req.query_string())?;
    let page = state
        .tasks
        .list(&auth.actor, &query.filter(), query.cursor()?, query.limit())
        .await?;
    Ok(Json(TaskPageResponse {
        data: page.tasks.into_iter().map(TaskResponse::from).collect(),
        meta: page.next_cursor.map(|id| TaskListMeta {
            next_cursor: id.to_string(),
        }),
    }))
}

/// `GET /tasks/:id`.
pub(super) async fn get(
    state: Data<AppState>,
    path: Path<String>,
    auth: Authenticated,
) -> Answer<dto::Data<TaskResponse>> {
    let task = state.tasks.get(&auth.actor, task_id(&path)?).await?;
    Ok(Json(dto::Data { data: task.into() }))
}

/// `POST /tasks/:id/transition`.
pub(super) async fn transition(
    state: Data<AppState>,
    path: Path<String>,
    auth: Authenticated,
) -> Answer<dto::Data<TaskResponse>> {
    let id = task_id(&path)?;
    let request: TransitionRequest = parse_json(&auth.body)?;
    let task = state
        .tasks
        .transition(&auth.actor, id, request.status, request.reason()?)
        .await?;
    Ok(Json(dto::Data { data: task.into() }))
}
