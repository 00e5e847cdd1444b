//! Remote A2A agents: agents of another service that Muster hands tasks to over the
//! A2A protocol. Each is an agent of the organization (tasks are assigned to it like to
//! any other) with a hidden outbound hook: every assignment to it is delivered to its
//! A2A endpoint as a `SendMessage` that carries a push config pointing back to Muster,
//! and what it pushes back moves the task.

use super::AgentId;

/// The event types that hand a task to a remote agent: an assignment to it, a task
/// created already assigned to it, an escalation to it.
pub const REMOTE_EVENT_TYPES: [&str; 3] = ["task.assigned", "task.created", "task.escalated"];

/// Whether an event of `event_type` with `payload` may hand its task to a remote agent:
/// every assignment, a creation that named an assignee, an escalation that handed the
/// task to another agent. Stores look up remote channels only for these (and then only
/// for tasks whose assignee is a remote agent), so that the common creation costs
/// nothing more.
///
/// ```
/// use muster_domain::model::hands_over;
/// use serde_json::json;
/// assert!(hands_over("task.assigned", &json!({"assigneeId": "a"})));
/// assert!(hands_over("task.created", &json!({"assigneeId": "a"})));
/// assert!(!hands_over("task.created", &json!({"assigneeId": null})));
/// assert!(hands_over("task.escalated", &json!({"fromAgentId": "a", "toAgentId": "b"})));
/// assert!(!hands_over("task.escalated", &json!({"fromAgentId": "a", "toAgentId": "a"})));
/// assert!(!hands_over("task.escalated", &json!({"fromAgentId": "a", "toAgentId": null})));
/// assert!(!hands_over("task.transitioned", &json!({})));
/// ```
pub fn hands_over(event_type: &str, payload: &serde_json::Value) -> bool {
    match event_type {
        "task.assigned" => true,
        "task.created" => payload
            .get("assigneeId")
            .is_some_and(|assignee| !assignee.is_null()),
        "task.escalated" => payload
            .get("toAgentId")
            .is_some_and(|to| !to.is_null() && payload.get("fromAgentId") != Some(to)),
        _ => false,
    }
}

/// What makes a hook the hand-over channel of a remote agent.
#[derive(Clone, PartialEq, Eq)]
pub struct RemoteAgentLink {
    /// The agent that stands for the remote one.
    pub agent_id: AgentId,
    /// Where its Agent Card was read.
    pub card_url: String,
    /// Muster's own base URL as the remote agent reaches it (push configs point there).
    pub callback_url: String,
    /// The scheme and credentials sent to it in `Authorization`, sealed
    /// (`SecretVault` purpose [`RemoteAgentLink::AUTH_PURPOSE`]).
    pub sealed_auth: Option<Vec<u8>>,
}

impl RemoteAgentLink {
    /// The `SecretVault` purpose the `Authorization` is sealed under.
    pub const AUTH_PURPOSE: &'static str = "remote_agent_auth";

    /// Where the remote agent pushes updates of `task`: under the callback URL.
    pub fn push_url(&self, task: super::TaskId) -> String {
        format!(
            "{}/a2a/remote/{}/tasks/{task}/push",
            self.callback_url.trim_end_matches('/'),
            self.agent_id
        )
    }
}

impl std::fmt::Debug for RemoteAgentLink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteAgentLink")
            .field("agent_id", &self.agent_id)
            .field("card_url", &self.card_url)
            .field("callback_url", &self.callback_url)
            .field(
                "sealed_auth",
                &self.sealed_auth.as_ref().map(|_| "<sealed>"),
            )
            .finish()
    }
}
