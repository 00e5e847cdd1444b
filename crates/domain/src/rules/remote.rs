//! What a remote A2A agent's report does to the Muster task it was handed, and the
//! token that proves a report comes from the agent the task was sent to.

use crate::model::{AgentId, TaskId, TaskOutcome, TaskStatus};
use crate::ports::MessageSigner;

/// A remote task's state, as the agent reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RemoteState {
    /// Taken in, not started.
    Submitted,
    /// Being worked on.
    Working,
    /// Waiting for more input from whoever sent it.
    InputRequired,
    /// Waiting for credentials.
    AuthRequired,
    /// Finished.
    Completed,
    /// Called off.
    Canceled,
    /// Attempted and failed.
    Failed,
    /// Turned down.
    Rejected,
}

/// Where a report moves the Muster task.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RemoteTarget {
    /// The status the task moves toward.
    pub status: TaskStatus,
    /// How it ended, for a failure or a refusal.
    pub outcome: Option<TaskOutcome>,
}

impl RemoteState {
    /// The status a report of this state moves the task toward; `None` for
    /// `submitted`, which is where an assigned task already is.
    ///
    /// ```
    /// use muster_domain::model::{TaskOutcome, TaskStatus};
    /// use muster_domain::rules::remote::RemoteState;
    /// assert_eq!(RemoteState::Submitted.target(), None);
    /// assert_eq!(RemoteState::Working.target().unwrap().status, TaskStatus::InProgress);
    /// let failed = RemoteState::Failed.target().unwrap();
    /// assert_eq!((failed.status, failed.outcome), (TaskStatus::Cancelled, Some(TaskOutcome::Failed)));
    /// ```
    pub const fn target(self) -> Option<RemoteTarget> {
        let (status, outcome) = match self {
            Self::Submitted => return None,
            Self::Working => (TaskStatus::InProgress, None),
            Self::InputRequired | Self::AuthRequired => (TaskStatus::Blocked, None),
            Self::Completed => (TaskStatus::Done, None),
            Self::Canceled => (TaskStatus::Cancelled, None),
            Self::Failed => (TaskStatus::Cancelled, Some(TaskOutcome::Failed)),
            Self::Rejected => (TaskStatus::Cancelled, Some(TaskOutcome::Rejected)),
        };
        Some(RemoteTarget { status, outcome })
    }

    /// Whether the remote task is over: nothing it reports later moves the task.
    pub const fn is_final(self) -> bool {
        matches!(
            self,
            Self::Completed | Self::Canceled | Self::Failed | Self::Rejected
        )
    }

    /// How the state is named in reasons and the audit log.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Submitted => "submitted",
            Self::Working => "working",
            Self::InputRequired => "input-required",
            Self::AuthRequired => "auth-required",
            Self::Completed => "completed",
            Self::Canceled => "canceled",
            Self::Failed => "failed",
            Self::Rejected => "rejected",
        }
    }
}

/// The token a remote agent is given with `task`, and must send back with every push
/// about it: the HMAC of the agent and task ids under the agent's channel secret. One
/// task's token says nothing about another's, and none is stored.
pub fn push_token(
    signer: &dyn MessageSigner,
    secret: &str,
    agent: AgentId,
    task: TaskId,
) -> String {
    signer.sign_hex(
        secret.as_bytes(),
        format!("muster-a2a-push:{agent}:{task}").as_bytes(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: [RemoteState; 8] = [
        RemoteState::Submitted,
        RemoteState::Working,
        RemoteState::InputRequired,
        RemoteState::AuthRequired,
        RemoteState::Completed,
        RemoteState::Canceled,
        RemoteState::Failed,
        RemoteState::Rejected,
    ];

    #[test]
    fn every_state_but_submitted_has_a_target_and_final_ones_close_the_task() {
        for state in ALL {
            match state.target() {
                None => assert_eq!(state, RemoteState::Submitted),
                Some(target) => {
                    assert_eq!(state.is_final(), target.status.is_terminal(), "{state:?}");
                    assert_eq!(
                        target.outcome.is_some(),
                        matches!(state, RemoteState::Failed | RemoteState::Rejected)
                    );
                }
            }
        }
    }

    #[test]
    fn waiting_states_block_the_task() {
        for state in [RemoteState::InputRequired, RemoteState::AuthRequired] {
            assert_eq!(state.target().map(|t| t.status), Some(TaskStatus::Blocked));
        }
    }

    struct Echo;
    impl MessageSigner for Echo {
        fn sign_hex(&self, key: &[u8], message: &[u8]) -> String {
            format!(
                "{}|{}",
                String::from_utf8_lossy(key),
                String::from_utf8_lossy(message)
            )
        }
    }

    #[test]
    fn the_token_binds_the_secret_the_agent_and_the_task() {
        let (agent, task) = (
            AgentId::from_uuid(uuid::Uuid::nil()),
            TaskId::from_uuid(uuid::Uuid::max()),
        );
        let token = push_token(&Echo, "s3", agent, task);
        assert_eq!(token, format!("s3|muster-a2a-push:{agent}:{task}"));
        assert_ne!(
            token,
            push_token(&Echo, "s3", agent, TaskId::from_uuid(uuid::Uuid::nil()))
        );
    }
}
