//! The JSON of every payload is a public contract: each shape is pinned here.

use serde_json::{Value, json};
use uuid::Uuid;

use super::*;
use crate::model::{
    AgentId, AgentMode, AgentRole, Level, TaskId, TaskPriority, TaskStatus, UserRole,
};
use crate::model::{Event, PayerRef};

/// Decision D-70, written out (with D-101's escrow, refund and treasury events).
const D70: &str = "task.created task.updated task.transitioned task.done task.cancelled \
    task.assigned task.approved task.commented task.escalated task.dependency_added \
    task.dependency_removed template.created agent.registered agent.spawned agent.activated \
    agent.rejected agent.revoked agent.suspended agent.unsuspended agent.updated \
    agent.demoted agent.budget_updated agent.capability_added agent.capability_updated \
    agent.capability_removed reputation.changed credits.transferred credits.granted \
    credits.spent credits.earned credits.escrowed credits.refunded treasury.granted user.login user.login_failed user.logout user.created \
    user.password_changed user.totp_enabled user.totp_disabled api_key.created \
    api_key.revoked webhook.created webhook.updated webhook.deleted webhook.disabled \
    webhook.blocked inbound_webhook.created inbound_webhook.updated inbound_webhook.rotated \
    inbound_webhook.deleted \
    codehost_connection.created codehost_connection.updated codehost_connection.deleted \
    task.claimed task.lease_expired guard.updated \
    run.started run.finished run.stop_requested budget.exhausted \
    project.created project.updated project.archived \
    routine.created routine.updated routine.deleted routine.fired";

fn agent(n: u128) -> AgentId {
    AgentId::from_uuid(Uuid::from_u128(n))
}

fn task(n: u128) -> TaskId {
    TaskId::from_uuid(Uuid::from_u128(n))
}

fn id(n: u128) -> String {
    Uuid::from_u128(n).to_string()
}

fn level(n: i64) -> Level {
    Level::new(n).unwrap()
}

fn moved() -> TaskTransitioned {
    TaskTransitioned {
        from: TaskStatus::InProgress,
        to: TaskStatus::Done,
        reason: Some("shipped".into()),
    }
}

fn status_changed() -> AgentStatusChanged {
    AgentStatusChanged {
        agent_id: "w-1".into(),
        reason: None,
        breaker: None,
    }
}

fn webhook() -> WebhookChanged {
    WebhookChanged {
        name: "ci".into(),
        url: "https://hooks.example/x".into(),
        hook_type: "post".into(),
        events: vec!["*".into()],
    }
}

/// One sample of every event type and the JSON its payload must have.
#[allow(clippy::too_many_lines)] // one table of samples reads better than many functions
fn samples() -> Vec<(AuditEvent, Value)> {
    use AuditEvent as E;
    let moved_json = json!({"from": "in_progress", "to": "done", "reason": "shipped"});
    let status_json = json!({"agentId": "w-1", "reason": null});
    let hook_json = json!({"name": "ci", "url": "https://hooks.example/x", "hookType": "post", "events": ["*"]});
    let inbound = || InboundWebhookChanged { name: "crm".into() };
    let codehost = || CodeHostConnectionChanged {
        name: "acme".into(),
        installation_id: 42,
        repository: Some("acme/widgets".into()),
        enabled: true,
    };
    let codehost_json = json!({"name": "acme", "installationId": 42, "repository": "acme/widgets", "enabled": true});
    vec![
        (
            E::TaskCreated(TaskCreated {
                title: "Ship".into(),
                status: TaskStatus::Todo,
                priority: TaskPriority::High,
                assignee_id: Some(agent(1)),
                parent_task_id: None,
                project_id: None,
                reward: 10,
                reward_unfunded: None,
            }),
            json!({"title": "Ship", "status": "todo", "priority": "high", "assigneeId": id(1), "parentTaskId": null, "reward": 10}),
        ),
        (
            E::TaskUpdated(TaskUpdated {
                fields: vec!["title".into()],
            }),
            json!({"fields": ["title"]}),
        ),
        (E::TaskTransitioned(moved()), moved_json.clone()),
        (E::TaskDone(moved()), moved_json.clone()),
        (E::TaskCancelled(moved()), moved_json),
        (
            E::TaskAssigned(TaskAssigned {
                assignee_id: agent(2),
                previous_assignee_id: None,
            }),
            json!({"assigneeId": id(2), "previousAssigneeId": null}),
        ),
        (
            E::TaskApproved(TaskApproved {
                approved_by: Uuid::from_u128(3),
            }),
            json!({"approvedBy": id(3)}),
        ),
        (
            E::TaskCommented(TaskCommented {
                comment_id: Uuid::from_u128(4),
                parent_comment_id: None,
            }),
            json!({"commentId": id(4), "parentCommentId": null}),
        ),
        (
            E::TaskEscalated(TaskEscalated {
                escalation_id: Uuid::from_u128(5),
                reason: "SLA_BREACH".into(),
                from_agent_id: Some(agent(1)),
                to_agent_id: Some(agent(2)),
            }),
            json!({"escalationId": id(5), "reason": "SLA_BREACH", "fromAgentId": id(1), "toAgentId": id(2)}),
        ),
        (
            E::TaskDependencyAdded(TaskDependencyAdded {
                dependency_id: Uuid::from_u128(6),
                depends_on_task_id: task(7),
                blocking: true,
            }),
            json!({"dependencyId": id(6), "dependsOnTaskId": id(7), "blocking": true}),
        ),
        (
            E::TaskDependencyRemoved(TaskDependencyRemoved {
                dependency_id: Uuid::from_u128(6),
                depends_on_task_id: task(7),
            }),
            json!({"dependencyId": id(6), "dependsOnTaskId": id(7)}),
        ),
        (
            E::TemplateCreated(TemplateCreated {
                name: "weekly".into(),
                created_from_task_id: Some(task(7)),
            }),
            json!({"name": "weekly", "createdFromTaskId": id(7)}),
        ),
        (
            E::AgentRegistered(AgentRegistered {
                agent_id: "hr-acme".into(),
                role: AgentRole::Hr,
                level: level(10),
            }),
            json!({"agentId": "hr-acme", "role": "hr", "level": 10}),
        ),
        (
            E::AgentSpawned(AgentSpawned {
                agent_id: "w-2".into(),
                parent_id: agent(1),
                level: level(4),
                mode: AgentMode::Orchestrator,
            }),
            json!({"agentId": "w-2", "parentId": id(1), "level": 4, "mode": "orchestrator"}),
        ),
        (E::AgentActivated(status_changed()), status_json.clone()),
        (E::AgentRejected(status_changed()), status_json.clone()),
        (E::AgentRevoked(status_changed()), status_json.clone()),
        (E::AgentSuspended(status_changed()), status_json.clone()),
        (E::AgentUnsuspended(status_changed()), status_json),
        (
            E::AgentUpdated(AgentUpdated {
                fields: vec!["name".into(), "model".into()],
            }),
            json!({"fields": ["name", "model"]}),
        ),
        (
            E::AgentDemoted(AgentDemoted {
                from_level: level(5),
                to_level: level(4),
            }),
            json!({"fromLevel": 5, "toLevel": 4}),
        ),
        (
            E::AgentBudgetUpdated(AgentBudgetUpdated {
                budget_period_limit: Some(500),
            }),
            json!({"budgetPeriodLimit": 500}),
        ),
        (
            E::AgentCapabilityAdded(AgentCapabilityAdded {
                capability: "rust".into(),
                proficiency: "expert".into(),
            }),
            json!({"capability": "rust", "proficiency": "expert"}),
        ),
        (
            E::AgentCapabilityUpdated(AgentCapabilityUpdated {
                capability: "rust".into(),
                proficiency: "basic".into(),
            }),
            json!({"capability": "rust", "proficiency": "basic"}),
        ),
        (
            E::AgentCapabilityRemoved(AgentCapabilityRemoved {
                capability: "rust".into(),
            }),
            json!({"capability": "rust"}),
        ),
        (
            E::ReputationChanged(ReputationChanged {
                kind: "quality_penalty".into(),
                amount: -10,
                score_before: 55,
                score_after: 45,
                reason: Some("sloppy".into()),
                task_id: None,
            }),
            json!({"type": "quality_penalty", "amount": -10, "scoreBefore": 55, "scoreAfter": 45, "reason": "sloppy", "taskId": null}),
        ),
        (
            E::CreditsTransferred(CreditsTransferred {
                transfer_id: Uuid::from_u128(8),
                from_agent_id: agent(1),
                to_agent_id: agent(2),
                amount: 25,
                reason: None,
            }),
            json!({"transferId": id(8), "fromAgentId": id(1), "toAgentId": id(2), "amount": 25, "reason": null}),
        ),
        (
            E::CreditsGranted(CreditsGranted {
                amount: 100,
                reason: Some("seed".into()),
                balance_after: 100,
            }),
            json!({"amount": 100, "reason": "seed", "balanceAfter": 100}),
        ),
        (
            E::CreditsSpent(CreditsSpent {
                amount: 30,
                reason: None,
                balance_after: 70,
            }),
            json!({"amount": 30, "reason": null, "balanceAfter": 70}),
        ),
        (
            E::CreditsEarned(CreditsEarned {
                amount: 9,
                task_id: task(7),
                source: "reward".into(),
                balance_after: 79,
            }),
            json!({"amount": 9, "taskId": id(7), "source": "reward", "balanceAfter": 79}),
        ),
        (
            E::CreditsEscrowed(CreditsEscrowed {
                amount: 10,
                payer: PayerRef {
                    kind: "agent",
                    id: Uuid::from_u128(1),
                },
                balance_after: 69,
            }),
            json!({"amount": 10, "payer": {"kind": "agent", "id": id(1)}, "balanceAfter": 69}),
        ),
        (
            E::CreditsRefunded(CreditsRefunded {
                amount: 4,
                payer: PayerRef {
                    kind: "treasury",
                    id: Uuid::from_u128(10),
                },
                balance_after: 504,
                reason: "lowered",
            }),
            json!({"amount": 4, "payer": {"kind": "treasury", "id": id(10)}, "balanceAfter": 504, "reason": "lowered"}),
        ),
        (
            E::TreasuryGranted(TreasuryGranted {
                amount: 500,
                reason: Some("bootstrap".into()),
                balance_after: 500,
            }),
            json!({"amount": 500, "reason": "bootstrap", "balanceAfter": 500}),
        ),
        (
            E::UserLogin(UserLogin {
                method: "password".into(),
                two_factor: true,
            }),
            json!({"method": "password", "twoFactor": true}),
        ),
        (
            E::UserLoginFailed(UserLoginFailed {
                reason: "invalid_credentials".into(),
            }),
            json!({"reason": "invalid_credentials"}),
        ),
        (
            E::UserLogout(UserLogout {
                all_sessions: false,
            }),
            json!({"allSessions": false}),
        ),
        (
            E::UserCreated(UserCreated {
                email: "a@b.test".into(),
                role: UserRole::Viewer,
            }),
            json!({"email": "a@b.test", "role": "viewer"}),
        ),
        (E::UserPasswordChanged(UserSecurityChanged {}), json!({})),
        (E::UserTotpEnabled(UserSecurityChanged {}), json!({})),
        (E::UserTotpDisabled(UserSecurityChanged {}), json!({})),
        (
            E::ApiKeyCreated(ApiKeyCreated {
                name: "ci".into(),
                key_prefix: "msk_abcdefgh".into(),
                scopes: vec!["read".into()],
            }),
            json!({"name": "ci", "keyPrefix": "msk_abcdefgh", "scopes": ["read"]}),
        ),
        (
            E::ApiKeyRevoked(ApiKeyRevoked {
                key_prefix: "msk_abcdefgh".into(),
            }),
            json!({"keyPrefix": "msk_abcdefgh"}),
        ),
        (E::WebhookCreated(webhook()), hook_json.clone()),
        (E::WebhookUpdated(webhook()), hook_json),
        (
            E::WebhookDeleted(WebhookDeleted { name: "ci".into() }),
            json!({"name": "ci"}),
        ),
        (
            E::WebhookDisabled(WebhookDisabled {
                name: "ci".into(),
                consecutive_failures: 10,
                last_error: Some("HTTP 500".into()),
            }),
            json!({"name": "ci", "consecutiveFailures": 10, "lastError": "HTTP 500"}),
        ),
        (
            E::WebhookBlocked(WebhookBlocked {
                name: "gate".into(),
                blocked_event_type: "task.created".into(),
                reason: Some("freeze".into()),
            }),
            json!({"name": "gate", "blockedEventType": "task.created", "reason": "freeze"}),
        ),
        (E::InboundWebhookCreated(inbound()), json!({"name": "crm"})),
        (E::InboundWebhookUpdated(inbound()), json!({"name": "crm"})),
        (E::InboundWebhookRotated(inbound()), json!({"name": "crm"})),
        (E::InboundWebhookDeleted(inbound()), json!({"name": "crm"})),
        (
            E::CodeHostConnectionCreated(codehost()),
            codehost_json.clone(),
        ),
        (
            E::CodeHostConnectionUpdated(codehost()),
            codehost_json.clone(),
        ),
        (E::CodeHostConnectionDeleted(codehost()), codehost_json),
        (
            E::TaskClaimed(TaskClaimed {
                agent_id: agent(1),
                lease_expires_at: "2026-11-22T01:17:03.456Z".into(),
            }),
            json!({"agentId": id(1), "leaseExpiresAt": "2026-11-22T01:17:03.456Z"}),
        ),
        (
            E::TaskLeaseExpired(TaskLeaseExpired {
                agent_id: Some(agent(1)),
                lease_expired_at: "2026-11-22T01:17:03.456Z".into(),
            }),
            json!({"agentId": id(1), "leaseExpiredAt": "2026-11-22T01:17:03.456Z"}),
        ),
        (
            E::GuardUpdated(GuardUpdated {
                actions_per_minute: Some(600),
                credits_per_hour: None,
            }),
            json!({"actionsPerMinute": 600, "creditsPerHour": null}),
        ),
        (
            E::RunStarted(RunStarted {
                task_id: task(2),
                agent_id: agent(1),
                adapter: Some("claude-code".into()),
                model: None,
                reserved_credits: 50,
            }),
            json!({"taskId": id(2), "agentId": id(1), "adapter": "claude-code", "model": null,
                   "reservedCredits": 50}),
        ),
        (
            E::RunFinished(RunFinished {
                task_id: task(2),
                agent_id: agent(1),
                status: "succeeded",
                exit_code: Some(0),
                duration_ms: 1_500,
                usage: crate::model::RunUsage::default(),
            }),
            json!({"taskId": id(2), "agentId": id(1), "status": "succeeded", "exitCode": 0,
                   "durationMs": 1500, "usage": {"inputTokens": 0, "outputTokens": 0,
                   "cacheReadTokens": 0, "cacheWriteTokens": 0, "costMicrousd": null,
                   "unpricedTokens": 0, "credits": 0, "unfundedCredits": 0, "reports": 0,
                   "byModel": []}}),
        ),
        (
            E::RunStopRequested(RunStopRequested {
                task_id: task(2),
                agent_id: agent(1),
                reason: "requested",
                note: Some("over the time box".to_owned()),
            }),
            json!({"taskId": id(2), "agentId": id(1), "reason": "requested",
                   "note": "over the time box"}),
        ),
        (
            E::BudgetExhausted(BudgetExhausted {
                run_id: crate::model::RunId::from_uuid(Uuid::from_u128(7)),
                unfunded_credits: 12,
                balance_after: 0,
            }),
            json!({"runId": id(7), "unfundedCredits": 12, "balanceAfter": 0}),
        ),
        (
            E::ProjectCreated(ProjectCreated {
                name: "Launch".into(),
                due_at: Some("2026-12-31T00:00:00.000Z".into()),
            }),
            json!({"name": "Launch", "dueAt": "2026-12-31T00:00:00.000Z"}),
        ),
        (
            E::ProjectUpdated(ProjectUpdated {
                fields: vec!["goal".into()],
            }),
            json!({"fields": ["goal"]}),
        ),
        (
            E::ProjectArchived(ProjectArchived {
                name: "Launch".into(),
            }),
            json!({"name": "Launch"}),
        ),
        (
            E::RoutineCreated(RoutineCreated {
                name: "Triage".into(),
                schedule: "0 9 * * *".into(),
                timezone: "Europe/Berlin".into(),
            }),
            json!({"name": "Triage", "schedule": "0 9 * * *", "timezone": "Europe/Berlin"}),
        ),
        (
            E::RoutineUpdated(RoutineUpdated {
                fields: vec!["enabled".into()],
                paused_reason: Some("its owner is suspended".into()),
            }),
            json!({"fields": ["enabled"], "pausedReason": "its owner is suspended"}),
        ),
        (
            E::RoutineDeleted(RoutineDeleted {
                name: "Triage".into(),
            }),
            json!({"name": "Triage"}),
        ),
        (
            E::RoutineFired(RoutineFired {
                task_id: task(2),
                due_at: "2026-12-08T09:00:00.000Z".into(),
                manual: false,
            }),
            json!({"taskId": id(2), "dueAt": "2026-12-08T09:00:00.000Z", "manual": false}),
        ),
    ]
}

#[test]
fn a_suspension_by_the_runaway_guard_carries_its_breaker() {
    let event = AuditEvent::AgentSuspended(AgentStatusChanged {
        agent_id: "w-1".into(),
        reason: Some("runaway guard: ...".into()),
        breaker: Some(crate::model::BreakerTripped {
            kind: "action_rate",
            measured: 601,
            limit: 600,
            per: "minute",
            within_seconds: 42,
        }),
    });
    assert_eq!(
        event.payload(),
        json!({"agentId": "w-1", "reason": "runaway guard: ...", "breaker": {
            "kind": "action_rate", "measured": 601, "limit": 600, "per": "minute",
            "withinSeconds": 42}})
    );
    assert_eq!(event.severity(), EventSeverity::Warning);
}

#[test]
fn the_enum_lists_exactly_the_types_of_d70_in_order() {
    let expected: Vec<&str> = D70.split_whitespace().collect();
    assert_eq!(AuditEvent::TYPES, expected.as_slice());
}

#[test]
fn every_type_has_a_pinned_payload_shape() {
    let samples = samples();
    let types: Vec<&str> = samples.iter().map(|(e, _)| e.event_type()).collect();
    assert_eq!(types, AuditEvent::TYPES, "one sample per type, in order");
    for (event, expected) in samples {
        assert_eq!(event.payload(), expected, "{}", event.event_type());
    }
}

#[test]
fn entity_type_follows_the_family_of_the_type() {
    for (event, _) in samples() {
        let family = event.event_type().split('.').next().unwrap();
        let expected = match event.event_type() {
            // A reward's escrow moves are the task's (decision D-101).
            "credits.escrowed" | "credits.refunded" => "task",
            _ => match family {
                "reputation" | "credits" | "budget" => "agent",
                "guard" | "treasury" => "organization",
                other => other,
            },
        };
        assert_eq!(event.entity_type(), expected, "{}", event.event_type());
    }
}

#[test]
fn a_task_made_without_its_default_reward_says_so() {
    let created = |reward_unfunded| {
        AuditEvent::TaskCreated(TaskCreated {
            title: "Ship".into(),
            status: TaskStatus::Todo,
            priority: TaskPriority::High,
            assignee_id: None,
            parent_task_id: None,
            project_id: None,
            reward: 0,
            reward_unfunded,
        })
        .payload()
    };
    assert_eq!(
        created(Some(10)),
        json!({"title": "Ship", "status": "todo", "priority": "high", "assigneeId": null,
            "parentTaskId": null, "reward": 0, "rewardUnfunded": 10})
    );
    // Funded (or no default asked): the key is absent, not null.
    assert!(created(None).get("rewardUnfunded").is_none());
}

#[test]
fn a_stop_asked_without_a_note_has_no_note_key() {
    let asked = AuditEvent::RunStopRequested(RunStopRequested {
        task_id: task(2),
        agent_id: agent(1),
        reason: "budget",
        note: None,
    });
    assert_eq!(
        asked.payload(),
        json!({"taskId": id(2), "agentId": id(1), "reason": "budget"})
    );
}

#[test]
fn warnings_are_the_events_that_need_attention() {
    let warnings: Vec<&str> = samples()
        .iter()
        .filter(|(e, _)| e.severity() == EventSeverity::Warning)
        .map(|(e, _)| e.event_type())
        .collect();
    assert_eq!(
        warnings,
        [
            "task.escalated",
            "agent.revoked",
            "agent.suspended",
            "agent.demoted",
            "user.login_failed",
            "user.totp_disabled",
            "webhook.disabled",
            "webhook.blocked",
            "task.lease_expired",
            "run.stop_requested",
            "budget.exhausted"
        ]
    );
}

#[test]
fn a_record_carries_what_the_event_says() {
    let at = time::macros::datetime!(2026-11-22 01:02:03.456 UTC);
    let what = AuditEvent::TaskDone(moved());
    let event = Event::record(
        crate::model::EventId::from_uuid(Uuid::from_u128(9)),
        crate::model::OrgId::from_uuid(Uuid::from_u128(10)),
        Some(Uuid::from_u128(11)),
        Uuid::from_u128(12),
        at,
        &what,
    );
    assert_eq!(event.event_type, "task.done");
    assert_eq!(event.entity_type, "task");
    assert_eq!(event.entity_id, Uuid::from_u128(12));
    assert_eq!(event.actor_id, Some(Uuid::from_u128(11)));
    assert_eq!(event.severity, EventSeverity::Info);
    assert_eq!(event.payload, what.payload());
    assert_eq!(event.created_at, at);
}
