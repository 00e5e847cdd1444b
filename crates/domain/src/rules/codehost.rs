//! What a code host's event means for tasks (decision D-87): a pure reading of the
//! event name and its JSON payload. Fields we do not use are ignored (decision D-3);
//! fields we use must have their documented types.

use serde::Deserialize;
use serde_json::Value;

use crate::ValidationError;
use crate::model::{InstallationId, ItemRef, LinkKind, TaskStatus};

/// What an event asks of the task its item is linked to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HostEvent {
    /// An issue or pull request was opened: a new task (moved to review for a pull
    /// request).
    Opened(Item),
    /// Its title or body changed.
    Edited(Item),
    /// It was closed: the task goes to `outcome` (`done` or `cancelled`).
    Closed {
        /// The item.
        item: ItemRef,
        /// `done`, or `cancelled` for an issue closed as not planned or an unmerged
        /// pull request.
        outcome: TaskStatus,
    },
    /// It was reopened: a new task when the linked one is closed.
    Reopened(Item),
    /// Someone commented on it.
    Commented {
        /// The item.
        item: ItemRef,
        /// The comment text.
        body: String,
        /// Who wrote it (their login), if known.
        author: Option<String>,
    },
    /// A check suite finished for the pull requests it names.
    ChecksCompleted {
        /// The repository's full name.
        repository: String,
        /// The pull requests' numbers.
        pull_requests: Vec<i64>,
        /// `true` for success, `false` for failure or a time-out.
        passed: bool,
    },
    /// Nothing to do, and why.
    Ignored(String),
}

/// An issue or pull request as an event shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Item {
    /// Which one.
    pub at: ItemRef,
    /// Its title.
    pub title: String,
    /// Its body (Markdown), if any.
    pub body: Option<String>,
    /// Its page on the code host.
    pub url: Option<String>,
    /// Who opened it (their login).
    pub author: Option<String>,
}

/// The installation an event is for: `installation.id`, else `repository.owner.id`,
/// else `organization.id` (an organization's own webhook: its events name the
/// organization, which owns the repositories). `Err` when the payload names none of
/// them, or not as a positive integer.
///
/// ```
/// use muster_domain::rules::codehost::installation_of;
/// use serde_json::json;
/// let both = json!({"installation": {"id": 7}, "repository": {"owner": {"id": 9}}});
/// assert_eq!(installation_of(&both).unwrap().get(), 7);
/// let owner = json!({"repository": {"owner": {"id": 9}}, "organization": {"id": 9}});
/// assert_eq!(installation_of(&owner).unwrap().get(), 9);
/// let organization = json!({"zen": "hi", "organization": {"id": 9}});
/// assert_eq!(installation_of(&organization).unwrap().get(), 9);
/// assert!(installation_of(&json!({"zen": "hi"})).is_err());
/// ```
pub fn installation_of(payload: &Value) -> Result<InstallationId, ValidationError> {
    let named = |pointer| payload.pointer(pointer).filter(|v| !v.is_null());
    let id = named("/installation/id")
        .or_else(|| named("/repository/owner/id"))
        .or_else(|| named("/organization/id"));
    id.and_then(super::numbers::whole_number)
        .and_then(|id| InstallationId::new(id).ok())
        .ok_or_else(|| {
            ValidationError::new(
                "the payload names no installation: installation.id, repository.owner.id or \
                 organization.id must be a positive integer",
            )
        })
}

/// Reads the event `event` (the `X-Host-Event` header) with its `payload`. Events and
/// actions we do not handle are [`HostEvent::Ignored`]; a handled one whose fields are
/// missing or of the wrong type is an `Err` naming the field.
pub fn read(event: &str, payload: &Value) -> Result<HostEvent, ValidationError> {
    let action = payload.get("action").and_then(Value::as_str).unwrap_or("");
    match event {
        "issues" => issue_event(action, payload),
        "pull_request" => pull_request_event(action, payload),
        "issue_comment" => comment_event(action, payload),
        "check_suite" => check_suite_event(action, payload),
        other => Ok(HostEvent::Ignored(format!(
            "the event {} is not handled",
            quoted(other)
        ))),
    }
}

fn issue_event(action: &str, payload: &Value) -> Result<HostEvent, ValidationError> {
    if !matches!(action, "opened" | "edited" | "closed" | "reopened") {
        return Ok(not_handled("issues", action));
    }
    let repository = repository(payload)?;
    let issue: IssueBody = field(payload, "issue")?;
    let at = ItemRef {
        repository,
        kind: LinkKind::Issue,
        number: issue.number,
    };
    let outcome = if issue.state_reason.as_deref() == Some("not_planned") {
        TaskStatus::Cancelled
    } else {
        TaskStatus::Done
    };
    Ok(item_event(action, at, outcome, |at| Item {
        at,
        title: issue.title,
        body: issue.body,
        url: issue.html_url,
        author: issue.user.and_then(|u| u.login),
    }))
}

fn pull_request_event(action: &str, payload: &Value) -> Result<HostEvent, ValidationError> {
    if !matches!(action, "opened" | "edited" | "closed" | "reopened") {
        return Ok(not_handled("pull_request", action));
    }
    let repository = repository(payload)?;
    let pull: PullRequestBody = field(payload, "pull_request")?;
    let number = match pull.number {
        Some(n) => n,
        None => payload
            .get("number")
            .and_then(super::numbers::whole_number)
            .ok_or_else(|| ValidationError::new("pull_request.number is required"))?,
    };
    let at = ItemRef {
        repository,
        kind: LinkKind::PullRequest,
        number,
    };
    let outcome = if pull.merged.unwrap_or(false) || pull.merged_at.is_some() {
        TaskStatus::Done
    } else {
        TaskStatus::Cancelled
    };
    Ok(item_event(action, at, outcome, |at| Item {
        at,
        title: pull.title,
        body: pull.body,
        url: pull.html_url,
        author: pull.user.and_then(|u| u.login),
    }))
}

/// The event of `action` (opened, edited, closed or reopened) on the item at `at`:
/// closing moves its task to `closed`; the others need the item itself.
fn item_event(
    action: &str,
    at: ItemRef,
    closed: TaskStatus,
    item: impl FnOnce(ItemRef) -> Item,
) -> HostEvent {
    if action == "closed" {
        return HostEvent::Closed {
            item: at,
            outcome: closed,
        };
    }
    let item = item(at);
    match action {
        "opened" => HostEvent::Opened(item),
        "edited" => HostEvent::Edited(item),
        _ => HostEvent::Reopened(item),
    }
}

fn comment_event(action: &str, payload: &Value) -> Result<HostEvent, ValidationError> {
    if action != "created" {
        return Ok(not_handled("issue_comment", action));
    }
    let repository = repository(payload)?;
    let issue: CommentedIssue = field(payload, "issue")?;
    let comment: CommentBody = field(payload, "comment")?;
    // The code host sends comments on pull requests as issue comments of an issue
    // that carries a `pull_request` object.
    let kind = if issue.pull_request.as_ref().is_some_and(|v| !v.is_null()) {
        LinkKind::PullRequest
    } else {
        LinkKind::Issue
    };
    Ok(HostEvent::Commented {
        item: ItemRef {
            repository,
            kind,
            number: issue.number,
        },
        body: comment.body.unwrap_or_default(),
        author: comment.user.and_then(|u| u.login),
    })
}

fn check_suite_event(action: &str, payload: &Value) -> Result<HostEvent, ValidationError> {
    if action != "completed" {
        return Ok(not_handled("check_suite", action));
    }
    let repository = repository(payload)?;
    let suite: CheckSuiteBody = field(payload, "check_suite")?;
    let passed = match suite.conclusion.as_deref() {
        Some("success") => true,
        Some("failure" | "timed_out") => false,
        other => {
            return Ok(HostEvent::Ignored(format!(
                "a check suite that concluded {} changes no task",
                other.map_or_else(|| "nothing".to_owned(), quoted)
            )));
        }
    };
    Ok(HostEvent::ChecksCompleted {
        repository,
        pull_requests: suite.pull_requests.into_iter().map(|p| p.number).collect(),
        passed,
    })
}

fn not_handled(event: &str, action: &str) -> HostEvent {
    HostEvent::Ignored(format!(
        "the {event} action {} is not handled",
        quoted(action)
    ))
}

/// `value` in quotes, cut to 64 characters: it comes from the caller.
fn quoted(value: &str) -> String {
    let cut: String = value.chars().take(64).collect();
    format!("\"{}\"", cut.escape_default())
}

fn repository(payload: &Value) -> Result<String, ValidationError> {
    payload
        .pointer("/repository/full_name")
        .and_then(Value::as_str)
        .filter(|name| !name.is_empty())
        .map(str::to_owned)
        .ok_or_else(|| ValidationError::new("repository.full_name is required"))
}

/// The object at `name` of the payload, read as `T`; errors name the field.
fn field<T: serde::de::DeserializeOwned>(
    payload: &Value,
    name: &str,
) -> Result<T, ValidationError> {
    let value = payload
        .get(name)
        .filter(|v| v.is_object())
        .ok_or_else(|| ValidationError::new(format!("{name} must be an object")))?;
    T::deserialize(value).map_err(|err| ValidationError::new(format!("{name}: {err}")))
}

#[derive(Deserialize)]
struct Login {
    login: Option<String>,
}

#[derive(Deserialize)]
struct IssueBody {
    number: i64,
    #[serde(default)]
    title: String,
    body: Option<String>,
    html_url: Option<String>,
    state_reason: Option<String>,
    user: Option<Login>,
}

#[derive(Deserialize)]
struct CommentedIssue {
    number: i64,
    pull_request: Option<Value>,
}

#[derive(Deserialize)]
struct CommentBody {
    body: Option<String>,
    user: Option<Login>,
}

#[derive(Deserialize)]
struct PullRequestBody {
    number: Option<i64>,
    #[serde(default)]
    title: String,
    body: Option<String>,
    html_url: Option<String>,
    merged: Option<bool>,
    merged_at: Option<String>,
    user: Option<Login>,
}

#[derive(Deserialize)]
struct PullRef {
    number: i64,
}

#[derive(Deserialize)]
struct CheckSuiteBody {
    conclusion: Option<String>,
    #[serde(default)]
    pull_requests: Vec<PullRef>,
}

#[cfg(test)]
#[path = "codehost/tests.rs"]
mod tests;
