use std::collections::BTreeSet;

use uuid::Uuid;

use super::*;
use crate::model::{AgentId, AgentMode, AgentStatus, ApiKeyScope, OrgId, TaskId, TaskStatus};
use crate::ports::RepositoryError;
use crate::rules::guard::{Breaker, Trip};

/// One error of every variant, with the status docs/api.md gives it and its code.
#[allow(clippy::too_many_lines)] // one table of samples reads better than many functions
fn every_variant() -> Vec<(ServiceError, u16, &'static str)> {
    let agent = AgentId::from_uuid(Uuid::nil());
    let task = TaskId::from_uuid(Uuid::nil());
    let conflict = |c: Conflict, code| (ServiceError::from(c), 409, code);
    let forbidden = |f: Forbidden, code| (ServiceError::from(f), 403, code);
    let unauthorized = |u: Unauthorized, code| (ServiceError::from(u), 401, code);
    let missing = |entity, code| (NotFound::new(entity, Uuid::nil()).into(), 404, code);
    let duplicate = |key, code| conflict(Conflict::Duplicate(key), code);
    vec![
        (
            ValidationError::new("title must not be empty").into(),
            400,
            "validation_failed",
        ),
        unauthorized(Unauthorized::InvalidCredentials, "invalid_credentials"),
        unauthorized(
            Unauthorized::InvalidTwoFactorCode,
            "invalid_two_factor_code",
        ),
        unauthorized(Unauthorized::InvalidRefreshToken, "invalid_refresh_token"),
        unauthorized(
            Unauthorized::InvalidPasswordOrCode,
            "invalid_password_or_code",
        ),
        unauthorized(Unauthorized::AdminRequired, "admin_required"),
        unauthorized(
            Unauthorized::InvalidWebhookSignature,
            "invalid_webhook_signature",
        ),
        unauthorized(Unauthorized::InvalidHostSignature, "invalid_host_signature"),
        unauthorized(Unauthorized::InvalidChatToken, "invalid_chat_token"),
        unauthorized(Unauthorized::InvalidPushToken, "invalid_push_token"),
        forbidden(Forbidden::ObserverIsReadOnly, "observer_read_only"),
        forbidden(Forbidden::ViewerIsReadOnly, "viewer_read_only"),
        forbidden(
            Forbidden::OrchestratorDoesNotExecute,
            "orchestrator_does_not_execute",
        ),
        forbidden(Forbidden::MissingScope(ApiKeyScope::Admin), "missing_scope"),
        forbidden(Forbidden::HrRoleRequired, "hr_role_required"),
        forbidden(
            Forbidden::PrivilegedRoleRequired,
            "privileged_role_required",
        ),
        forbidden(Forbidden::AdminUserRequired, "admin_user_required"),
        forbidden(Forbidden::UserRequired, "user_required"),
        forbidden(Forbidden::OtherOrganization, "other_organization"),
        forbidden(Forbidden::OwnRank, "own_rank"),
        forbidden(Forbidden::ApproverIsAssignee, "approver_is_assignee"),
        forbidden(Forbidden::AgentRequired, "agent_required"),
        forbidden(Forbidden::ParentRequired, "parent_required"),
        forbidden(Forbidden::OwnStatus, "own_status"),
        forbidden(Forbidden::CapabilityManager, "capability_manager_required"),
        forbidden(Forbidden::ReputationGiver, "reputation_giver_required"),
        forbidden(Forbidden::OwnReputation, "own_reputation"),
        forbidden(Forbidden::DemoterRequired, "demoter_required"),
        forbidden(Forbidden::DemoteNotBelow, "demote_not_below"),
        forbidden(Forbidden::GranterRequired, "granter_required"),
        forbidden(Forbidden::GuardAdminRequired, "guard_admin_required"),
        forbidden(Forbidden::TreasuryAdminRequired, "treasury_admin_required"),
        forbidden(Forbidden::RewardPayerRequired, "reward_payer_required"),
        forbidden(Forbidden::TransferRelation, "transfer_relation"),
        forbidden(Forbidden::RunAgentRequired, "run_agent_required"),
        forbidden(Forbidden::OverseerRequired, "overseer_required"),
        forbidden(Forbidden::RoutineOwnerRequired, "routine_owner_required"),
        forbidden(
            Forbidden::BlockedByHook {
                hook: "ci".to_owned(),
                reason: "no".to_owned(),
            },
            "blocked_by_hook",
        ),
        (
            TransitionError::ApprovalRequired.into(),
            403,
            "approval_required",
        ),
        missing(Entity::Task, "task_not_found"),
        missing(Entity::ParentTask, "parent_task_not_found"),
        missing(Entity::DependsOnTask, "depends_on_task_not_found"),
        missing(Entity::Agent, "agent_not_found"),
        missing(Entity::Event, "event_not_found"),
        missing(Entity::User, "user_not_found"),
        missing(Entity::ApiKey, "api_key_not_found"),
        missing(Entity::Organization, "organization_not_found"),
        missing(Entity::Dependency, "dependency_not_found"),
        missing(Entity::Comment, "comment_not_found"),
        missing(Entity::Template, "template_not_found"),
        missing(Entity::Capability, "capability_not_found"),
        missing(Entity::Webhook, "webhook_not_found"),
        missing(Entity::InboundKey, "inbound_key_not_found"),
        missing(Entity::CodeHostConnection, "code_host_connection_not_found"),
        missing(Entity::Run, "run_not_found"),
        missing(Entity::Project, "project_not_found"),
        missing(Entity::Routine, "routine_not_found"),
        (
            ServiceError::InboundKeyNotFound,
            404,
            "inbound_key_not_found",
        ),
        (ServiceError::NoMatchingAgent, 404, "no_matching_agent"),
        (
            ServiceError::UnknownInstallation(7),
            404,
            "unknown_installation",
        ),
        (
            TransitionError::NotAllowed {
                from: TaskStatus::Todo,
                to: TaskStatus::Done,
            }
            .into(),
            409,
            "transition_not_allowed",
        ),
        conflict(Conflict::AssigneeNotActive { agent }, "assignee_not_active"),
        conflict(
            Conflict::AssigneeDoesNotExecute {
                agent,
                mode: AgentMode::Observer,
            },
            "assignee_does_not_execute",
        ),
        conflict(
            Conflict::ChangedConcurrently {
                entity: Entity::Task,
            },
            "changed_concurrently",
        ),
        conflict(Conflict::OvertakenWhileAsking, "overtaken_while_asking"),
        conflict(
            Conflict::HandleTaken {
                handle: "a".to_owned(),
            },
            "handle_taken",
        ),
        conflict(Conflict::TwoFactorEnabled, "two_factor_enabled"),
        conflict(Conflict::TwoFactorNotEnabled, "two_factor_not_enabled"),
        conflict(Conflict::TwoFactorNotStarted, "two_factor_not_started"),
        duplicate(UniqueKey::AgentHandle, "handle_taken"),
        duplicate(UniqueKey::UserEmail, "email_taken"),
        duplicate(
            UniqueKey::DefaultOrganization,
            "default_organization_exists",
        ),
        duplicate(UniqueKey::Dependency, "dependency_exists"),
        duplicate(UniqueKey::TemplateName, "template_name_taken"),
        duplicate(UniqueKey::Capability, "capability_exists"),
        duplicate(UniqueKey::Installation, "installation_exists"),
        duplicate(UniqueKey::Other("pk".to_owned()), "duplicate"),
        conflict(
            Conflict::OpenDependencies { tasks: vec![task] },
            "open_dependencies",
        ),
        conflict(Conflict::SelfDependency, "self_dependency"),
        conflict(
            Conflict::DependencyCycle {
                task,
                depends_on: task,
            },
            "dependency_cycle",
        ),
        conflict(Conflict::NotHandedOver { task }, "not_handed_over"),
        conflict(
            Conflict::RemoteAgentNotActive { agent },
            "remote_agent_not_active",
        ),
        conflict(Conflict::NotLeaseHolder, "not_lease_holder"),
        conflict(Conflict::LeaseExpired, "lease_expired"),
        conflict(Conflict::ApprovalNotRequired, "approval_not_required"),
        conflict(
            Conflict::NotInReview {
                status: TaskStatus::Todo,
            },
            "not_in_review",
        ),
        conflict(
            Conflict::TaskClosed {
                status: TaskStatus::Done,
            },
            "task_closed",
        ),
        conflict(Conflict::NoEscalationTarget, "no_escalation_target"),
        conflict(Conflict::NoCandidate, "no_candidate"),
        conflict(
            Conflict::SpawnCapacity { current: 3, max: 3 },
            "spawn_capacity_reached",
        ),
        conflict(
            Conflict::AgentStatus {
                status: AgentStatus::Revoked,
                action: "activated",
            },
            "agent_status_not_allowed",
        ),
        conflict(
            Conflict::AgentNotActive { agent },
            "target_agent_not_active",
        ),
        conflict(Conflict::AlreadyRevoked, "already_revoked"),
        conflict(Conflict::LowestLevel, "lowest_level"),
        conflict(
            Conflict::InsufficientBalance {
                balance: 1,
                amount: 2,
            },
            "insufficient_balance",
        ),
        conflict(
            Conflict::TreasuryInsufficient {
                balance: 1,
                amount: 2,
            },
            "treasury_insufficient",
        ),
        conflict(Conflict::BudgetExceeded { remaining: 0 }, "budget_exceeded"),
        conflict(
            Conflict::TaskNotInProgress {
                status: TaskStatus::Todo,
            },
            "task_not_in_progress",
        ),
        conflict(Conflict::NotTaskAssignee, "not_task_assignee"),
        conflict(
            Conflict::RunAlreadyOpen {
                run: crate::model::RunId::from_uuid(Uuid::nil()),
            },
            "run_already_open",
        ),
        duplicate(UniqueKey::OpenRun, "run_already_open"),
        duplicate(UniqueKey::RoutineFiring, "routine_already_fired"),
        conflict(
            Conflict::RunClosed {
                status: crate::model::RunStatus::Lost,
            },
            "run_closed",
        ),
        conflict(
            Conflict::BudgetExhausted {
                spendable: 0,
                needed: 1,
            },
            "budget_exhausted",
        ),
        conflict(
            Conflict::ProjectArchived {
                project: crate::model::ProjectId::from_uuid(Uuid::nil()),
            },
            "project_archived",
        ),
        conflict(
            Conflict::RoutineOwnerInactive {
                reason: "its owner agent is suspended".into(),
            },
            "routine_owner_inactive",
        ),
        (
            ServiceError::Throttled {
                retry_after_secs: 60,
            },
            429,
            "rate_limited",
        ),
        (
            Runaway {
                org_id: OrgId::from_uuid(Uuid::nil()),
                agent_id: agent,
                trip: Trip {
                    breaker: Breaker::ActionRate,
                    measured: 61,
                    limit: 60,
                    elapsed_secs: 30,
                },
            }
            .into(),
            429,
            "runaway_guard",
        ),
        (
            ServiceError::Unavailable(RepositoryError::unavailable("down")),
            503,
            "unavailable",
        ),
        (ServiceError::internal("bug"), 500, "internal"),
    ]
}

/// `(status, code)` of every row of docs/api.md's table of error codes.
fn documented() -> BTreeSet<(u16, String)> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/api.md");
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    text.lines()
        .filter_map(|line| {
            let mut cells = line.strip_prefix('|')?.split('|').map(str::trim);
            let status = cells.next()?.parse().ok()?;
            let code = cells.next()?.strip_prefix('`')?.strip_suffix('`')?;
            Some((status, code.to_owned()))
        })
        .collect()
}

#[test]
fn every_variant_has_the_code_and_status_docs_api_md_gives_it() {
    let documented = documented();
    for (err, status, code) in every_variant() {
        assert_eq!(err.code(), code, "{err:?}");
        assert!(
            documented.contains(&(status, code.to_owned())),
            "docs/api.md has no row `| {status} | `{code}` |` (for {err:?})"
        );
    }
}

#[test]
fn the_list_of_codes_is_exactly_what_the_variants_answer() {
    let answered: BTreeSet<&str> = every_variant().iter().map(|(e, _, _)| e.code()).collect();
    let listed: BTreeSet<&str> = ServiceError::CODES.iter().copied().collect();
    assert_eq!(
        listed.len(),
        ServiceError::CODES.len(),
        "a code listed twice"
    );
    assert_eq!(answered, listed);
}

#[test]
fn codes_are_snake_case() {
    for code in ServiceError::CODES {
        let snake = !code.is_empty()
            && code.starts_with(|c: char| c.is_ascii_lowercase())
            && !code.ends_with('_')
            && !code.contains("__")
            && code
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
        assert!(snake, "{code:?} is not snake_case");
    }
}

#[test]
fn a_code_never_depends_on_the_message() {
    let low = Conflict::InsufficientBalance {
        balance: 0,
        amount: 5,
    };
    let high = Conflict::InsufficientBalance {
        balance: 4,
        amount: 1_000,
    };
    assert_ne!(low.to_string(), high.to_string());
    assert_eq!(low.code(), high.code());
    let hook = |reason: &str| Forbidden::BlockedByHook {
        hook: "ci".to_owned(),
        reason: reason.to_owned(),
    };
    assert_eq!(hook("a").code(), hook("b").code());
}
