//! The A2A operations, once for both bindings: each reads its request, calls the task
//! use cases as the caller, and answers the protocol's shapes or its error.

use actix_web::ResponseError;
use actix_web::http::StatusCode;
use muster_a2a::mapping::{self, NewTaskText};
use muster_a2a::types::{
    CancelTaskRequest, GetTaskRequest, ListTasksRequest, ListTasksResponse, Message,
    SendMessageRequest, Task,
};
use muster_a2a::{A2aError, ErrorKind};
use muster_domain::model::{Actor, Comment, CommentBody, Task as MusterTask, TaskId, TaskStatus};
use muster_domain::service::{NewTask, PageRequest};
use muster_wire::time::DayEdge;
use uuid::Uuid;

use super::push;
use crate::error::ApiError;
use crate::state::AppState;

/// Page size of `ListTasks` when none is asked for.
const DEFAULT_PAGE_SIZE: i32 = 50;
/// Largest page of `ListTasks`.
const MAX_PAGE_SIZE: i32 = 100;
/// Comments read for a task's history, at most (the most recent are kept).
const MAX_HISTORY_COMMENTS: usize = 1_000;

/// A use case's refusal as the protocol's error.
pub(super) fn refusal(err: impl Into<ApiError>) -> A2aError {
    let err: ApiError = err.into();
    let kind = match err.status_code() {
        StatusCode::NOT_FOUND => ErrorKind::TaskNotFound,
        StatusCode::FORBIDDEN => ErrorKind::PermissionDenied,
        StatusCode::CONFLICT => ErrorKind::Conflict,
        StatusCode::TOO_MANY_REQUESTS => ErrorKind::ResourceExhausted,
        status if status.is_client_error() => ErrorKind::InvalidParams,
        _ => ErrorKind::Internal,
    };
    A2aError::new(kind, err.message()).with_code(err.code())
}

/// Refuses a `tenant`: Muster has one endpoint per deployment.
pub(super) fn no_tenant(tenant: Option<&String>) -> Result<(), A2aError> {
    match tenant {
        Some(t) if !t.is_empty() => Err(A2aError::invalid_params(
            "tenant is not used by this server: leave it out",
        )),
        _ => Ok(()),
    }
}

/// A task id as the protocol carries it: a task that does not parse is not found.
pub(super) fn task_id(id: &str) -> Result<TaskId, A2aError> {
    Uuid::parse_str(id.trim())
        .map(TaskId::from_uuid)
        .map_err(|_| A2aError::task_not_found(id))
}

/// A `historyLength`: `None` for all, refused when negative.
fn history_length(value: Option<i32>) -> Result<Option<usize>, A2aError> {
    value
        .map(|n| {
            usize::try_from(n)
                .map_err(|_| A2aError::invalid_params("historyLength must not be negative"))
        })
        .transpose()
}

/// The task `id` of the caller's organization.
pub(super) async fn find(
    state: &AppState,
    actor: &Actor,
    id: &str,
) -> Result<MusterTask, A2aError> {
    let task = task_id(id)?;
    state.tasks.get(actor, task).await.map_err(|err| {
        let err = refusal(err);
        if err.kind == ErrorKind::TaskNotFound {
            A2aError::task_not_found(id)
        } else {
            err
        }
    })
}

/// `task` with `history` messages of history (see [`mapping::task`]).
pub(super) async fn view(
    state: &AppState,
    actor: &Actor,
    task: &MusterTask,
    history: Option<usize>,
) -> Result<Task, A2aError> {
    let comments = if history == Some(0) {
        Vec::new()
    } else {
        comments(state, actor, task).await?
    };
    Ok(mapping::task(task, &comments, history))
}

async fn comments(
    state: &AppState,
    actor: &Actor,
    task: &MusterTask,
) -> Result<Vec<Comment>, A2aError> {
    let mut all = Vec::new();
    let mut cursor = None;
    loop {
        let page = PageRequest {
            cursor,
            limit: PageRequest::<()>::MAX_LIMIT,
        };
        let page = state
            .tasks
            .comments_of(actor, task, page)
            .await
            .map_err(refusal)?;
        all.extend(page.items);
        cursor = page.next_cursor;
        if cursor.is_none() || all.len() >= MAX_HISTORY_COMMENTS {
            return Ok(all);
        }
    }
}

/// `SendMessage`: a message without `taskId` creates a task (a sub-task of the task
/// named by `contextId`, when given); one with `taskId` is a comment on that task.
/// Answers the task and how much history the caller asked for.
pub(super) async fn send(
    state: &AppState,
    actor: &Actor,
    request: SendMessageRequest,
) -> Result<(MusterTask, Option<usize>), A2aError> {
    no_tenant(request.tenant.as_ref())?;
    let configuration = request.configuration.unwrap_or_default();
    let history = history_length(configuration.history_length)?;
    // A push config is checked in full before anything changes.
    let replying_to = request
        .message
        .task_id
        .as_deref()
        .filter(|id| !id.is_empty());
    let push = match &configuration.task_push_notification_config {
        Some(config)
            if !config.task_id.is_empty() && Some(config.task_id.as_str()) != replying_to =>
        {
            return Err(A2aError::invalid_params(
                "taskPushNotificationConfig.taskId must be empty (or the message's taskId): \
                 the config is for the message's task",
            ));
        }
        Some(config) => {
            let new = push::new_push(config)?;
            state
                .webhooks
                .check_push(actor, &new)
                .await
                .map_err(refusal)?;
            Some(new)
        }
        None => None,
    };
    let message = request.message;
    let task = match message.task_id.as_deref() {
        Some(id) if !id.is_empty() => {
            // The task is there: its config is set first, so that a config refused (a
            // task with ten already) posts no comment.
            if let Some(new) = push {
                let task = find(state, actor, id).await?;
                push::set(state, actor, task.id, new).await?;
            }
            reply(state, actor, id, &message).await?
        }
        _ => {
            let task = create(state, actor, &message).await?;
            if let Some(new) = push {
                push::set(state, actor, task.id, new).await?;
            }
            task
        }
    };
    Ok((task, history))
}

async fn create(
    state: &AppState,
    actor: &Actor,
    message: &Message,
) -> Result<MusterTask, A2aError> {
    let NewTaskText {
        title,
        description,
        metadata,
        reward,
    } = mapping::new_task(message)?;
    let parent = match message.context_id.as_deref() {
        Some(context) if !context.is_empty() => {
            let unknown = || {
                A2aError::invalid_params(format!(
                    "contextId {context} is not a task of this organization: use the \
                     contextId of a task this server gave, or leave it out"
                ))
            };
            let parent = find(state, actor, context).await.map_err(|err| {
                if err.kind == ErrorKind::TaskNotFound {
                    unknown()
                } else {
                    err
                }
            })?;
            Some(parent.id)
        }
        _ => None,
    };
    let new = NewTask {
        description,
        parent_task_id: parent,
        metadata,
        reward,
        ..NewTask::new(title)
    };
    state.tasks.create(actor, new).await.map_err(refusal)
}

async fn reply(
    state: &AppState,
    actor: &Actor,
    id: &str,
    message: &Message,
) -> Result<MusterTask, A2aError> {
    mapping::check_sender(message)?;
    let task = find(state, actor, id).await?;
    if let Some(context) = message.context_id.as_deref().filter(|c| !c.is_empty())
        && context != mapping::context_id(&task)
    {
        return Err(A2aError::invalid_params(format!(
            "contextId {context} is not the context of task {id}"
        )));
    }
    if task.status.is_terminal() {
        return Err(A2aError::new(
            ErrorKind::UnsupportedOperation,
            format!(
                "task {id} is {}: it takes no more messages; send one without taskId to \
                 start a new task",
                task.status.as_str()
            ),
        ));
    }
    let body = CommentBody::new(mapping::text(message)?)
        .map_err(|e| A2aError::invalid_params(e.message()))?;
    state
        .tasks
        .comment(actor, task.id, body, None)
        .await
        .map_err(refusal)?;
    // A comment moves nothing the answer shows; the history is read afresh from the
    // comments.
    Ok(task)
}

/// `GetTask`.
pub(super) async fn get(
    state: &AppState,
    actor: &Actor,
    request: &GetTaskRequest,
) -> Result<Task, A2aError> {
    no_tenant(request.tenant.as_ref())?;
    let history = history_length(request.history_length)?;
    let task = find(state, actor, &request.id).await?;
    view(state, actor, &task, history).await
}

/// `CancelTask`: moves the task to `cancelled`; a closed task is not cancelable.
pub(super) async fn cancel(
    state: &AppState,
    actor: &Actor,
    request: &CancelTaskRequest,
) -> Result<Task, A2aError> {
    no_tenant(request.tenant.as_ref())?;
    let task = find(state, actor, &request.id).await?;
    let not_cancelable = |status: TaskStatus| {
        A2aError::new(
            ErrorKind::TaskNotCancelable,
            format!(
                "task {} is {}: it cannot be canceled",
                request.id,
                status.as_str()
            ),
        )
    };
    if task.status.is_terminal() {
        return Err(not_cancelable(task.status));
    }
    let cancelled = state
        .tasks
        .transition(actor, task.id, TaskStatus::Cancelled, None)
        .await
        .map_err(|err| match refusal(err) {
            e if e.kind == ErrorKind::Conflict => not_cancelable(task.status),
            e => e,
        })?;
    view(state, actor, &cancelled, None).await
}

/// `ListTasks`: the caller's organization's tasks, newest first, by pages.
pub(super) async fn list(
    state: &AppState,
    actor: &Actor,
    request: &ListTasksRequest,
) -> Result<ListTasksResponse, A2aError> {
    no_tenant(request.tenant.as_ref())?;
    let page_size = request.page_size.unwrap_or(DEFAULT_PAGE_SIZE);
    if !(1..=MAX_PAGE_SIZE).contains(&page_size) {
        return Err(A2aError::invalid_params(format!(
            "pageSize must be 1 to {MAX_PAGE_SIZE}"
        )));
    }
    let status_changed_since = request
        .status_timestamp_after
        .as_deref()
        .filter(|at| !at.is_empty())
        .map(|at| {
            // The API's reading of instants: years 1 to 9999, milliseconds, UTC.
            muster_wire::time::parse("statusTimestampAfter", at, DayEdge::Start).map_err(|_| {
                A2aError::invalid_params(format!(
                    "statusTimestampAfter {at} is not an RFC 3339 instant such as \
                     2026-11-27T10:00:00Z"
                ))
            })
        })
        .transpose()?;
    let history = history_length(request.history_length)?.or(Some(0));
    let state_filter = match request.status.as_deref().filter(|s| !s.is_empty()) {
        None => Some(muster_domain::ports::TaskFilter::default()),
        Some(name) => {
            let wanted = muster_a2a::types::TaskState::parse(name).ok_or_else(|| {
                A2aError::invalid_params(format!("status {name} is not a TASK_STATE_ name"))
            })?;
            mapping::filter(wanted)
        }
    };
    let empty = || ListTasksResponse {
        tasks: Vec::new(),
        next_page_token: String::new(),
        page_size,
        total_size: 0,
    };
    let Some(mut filter) = state_filter else {
        // No Muster task ever waits for credentials.
        return Ok(empty());
    };
    filter.status_changed_since = status_changed_since;
    if let Some(context) = request.context_id.as_deref().filter(|c| !c.is_empty()) {
        let Ok(parent) = task_id(context) else {
            return Ok(empty());
        };
        filter.context_id = Some(parent);
    }
    let cursor = match request.page_token.as_deref().filter(|t| !t.is_empty()) {
        None => None,
        Some(token) => Some(task_id(token).map_err(|_| {
            A2aError::invalid_params("pageToken must be a nextPageToken this server gave")
        })?),
    };
    let limit = u32::try_from(page_size).unwrap_or(1);
    let page = state
        .tasks
        .list(actor, &filter, cursor, limit)
        .await
        .map_err(refusal)?;
    let total = state.tasks.count(actor, &filter).await.map_err(refusal)?;
    let with_artifacts = request.include_artifacts.unwrap_or(false);
    let mut tasks = Vec::with_capacity(page.items.len());
    for task in &page.items {
        let mut task = view(state, actor, task, history).await?;
        if !with_artifacts {
            task.artifacts = None;
        }
        tasks.push(task);
    }
    Ok(ListTasksResponse {
        tasks,
        next_page_token: page.next_cursor.map(|c| c.to_string()).unwrap_or_default(),
        page_size,
        total_size: i32::try_from(total).unwrap_or(i32::MAX),
    })
}

/// The task `id` for a subscription: one that is closed already has nothing to stream.
pub(super) async fn subscribable(
    state: &AppState,
    actor: &Actor,
    id: &str,
) -> Result<MusterTask, A2aError> {
    let task = find(state, actor, id).await?;
    if task.status.is_terminal() {
        return Err(A2aError::new(
            ErrorKind::UnsupportedOperation,
            format!(
                "task {id} is {} already: nothing more will happen to it; read it with GetTask",
                task.status.as_str()
            ),
        ));
    }
    Ok(task)
}
