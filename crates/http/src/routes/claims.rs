//! `POST /tasks/claim`, `POST /tasks/:id/heartbeat` and `POST /tasks/:id/release`:
//! agents pulling work with a lease, and giving it back.

use actix_web::HttpResponse;
use actix_web::web::{Data, Json, Path};

use super::tasks::{Answer, task_id};
use crate::body::parse_optional_json;
use crate::dto;
use crate::dto::claims::{ClaimBody, HeartbeatBody, ReleaseBody};
use crate::dto::tasks::TaskResponse;
use crate::error::ApiError;
use crate::extract::Authenticated;
use crate::state::AppState;

/// `POST /tasks/claim`: the claimed task, or 204 when nothing is claimable.
#[utoipa::path(
    post,
    path = "/tasks/claim",
    operation_id = "claimTask",
    tag = "tasks",
    summary = "Claim the next task the caller may work on, with a lease",
    description = "Assigns the best claimable task to the calling agent and moves it to \
        `in_progress`, leased until `leaseExpiresAt`. With `reserveCredits`, that many of \
        the agent's credits are held for the task in the same transaction: the first run \
        the agent starts on it takes them over (its usage draws them first, its end \
        releases the rest), and they go back when the task leaves the agent without a \
        run. 409 `budget_exhausted` when the agent's credits ran out or cannot hold \
        `reserveCredits`; nothing is claimed then.",
    request_body = Option<ClaimBody>,
    responses(
        (status = 200, description = "The claimed task, leased to the caller until `leaseExpiresAt`", body = dto::Data<TaskResponse>),
        (status = 204, description = "Nothing is claimable now")
    ),
    security(("agentId" = [], "agentTimestamp" = [], "agentNonce" = [], "agentSignature" = []), ("userToken" = []), ("apiKey" = []))
)]
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
#[utoipa::path(
    post,
    path = "/tasks/{id}/heartbeat",
    operation_id = "heartbeatTask",
    tag = "tasks",
    summary = "Extend the lease of a claimed task",
    params(("id" = uuid::Uuid, Path, description = "Task id")),
    request_body = Option<HeartbeatBody>,
    responses((status = 200, description = "OK", body = dto::Data<TaskResponse>)),
    security(("agentId" = [], "agentTimestamp" = [], "agentNonce" = [], "agentSignature" = []), ("userToken" = []), ("apiKey" = []))
)]
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

/// `POST /tasks/:id/release`: the task, back in `todo` and unassigned.
#[utoipa::path(
    post,
    path = "/tasks/{id}/release",
    operation_id = "releaseTask",
    tag = "tasks",
    summary = "Give a task you hold back to the pool",
    description = "The calling agent gives back a task assigned to it and `in_progress` \
        (claimed, or moved there by the agent; a lease that already ran out is no \
        obstacle), as the lease sweep hands back a silent agent's task: in one \
        transaction the task goes to `todo`, unassigned and without a lease, claimable \
        again by any agent; the claim's `reserveCredits` go back to the agent; an open run \
        of the task is asked to stop (`stopReason` `reassigned`). Writes the transition \
        `in_progress → todo` with the reason \"released\" (or \"released: \" and the \
        `reason` given). 409 `not_task_assignee` when the task is not the caller's, \
        `task_not_in_progress` when it is not in progress (a second release of one task \
        gets this); users and API keys get 403 `agent_required`.",
    params(("id" = uuid::Uuid, Path, description = "Task id")),
    request_body = Option<ReleaseBody>,
    responses((status = 200, description = "The task, in `todo` and unassigned", body = dto::Data<TaskResponse>)),
    security(("agentId" = [], "agentTimestamp" = [], "agentNonce" = [], "agentSignature" = []), ("userToken" = []), ("apiKey" = []))
)]
pub(super) async fn release(
    state: Data<AppState>,
    path: Path<String>,
    auth: Authenticated,
) -> Answer<dto::Data<TaskResponse>> {
    let id = task_id(&path)?;
    let reason = parse_optional_json::<ReleaseBody>(&auth.body)?.reason()?;
    let task = state.tasks.release(&auth.actor, id, reason).await?;
    Ok(Json(dto::Data { data: task.into() }))
}
