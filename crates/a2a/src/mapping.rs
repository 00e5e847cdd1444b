//! Muster's tasks through the protocol's eyes, and back.
//!
//! | Muster | A2A |
//! |---|---|
//! | `backlog`, `todo` | `TASK_STATE_SUBMITTED` |
//! | `in_progress` | `TASK_STATE_WORKING` |
//! | `blocked`, `review` (no approval needed) | `TASK_STATE_WORKING`, with a status message |
//! | `review` waiting for its approval | `TASK_STATE_INPUT_REQUIRED` |
//! | `done` | `TASK_STATE_COMPLETED` |
//! | `cancelled` | `TASK_STATE_CANCELED` |
//! | `cancelled`, outcome `failed` | `TASK_STATE_FAILED` |
//! | `cancelled`, outcome `rejected` | `TASK_STATE_REJECTED` |
//!
//! The task's id is the Muster task's; its context is its parent task (or itself when it
//! has none). Its history is the message that created it, then its comments: those of
//! the task's creator as `ROLE_USER`, the others as `ROLE_AGENT`. Muster's own fields
//! travel in `metadata.muster`: a task shows its title, status, reward and payer there,
//! and a message that creates a task may ask for a reward there.

use muster_domain::model::{
    Comment, Description, Metadata, Task as MusterTask, TaskOutcome, TaskStatus as Status, Title,
};
use muster_domain::ports::{OutcomeFilter, TaskFilter};
use muster_domain::rules::reward::{MAX_REWARD, reward_amount};
use serde_json::{Map, Value, json};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use crate::error::{A2aError, ErrorKind};
use crate::types::{Artifact, Message, Part, Role, Task, TaskState, TaskStatus};

/// The fields of the task a message creates.
#[derive(Debug, Clone, PartialEq)]
pub struct NewTaskText {
    /// The first line.
    pub title: Title,
    /// The whole text.
    pub description: Option<Description>,
    /// `{"source": "a2a", "a2aMessageId": ...}`.
    pub metadata: Metadata,
    /// `metadata.muster.reward` of the message: the reward asked for, escrowed from the
    /// sender (decision D-101); `None` for the organization's default.
    pub reward: Option<i64>,
}

/// Longest `messageId` kept, in characters.
pub const MAX_MESSAGE_ID_CHARS: usize = 255;

/// The metadata key holding the `messageId` of the message that created a task.
pub const MESSAGE_ID_KEY: &str = "a2aMessageId";

/// The metadata key under which Muster's own fields travel, both ways.
pub const METADATA_NAMESPACE: &str = "muster";

/// The A2A state of a Muster task.
pub fn state(task: &MusterTask) -> TaskState {
    match task.status {
        Status::Backlog | Status::Todo => TaskState::Submitted,
        Status::Review if task.awaits_approval() => TaskState::InputRequired,
        Status::InProgress | Status::Blocked | Status::Review => TaskState::Working,
        Status::Done => TaskState::Completed,
        Status::Cancelled => match task.outcome {
            None => TaskState::Canceled,
            Some(TaskOutcome::Failed) => TaskState::Failed,
            Some(TaskOutcome::Rejected) => TaskState::Rejected,
        },
    }
}

/// The filter of the Muster tasks in `state`; `None` when no Muster task can be in it
/// (auth-required).
pub fn filter(state: TaskState) -> Option<TaskFilter> {
    let cancelled = |outcome| (vec![Status::Cancelled], None, Some(outcome));
    let (any_status, awaiting_approval, outcome) = match state {
        TaskState::Unspecified => (vec![], None, None),
        TaskState::Submitted => (vec![Status::Backlog, Status::Todo], None, None),
        TaskState::Working => (
            vec![Status::InProgress, Status::Blocked, Status::Review],
            Some(false),
            None,
        ),
        TaskState::InputRequired => (vec![], Some(true), None),
        TaskState::Completed => (vec![Status::Done], None, None),
        TaskState::Canceled => cancelled(OutcomeFilter::Without),
        TaskState::Failed => cancelled(OutcomeFilter::Is(TaskOutcome::Failed)),
        TaskState::Rejected => cancelled(OutcomeFilter::Is(TaskOutcome::Rejected)),
        TaskState::AuthRequired => return None,
    };
    Some(TaskFilter {
        any_status,
        awaiting_approval,
        outcome,
        ..TaskFilter::default()
    })
}

/// The id of the artifact holding a task's result.
pub const RESULT_ARTIFACT_ID: &str = "result";

/// A task's artifacts: its result, when it has one.
pub fn artifacts(task: &MusterTask) -> Option<Vec<Artifact>> {
    task.result.as_ref().map(|result| {
        vec![Artifact {
            artifact_id: RESULT_ARTIFACT_ID.to_owned(),
            name: Some("Result".to_owned()),
            parts: vec![Part::text(result.as_str())],
        }]
    })
}

/// The conversation a task belongs to: its parent's id, or its own.
pub fn context_id(task: &MusterTask) -> String {
    task.parent_task_id.unwrap_or(task.id).to_string()
}

/// A task's status: its state, a message saying why when the state alone does not, and
/// when it entered its Muster status.
pub fn status(task: &MusterTask) -> TaskStatus {
    let state = state(task);
    let note = match task.status {
        Status::Blocked => Some("The task is blocked: it cannot progress for now."),
        Status::Review if state == TaskState::InputRequired => Some(
            "The task is in review and waits for its approval (POST /tasks/{id}/approve, or \
             the dashboard).",
        ),
        Status::Review => Some("The task is in review."),
        _ => None,
    };
    TaskStatus {
        state,
        message: note.map(|text| Message {
            message_id: format!("{}:status:{}", task.id, task.version),
            context_id: Some(context_id(task)),
            task_id: Some(task.id.to_string()),
            role: Role::Agent,
            parts: vec![Part::text(text)],
            metadata: None,
            extensions: vec![],
            reference_task_ids: vec![],
        }),
        timestamp: Some(timestamp(task.status_changed_at)),
    }
}

/// An instant as the protocol writes it (RFC 3339, UTC).
pub fn timestamp(at: OffsetDateTime) -> String {
    at.format(&Rfc3339).unwrap_or_default()
}

/// A Muster task as an A2A task, with at most `history` messages of history (the most
/// recent; all of `comments` when `None`, none when `Some(0)`).
pub fn task(task: &MusterTask, comments: &[Comment], history: Option<usize>) -> Task {
    let history = match history {
        Some(0) => None,
        limit => {
            let mut messages = Vec::with_capacity(comments.len() + 1);
            messages.push(first_message(task));
            messages.extend(comments.iter().map(|c| comment_message(task, c)));
            let keep = limit.unwrap_or(messages.len()).min(messages.len());
            Some(messages.split_off(messages.len() - keep))
        }
    };
    Task {
        id: task.id.to_string(),
        context_id: context_id(task),
        status: status(task),
        artifacts: artifacts(task),
        history,
        metadata: Some(muster_view(task)),
    }
}

/// Muster's fields that the protocol has no place for.
fn muster_view(task: &MusterTask) -> Map<String, Value> {
    let mut view = Map::new();
    view.insert(
        METADATA_NAMESPACE.to_owned(),
        json!({
            "title": task.title.as_str(),
            "status": task.status.as_str(),
            "priority": task.priority.as_str(),
            "assigneeId": task.assignee_id.map(|a| a.to_string()),
            "approvalRequired": task.approval_required,
            "reward": task.reward,
            "rewardPayer": {
                "kind": task.reward_payer.kind(),
                "id": task.reward_payer.id(task.org_id).to_string(),
            },
        }),
    );
    view
}

/// The message that created the task: what an A2A client sent, or the title and
/// description of a task created otherwise.
fn first_message(task: &MusterTask) -> Message {
    let from_a2a = task.metadata.as_map().get("source") == Some(&json!("a2a"));
    let description = task.description.as_ref().map(Description::as_str);
    let text = match description {
        Some(text) if from_a2a => text.to_owned(),
        Some(text) => format!("{}\n\n{text}", task.title.as_str()),
        None => task.title.as_str().to_owned(),
    };
    let message_id = task
        .metadata
        .as_map()
        .get(MESSAGE_ID_KEY)
        .and_then(Value::as_str)
        .map_or_else(|| task.id.to_string(), str::to_owned);
    Message {
        message_id,
        context_id: Some(context_id(task)),
        task_id: Some(task.id.to_string()),
        role: Role::User,
        parts: vec![Part::text(text)],
        metadata: None,
        extensions: vec![],
        reference_task_ids: vec![],
    }
}

fn comment_message(task: &MusterTask, comment: &Comment) -> Message {
    let by_creator = comment.author.is_some() && comment.author == task.creator;
    Message {
        message_id: comment.id.to_string(),
        context_id: Some(context_id(task)),
        task_id: Some(task.id.to_string()),
        role: if by_creator { Role::User } else { Role::Agent },
        parts: vec![Part::text(comment.body.as_str())],
        metadata: None,
        extensions: vec![],
        reference_task_ids: vec![],
    }
}

/// The text of a message: its text parts, links for its `url` parts and fenced JSON for
/// its `data` parts, one paragraph each. A message with no part, a part holding more or
/// less than one kind of content, or a `raw` part (Muster keeps no files) is refused.
pub fn text(message: &Message) -> Result<String, A2aError> {
    if message.parts.is_empty() {
        return Err(A2aError::invalid_params(
            "message.parts must hold at least one part",
        ));
    }
    let mut paragraphs = Vec::with_capacity(message.parts.len());
    for (i, part) in message.parts.iter().enumerate() {
        if part.contents() != 1 {
            return Err(A2aError::invalid_params(format!(
                "message.parts[{i}] must hold exactly one of text, raw, url and data"
            )));
        }
        if part.raw.is_some() {
            return Err(A2aError::new(
                ErrorKind::ContentTypeNotSupported,
                format!(
                    "message.parts[{i}] holds file bytes (raw); Muster keeps text, links and \
                     JSON data only: send a url part instead"
                ),
            ));
        }
        if let Some(text) = &part.text {
            paragraphs.push(text.clone());
        } else if let Some(url) = &part.url {
            let name = part.filename.as_deref().unwrap_or(url);
            paragraphs.push(format!("[{name}]({url})"));
        } else if let Some(data) = &part.data {
            let pretty = serde_json::to_string_pretty(data).unwrap_or_default();
            paragraphs.push(format!("```json\n{pretty}\n```"));
        }
    }
    Ok(paragraphs.join("\n\n"))
}

/// The title, description, metadata and reward of the task a message creates: the title
/// is the first line of its first text part (cut to the longest title allowed), the
/// description its whole [`text`], the metadata says where it came from, and the reward
/// is the message's `metadata.muster.reward` when it has one.
pub fn new_task(message: &Message) -> Result<NewTaskText, A2aError> {
    check_sender(message)?;
    let reward = reward(message)?;
    let description = text(message)?;
    let first_line = message
        .parts
        .iter()
        .filter_map(|p| p.text.as_deref())
        .flat_map(str::lines)
        .map(str::trim)
        .find(|line| !line.is_empty());
    let title: String = first_line
        .unwrap_or("A message from an A2A client")
        .chars()
        .take(Title::MAX_CHARS)
        .collect();
    let invalid = |e: muster_domain::ValidationError| A2aError::invalid_params(e.message());
    let mut metadata = Map::new();
    metadata.insert("source".to_owned(), json!("a2a"));
    metadata.insert(MESSAGE_ID_KEY.to_owned(), json!(message.message_id));
    Ok(NewTaskText {
        title: Title::new(&title).map_err(invalid)?,
        description: Some(Description::new(description).map_err(invalid)?),
        metadata: Metadata::new(Value::Object(metadata)).map_err(invalid)?,
        reward,
    })
}

/// The reward a message asks for in `metadata.muster.reward`: an integer from 0 to
/// 1,000,000,000, or left out for the organization's default.
fn reward(message: &Message) -> Result<Option<i64>, A2aError> {
    let Some(value) = message
        .metadata
        .as_ref()
        .and_then(|m| m.get(METADATA_NAMESPACE))
        .and_then(|m| m.get("reward"))
    else {
        return Ok(None);
    };
    value
        .as_i64()
        .and_then(|amount| reward_amount(amount).ok())
        .map(Some)
        .ok_or_else(|| {
            A2aError::invalid_params(format!(
                "message.metadata.muster.reward must be an integer from 0 to {MAX_REWARD}"
            ))
        })
}

/// A message's `messageId` (required, at most 255 characters) and `role` (required).
pub fn check_sender(message: &Message) -> Result<(), A2aError> {
    if message.message_id.trim().is_empty() {
        return Err(A2aError::invalid_params("message.messageId is required"));
    }
    if message.message_id.chars().count() > MAX_MESSAGE_ID_CHARS {
        return Err(A2aError::invalid_params(format!(
            "message.messageId must be at most {MAX_MESSAGE_ID_CHARS} characters"
        )));
    }
    if message.role == Role::Unspecified {
        return Err(A2aError::invalid_params(
            "message.role must be ROLE_USER or ROLE_AGENT",
        ));
    }
    Ok(())
}
