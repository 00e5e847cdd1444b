//! Stable error codes (decision D-102): one `snake_case` identifier per kind of refusal,
//! sent as `code` beside the contract's `statusCode`, `message` and `error`. A code is
//! API: it never changes once published and is never derived from a message (messages
//! may be reworded). docs/api.md lists every code with its status and meaning; a test
//! holds the list and this module to each other.
//!
//! Two ways to the same refusal share one code: `Conflict::HandleTaken` (checked before
//! the write) and `Conflict::Duplicate(UniqueKey::AgentHandle)` (the store's constraint,
//! when a concurrent request won) are both `handle_taken`; a management lookup of an
//! inbound key and an ingestion through an unknown key are both `inbound_key_not_found`.

use super::{Conflict, Entity, NotFound, ServiceError, Unauthorized};
use crate::ValidationError;
use crate::policy::Forbidden;
use crate::ports::UniqueKey;
use crate::rules::transition::TransitionError;
use crate::service::guard::Runaway;

impl ServiceError {
    /// Every code [`code`](Self::code) can answer, in the order of docs/api.md's table.
    pub const CODES: &'static [&'static str] = &[
        ValidationError::CODE,
        // 401
        "invalid_credentials",
        "invalid_two_factor_code",
        "invalid_refresh_token",
        "invalid_password_or_code",
        "admin_required",
        "invalid_webhook_signature",
        "invalid_host_signature",
        "invalid_chat_token",
        "invalid_push_token",
        // 403
        "observer_read_only",
        "viewer_read_only",
        "orchestrator_does_not_execute",
        "missing_scope",
        "hr_role_required",
        "privileged_role_required",
        "admin_user_required",
        "user_required",
        "other_organization",
        "own_rank",
        "approver_is_assignee",
        "agent_required",
        "parent_required",
        "own_status",
        "capability_manager_required",
        "reputation_giver_required",
        "own_reputation",
        "demoter_required",
        "demote_not_below",
        "granter_required",
        "guard_admin_required",
        "treasury_admin_required",
        "reward_payer_required",
        "transfer_relation",
        "blocked_by_hook",
        "approval_required",
        "run_agent_required",
        "overseer_required",
        "routine_owner_required",
        // 404
        "task_not_found",
        "parent_task_not_found",
        "depends_on_task_not_found",
        "agent_not_found",
        "event_not_found",
        "user_not_found",
        "api_key_not_found",
        "organization_not_found",
        "dependency_not_found",
        "comment_not_found",
        "template_not_found",
        "capability_not_found",
        "webhook_not_found",
        "inbound_key_not_found",
        "code_host_connection_not_found",
        "run_not_found",
        "project_not_found",
        "routine_not_found",
        "no_matching_agent",
        "unknown_installation",
        // 409
        "transition_not_allowed",
        "assignee_not_active",
        "assignee_does_not_execute",
        "changed_concurrently",
        "overtaken_while_asking",
        "handle_taken",
        "two_factor_enabled",
        "two_factor_not_enabled",
        "two_factor_not_started",
        "email_taken",
        "default_organization_exists",
        "dependency_exists",
        "template_name_taken",
        "capability_exists",
        "installation_exists",
        "duplicate",
        "open_dependencies",
        "self_dependency",
        "dependency_cycle",
        "not_handed_over",
        "remote_agent_not_active",
        "not_lease_holder",
        "lease_expired",
        "approval_not_required",
        "not_in_review",
        "task_closed",
        "no_escalation_target",
        "no_candidate",
        "spawn_capacity_reached",
        "agent_status_not_allowed",
        "target_agent_not_active",
        "already_revoked",
        "lowest_level",
        "insufficient_balance",
        "treasury_insufficient",
        "budget_exceeded",
        "task_not_in_progress",
        "not_task_assignee",
        "run_already_open",
        "run_closed",
        "budget_exhausted",
        "project_archived",
        "routine_already_fired",
        "routine_owner_inactive",
        // 429
        "rate_limited",
        Runaway::CODE,
        // 5xx
        "unavailable",
        "internal",
    ];

    /// The stable code of this refusal (decision D-102).
    pub fn code(&self) -> &'static str {
        match self {
            Self::Invalid(err) => err.code(),
            Self::NotFound(err) => err.code(),
            Self::Forbidden(err) => err.code(),
            Self::Transition(err) => err.code(),
            Self::Conflict(err) => err.code(),
            Self::Unauthorized(err) => err.code(),
            Self::Throttled { .. } => "rate_limited",
            Self::Runaway(err) => err.code(),
            Self::NoMatchingAgent => "no_matching_agent",
            Self::InboundKeyNotFound => Entity::InboundKey.not_found_code(),
            Self::UnknownInstallation(_) => "unknown_installation",
            Self::Unavailable(_) => "unavailable",
            Self::Internal(_) => "internal",
        }
    }
}

impl ValidationError {
    /// The code of every validation failure: the message names the field and the rule.
    pub const CODE: &'static str = "validation_failed";

    /// [`CODE`](Self::CODE).
    pub const fn code(&self) -> &'static str {
        Self::CODE
    }
}

impl Runaway {
    /// The code of a change the runaway guard refused (the message names the breaker).
    pub const CODE: &'static str = "runaway_guard";

    /// [`CODE`](Self::CODE).
    pub const fn code(&self) -> &'static str {
        Self::CODE
    }
}

impl Entity {
    /// The code of a lookup of this entity that found nothing: `<entity>_not_found`.
    pub const fn not_found_code(self) -> &'static str {
        match self {
            Self::Task => "task_not_found",
            Self::ParentTask => "parent_task_not_found",
            Self::DependsOnTask => "depends_on_task_not_found",
            Self::Agent => "agent_not_found",
            Self::Event => "event_not_found",
            Self::User => "user_not_found",
            Self::ApiKey => "api_key_not_found",
            Self::Organization => "organization_not_found",
            Self::Dependency => "dependency_not_found",
            Self::Comment => "comment_not_found",
            Self::Template => "template_not_found",
            Self::Capability => "capability_not_found",
            Self::Webhook => "webhook_not_found",
            Self::InboundKey => "inbound_key_not_found",
            Self::CodeHostConnection => "code_host_connection_not_found",
            Self::Run => "run_not_found",
            Self::Project => "project_not_found",
            Self::Routine => "routine_not_found",
        }
    }
}

impl NotFound {
    /// The code: what was looked for, `task_not_found` and the like. Another
    /// organization's id answers the same code as a missing one (decision D-8).
    pub const fn code(&self) -> &'static str {
        self.entity.not_found_code()
    }
}

impl TransitionError {
    /// The code: `transition_not_allowed` (409) or `approval_required` (403).
    pub const fn code(&self) -> &'static str {
        match self {
            Self::NotAllowed { .. } => "transition_not_allowed",
            Self::ApprovalRequired => "approval_required",
        }
    }
}

impl Unauthorized {
    /// The code of the credential that did not hold.
    pub const fn code(&self) -> &'static str {
        match self {
            Self::InvalidCredentials => "invalid_credentials",
            Self::InvalidTwoFactorCode => "invalid_two_factor_code",
            Self::InvalidRefreshToken => "invalid_refresh_token",
            Self::InvalidPasswordOrCode => "invalid_password_or_code",
            Self::AdminRequired => "admin_required",
            Self::InvalidWebhookSignature => "invalid_webhook_signature",
            Self::InvalidHostSignature => "invalid_host_signature",
            Self::InvalidChatToken => "invalid_chat_token",
            Self::InvalidPushToken => "invalid_push_token",
        }
    }
}

impl Forbidden {
    /// The code of the rule that refused the actor.
    pub const fn code(&self) -> &'static str {
        match self {
            Self::ObserverIsReadOnly => "observer_read_only",
            Self::ViewerIsReadOnly => "viewer_read_only",
            Self::OrchestratorDoesNotExecute => "orchestrator_does_not_execute",
            Self::MissingScope(_) => "missing_scope",
            Self::HrRoleRequired => "hr_role_required",
            Self::PrivilegedRoleRequired => "privileged_role_required",
            Self::AdminUserRequired => "admin_user_required",
            Self::UserRequired => "user_required",
            Self::OtherOrganization => "other_organization",
            Self::OwnRank => "own_rank",
            Self::ApproverIsAssignee => "approver_is_assignee",
            Self::AgentRequired => "agent_required",
            Self::ParentRequired => "parent_required",
            Self::OwnStatus => "own_status",
            Self::CapabilityManager => "capability_manager_required",
            Self::ReputationGiver => "reputation_giver_required",
            Self::OwnReputation => "own_reputation",
            Self::DemoterRequired => "demoter_required",
            Self::DemoteNotBelow => "demote_not_below",
            Self::GranterRequired => "granter_required",
            Self::GuardAdminRequired => "guard_admin_required",
            Self::TreasuryAdminRequired => "treasury_admin_required",
            Self::RewardPayerRequired => "reward_payer_required",
            Self::TransferRelation => "transfer_relation",
            Self::RunAgentRequired => "run_agent_required",
            Self::OverseerRequired => "overseer_required",
            Self::RoutineOwnerRequired => "routine_owner_required",
            Self::BlockedByHook { .. } => "blocked_by_hook",
        }
    }
}

impl Conflict {
    /// The code of the state that refused the change.
    pub const fn code(&self) -> &'static str {
        match self {
            Self::AssigneeNotActive { .. } => "assignee_not_active",
            Self::AssigneeDoesNotExecute { .. } => "assignee_does_not_execute",
            Self::ChangedConcurrently { .. } => "changed_concurrently",
            Self::OvertakenWhileAsking => "overtaken_while_asking",
            Self::HandleTaken { .. } => "handle_taken",
            Self::TwoFactorEnabled => "two_factor_enabled",
            Self::TwoFactorNotEnabled => "two_factor_not_enabled",
            Self::TwoFactorNotStarted => "two_factor_not_started",
            Self::Duplicate(key) => duplicate_code(key),
            Self::OpenDependencies { .. } => "open_dependencies",
            Self::SelfDependency => "self_dependency",
            Self::DependencyCycle { .. } => "dependency_cycle",
            Self::NotHandedOver { .. } => "not_handed_over",
            Self::RemoteAgentNotActive { .. } => "remote_agent_not_active",
            Self::NotLeaseHolder => "not_lease_holder",
            Self::LeaseExpired => "lease_expired",
            Self::ApprovalNotRequired => "approval_not_required",
            Self::NotInReview { .. } => "not_in_review",
            Self::TaskClosed { .. } => "task_closed",
            Self::NoEscalationTarget => "no_escalation_target",
            Self::NoCandidate => "no_candidate",
            Self::SpawnCapacity { .. } => "spawn_capacity_reached",
            Self::AgentStatus { .. } => "agent_status_not_allowed",
            Self::AgentNotActive { .. } => "target_agent_not_active",
            Self::AlreadyRevoked => "already_revoked",
            Self::LowestLevel => "lowest_level",
            Self::InsufficientBalance { .. } => "insufficient_balance",
            Self::TreasuryInsufficient { .. } => "treasury_insufficient",
            Self::BudgetExceeded { .. } => "budget_exceeded",
            Self::TaskNotInProgress { .. } => "task_not_in_progress",
            Self::NotTaskAssignee => "not_task_assignee",
            Self::RunAlreadyOpen { .. } => "run_already_open",
            Self::RunClosed { .. } => "run_closed",
            Self::BudgetExhausted { .. } => "budget_exhausted",
            Self::ProjectArchived { .. } => "project_archived",
            Self::RoutineOwnerInactive { .. } => "routine_owner_inactive",
        }
    }
}

/// The code of a broken uniqueness rule: what is taken.
const fn duplicate_code(key: &UniqueKey) -> &'static str {
    match key {
        UniqueKey::AgentHandle => "handle_taken",
        UniqueKey::UserEmail => "email_taken",
        UniqueKey::DefaultOrganization => "default_organization_exists",
        UniqueKey::Dependency => "dependency_exists",
        UniqueKey::TemplateName => "template_name_taken",
        UniqueKey::Capability => "capability_exists",
        UniqueKey::Installation => "installation_exists",
        UniqueKey::OpenRun => "run_already_open",
        UniqueKey::RoutineFiring => "routine_already_fired",
        UniqueKey::Other(_) => "duplicate",
    }
}

#[cfg(test)]
mod tests;
