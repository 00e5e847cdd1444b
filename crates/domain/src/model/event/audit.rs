//! Every audit event type of decision D-70, each with its payload struct. Once webhooks
//! deliver them, these payloads are a public contract: change them only additively.

use serde_json::{Map, Value};

use super::EventSeverity;
use super::payloads::{
    AgentBudgetUpdated, AgentCapabilityAdded, AgentCapabilityRemoved, AgentCapabilityUpdated,
    AgentDemoted, AgentRegistered, AgentSpawned, AgentStatusChanged, AgentUpdated, ApiKeyCreated,
    ApiKeyRevoked, BudgetExhausted, CodeHostConnectionChanged, CreditsEarned, CreditsEscrowed,
    CreditsGranted, CreditsRefunded, CreditsSpent, CreditsTransferred, GuardUpdated,
    InboundWebhookChanged, ProjectArchived, ProjectCreated, ProjectUpdated, ReputationChanged,
    RoutineCreated, RoutineDeleted, RoutineFired, RoutineUpdated, RunFinished, RunStarted,
    RunStopRequested, TaskApproved, TaskAssigned, TaskClaimed, TaskClosed, TaskCommented,
    TaskCreated, TaskDependencyAdded, TaskDependencyRemoved, TaskEscalated, TaskLeaseExpired,
    TaskTransitioned, TaskUpdated, TemplateCreated, TreasuryGranted, UserCreated, UserLogin,
    UserLoginFailed, UserLogout, UserSecurityChanged, WebhookBlocked, WebhookChanged,
    WebhookDeleted, WebhookDisabled,
};

macro_rules! audit_events {
    ($(
        $(#[$doc:meta])*
        $variant:ident($payload:ty) = $name:literal, $const_name:ident, $entity:literal, $severity:ident;
    )+) => {
        /// Something that happened, as one of the event types of decision D-70 with its
        /// typed payload. [`Event::record`](super::Event::record) turns it into the stored
        /// audit record.
        #[derive(Debug, Clone, PartialEq)]
        pub enum AuditEvent {
            $($(#[$doc])* $variant($payload),)+
        }

        impl AuditEvent {
            /// Every dotted type name, in the order of decision D-70.
            pub const TYPES: &'static [&'static str] = &[$($name),+];

            /// The dotted type name, such as `task.created`.
            pub const fn event_type(&self) -> &'static str {
                match self { $(Self::$variant(_) => $name),+ }
            }

            /// The kind of entity it is about (`task`, `agent`, `user`, ...).
            pub const fn entity_type(&self) -> &'static str {
                match self { $(Self::$variant(_) => $entity),+ }
            }

            /// How serious it is.
            pub const fn severity(&self) -> EventSeverity {
                match self { $(Self::$variant(_) => EventSeverity::$severity),+ }
            }

            /// The payload as a JSON object.
            pub fn payload(&self) -> Value {
                // Payloads are plain structs with string keys: serializing cannot fail.
                let value = match self { $(Self::$variant(p) => serde_json::to_value(p)),+ };
                value.unwrap_or_else(|_| Value::Object(Map::new()))
            }
        }

        /// The dotted event type names (decision D-70), for filters and tests.
        pub mod event_types {
            $(#[doc = concat!("`", $name, "`")] pub const $const_name: &str = $name;)+
        }
    };
}

audit_events! {
    /// A task was created.
    TaskCreated(TaskCreated) = "task.created", TASK_CREATED, "task", Info;
    /// A task's fields were edited.
    TaskUpdated(TaskUpdated) = "task.updated", TASK_UPDATED, "task", Info;
    /// A task moved from one status to another.
    TaskTransitioned(TaskTransitioned) = "task.transitioned", TASK_TRANSITIONED, "task", Info;
    /// A task reached `done` (written with `task.transitioned`).
    TaskDone(TaskClosed) = "task.done", TASK_DONE, "task", Info;
    /// A task was cancelled (written with `task.transitioned`).
    TaskCancelled(TaskClosed) = "task.cancelled", TASK_CANCELLED, "task", Info;
    /// A task got an assignee.
    TaskAssigned(TaskAssigned) = "task.assigned", TASK_ASSIGNED, "task", Info;
    /// A task requiring approval was approved.
    TaskApproved(TaskApproved) = "task.approved", TASK_APPROVED, "task", Info;
    /// A comment was added to a task.
    TaskCommented(TaskCommented) = "task.commented", TASK_COMMENTED, "task", Info;
    /// A task was escalated to another agent.
    TaskEscalated(TaskEscalated) = "task.escalated", TASK_ESCALATED, "task", Warning;
    /// A task got a dependency.
    TaskDependencyAdded(TaskDependencyAdded) = "task.dependency_added", TASK_DEPENDENCY_ADDED, "task", Info;
    /// A task lost a dependency.
    TaskDependencyRemoved(TaskDependencyRemoved) = "task.dependency_removed", TASK_DEPENDENCY_REMOVED, "task", Info;
    /// A task template was stored.
    TemplateCreated(TemplateCreated) = "template.created", TEMPLATE_CREATED, "template", Info;
    /// An agent was registered (by HR, or by `muster bootstrap`).
    AgentRegistered(AgentRegistered) = "agent.registered", AGENT_REGISTERED, "agent", Info;
    /// An agent spawned a child, pending activation.
    AgentSpawned(AgentSpawned) = "agent.spawned", AGENT_SPAWNED, "agent", Info;
    /// A pending agent was activated.
    AgentActivated(AgentStatusChanged) = "agent.activated", AGENT_ACTIVATED, "agent", Info;
    /// A pending agent was rejected (and deleted).
    AgentRejected(AgentStatusChanged) = "agent.rejected", AGENT_REJECTED, "agent", Info;
    /// An agent was revoked for good.
    AgentRevoked(AgentStatusChanged) = "agent.revoked", AGENT_REVOKED, "agent", Warning;
    /// An agent was suspended.
    AgentSuspended(AgentStatusChanged) = "agent.suspended", AGENT_SUSPENDED, "agent", Warning;
    /// A suspended agent was reactivated.
    AgentUnsuspended(AgentStatusChanged) = "agent.unsuspended", AGENT_UNSUSPENDED, "agent", Info;
    /// An agent's fields were edited.
    AgentUpdated(AgentUpdated) = "agent.updated", AGENT_UPDATED, "agent", Info;
    /// An agent lost a level.
    AgentDemoted(AgentDemoted) = "agent.demoted", AGENT_DEMOTED, "agent", Warning;
    /// An agent's budget limit changed.
    AgentBudgetUpdated(AgentBudgetUpdated) = "agent.budget_updated", AGENT_BUDGET_UPDATED, "agent", Info;
    /// An agent gained a capability.
    AgentCapabilityAdded(AgentCapabilityAdded) = "agent.capability_added", AGENT_CAPABILITY_ADDED, "agent", Info;
    /// An agent's proficiency in a capability changed.
    AgentCapabilityUpdated(AgentCapabilityUpdated) = "agent.capability_updated", AGENT_CAPABILITY_UPDATED, "agent", Info;
    /// An agent lost a capability.
    AgentCapabilityRemoved(AgentCapabilityRemoved) = "agent.capability_removed", AGENT_CAPABILITY_REMOVED, "agent", Info;
    /// An agent's reputation score moved.
    ReputationChanged(ReputationChanged) = "reputation.changed", REPUTATION_CHANGED, "agent", Info;
    /// Credits moved from one agent to another.
    CreditsTransferred(CreditsTransferred) = "credits.transferred", CREDITS_TRANSFERRED, "agent", Info;
    /// Credits were created for an agent.
    CreditsGranted(CreditsGranted) = "credits.granted", CREDITS_GRANTED, "agent", Info;
    /// An agent spent credits.
    CreditsSpent(CreditsSpent) = "credits.spent", CREDITS_SPENT, "agent", Info;
    /// An agent earned credits for a finished task (or a management fee).
    CreditsEarned(CreditsEarned) = "credits.earned", CREDITS_EARNED, "agent", Info;
    /// A task's reward went from its payer into the task's escrow (decision D-101).
    CreditsEscrowed(CreditsEscrowed) = "credits.escrowed", CREDITS_ESCROWED, "task", Info;
    /// Credits came back from a task's escrow to its payer.
    CreditsRefunded(CreditsRefunded) = "credits.refunded", CREDITS_REFUNDED, "task", Info;
    /// Credits were created in the organization's treasury.
    TreasuryGranted(TreasuryGranted) = "treasury.granted", TREASURY_GRANTED, "organization", Info;
    /// A user signed in.
    UserLogin(UserLogin) = "user.login", USER_LOGIN, "user", Info;
    /// A sign-in failed.
    UserLoginFailed(UserLoginFailed) = "user.login_failed", USER_LOGIN_FAILED, "user", Warning;
    /// A user signed out.
    UserLogout(UserLogout) = "user.logout", USER_LOGOUT, "user", Info;
    /// A user was created.
    UserCreated(UserCreated) = "user.created", USER_CREATED, "user", Info;
    /// A user changed their password.
    UserPasswordChanged(UserSecurityChanged) = "user.password_changed", USER_PASSWORD_CHANGED, "user", Info;
    /// A user turned two-factor authentication on.
    UserTotpEnabled(UserSecurityChanged) = "user.totp_enabled", USER_TOTP_ENABLED, "user", Info;
    /// A user turned two-factor authentication off.
    UserTotpDisabled(UserSecurityChanged) = "user.totp_disabled", USER_TOTP_DISABLED, "user", Warning;
    /// An API key was created.
    ApiKeyCreated(ApiKeyCreated) = "api_key.created", API_KEY_CREATED, "api_key", Info;
    /// An API key was revoked.
    ApiKeyRevoked(ApiKeyRevoked) = "api_key.revoked", API_KEY_REVOKED, "api_key", Info;
    /// An outbound webhook was registered.
    WebhookCreated(WebhookChanged) = "webhook.created", WEBHOOK_CREATED, "webhook", Info;
    /// An outbound webhook was edited.
    WebhookUpdated(WebhookChanged) = "webhook.updated", WEBHOOK_UPDATED, "webhook", Info;
    /// An outbound webhook was deleted.
    WebhookDeleted(WebhookDeleted) = "webhook.deleted", WEBHOOK_DELETED, "webhook", Info;
    /// An outbound webhook was switched off after repeated failures.
    WebhookDisabled(WebhookDisabled) = "webhook.disabled", WEBHOOK_DISABLED, "webhook", Warning;
    /// A pre-hook blocked an action.
    WebhookBlocked(WebhookBlocked) = "webhook.blocked", WEBHOOK_BLOCKED, "webhook", Warning;
    /// An inbound webhook key was created.
    InboundWebhookCreated(InboundWebhookChanged) = "inbound_webhook.created", INBOUND_WEBHOOK_CREATED, "inbound_webhook", Info;
    /// An inbound webhook key was edited.
    InboundWebhookUpdated(InboundWebhookChanged) = "inbound_webhook.updated", INBOUND_WEBHOOK_UPDATED, "inbound_webhook", Info;
    /// An inbound webhook key's secret was rotated.
    InboundWebhookRotated(InboundWebhookChanged) = "inbound_webhook.rotated", INBOUND_WEBHOOK_ROTATED, "inbound_webhook", Info;
    /// An inbound webhook key was deleted.
    InboundWebhookDeleted(InboundWebhookChanged) = "inbound_webhook.deleted", INBOUND_WEBHOOK_DELETED, "inbound_webhook", Info;
    /// A code-host connection was created (beyond D-70's list: every change is audited).
    CodeHostConnectionCreated(CodeHostConnectionChanged) = "codehost_connection.created", CODEHOST_CONNECTION_CREATED, "codehost_connection", Info;
    /// A code-host connection was switched on or off.
    CodeHostConnectionUpdated(CodeHostConnectionChanged) = "codehost_connection.updated", CODEHOST_CONNECTION_UPDATED, "codehost_connection", Info;
    /// A code-host connection was deleted, with its links.
    CodeHostConnectionDeleted(CodeHostConnectionChanged) = "codehost_connection.deleted", CODEHOST_CONNECTION_DELETED, "codehost_connection", Info;
    /// An agent claimed a task, with a lease (beyond D-70's list).
    TaskClaimed(TaskClaimed) = "task.claimed", TASK_CLAIMED, "task", Info;
    /// A claim's lease ran out: the task went back to `todo`, unassigned.
    TaskLeaseExpired(TaskLeaseExpired) = "task.lease_expired", TASK_LEASE_EXPIRED, "task", Warning;
    /// An organization's runaway-guard thresholds changed (beyond D-70's list).
    GuardUpdated(GuardUpdated) = "guard.updated", GUARD_UPDATED, "organization", Info;
    /// An agent started a run of a task (decision D-106).
    RunStarted(RunStarted) = "run.started", RUN_STARTED, "run", Info;
    /// A run ended, with its usage totals.
    RunFinished(RunFinished) = "run.finished", RUN_FINISHED, "run", Info;
    /// A run was asked to stop.
    RunStopRequested(RunStopRequested) = "run.stop_requested", RUN_STOP_REQUESTED, "run", Warning;
    /// A run's usage cost more than its agent could still spend.
    BudgetExhausted(BudgetExhausted) = "budget.exhausted", BUDGET_EXHAUSTED, "agent", Warning;
    /// A project was created (issue 66).
    ProjectCreated(ProjectCreated) = "project.created", PROJECT_CREATED, "project", Info;
    /// A project's name, goal, description or due date changed.
    ProjectUpdated(ProjectUpdated) = "project.updated", PROJECT_UPDATED, "project", Info;
    /// A project was archived.
    ProjectArchived(ProjectArchived) = "project.archived", PROJECT_ARCHIVED, "project", Info;
    /// A routine was created (decision D-108).
    RoutineCreated(RoutineCreated) = "routine.created", ROUTINE_CREATED, "routine", Info;
    /// A routine changed, or the service paused it.
    RoutineUpdated(RoutineUpdated) = "routine.updated", ROUTINE_UPDATED, "routine", Info;
    /// A routine was deleted.
    RoutineDeleted(RoutineDeleted) = "routine.deleted", ROUTINE_DELETED, "routine", Info;
    /// A routine created a task for a due time.
    RoutineFired(RoutineFired) = "routine.fired", ROUTINE_FIRED, "routine", Info;
}

#[cfg(test)]
#[path = "audit_tests.rs"]
mod tests;
