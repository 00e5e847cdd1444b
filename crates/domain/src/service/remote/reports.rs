//! A remote agent's reports on the tasks handed to it (its A2A push notifications):
//! checked against the token it was given with the task, then applied as moves of the
//! Muster task by the agent itself, along the shortest legal path (decision D-88), so
//! every rule of the task API holds and the audit log names it.

use super::RemoteAgentService;
use crate::ValidationError;
use crate::model::{Actor, ActorKind, AgentId, AgentStatus, Reason, TaskId, TaskResult, Webhook};
use crate::ports::transact;
use crate::rules::constant_time;
use crate::rules::remote::{RemoteState, push_token};
use crate::service::tasks::Closing;
use crate::service::{Conflict, Entity, IntegrationMove, NotFound, ServiceError, Unauthorized};

/// What a remote agent reported about a task.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteReport {
    /// The remote task's state.
    pub state: RemoteState,
    /// The text of its status message, if any: the reason of the move, and the task's
    /// result when it completed.
    pub message: Option<String>,
}

impl RemoteAgentService {
    /// Applies `report` from the remote agent `agent` about `task`, once `token` is
    /// found to be the one it was given with the task: before that, nothing is said
    /// about the agent, the task or the report (an unknown agent is a wrong token). Then
    /// a report that could not be read is 400 and one without a state (`Ok(None)`) is
    /// taken as it is. A closed task stays as it is; a task no longer assigned to the
    /// agent is refused (409), as is a report from an agent that is not active; while
    /// the task waits in review, only a final state moves it. Answers what the move
    /// came to (`None` for `submitted` and stateless reports).
    pub async fn report(
        &self,
        agent: AgentId,
        task: TaskId,
        token: &str,
        report: Result<Option<RemoteReport>, String>,
    ) -> Result<Option<IntegrationMove>, ServiceError> {
        let channel = self
            .hooks
            .remote_channel(agent)
            .await?
            .ok_or(Unauthorized::InvalidPushToken)?;
        self.check_token(&channel, agent, task, token)?;
        let Some(report) = report.map_err(ValidationError::new)? else {
            return Ok(None);
        };
        let org = channel.org_id;
        let remote = self
            .agent_repo
            .get(org, agent)
            .await?
            .ok_or(NotFound::new(Entity::Agent, agent))?;
        if remote.status != AgentStatus::Active {
            return Err(Conflict::RemoteAgentNotActive { agent }.into());
        }
        let actor = Actor {
            org_id: org,
            kind: ActorKind::Agent {
                id: agent,
                role: remote.role,
                mode: remote.mode,
                level: remote.level,
            },
        };
        let Some(target) = report.state.target() else {
            // `submitted`: the task is where a hand-over leaves it. Still, the agent
            // must be the assignee.
            self.assigned(&actor, task).await?;
            return Ok(None);
        };
        let reason = reason(&report)?;
        let result = report
            .message
            .filter(|_| report.state == RemoteState::Completed)
            .and_then(|text| TaskResult::new(fit(&text, TaskResult::MAX_CHARS)).ok());
        let tasks = self.tasks.clone();
        let closing = Closing {
            result,
            outcome: target.outcome,
            assignee: Some(agent),
            review_holds: true,
        };
        let moved = transact(self.uow.as_ref(), move |tx| {
            Box::pin(async move {
                tasks
                    .advance_closing_in(tx, &actor, task, (target.status, reason), closing)
                    .await
            })
        })
        .await?;
        Ok(Some(moved))
    }

    fn check_token(
        &self,
        channel: &Webhook,
        agent: AgentId,
        task: TaskId,
        token: &str,
    ) -> Result<(), ServiceError> {
        let secret = channel
            .sealed_secret
            .as_deref()
            .map(|sealed| {
                self.vault
                    .open(Webhook::SECRET_PURPOSE, channel.id.as_uuid(), sealed)
                    .map_err(ServiceError::internal)
            })
            .transpose()?
            .ok_or(Unauthorized::InvalidPushToken)?;
        let expected = push_token(self.signer.as_ref(), &secret, agent, task);
        if constant_time::eq(expected.as_bytes(), token.as_bytes()) {
            Ok(())
        } else {
            Err(Unauthorized::InvalidPushToken.into())
        }
    }

    async fn assigned(&self, actor: &Actor, task: TaskId) -> Result<(), ServiceError> {
        let current = self.tasks.get(actor, task).await?;
        if current.assignee_id == actor.agent_id() {
            Ok(())
        } else {
            Err(Conflict::NotHandedOver { task }.into())
        }
    }
}

/// "The remote agent reported <state>: <message>", within a reason's length.
fn reason(report: &RemoteReport) -> Result<Reason, ServiceError> {
    let text = match report.message.as_deref().map(str::trim) {
        Some(message) if !message.is_empty() => {
            format!(
                "the remote agent reported {}: {message}",
                report.state.as_str()
            )
        }
        _ => format!("the remote agent reported {}", report.state.as_str()),
    };
    Ok(Reason::new(fit(
        &text.replace('\0', ""),
        Reason::MAX_CHARS,
    ))?)
}

/// `text` cut to at most `max` characters.
fn fit(text: &str, max: usize) -> String {
    text.chars().take(max).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasons_name_the_state_and_fit() {
        let short = reason(&RemoteReport {
            state: RemoteState::Working,
            message: Some(" on it ".into()),
        })
        .unwrap();
        assert_eq!(short.as_str(), "the remote agent reported working: on it");
        let bare = reason(&RemoteReport {
            state: RemoteState::Failed,
            message: Some("  ".into()),
        })
        .unwrap();
        assert_eq!(bare.as_str(), "the remote agent reported failed");
        let long = reason(&RemoteReport {
            state: RemoteState::Completed,
            message: Some("x".repeat(5_000)),
        })
        .unwrap();
        assert_eq!(long.as_str().chars().count(), Reason::MAX_CHARS);
    }
}
