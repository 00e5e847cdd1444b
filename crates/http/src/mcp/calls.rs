//! Calling a tool: its arguments read as the API's request types, the same use case the
//! route calls, and the route's answer as JSON.

use muster_domain::model::{Actor, TaskId};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::answers;
use crate::body::{parse_json, parse_optional_json};
use crate::dto::Data;
use crate::dto::claims::{ClaimBody, HeartbeatBody, ReleaseBody};
use crate::dto::events::ListEventsQuery;
use crate::dto::paging::PageResponse;
use crate::dto::routing::{CandidateResponse, CandidatesQuery};
use crate::dto::task_links::{
    CommentRequest, CommentResponse, DependencyRequest, DependencyResponse, EscalateRequest,
};
use crate::dto::tasks::{
    CreateTaskRequest, ListTasksQuery, PatchTaskRequest, TaskResponse, TransitionRequest,
};
use crate::error::ApiError;
use crate::state::AppState;

/// Runs the tool `name` as `actor`: the JSON the matching route answers, or its error.
pub(super) async fn call(
    state: &AppState,
    actor: &Actor,
    name: &str,
    mut args: Map<String, Value>,
) -> Result<Value, ApiError> {
    let tasks = &state.tasks;
    match name {
        "claim_task" => {
            let request = read_optional::<ClaimBody>(args)?.into_request()?;
            let task = tasks.claim(actor, request).await?;
            answer(&Data {
                data: task.map(TaskResponse::from),
            })
        }
        "heartbeat_task" => {
            let id = task_id(&mut args)?;
            let lease = read_optional::<HeartbeatBody>(args)?.lease()?;
            data(TaskResponse::from(tasks.heartbeat(actor, id, lease).await?))
        }
        "release_task" => {
            let id = task_id(&mut args)?;
            let reason = read_optional::<ReleaseBody>(args)?.reason()?;
            data(TaskResponse::from(tasks.release(actor, id, reason).await?))
        }
        "list_tasks" => {
            let query: ListTasksQuery = read(args)?;
            let page = tasks
                .list(actor, &query.filter()?, query.cursor()?, query.limit())
                .await?;
            answer(&PageResponse::of(page, TaskResponse::from))
        }
        "get_task" => {
            let id = task_id(&mut args)?;
            no_more(&args)?;
            data(TaskResponse::from(tasks.get(actor, id).await?))
        }
        "create_task" => {
            let new = read::<CreateTaskRequest>(args)?.into_new_task()?;
            data(TaskResponse::from(tasks.create(actor, new).await?))
        }
        "update_task" => {
            let id = task_id(&mut args)?;
            let patch = read::<PatchTaskRequest>(args)?.into_patch()?;
            data(TaskResponse::from(tasks.update(actor, id, patch).await?))
        }
        "transition_task" => {
            let id = task_id(&mut args)?;
            let request: TransitionRequest = read(args)?;
            let task = tasks
                .transition_with(actor, id, request.into_move()?)
                .await?;
            data(TaskResponse::from(task))
        }
        "comment_on_task" => {
            let id = task_id(&mut args)?;
            let (body, parent) = read::<CommentRequest>(args)?.into_parts()?;
            data(CommentResponse::from(
                tasks.comment(actor, id, body, parent).await?,
            ))
        }
        "add_dependency" => {
            let id = task_id(&mut args)?;
            let request: DependencyRequest = read(args)?;
            let on = TaskId::from_uuid(request.depends_on_id);
            let dependency = tasks
                .add_dependency(actor, id, on, request.blocking)
                .await?;
            data(DependencyResponse::from(dependency))
        }
        _ => call_more(state, actor, name, args).await,
    }
}

/// The tools beyond a task's own life: escalation, routing, the audit log.
async fn call_more(
    state: &AppState,
    actor: &Actor,
    name: &str,
    mut args: Map<String, Value>,
) -> Result<Value, ApiError> {
    let tasks = &state.tasks;
    match name {
        "escalate_task" => {
            let id = task_id(&mut args)?;
            let new = read::<EscalateRequest>(args)?.into_escalation()?;
            answer(&answers::escalated(tasks.escalate(actor, id, new).await?))
        }
        "find_candidates" => {
            let id = task_id(&mut args)?;
            let query = read::<CandidatesQuery>(args)?.into_query()?;
            let ranked = tasks.candidates(actor, id, query).await?;
            let data: Vec<CandidateResponse> =
                ranked.into_iter().map(CandidateResponse::from).collect();
            answer(&Data { data })
        }
        "list_events" => {
            let query: ListEventsQuery = read(args)?;
            let page = query.page();
            let found = state.events.list(actor, &query.filter()?, page).await?;
            answer(&answers::events(found, page))
        }
        _ => super::agent_calls::call(state, actor, name, args).await,
    }
}

/// The `id` argument, a task's UUID.
pub(super) fn task_id(args: &mut Map<String, Value>) -> Result<TaskId, ApiError> {
    id(args)
}

/// The `id` argument, the UUID of whatever the tool is about (a task, run, project,
/// routine).
pub(super) fn id<T: From<uuid::Uuid>>(args: &mut Map<String, Value>) -> Result<T, ApiError> {
    match args.remove("id") {
        Some(Value::String(id)) => crate::body::parse_uuid("id", &id).map(T::from),
        Some(_) => Err(ApiError::bad_request("id must be a UUID")),
        None => Err(ApiError::bad_request("id is required")),
    }
}

pub(super) fn no_more(args: &Map<String, Value>) -> Result<(), ApiError> {
    match args.keys().next() {
        Some(key) => Err(ApiError::bad_request(format!("unknown field `{key}`"))),
        None => Ok(()),
    }
}

/// The arguments as `T`, with the API's messages for what does not fit.
pub(super) fn read<T: DeserializeOwned>(args: Map<String, Value>) -> Result<T, ApiError> {
    parse_json(&bytes(args)?)
}

/// The arguments as `T`, or `T::default()` when there are none (a route whose body may
/// be left out).
pub(super) fn read_optional<T: DeserializeOwned + Default>(
    args: Map<String, Value>,
) -> Result<T, ApiError> {
    if args.is_empty() {
        return Ok(T::default());
    }
    parse_optional_json(&bytes(args)?)
}

fn bytes(args: Map<String, Value>) -> Result<Vec<u8>, ApiError> {
    serde_json::to_vec(&Value::Object(args))
        .map_err(|_| ApiError::bad_request("arguments must be JSON"))
}

pub(super) fn data<T: Serialize>(data: T) -> Result<Value, ApiError> {
    answer(&Data { data })
}

pub(super) fn answer<T: Serialize>(value: &T) -> Result<Value, ApiError> {
    serde_json::to_value(value).map_err(|err| ApiError::internal(&err))
}
