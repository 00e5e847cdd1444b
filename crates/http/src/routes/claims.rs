//! `POST /tasks/claim` and `POST /tasks/:id/heartbeat`: agents pulling work with a
//! lease.

use actix_web::HttpResponse;
use actix_web::web::{Data, Json, Path};

use super::tasks::{Answer, task_id};
use crate::ApiError;
use crate::body::parse_optional_json;
use crate::dto;
use crate::dto::claims::{ClaimBody, HeartbeatBody};
use crate::dto::tasks::TaskResponse;
use crate::extract::Authenticated;
use crate::state::AppState;

/// `POST /tasks/claim`: the claimed task, or 204 when nothing is claimable.
pub(super) async fn claim(
    state: Data<AppState>,
    auth: Authenticated,
) -> Result<HttpResponse, ApiError> {
    let request = parse_optional_json::<ClaimBody>(&auth.body)?.into_request()?;
    Ok(match state.tasks.claim(&auth.actor, request).await? {
        Some(task) => HttpResponse::Ok().json(dto::Data {
            data: TaskResponse::from(task),
        }),
        None => HttpResponse::NoContent().finish(),
    })
}

/// `POST /tasks/:id/heartbeat`: the task with its extended lease.
pub(super) async fn heartbeat(
    state: Data<AppState>,
    path: Path<String>,
    auth: Authenticated,
) -> Answer<dto::Data<TaskResponse>> {
    let id = task_id(&path)?;
    let lease = parse_optional_json::<HeartbeatBody>(&auth.body)?.lease()?;
    let task = state.tasks.heartbeat(&auth.actor, id, lease).await?;
    Ok(Json(dto::Data { data: task.into() }))
}
