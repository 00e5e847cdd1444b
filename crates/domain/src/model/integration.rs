//! What an integration (chat platform, code host) did with what it was sent: the answer
//! of its endpoint, `{action, taskId, reason}`, which a code host's redelivery gets
//! again.

use super::TaskId;

/// What a message or event came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IntegrationAction {
    /// A task was created.
    Created,
    /// A task's title or description was changed.
    Updated,
    /// A comment was added to a task.
    Commented,
    /// A task was moved to an open status (review, blocked, in progress).
    Moved,
    /// A task was moved to `done`.
    Completed,
    /// A task was cancelled.
    Cancelled,
    /// Nothing changed; the reason says why.
    Ignored,
}

impl IntegrationAction {
    /// Every action, in declaration order.
    pub const ALL: [Self; 7] = [
        Self::Created,
        Self::Updated,
        Self::Commented,
        Self::Moved,
        Self::Completed,
        Self::Cancelled,
        Self::Ignored,
    ];

    /// The wire form.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Created => "created",
            Self::Updated => "updated",
            Self::Commented => "commented",
            Self::Moved => "moved",
            Self::Completed => "completed",
            Self::Cancelled => "cancelled",
            Self::Ignored => "ignored",
        }
    }

    /// The action of a wire form.
    ///
    /// ```
    /// use muster_domain::model::IntegrationAction;
    /// for action in IntegrationAction::ALL {
    ///     assert_eq!(IntegrationAction::parse(action.as_str()), Some(action));
    /// }
    /// assert_eq!(IntegrationAction::parse("Created"), None);
    /// ```
    pub fn parse(value: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|a| a.as_str() == value)
    }
}

/// `{action, taskId, reason}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IntegrationAnswer {
    /// What happened.
    pub action: IntegrationAction,
    /// The task it happened to (or that was matched but left alone).
    pub task_id: Option<TaskId>,
    /// Why, when nothing (or not everything) happened.
    pub reason: Option<String>,
}

impl IntegrationAnswer {
    /// `action` done to `task`.
    pub fn done(action: IntegrationAction, task: TaskId) -> Self {
        Self {
            action,
            task_id: Some(task),
            reason: None,
        }
    }

    /// Nothing happened, because of `reason`; `task` is the one concerned, if any.
    pub fn ignored(reason: impl Into<String>, task: Option<TaskId>) -> Self {
        Self {
            action: IntegrationAction::Ignored,
            task_id: task,
            reason: Some(reason.into()),
        }
    }
}
