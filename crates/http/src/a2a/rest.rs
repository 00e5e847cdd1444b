//! The HTTP+JSON binding under `/a2a/rest`, and the public Agent Card. Answers are the
//! protocol's JSON (`application/a2a+json`); errors are a `google.rpc.Status` in
//! `error`, with the HTTP status of the A2A error.

use actix_web::http::StatusCode;
use actix_web::web::{Data, Path};
use actix_web::{HttpRequest, HttpResponse};
use muster_a2a::types::{
    CancelTaskRequest, GetTaskRequest, ListPushConfigsRequest, ListTasksRequest, PushConfigRequest,
    SendMessageRequest, SendMessageResponse, TaskPushNotificationConfig,
};
use muster_a2a::{A2aError, ErrorKind};
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::stream::{self, Framing, Until};
use super::{card, check_version, ops, push};
use crate::error::ApiError;
use crate::extract::Authenticated;
use crate::state::AppState;

const MEDIA_TYPE: &str = "application/a2a+json";

fn ok(body: &impl Serialize) -> HttpResponse {
    HttpResponse::Ok().content_type(MEDIA_TYPE).json(body)
}

/// [`check_version`], letting the request's `Idempotency-Key` go when it fails: the key
/// covers the body only, and a retry with the right header must run.
fn versioned(req: &HttpRequest) -> Result<(), A2aError> {
    check_version(req).inspect_err(|_| crate::idempotency::let_key_go(req))
}

fn refused(error: &A2aError) -> HttpResponse {
    let status =
        StatusCode::from_u16(error.kind.http_status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    HttpResponse::build(status).json(error.rest_body())
}

/// Answers `result`, or its error.
fn answer(result: Result<HttpResponse, A2aError>) -> HttpResponse {
    result.unwrap_or_else(|error| refused(&error))
}

/// A JSON object body as `T`. A whole float is read as an integer where one goes (JSON
/// has one number type), as the API's bodies are; any other top-level value is refused
/// (serde would fill a struct from an array of its fields).
pub(crate) fn body<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, A2aError> {
    let is_object = crate::body::is_an_object(bytes);
    match serde_json::from_slice(bytes) {
        Ok(_) if !is_object => Err(A2aError::invalid_params("the body must be a JSON object")),
        Ok(value) => Ok(value),
        Err(e) if e.is_data() => crate::body::with_whole_numbers(bytes)
            .filter(|_| is_object)
            .ok_or_else(|| A2aError::invalid_params(format!("the body does not fit: {e}"))),
        Err(e) => Err(A2aError::new(
            ErrorKind::Parse,
            format!("the body is not JSON: {e}"),
        )),
    }
}

fn query<T: DeserializeOwned>(req: &HttpRequest) -> Result<T, A2aError> {
    serde_urlencoded::from_str(req.query_string())
        .map_err(|e| A2aError::invalid_params(format!("the query does not fit: {e}")))
}

/// A task path segment: the id, and the custom verb after `:` if any.
fn split(target: &str) -> (&str, Option<&str>) {
    match target.rsplit_once(':') {
        Some((id, verb)) => (id, Some(verb)),
        None => (target, None),
    }
}

fn no_such_method(target: &str) -> A2aError {
    A2aError::new(
        ErrorKind::MethodNotFound,
        format!("{target}: use /tasks/{{id}}, /tasks/{{id}}:cancel or /tasks/{{id}}:subscribe"),
    )
}

/// `GET /.well-known/agent-card.json`.
#[utoipa::path(
    get,
    path = "/.well-known/agent-card.json",
    operation_id = "a2aAgentCard",
    tag = "a2a",
    summary = "The A2A Agent Card (public)",
    description = "What this server is to an A2A client: its two bindings (`JSONRPC` at \
        `/a2a/jsonrpc`, `HTTP+JSON` at `/a2a/rest`), streaming, bearer authentication and \
        a task-intake skill. Authenticated clients read the organization's skills with \
        `GetExtendedAgentCard`.",
    responses((status = 200, description = "The Agent Card", body = Object)),
    security(())
)]
pub(crate) async fn agent_card(state: Data<AppState>, req: HttpRequest) -> HttpResponse {
    // The same for every request (no header shapes it), so any cache may keep it.
    HttpResponse::Ok()
        .insert_header(("cache-control", "public, max-age=300"))
        .json(card::public(&state, &req))
}

/// `POST /a2a/rest/message:send`.
#[utoipa::path(
    post,
    path = "/a2a/rest/message:send",
    operation_id = "a2aSendMessage",
    tag = "a2a",
    summary = "A2A SendMessage",
    description = "A message without `taskId` creates a task (a sub-task of `contextId`'s \
        task when given); one with `taskId` comments on it. Answers `{\"task\": ...}` at once.",
    params(("A2A-Version" = String, Header, pattern = "^1\\.0(\\.[0-9]+)?$", description = "The protocol version: `1.0` (a patch number is ignored)")),
    request_body(content = Object, description = "A SendMessageRequest"),
    responses(
        (status = 200, description = "The task", body = Object, content_type = "application/a2a+json"),
        (status = 400, description = "Bad parameters, or an unsupported version or content", body = Object),
        (status = 401, description = "No valid credentials", body = crate::error::ErrorBody<'static>),
        (status = 403, description = "The credentials may not", body = Object),
        (status = 404, description = "No such task", body = Object),
        (status = 409, description = "An A2A error (a conflict with the task's state), or the API's for an Idempotency-Key in use", body = Object),
        (status = 429, description = "An A2A error: a rate or spending limit", body = Object),
        (status = 500, description = "An A2A error: the server failed", body = Object)
    ),
    security(("agentId" = [], "agentTimestamp" = [], "agentNonce" = [], "agentSignature" = []), ("userToken" = []), ("apiKey" = []))
)]
pub(crate) async fn send_message(
    state: Data<AppState>,
    req: HttpRequest,
    auth: Authenticated,
) -> Result<HttpResponse, ApiError> {
    Ok(answer(
        async {
            versioned(&req)?;
            let request: SendMessageRequest = body(&auth.body)?;
            let (task, history) = ops::send(&state, &auth.actor, request).await?;
            let task = ops::view(&state, &auth.actor, &task, history).await?;
            Ok(ok(&SendMessageResponse { task }))
        }
        .await,
    ))
}

/// `POST /a2a/rest/message:stream`.
#[utoipa::path(
    post,
    path = "/a2a/rest/message:stream",
    operation_id = "a2aStreamMessage",
    tag = "a2a",
    summary = "A2A SendStreamingMessage",
    description = "As `message:send`, then a stream: the task, and a status update each time \
        its A2A state changes, until it is completed, canceled or waits for input.",
    params(("A2A-Version" = String, Header, pattern = "^1\\.0(\\.[0-9]+)?$", description = "The protocol version: `1.0` (a patch number is ignored)")),
    request_body(content = Object, description = "A SendMessageRequest"),
    responses(
        (status = 200, description = "Server-Sent Events, each a StreamResponse", content_type = "text/event-stream"),
        (status = 400, description = "Bad parameters, or an unsupported version or content", body = Object),
        (status = 401, description = "No valid credentials", body = crate::error::ErrorBody<'static>),
        (status = 403, description = "The credentials may not", body = Object),
        (status = 404, description = "No such task", body = Object),
        (status = 409, description = "An A2A error (a conflict with the task's state), or the API's for an Idempotency-Key in use", body = Object),
        (status = 429, description = "An A2A error: a rate or spending limit", body = Object),
        (status = 500, description = "An A2A error: the server failed", body = Object)
    ),
    security(("agentId" = [], "agentTimestamp" = [], "agentNonce" = [], "agentSignature" = []), ("userToken" = []), ("apiKey" = []))
)]
pub(crate) async fn stream_message(
    state: Data<AppState>,
    req: HttpRequest,
    auth: Authenticated,
) -> Result<HttpResponse, ApiError> {
    Ok(answer(
        async {
            versioned(&req)?;
            let request: SendMessageRequest = body(&auth.body)?;
            let slot = stream::reserve(&state, &auth.actor)?;
            let (task, history) = ops::send(&state, &auth.actor, request).await?;
            let first = ops::view(&state, &auth.actor, &task, history).await?;
            let actor = auth.actor.clone();
            let framing = Framing::Rest;
            Ok(stream::open(
                state.clone(),
                actor,
                (task, first),
                Until::Interrupted,
                framing,
                slot,
            ))
        }
        .await,
    ))
}

/// `GET /a2a/rest/tasks`.
#[utoipa::path(
    get,
    path = "/a2a/rest/tasks",
    operation_id = "a2aListTasks",
    tag = "a2a",
    summary = "A2A ListTasks",
    description = "The organization's tasks, newest first, by pages (`pageSize` 1 to 100, \
        `pageToken`), filtered by A2A `status`, `contextId` (that task and its sub-tasks) and \
        `statusTimestampAfter`.",
    params(
        ("A2A-Version" = String, Header, pattern = "^1\\.0(\\.[0-9]+)?$", description = "The protocol version: `1.0` (a patch number is ignored)"),
        ("contextId" = Option<String>, Query, description = "Only this conversation: the task and its sub-tasks"),
        ("status" = Option<String>, Query, description = "A `TASK_STATE_` name"),
        ("pageSize" = Option<i32>, Query, minimum = 1, maximum = 100, description = "1 to 100; 50 when left out"),
        ("pageToken" = Option<String>, Query, description = "The previous page's `nextPageToken`"),
        ("historyLength" = Option<i32>, Query, minimum = 0, description = "Messages of history per task; none when left out"),
        ("statusTimestampAfter" = Option<String>, Query, format = DateTime, description = "Only tasks whose status changed at or after this RFC 3339 instant"),
        ("includeArtifacts" = Option<bool>, Query, description = "Whether to send each task's artifacts (its result); left out by default")
    ),
    responses(
        (status = 200, description = "One page", body = Object, content_type = "application/a2a+json"),
        (status = 400, description = "Bad parameters or version", body = Object),
        (status = 401, description = "No valid credentials", body = crate::error::ErrorBody<'static>),
        (status = 403, description = "An A2A error: the credentials may not", body = Object),
        (status = 404, description = "An A2A error: no such task or method", body = Object),
        (status = 409, description = "An A2A error (a conflict with the task's state), or the API's for an Idempotency-Key in use", body = Object),
        (status = 429, description = "An A2A error: a rate or spending limit", body = Object),
        (status = 500, description = "An A2A error: the server failed", body = Object)
    ),
    security(("agentId" = [], "agentTimestamp" = [], "agentNonce" = [], "agentSignature" = []), ("userToken" = []), ("apiKey" = []))
)]
pub(crate) async fn list_tasks(
    state: Data<AppState>,
    req: HttpRequest,
    auth: Authenticated,
) -> Result<HttpResponse, ApiError> {
    Ok(answer(
        async {
            versioned(&req)?;
            let request: ListTasksRequest = query(&req)?;
            Ok(ok(&ops::list(&state, &auth.actor, &request).await?))
        }
        .await,
    ))
}

/// `GET /a2a/rest/tasks/{target}`: `{id}` reads the task, `{id}:subscribe` streams it.
#[utoipa::path(
    get,
    path = "/a2a/rest/tasks/{target}",
    operation_id = "a2aGetTask",
    tag = "a2a",
    summary = "A2A GetTask, or SubscribeToTask with `{id}:subscribe`",
    description = "`/tasks/{id}` answers the task (`historyLength` limits its history); \
        `/tasks/{id}:subscribe` streams it: the task, then its status updates until it closes.",
    params(
        ("target" = String, Path, description = "The task id, optionally followed by `:subscribe`"),
        ("A2A-Version" = String, Header, pattern = "^1\\.0(\\.[0-9]+)?$", description = "The protocol version: `1.0` (a patch number is ignored)"),
        ("historyLength" = Option<i32>, Query, minimum = 0, description = "The most recent messages of history to send")
    ),
    responses(
        (status = 200, description = "The task, or Server-Sent Events", content((Object = "application/a2a+json"), (String = "text/event-stream"))),
        (status = 400, description = "Bad parameters or version, or a closed task to subscribe to", body = Object),
        (status = 401, description = "No valid credentials", body = crate::error::ErrorBody<'static>),
        (status = 404, description = "No such task", body = Object),
        (status = 403, description = "An A2A error: the credentials may not", body = Object),
        (status = 409, description = "An A2A error (a conflict with the task's state), or the API's for an Idempotency-Key in use", body = Object),
        (status = 429, description = "An A2A error: a rate or spending limit", body = Object),
        (status = 500, description = "An A2A error: the server failed", body = Object)
    ),
    security(("agentId" = [], "agentTimestamp" = [], "agentNonce" = [], "agentSignature" = []), ("userToken" = []), ("apiKey" = []))
)]
pub(crate) async fn get_or_subscribe(
    state: Data<AppState>,
    req: HttpRequest,
    auth: Authenticated,
    target: Path<String>,
) -> Result<HttpResponse, ApiError> {
    Ok(answer(
        async {
            versioned(&req)?;
            match split(&target) {
                (id, None) => {
                    let mut request: GetTaskRequest = query(&req)?;
                    id.clone_into(&mut request.id);
                    Ok(ok(&ops::get(&state, &auth.actor, &request).await?))
                }
                (id, Some("subscribe")) => subscribe(&state, &auth, id).await,
                _ => Err(no_such_method(&target)),
            }
        }
        .await,
    ))
}

/// `POST /a2a/rest/tasks/{target}`: `{id}:cancel` or `{id}:subscribe`.
#[utoipa::path(
    post,
    path = "/a2a/rest/tasks/{target}",
    operation_id = "a2aCancelOrSubscribe",
    tag = "a2a",
    summary = "A2A CancelTask (`{id}:cancel`) or SubscribeToTask (`{id}:subscribe`)",
    description = "`:cancel` moves the task to cancelled and answers it (a closed task is \
        not cancelable: 400); `:subscribe` streams it as the GET does.",
    params(
        ("target" = String, Path, description = "The task id followed by `:cancel` or `:subscribe`"),
        ("A2A-Version" = String, Header, pattern = "^1\\.0(\\.[0-9]+)?$", description = "The protocol version: `1.0` (a patch number is ignored)")
    ),
    request_body(content = Option<Object>, description = "A CancelTaskRequest, or nothing"),
    responses(
        (status = 200, description = "The canceled task, or Server-Sent Events", content((Object = "application/a2a+json"), (String = "text/event-stream"))),
        (status = 400, description = "Bad parameters or version, or a closed task", body = Object),
        (status = 401, description = "No valid credentials", body = crate::error::ErrorBody<'static>),
        (status = 403, description = "The credentials may not", body = Object),
        (status = 404, description = "No such task or verb", body = Object),
        (status = 409, description = "An A2A error (a conflict with the task's state), or the API's for an Idempotency-Key in use", body = Object),
        (status = 429, description = "An A2A error: a rate or spending limit", body = Object),
        (status = 500, description = "An A2A error: the server failed", body = Object)
    ),
    security(("agentId" = [], "agentTimestamp" = [], "agentNonce" = [], "agentSignature" = []), ("userToken" = []), ("apiKey" = []))
)]
pub(crate) async fn cancel_or_subscribe(
    state: Data<AppState>,
    req: HttpRequest,
    auth: Authenticated,
    target: Path<String>,
) -> Result<HttpResponse, ApiError> {
    Ok(answer(
        async {
            versioned(&req)?;
            match split(&target) {
                (id, Some("cancel")) => {
                    let mut request = if auth.body.iter().all(u8::is_ascii_whitespace) {
                        CancelTaskRequest {
                            tenant: None,
                            id: String::new(),
                            metadata: None,
                        }
                    } else {
                        body::<CancelTaskRequest>(&auth.body)?
                    };
                    if !request.id.is_empty() && request.id != id {
                        return Err(A2aError::invalid_params(
                            "the body's id is not the path's task",
                        ));
                    }
                    id.clone_into(&mut request.id);
                    Ok(ok(&ops::cancel(&state, &auth.actor, &request).await?))
                }
                (id, Some("subscribe")) => subscribe(&state, &auth, id).await,
                _ => Err(no_such_method(&target)),
            }
        }
        .await,
    ))
}

async fn subscribe(
    state: &Data<AppState>,
    auth: &Authenticated,
    id: &str,
) -> Result<HttpResponse, A2aError> {
    let slot = stream::reserve(state, &auth.actor)?;
    let task = ops::subscribable(state, &auth.actor, id).await?;
    let first = ops::view(state, &auth.actor, &task, None).await?;
    let actor = auth.actor.clone();
    let framing = Framing::Rest;
    Ok(stream::open(
        state.clone(),
        actor,
        (task, first),
        Until::Terminal,
        framing,
        slot,
    ))
}

/// `GET /a2a/rest/extendedAgentCard`.
#[utoipa::path(
    get,
    path = "/a2a/rest/extendedAgentCard",
    operation_id = "a2aExtendedAgentCard",
    tag = "a2a",
    summary = "A2A GetExtendedAgentCard",
    description = "The Agent Card with a skill for each capability the caller's \
        organization's agents declare.",
    params(("A2A-Version" = String, Header, pattern = "^1\\.0(\\.[0-9]+)?$", description = "The protocol version: `1.0` (a patch number is ignored)")),
    responses(
        (status = 200, description = "The extended card", body = Object, content_type = "application/a2a+json"),
        (status = 400, description = "Bad version", body = Object),
        (status = 401, description = "No valid credentials", body = crate::error::ErrorBody<'static>),
        (status = 403, description = "An A2A error: the credentials may not", body = Object),
        (status = 404, description = "An A2A error: no such task or method", body = Object),
        (status = 409, description = "An A2A error (a conflict with the task's state), or the API's for an Idempotency-Key in use", body = Object),
        (status = 429, description = "An A2A error: a rate or spending limit", body = Object),
        (status = 500, description = "An A2A error: the server failed", body = Object)
    ),
    security(("agentId" = [], "agentTimestamp" = [], "agentNonce" = [], "agentSignature" = []), ("userToken" = []), ("apiKey" = []))
)]
pub(crate) async fn extended_card(
    state: Data<AppState>,
    req: HttpRequest,
    auth: Authenticated,
) -> Result<HttpResponse, ApiError> {
    Ok(answer(
        async {
            versioned(&req)?;
            Ok(ok(&card::extended(&state, &auth.actor, &req).await?))
        }
        .await,
    ))
}

/// `POST /a2a/rest/tasks/{target}/pushNotificationConfigs`.
#[utoipa::path(
    post,
    path = "/a2a/rest/tasks/{target}/pushNotificationConfigs",
    operation_id = "a2aCreatePushConfig",
    tag = "a2a",
    summary = "A2A CreateTaskPushNotificationConfig",
    description = "Sets a push notification config on the task: its status updates are POSTed \
        to `url` (https, public addresses, as webhooks) with the token in \
        `X-A2A-Notification-Token` and `Authorization: <scheme> <credentials>`, retried as \
        webhook deliveries are. Setting an `id` again replaces that config; a task has at \
        most 10. Users who may manage webhooks only.",
    params(
        ("target" = String, Path, description = "The task id"),
        ("A2A-Version" = String, Header, pattern = "^1\\.0(\\.[0-9]+)?$", description = "The protocol version: `1.0` (a patch number is ignored)")
    ),
    request_body(content = Object, description = "A TaskPushNotificationConfig"),
    responses(
        (status = 200, description = "The config (without its token and credentials)", body = Object, content_type = "application/a2a+json"),
        (status = 400, description = "Bad parameters or version, or a URL that may not be called", body = Object),
        (status = 401, description = "No valid credentials", body = crate::error::ErrorBody<'static>),
        (status = 403, description = "An A2A error: the credentials may not (agents may not manage push configs)", body = Object),
        (status = 404, description = "An A2A error: no such task", body = Object),
        (status = 409, description = "An A2A error (a conflict), or the API's for an Idempotency-Key in use", body = Object),
        (status = 429, description = "An A2A error: a rate limit", body = Object),
        (status = 500, description = "An A2A error: the server failed", body = Object)
    ),
    security(("agentId" = [], "agentTimestamp" = [], "agentNonce" = [], "agentSignature" = []), ("userToken" = []), ("apiKey" = []))
)]
pub(crate) async fn create_push_config(
    state: Data<AppState>,
    req: HttpRequest,
    auth: Authenticated,
    target: Path<String>,
) -> Result<HttpResponse, ApiError> {
    Ok(answer(
        async {
            versioned(&req)?;
            let mut config: TaskPushNotificationConfig = body(&auth.body)?;
            if !config.task_id.is_empty() && config.task_id != *target {
                return Err(A2aError::invalid_params(
                    "the body's taskId is not the path's task",
                ));
            }
            target.clone_into(&mut config.task_id);
            Ok(ok(&push::create(&state, &auth.actor, &config).await?))
        }
        .await,
    ))
}

/// `GET /a2a/rest/tasks/{target}/pushNotificationConfigs`.
#[utoipa::path(
    get,
    path = "/a2a/rest/tasks/{target}/pushNotificationConfigs",
    operation_id = "a2aListPushConfigs",
    tag = "a2a",
    summary = "A2A ListTaskPushNotificationConfigs",
    description = "The task's push notification configs, oldest first, on one page (a task \
        has at most 10), without their tokens and credentials.",
    params(
        ("target" = String, Path, description = "The task id"),
        ("A2A-Version" = String, Header, pattern = "^1\\.0(\\.[0-9]+)?$", description = "The protocol version: `1.0` (a patch number is ignored)"),
        ("pageSize" = Option<i32>, Query, minimum = 0, description = "Ignored: one page holds every config"),
        ("pageToken" = Option<String>, Query, description = "Empty: there is no second page")
    ),
    responses(
        (status = 200, description = "`{configs, nextPageToken}`", body = Object, content_type = "application/a2a+json"),
        (status = 400, description = "Bad parameters or version", body = Object),
        (status = 401, description = "No valid credentials", body = crate::error::ErrorBody<'static>),
        (status = 403, description = "An A2A error: the credentials may not (agents may not read push configs)", body = Object),
        (status = 404, description = "An A2A error: no such task", body = Object),
        (status = 409, description = "The API's error for an Idempotency-Key in use", body = Object),
        (status = 429, description = "An A2A error: a rate limit", body = Object),
        (status = 500, description = "An A2A error: the server failed", body = Object)
    ),
    security(("agentId" = [], "agentTimestamp" = [], "agentNonce" = [], "agentSignature" = []), ("userToken" = []), ("apiKey" = []))
)]
pub(crate) async fn list_push_configs(
    state: Data<AppState>,
    req: HttpRequest,
    auth: Authenticated,
    target: Path<String>,
) -> Result<HttpResponse, ApiError> {
    Ok(answer(
        async {
            versioned(&req)?;
            let mut request: ListPushConfigsRequest = query(&req)?;
            target.clone_into(&mut request.task_id);
            Ok(ok(&push::list(&state, &auth.actor, &request).await?))
        }
        .await,
    ))
}

/// `GET /a2a/rest/tasks/{target}/pushNotificationConfigs/{config}`.
#[utoipa::path(
    get,
    path = "/a2a/rest/tasks/{target}/pushNotificationConfigs/{config}",
    operation_id = "a2aGetPushConfig",
    tag = "a2a",
    summary = "A2A GetTaskPushNotificationConfig",
    description = "One push notification config of the task, without its token and \
        credentials; 404 when the task has none with that id.",
    params(
        ("target" = String, Path, description = "The task id"),
        ("config" = String, Path, description = "The config id"),
        ("A2A-Version" = String, Header, pattern = "^1\\.0(\\.[0-9]+)?$", description = "The protocol version: `1.0` (a patch number is ignored)")
    ),
    responses(
        (status = 200, description = "The config", body = Object, content_type = "application/a2a+json"),
        (status = 400, description = "Bad version", body = Object),
        (status = 401, description = "No valid credentials", body = crate::error::ErrorBody<'static>),
        (status = 403, description = "An A2A error: the credentials may not (agents may not read push configs)", body = Object),
        (status = 404, description = "An A2A error: no such task or config", body = Object),
        (status = 409, description = "The API's error for an Idempotency-Key in use", body = Object),
        (status = 429, description = "An A2A error: a rate limit", body = Object),
        (status = 500, description = "An A2A error: the server failed", body = Object)
    ),
    security(("agentId" = [], "agentTimestamp" = [], "agentNonce" = [], "agentSignature" = []), ("userToken" = []), ("apiKey" = []))
)]
pub(crate) async fn get_push_config(
    state: Data<AppState>,
    req: HttpRequest,
    auth: Authenticated,
    path: Path<(String, String)>,
) -> Result<HttpResponse, ApiError> {
    let (task_id, id) = path.into_inner();
    Ok(answer(
        async {
            versioned(&req)?;
            let request = PushConfigRequest {
                tenant: None,
                task_id,
                id,
            };
            Ok(ok(&push::get(&state, &auth.actor, &request).await?))
        }
        .await,
    ))
}

/// `DELETE /a2a/rest/tasks/{target}/pushNotificationConfigs/{config}`.
#[utoipa::path(
    delete,
    path = "/a2a/rest/tasks/{target}/pushNotificationConfigs/{config}",
    operation_id = "a2aDeletePushConfig",
    tag = "a2a",
    summary = "A2A DeleteTaskPushNotificationConfig",
    description = "Deletes the config with its pending pushes; answers `{}`, also when the \
        task has no config with that id (deleting is idempotent).",
    params(
        ("target" = String, Path, description = "The task id"),
        ("config" = String, Path, description = "The config id"),
        ("A2A-Version" = String, Header, pattern = "^1\\.0(\\.[0-9]+)?$", description = "The protocol version: `1.0` (a patch number is ignored)")
    ),
    responses(
        (status = 200, description = "`{}`", body = Object, content_type = "application/a2a+json"),
        (status = 400, description = "Bad version", body = Object),
        (status = 401, description = "No valid credentials", body = crate::error::ErrorBody<'static>),
        (status = 403, description = "An A2A error: the credentials may not (agents may not manage push configs)", body = Object),
        (status = 404, description = "An A2A error: no such task", body = Object),
        (status = 409, description = "The API's error for an Idempotency-Key in use", body = Object),
        (status = 429, description = "An A2A error: a rate limit", body = Object),
        (status = 500, description = "An A2A error: the server failed", body = Object)
    ),
    security(("agentId" = [], "agentTimestamp" = [], "agentNonce" = [], "agentSignature" = []), ("userToken" = []), ("apiKey" = []))
)]
pub(crate) async fn delete_push_config(
    state: Data<AppState>,
    req: HttpRequest,
    auth: Authenticated,
    path: Path<(String, String)>,
) -> Result<HttpResponse, ApiError> {
    let (task_id, id) = path.into_inner();
    Ok(answer(
        async {
            versioned(&req)?;
            let request = PushConfigRequest {
                tenant: None,
                task_id,
                id,
            };
            push::delete(&state, &auth.actor, &request).await?;
            Ok(ok(&serde_json::json!({})))
        }
        .await,
    ))
}
