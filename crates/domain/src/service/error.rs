use std::fmt;

use uuid::Uuid;

use crate::ValidationError;
use crate::model::{AgentId, AgentMode, TaskId, TaskStatus};
use crate::policy::Forbidden;
use crate::ports::{BoxError, RepositoryError, UniqueKey};
use crate::rules::transition::TransitionError;

mod codes;

/// Why a use case did not happen. Each variant names the field, rule or conflict; the
/// inbound adapter (HTTP, CLI) picks the status, `Display` is the sentence for the
/// caller and [`code`](Self::code) its stable identifier (decision D-102).
/// [`Unavailable`](Self::Unavailable) and [`Internal`](Self::Internal) keep
/// their cause in [`source`](std::error::Error::source) for logs only.
#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    /// A value breaks a limit (400); the message names the field.
    #[error(transparent)]
    Invalid(#[from] ValidationError),
    /// Missing, or in another organization (404).
    #[error(transparent)]
    NotFound(#[from] NotFound),
    /// The actor may not do this (403); the variant names the rule.
    #[error(transparent)]
    Forbidden(#[from] Forbidden),
    /// The task workflow refuses the move.
    #[error(transparent)]
    Transition(#[from] TransitionError),
    /// The current state refuses the change (409).
    #[error(transparent)]
    Conflict(#[from] Conflict),
    /// Credentials offered to a use case are wrong (401).
    #[error(transparent)]
    Unauthorized(#[from] Unauthorized),
    /// Too many failed password or code checks of one account from one client address:
    /// refused for a while without a check (429, decision D-14).
    #[error("Too many failed logins; try again in {retry_after_secs} seconds")]
    Throttled {
        /// Seconds until a login may succeed again.
        retry_after_secs: u64,
    },
    /// The runaway guard refused the change and suspended its agent (429).
    #[error(transparent)]
    Runaway(#[from] crate::service::guard::Runaway),
    /// No agent holds the capabilities asked for (404, decision D-62).
    #[error("No agent matches the requested capabilities")]
    NoMatchingAgent,
    /// An inbound webhook key that is unknown, rotated away or disabled (404, D-80).
    #[error("Webhook key not found or disabled")]
    InboundKeyNotFound,
    /// A code-host event for an installation no connection has (404, decision D-87).
    #[error("No code-host connection for installation {0}")]
    UnknownInstallation(i64),
    /// Storage is temporarily unreachable (503).
    #[error("storage unavailable")]
    Unavailable(#[source] RepositoryError),
    /// A bug or an unexpected failure (500).
    #[error("internal failure")]
    Internal(#[source] BoxError),
}

impl ServiceError {
    /// An [`Internal`](Self::Internal) error from any cause.
    pub fn internal(cause: impl Into<BoxError>) -> Self {
        Self::Internal(cause.into())
    }
}

impl From<RepositoryError> for ServiceError {
    fn from(err: RepositoryError) -> Self {
        match err {
            RepositoryError::Duplicate(key) => Self::Conflict(Conflict::Duplicate(key)),
            RepositoryError::Unavailable(_) => Self::Unavailable(err),
            RepositoryError::Corrupt { .. } | RepositoryError::Internal(_) => {
                Self::Internal(Box::new(err))
            }
        }
    }
}

/// The kinds of things a caller can look up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Entity {
    /// A task.
    Task,
    /// The parent named by a new sub-task.
    ParentTask,
    /// An agent.
    Agent,
    /// An audit event.
    Event,
    /// A human user.
    User,
    /// An API key.
    ApiKey,
    /// An organization.
    Organization,
    /// The task named as what another task depends on.
    DependsOnTask,
    /// A dependency between two tasks.
    Dependency,
    /// A comment on a task.
    Comment,
    /// A task template.
    Template,
    /// An agent's capability.
    Capability,
    /// An outbound webhook.
    Webhook,
    /// An inbound webhook key.
    InboundKey,
    /// A code-host connection.
    CodeHostConnection,
    /// A run (decision D-106).
    Run,
    /// A project (issue 66).
    Project,
    /// A routine (decision D-108).
    Routine,
}

impl fmt::Display for Entity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Task | Self::DependsOnTask => "Task",
            Self::ParentTask => "Parent task",
            Self::Agent => "Agent",
            Self::Event => "Event",
            Self::User => "User",
            Self::ApiKey => "API key",
            Self::Organization => "Organization",
            Self::Dependency => "Dependency",
            Self::Comment => "Comment",
            Self::Template => "Template",
            Self::Capability => "Capability",
            Self::Webhook => "Webhook",
            Self::InboundKey => "Inbound webhook key",
            Self::CodeHostConnection => "Code-host connection",
            Self::Run => "Run",
            Self::Project => "Project",
            Self::Routine => "Routine",
        })
    }
}

/// A lookup that found nothing in the caller's organization.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("{entity} {id} not found")]
pub struct NotFound {
    /// What was looked for.
    pub entity: Entity,
    /// Its id.
    pub id: Uuid,
}

impl NotFound {
    /// `entity` with `id` was not found.
    pub fn new(entity: Entity, id: impl Into<Uuid>) -> Self {
        Self {
            entity,
            id: id.into(),
        }
    }
}

/// A change the current state does not allow (409).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Conflict {
    /// An assignee must be active (decision D-34).
    #[error("Agent {agent} is not active and cannot be assigned")]
    AssigneeNotActive {
        /// The agent.
        agent: AgentId,
    },
    /// Orchestrators and observers never execute tasks (decisions D-34, D-55).
    #[error("Agent {agent} is an {} and does not execute tasks", mode.as_str())]
    AssigneeDoesNotExecute {
        /// The agent.
        agent: AgentId,
        /// Its mode.
        mode: AgentMode,
    },
    /// Another request changed the entity between our read and our write.
    #[error("{entity} was changed by another request; reload it and retry")]
    ChangedConcurrently {
        /// What changed.
        entity: Entity,
    },
    /// Other changes kept moving what a change read while pre-hooks were asked about it
    /// (decision D-84): it was decided anew after each round of questions, then given up.
    #[error("Other changes kept overtaking this one while pre-hooks were asked about it; retry it")]
    OvertakenWhileAsking,
    /// The `agentId` asked for is taken (decision D-11).
    #[error("agentId {handle} is taken")]
    HandleTaken {
        /// The handle.
        handle: String,
    },
    /// Two-factor authentication is on already; disable it before setting it up again.
    #[error("two-factor authentication is already enabled")]
    TwoFactorEnabled,
    /// Two-factor authentication is not on.
    #[error("two-factor authentication is not enabled")]
    TwoFactorNotEnabled,
    /// `/auth/totp/verify` before `/auth/totp/setup`.
    #[error("two-factor setup has not been started; call /auth/totp/setup first")]
    TwoFactorNotStarted,
    /// A value that must be unique is already stored.
    #[error("{}", duplicate_message(.0))]
    Duplicate(UniqueKey),
    /// Blocking dependencies that are not done hold the task back (decision D-31).
    #[error("Task has open blocking dependencies: {}", list_ids(.tasks))]
    OpenDependencies {
        /// The tasks still to be done.
        tasks: Vec<TaskId>,
    },
    /// A task cannot depend on itself (decision D-32).
    #[error("A task cannot depend on itself")]
    SelfDependency,
    /// The new dependency would close a cycle (decision D-32).
    #[error("Dependency would create a cycle: {depends_on} already depends on {task}")]
    DependencyCycle {
        /// The task that would wait.
        task: TaskId,
        /// The task it would wait for.
        depends_on: TaskId,
    },
    /// A remote agent reported on a task that is no longer assigned to it.
    #[error("Task {task} is not assigned to this remote agent")]
    NotHandedOver {
        /// The task.
        task: TaskId,
    },
    /// A remote agent that is suspended or revoked reported on a task.
    #[error("Agent {agent} is not active; its reports are not taken")]
    RemoteAgentNotActive {
        /// The agent.
        agent: AgentId,
    },
    /// A heartbeat from an agent that does not hold the task's claim.
    #[error("Task is not claimed by you")]
    NotLeaseHolder,
    /// A heartbeat after the claim's lease ran out: the task is claimable again.
    #[error("Your lease on this task has expired; claim work again")]
    LeaseExpired,
    /// Approving a task that does not need it (decision D-33).
    #[error("Task does not require approval")]
    ApprovalNotRequired,
    /// Only a task in review is approved (decision D-33).
    #[error("Task must be in review to be approved; it is {}", .status.as_str())]
    NotInReview {
        /// Its status.
        status: TaskStatus,
    },
    /// A done or cancelled task is closed for changes (decision D-34).
    #[error("Task is {} and cannot be changed", .status.as_str())]
    TaskClosed {
        /// Its status.
        status: TaskStatus,
    },
    /// An escalation with nobody to hand the task to (decision D-37).
    #[error("No agent to escalate the task to")]
    NoEscalationTarget,
    /// Auto-assign found nobody good enough (decision D-36).
    #[error("No agent meets the coverage threshold")]
    NoCandidate,
    /// The spawning agent has as many active and pending children as its level allows
    /// (decision D-51).
    #[error("Spawn capacity reached ({current}/{max})")]
    SpawnCapacity {
        /// Its active and pending children.
        current: u32,
        /// What its level allows.
        max: u32,
    },
    /// The agent's status does not allow the change (decisions D-53, D-54).
    #[error("Agent is {} and cannot be {action}", .status.as_str())]
    AgentStatus {
        /// Its status.
        status: crate::model::AgentStatus,
        /// What was asked, as a past participle ("activated", "suspended").
        action: &'static str,
    },
    /// A transfer, grant or bonus names an agent that is not active (decision D-59).
    #[error("Agent {agent} is not active")]
    AgentNotActive {
        /// The agent.
        agent: AgentId,
    },
    /// A revoked agent stays revoked (decision D-54).
    #[error("Agent is revoked; revocation is permanent")]
    AlreadyRevoked,
    /// Demoting an agent at level 1 (decision D-64).
    #[error("Agent is already at level 1")]
    LowestLevel,
    /// The balance is below the amount (decision D-59).
    #[error("Insufficient balance: {balance} credits available, {amount} needed")]
    InsufficientBalance {
        /// The balance.
        balance: i64,
        /// The amount asked.
        amount: i64,
    },
    /// The treasury holds less than a reward asked of it (decision D-101).
    #[error("Insufficient treasury: {balance} credits available, {amount} needed")]
    TreasuryInsufficient {
        /// The treasury's balance.
        balance: i64,
        /// The amount asked.
        amount: i64,
    },
    /// The amount would exceed the period limit (decision D-59).
    #[error("Budget period limit exceeded: {remaining} credits remain in this period")]
    BudgetExceeded {
        /// What remains of the period's limit.
        remaining: i64,
    },
    /// A run starts, and a task is released, only while the task is in progress
    /// (decision D-106).
    #[error("Task is {}: a run starts, and a task is released, only while it is in progress", status.as_str())]
    TaskNotInProgress {
        /// The task's status.
        status: crate::model::TaskStatus,
    },
    /// Only the task's assignee starts a run of it or releases it (decision D-106).
    #[error("Task is not assigned to you: only its assignee starts a run or releases it")]
    NotTaskAssignee,
    /// The task already has an open run (decision D-106).
    #[error("Task already has an open run: {run}")]
    RunAlreadyOpen {
        /// The open run.
        run: crate::model::RunId,
    },
    /// The run is finished; it takes no more log, usage, heartbeat or finish.
    #[error("Run is {}: it takes no more changes", status.as_str())]
    RunClosed {
        /// Its final status.
        status: crate::model::RunStatus,
    },
    /// The agent's budget is spent, or cannot hold a reservation (decision D-106).
    #[error(
        "Budget exhausted: {spendable} credits can be spent now, {needed} needed; \
         fund the agent or wait for its next budget period"
    )]
    BudgetExhausted {
        /// What the agent can spend now.
        spendable: i64,
        /// What was needed (a reservation, or at least one credit).
        needed: i64,
    },
    /// The routine's owner may no longer create tasks (decision D-108).
    #[error("The routine's owner may no longer create tasks: {reason}")]
    RoutineOwnerInactive {
        /// Why.
        reason: String,
    },
    /// The project is archived: no task joins it and it is not edited (issue 66).
    #[error("Project {project} is archived: it takes no new tasks and no edits")]
    ProjectArchived {
        /// The project.
        project: crate::model::ProjectId,
    },
}

fn list_ids(ids: &[TaskId]) -> String {
    ids.iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

fn duplicate_message(key: &UniqueKey) -> &'static str {
    match key {
        UniqueKey::AgentHandle => "agentId is already taken",
        UniqueKey::UserEmail => "email is already in use in this organization",
        UniqueKey::DefaultOrganization => "another organization is already the default",
        UniqueKey::Dependency => "Task already depends on that task",
        UniqueKey::TemplateName => "A template with that name already exists",
        UniqueKey::Capability => "Agent already has that capability",
        UniqueKey::Installation => "A connection for that installation already exists",
        UniqueKey::OpenRun => "Task already has an open run",
        UniqueKey::RoutineFiring => "The routine already fired for that time",
        UniqueKey::Other(_) => "a record with the same unique values already exists",
    }
}

/// Credentials offered to a use case that do not hold (401). Messages never say which
/// part was wrong where that would help guessing (unknown e-mail vs. wrong password).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Unauthorized {
    /// Unknown e-mail, wrong password, or an organization that does not exist.
    #[error("Invalid email or password")]
    InvalidCredentials,
    /// A second-factor or recovery code that does not match, or was used already.
    #[error("Invalid two-factor code")]
    InvalidTwoFactorCode,
    /// A refresh token that is unknown, expired, revoked or already rotated.
    #[error("Invalid or expired refresh token")]
    InvalidRefreshToken,
    /// The password or code a signed-in route asks for (`/auth/password`, the TOTP
    /// routes) is wrong: one answer whichever it was, so a stolen access token learns
    /// nothing from it.
    #[error("Invalid password or code")]
    InvalidPasswordOrCode,
    /// Creating users needs an admin user (the contract answers 401 here).
    #[error("Only admin users may create users")]
    AdminRequired,
    /// An inbound request's `x-service-signature` does not match its body (D-80).
    #[error("Invalid webhook signature")]
    InvalidWebhookSignature,
    /// A code-host event whose `X-Host-Signature-256` does not match its body (D-87).
    #[error("Invalid code-host signature")]
    InvalidHostSignature,
    /// A chat request without the configured `X-Chat-Token` (D-86).
    #[error("Invalid chat token")]
    InvalidChatToken,
    /// A remote agent's push without the token it was given with the task.
    #[error("Invalid push notification token")]
    InvalidPushToken,
}
