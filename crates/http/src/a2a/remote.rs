//! `POST /a2a/remote/{agent}/tasks/{task}/push`: where a remote A2A agent pushes the
//! updates of a task Muster handed it. Not authenticated as the API is: the
//! `X-A2A-Notification-Token` it was given with the task is the credential.

use actix_web::HttpRequest;
use actix_web::web::{Data, Json, Path};
use muster_domain::model::{AgentId, TaskId};
use muster_domain::service::{ServiceError, Unauthorized};
use serde::{Deserialize, Serialize};

use crate::error::ApiError;
use crate::extract::RawBody;
use crate::state::AppState;

/// The header the token travels in.
const TOKEN_HEADER: &str = "x-a2a-notification-token";

/// What came of a push.
#[derive(Debug, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct PushAnswer {
    /// The Muster task.
    pub task_id: String,
    /// Its status afterwards; absent when the push reported no state.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    /// Why it did not reach the reported state, when it did not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub held: Option<String>,
}

/// `POST /a2a/remote/{agent}/tasks/{task}/push`.
#[utoipa::path(
    post,
    path = "/a2a/remote/{agent}/tasks/{task}/push",
    operation_id = "a2aRemotePush",
    tag = "a2a",
    summary = "A remote A2A agent's push about a task handed to it",
    description = "The push config Muster sends with a hand-over points here. The body is \
        an A2A `StreamResponse` (`statusUpdate` or `task`; others are taken and ignored). \
        Its state moves the task along the shortest legal path: working → in_progress, \
        input-required and auth-required → blocked, completed → done (the status message \
        is the result), canceled → cancelled, failed and rejected → cancelled with that \
        outcome. The agent makes the move, as the audit log shows.",
    params(
        ("agent" = uuid::Uuid, Path, description = "The agent standing for the remote one"),
        ("task" = uuid::Uuid, Path, description = "The Muster task"),
        ("X-A2A-Notification-Token" = String, Header, description = "The token sent with the task")
    ),
    request_body(content = Object, description = "An A2A StreamResponse"),
    responses(
        (status = 200, description = "Taken", body = PushAnswer),
        (status = 400, description = "Not a push Muster can read", body = crate::error::ErrorBody<'static>),
        (status = 401, description = "No token, a wrong one, or no such remote agent", body = crate::error::ErrorBody<'static>),
        (status = 404, description = "No such task", body = crate::error::ErrorBody<'static>),
        (status = 409, description = "The task is not the agent's any more, the agent is not active, or the move is not allowed", body = crate::error::ErrorBody<'static>)
    ),
    security(())
)]
pub(crate) async fn push(
    state: Data<AppState>,
    req: HttpRequest,
    path: Path<(String, String)>,
    body: RawBody,
) -> Result<Json<PushAnswer>, ApiError> {
    let (agent, task) = path.into_inner();
    let agent = crate::body::parse_uuid("agent", &agent).map(AgentId::from_uuid)?;
    let task = crate::body::parse_uuid("task", &task).map(TaskId::from_uuid)?;
    let token = req
        .headers()
        .get(TOKEN_HEADER)
        .and_then(|v| v.to_str().ok())
        .filter(|v| !v.is_empty())
        .ok_or(ServiceError::Unauthorized(Unauthorized::InvalidPushToken))?
        .to_owned();
    // Read here, judged after the token: a caller without it learns nothing.
    let report = muster_a2a::remote::parse_report(&body.0);
    let moved = state.remote.report(agent, task, &token, report).await?;
    Ok(Json(PushAnswer {
        task_id: task.to_string(),
        status: moved.as_ref().map(|m| m.task.status.as_str().to_owned()),
        held: moved.and_then(|m| m.held.map(str::to_owned)),
    }))
}
