//! `AgentService` against mocked ports: registering, spawning, demoting, setting a
//! budget and scoring reputation — who may, what is written in one unit of work, and
//! that a refusal writes nothing. Credits are in `agent_money.rs`.

use crate::common;

use common::agents::{
    SECRET, agent, agent_caller, agent_id, as_agent, child_of, current, key_user, read_only,
    recorded, sealed, service_on, service_with, stale, store, today, unused_sealer,
};
use common::{EARLIER, NOW, types, user_actor};
use futures_executor::block_on;
use muster_domain::model::{
    Actor, AgentHandle, AgentMode, AgentRole, AgentStatus, ApiKeyScope, CapabilityName, FeePct,
    Level, Metadata, Proficiency, Reason, ReputationKind, UserRole,
};
use muster_domain::policy::Forbidden;
use muster_domain::ports::{Lock, MockTransaction, Outcome, RepositoryError, UniqueKey};
use muster_domain::service::{Conflict, NewAgent, NewChild, ScoreChange, ServiceError};
use serde_json::json;
use uuid::Uuid;

/// The id the first `new_id` of [`common::ids`] answers.
fn first_id() -> Uuid {
    Uuid::from_u128(0x1000)
}

fn rust() -> CapabilityName {
    CapabilityName::new("Rust").unwrap()
}

fn sql() -> CapabilityName {
    CapabilityName::new("sql").unwrap()
}

fn new_agent(role: AgentRole) -> NewAgent {
    NewAgent {
        level: Some(Level::new(4).unwrap()),
        model: Some("model-y".into()),
        role,
        mode: AgentMode::Orchestrator,
        management_fee_pct: FeePct::new(5).unwrap(),
        budget_period_limit: Some(250),
        capabilities: vec![(rust(), Proficiency::Expert), (sql(), Proficiency::Basic)],
        metadata: Metadata::new(json!({ "team": "blue" })).unwrap(),
        ..NewAgent::new(AgentHandle::new("scout-1").unwrap(), "Scout".into())
    }
}

fn new_child(level: Option<i64>) -> NewChild {
    NewChild {
        level,
        budget_period_limit: Some(40),
        capabilities: vec![(rust(), Proficiency::Standard)],
        ..NewChild::new(AgentHandle::new("child-1").unwrap(), "Child".into())
    }
}

fn hr() -> Actor {
    agent_caller(90, 10, AgentRole::Hr)
}

// ---------------------------------------------------------------------------------------
// register

#[test]
fn registering_writes_the_agent_its_capabilities_and_its_event_in_one_run() {
    let (tx, record) = store(Vec::new());
    let (service, uow) = service_on(tx);

    let registered = block_on(service.register(&hr(), new_agent(AgentRole::Worker))).unwrap();

    assert_eq!(uow.outcomes(), [Outcome::Committed], "one unit of work");
    let r = recorded(&record);
    assert_eq!(
        r.calls,
        ["insert_agent", "insert_capabilities", "append_events"]
    );
    let stored = &r.inserted[0];
    let agent = &stored.agent;
    assert_eq!(agent.id.as_uuid(), first_id());
    assert_eq!(agent.org_id, common::org());
    assert_eq!(agent.handle.as_str(), "scout-1");
    assert_eq!(agent.level.get(), 4);
    assert_eq!(agent.model.as_deref(), Some("model-y"));
    assert_eq!(
        (agent.role, agent.mode, agent.status),
        (
            AgentRole::Worker,
            AgentMode::Orchestrator,
            AgentStatus::Active
        )
    );
    assert_eq!(agent.parent_id, None);
    assert_eq!(agent.current_balance, 0);
    assert_eq!(agent.budget_period_limit, Some(250));
    assert_eq!(agent.budget_period_start, today());
    assert_eq!(agent.management_fee_pct.get(), 5);
    assert_eq!(agent.reputation_score, 50);
    assert_eq!(agent.metadata["team"], "blue");
    assert_eq!(agent.created_at, NOW);
    assert_eq!(stored.encrypted_secret, sealed(agent.id, SECRET));
    let capabilities: Vec<(&str, Proficiency)> = r
        .capabilities
        .iter()
        .map(|c| (c.name.as_str(), c.proficiency))
        .collect();
    assert_eq!(
        capabilities,
        [("rust", Proficiency::Expert), ("sql", Proficiency::Basic)]
    );
    assert!(r.capabilities.iter().all(|c| c.agent_id == agent.id));
    assert_eq!(types(&r.events), ["agent.registered"]);
    let event = &r.events[0];
    assert_eq!(event.entity_id, agent.id.as_uuid());
    assert_eq!(event.actor_id, Some(agent_id(90).as_uuid()));
    assert_eq!(event.payload["agentId"], "scout-1");
    assert_eq!(event.payload["level"], 4);
    // The caller gets the stored agent and the secret, once.
    assert_eq!(registered.secret.expose(), SECRET);
    assert_eq!(&registered.view.agent, agent);
    assert_eq!(registered.view.capabilities, r.capabilities);
}

#[test]
fn registration_refusals_write_nothing() {
    let observer_hr = {
        let mut stored = agent(91, 10);
        stored.role = AgentRole::Hr;
        stored.mode = AgentMode::Observer;
        as_agent(&stored)
    };
    let cases: Vec<(Actor, AgentRole, ServiceError)> = vec![
        (
            agent_caller(2, 9, AgentRole::Worker),
            AgentRole::Worker,
            Forbidden::HrRoleRequired.into(),
        ),
        (
            hr(),
            AgentRole::Founder,
            Forbidden::PrivilegedRoleRequired.into(),
        ),
        (
            hr(),
            AgentRole::Admin,
            Forbidden::PrivilegedRoleRequired.into(),
        ),
        (
            observer_hr,
            AgentRole::Worker,
            Forbidden::ObserverIsReadOnly.into(),
        ),
        (
            user_actor(UserRole::Viewer),
            AgentRole::Worker,
            Forbidden::ViewerIsReadOnly.into(),
        ),
        (
            user_actor(UserRole::Operator),
            AgentRole::Worker,
            Forbidden::HrRoleRequired.into(),
        ),
        (
            key_user(UserRole::Admin, ApiKeyScope::Write),
            AgentRole::Worker,
            Forbidden::MissingScope(ApiKeyScope::Admin).into(),
        ),
    ];
    for (actor, role, expected) in cases {
        let (tx, _) = read_only(Vec::new());
        let (service, uow) = service_with(tx, unused_sealer());
        let err = block_on(service.register(&actor, new_agent(role))).unwrap_err();
        assert_eq!(
            err.to_string(),
            expected.to_string(),
            "{actor:?} making a {role:?}"
        );
        assert!(matches!(err, ServiceError::Forbidden(_)), "{err:?}");
        assert!(uow.outcomes().is_empty(), "refused before any transaction");
    }
    // A capability named twice is refused before anything is written too.
    let (tx, _) = read_only(Vec::new());
    let (service, uow) = service_with(tx, unused_sealer());
    let mut twice = new_agent(AgentRole::Worker);
    twice.capabilities.push((rust(), Proficiency::Basic));
    let err = block_on(service.register(&hr(), twice)).unwrap_err();
    assert!(matches!(err, ServiceError::Invalid(_)), "{err:?}");
    assert_eq!(err.to_string(), "capabilities must not repeat \"rust\"");
    assert!(uow.outcomes().is_empty());
}

#[test]
fn founder_and_admin_agents_are_made_by_founders_admins_and_admin_users() {
    let makers = [
        agent_caller(3, 10, AgentRole::Founder),
        agent_caller(4, 5, AgentRole::Admin),
        user_actor(UserRole::Admin),
        key_user(UserRole::Admin, ApiKeyScope::Admin),
    ];
    for maker in makers {
        for role in [AgentRole::Founder, AgentRole::Admin] {
            let (tx, record) = store(Vec::new());
            let (service, uow) = service_on(tx);
            let made = block_on(service.register(&maker, new_agent(role))).unwrap();
            assert_eq!(made.view.agent.role, role, "{maker:?}");
            assert_eq!(uow.outcomes(), [Outcome::Committed]);
            assert_eq!(recorded(&record).inserted.len(), 1);
        }
    }
}

#[test]
fn a_taken_handle_is_handle_taken_and_nothing_else_is_written() {
    let mut tx = MockTransaction::new();
    tx.expect_insert_agent()
        .times(1)
        .returning(|_| Err(RepositoryError::Duplicate(UniqueKey::AgentHandle)));
    tx.expect_insert_capabilities().never();
    tx.expect_append_events().never();
    let (service, uow) = service_on(tx);

    let err = block_on(service.register(&hr(), new_agent(AgentRole::Worker))).unwrap_err();

    assert!(
        matches!(
            &err,
            ServiceError::Conflict(Conflict::HandleTaken { handle }) if handle == "scout-1"
        ),
        "{err:?}"
    );
    assert_eq!(err.to_string(), "agentId scout-1 is taken");
    assert_eq!(uow.outcomes(), [Outcome::RolledBack]);
}

// ---------------------------------------------------------------------------------------
// spawn

/// A transaction holding `parent` whose live children number `children`, recording
/// the count among the calls.
fn spawning(
    parent: muster_domain::model::Agent,
    children: u32,
    writes: bool,
) -> (MockTransaction, common::agents::Record) {
    let parent_id = parent.id;
    let (mut tx, record) = if writes {
        store(vec![parent])
    } else {
        read_only(vec![parent])
    };
    let sink = record.clone();
    tx.expect_live_children()
        .withf(move |o, p| *o == common::org() && *p == parent_id)
        .returning(move |_, _| {
            sink.lock().unwrap().calls.push("live_children");
            Ok(children)
        });
    (tx, record)
}

#[test]
fn spawning_writes_a_pending_child_of_the_caller_with_the_parent_locked() {
    let parent = agent(1, 5);
    let caller = as_agent(&parent);
    let (tx, record) = spawning(parent, 4, true);
    let (service, uow) = service_on(tx);

    let spawned = block_on(service.spawn(&caller, new_child(None))).unwrap();

    assert_eq!(uow.outcomes(), [Outcome::Committed]);
    let r = recorded(&record);
    // The parent row is locked before its children are counted.
    assert_eq!(r.locks, [(agent_id(1), Lock::Update)]);
    assert_eq!(
        r.calls,
        [
            "agent",
            "live_children",
            "insert_agent",
            "insert_capabilities",
            "append_events"
        ]
    );
    let child = &r.inserted[0].agent;
    assert_eq!(child.status, AgentStatus::Pending);
    assert_eq!(child.parent_id, Some(agent_id(1)));
    assert_eq!(child.level.get(), 4, "one below the parent by default");
    assert_eq!(
        child.model.as_deref(),
        Some("model-x"),
        "the parent's model"
    );
    assert_eq!(child.role, AgentRole::Worker);
    assert_eq!(child.budget_period_limit, Some(40));
    assert_eq!(child.budget_period_start, today());
    assert_eq!(r.inserted[0].encrypted_secret, sealed(child.id, SECRET));
    assert_eq!(r.capabilities[0].agent_id, child.id);
    assert_eq!(types(&r.events), ["agent.spawned"]);
    assert_eq!(r.events[0].entity_id, child.id.as_uuid());
    assert_eq!(r.events[0].actor_id, Some(agent_id(1).as_uuid()));
    assert_eq!(r.events[0].payload["parentId"], agent_id(1).to_string());
    assert_eq!(spawned.secret.expose(), SECRET);
    assert_eq!(&spawned.view.agent, child);
}

#[test]
fn a_full_parent_cannot_spawn_and_nothing_is_inserted() {
    // Level 3 allows 2 children; level 2 none at all.
    for (level, children, max) in [(3, 2, 2), (3, 7, 2), (2, 0, 0)] {
        let parent = agent(1, level);
        let caller = as_agent(&parent);
        let (tx, record) = spawning(parent, children, false);
        let (service, uow) = service_on(tx);

        let err = block_on(service.spawn(&caller, new_child(Some(1)))).unwrap_err();

        assert!(
            matches!(
                err,
                ServiceError::Conflict(Conflict::SpawnCapacity { current, max: m })
                    if current == children && m == max
            ),
            "{err:?}"
        );
        assert_eq!(
            err.to_string(),
            format!("Spawn capacity reached ({children}/{max})")
        );
        assert_eq!(uow.outcomes(), [Outcome::RolledBack]);
        assert!(!recorded(&record).wrote());
    }
}

#[test]
fn a_child_must_rank_below_its_parent() {
    // Refused from the caller's level before anything is locked or drawn.
    for (asked, message) in [
        (5, "level must be below the parent's level (5)"),
        (9, "level must be below the parent's level (5)"),
        (0, "level must be between 1 and 10"),
    ] {
        let parent = agent(1, 5);
        let (tx, record) = read_only(vec![parent.clone()]);
        let (service, uow) = service_with(tx, unused_sealer());
        let err = block_on(service.spawn(&as_agent(&parent), new_child(Some(asked)))).unwrap_err();
        assert!(matches!(err, ServiceError::Invalid(_)), "{err:?}");
        assert_eq!(err.to_string(), message);
        assert!(uow.outcomes().is_empty());
        assert!(recorded(&record).locks.is_empty());
    }
    // The stored level decides: a parent demoted to 3 since it signed in as 5 cannot
    // make a level-4 child.
    let caller = as_agent(&agent(1, 5));
    let (tx, record) = spawning(agent(1, 3), 0, false);
    let (service, uow) = service_on(tx);
    let err = block_on(service.spawn(&caller, new_child(Some(4)))).unwrap_err();
    assert_eq!(
        err.to_string(),
        "level must be below the parent's level (3)"
    );
    assert_eq!(uow.outcomes(), [Outcome::RolledBack]);
    assert!(!recorded(&record).wrote());
    // Any level below is fine.
    let (tx, record) = spawning(agent(1, 5), 0, true);
    let (service, _) = service_on(tx);
    block_on(service.spawn(&caller, new_child(Some(1)))).unwrap();
    assert_eq!(recorded(&record).inserted[0].agent.level.get(), 1);
}

#[test]
fn only_agents_that_may_write_spawn() {
    let observer = {
        let mut stored = agent(1, 9);
        stored.mode = AgentMode::Observer;
        as_agent(&stored)
    };
    let cases: Vec<(Actor, Forbidden)> = vec![
        (user_actor(UserRole::Admin), Forbidden::AgentRequired),
        (user_actor(UserRole::Operator), Forbidden::AgentRequired),
        (
            key_user(UserRole::Admin, ApiKeyScope::Admin),
            Forbidden::AgentRequired,
        ),
        (observer, Forbidden::ObserverIsReadOnly),
    ];
    for (actor, expected) in cases {
        let (tx, _) = read_only(Vec::new());
        let (service, uow) = service_with(tx, unused_sealer());
        let err = block_on(service.spawn(&actor, new_child(None))).unwrap_err();
        assert!(
            matches!(&err, ServiceError::Forbidden(f) if *f == expected),
            "{actor:?}: {err:?}"
        );
        assert!(uow.outcomes().is_empty());
    }
}

// ---------------------------------------------------------------------------------------
// demote

#[test]
fn demoting_lowers_the_level_and_costs_reputation_in_one_run() {
    let target = agent(2, 5);
    let (tx, record) = store(vec![target]);
    let (service, uow) = service_on(tx);
    let admin = user_actor(UserRole::Admin);

    let demoted = block_on(service.demote(&admin, agent_id(2), None)).unwrap();

    assert_eq!(uow.outcomes(), [Outcome::Committed]);
    assert_eq!(demoted.level.get(), 4);
    assert_eq!(demoted.reputation_score, 45);
    let r = recorded(&record);
    assert_eq!(r.locks, [(agent_id(2), Lock::Update)]);
    assert_eq!(r.updated.len(), 1);
    assert_eq!(r.updated[0].0, demoted);
    assert_eq!(r.updated[0].1, NOW);
    assert_eq!(r.reputation.len(), 1);
    assert_eq!(r.reputation[0].kind, ReputationKind::LevelDown);
    assert_eq!(r.reputation[0].amount, -5);
    assert_eq!(r.reputation[0].reason, "demoted from level 5 to 4");
    assert_eq!(types(&r.events), ["agent.demoted", "reputation.changed"]);
    assert_eq!(r.events[0].payload["fromLevel"], 5);
    assert_eq!(r.events[0].payload["toLevel"], 4);
    assert_eq!(r.events[1].payload["scoreAfter"], 45);
}

#[test]
fn demoting_an_agent_at_level_1_is_lowest_level_and_writes_nothing() {
    let (tx, record) = read_only(vec![agent(2, 1)]);
    let (service, uow) = service_on(tx);

    let err =
        block_on(service.demote(&user_actor(UserRole::Admin), agent_id(2), None)).unwrap_err();

    assert!(
        matches!(err, ServiceError::Conflict(Conflict::LowestLevel)),
        "{err:?}"
    );
    assert_eq!(err.to_string(), "Agent is already at level 1");
    assert_eq!(uow.outcomes(), [Outcome::RolledBack]);
    assert!(!recorded(&record).wrote());
}

#[test]
fn who_may_demote() {
    let target = agent(2, 8);
    let allowed = [
        agent_caller(3, 9, AgentRole::Founder),
        agent_caller(3, 10, AgentRole::Admin),
        user_actor(UserRole::Admin),
    ];
    for actor in allowed {
        let (tx, _) = store(vec![target.clone()]);
        let (service, uow) = service_on(tx);
        let reason = Reason::new("slow".into()).unwrap();
        let demoted = block_on(service.demote(&actor, agent_id(2), Some(reason))).unwrap();
        assert_eq!(demoted.level.get(), 7, "{actor:?}");
        assert_eq!(uow.outcomes(), [Outcome::Committed]);
    }
    let refused = [
        (
            agent_caller(3, 8, AgentRole::Founder),
            Forbidden::DemoterRequired,
        ),
        (
            agent_caller(3, 8, AgentRole::Admin),
            Forbidden::DemoterRequired,
        ),
        (
            agent_caller(3, 10, AgentRole::Hr),
            Forbidden::DemoterRequired,
        ),
        (
            agent_caller(3, 10, AgentRole::Worker),
            Forbidden::DemoterRequired,
        ),
        (user_actor(UserRole::Operator), Forbidden::DemoterRequired),
    ];
    for (actor, expected) in refused {
        let (tx, record) = read_only(vec![target.clone()]);
        let (service, uow) = service_on(tx);
        let err = block_on(service.demote(&actor, agent_id(2), None)).unwrap_err();
        assert!(
            matches!(&err, ServiceError::Forbidden(f) if *f == expected),
            "{actor:?}: {err:?}"
        );
        assert_eq!(uow.outcomes(), [Outcome::RolledBack]);
        assert!(!recorded(&record).wrote());
    }
    // A level-9 founder does not demote a level-9 agent: strictly above only.
    let (tx, record) = read_only(vec![agent(2, 9)]);
    let (service, _) = service_on(tx);
    let err = block_on(service.demote(&agent_caller(3, 9, AgentRole::Founder), agent_id(2), None))
        .unwrap_err();
    assert!(
        matches!(err, ServiceError::Forbidden(Forbidden::DemoteNotBelow)),
        "{err:?}"
    );
    assert!(!recorded(&record).wrote());
}

// ---------------------------------------------------------------------------------------
// set_budget

#[test]
fn setting_a_budget_keeps_or_resets_what_was_spent_this_period() {
    for (reset, spent_after) in [(false, 80), (true, 0)] {
        let mut child = current(child_of(2, 4, 1));
        child.budget_period_limit = Some(100);
        child.budget_period_spent = 80;
        let (tx, record) = store(vec![child]);
        let (service, uow) = service_on(tx);
        let parent = as_agent(&agent(1, 5));

        let status = block_on(service.set_budget(&parent, agent_id(2), 500, reset)).unwrap();

        assert_eq!(uow.outcomes(), [Outcome::Committed]);
        assert_eq!(status.budget_period_limit, Some(500));
        assert_eq!(status.budget_period_spent, spent_after, "reset {reset}");
        assert_eq!(status.budget_remaining, Some(500 - spent_after));
        assert_eq!(status.budget_period_start, today());
        let r = recorded(&record);
        assert_eq!(r.locks, [(agent_id(2), Lock::Update)]);
        let (written, _) = &r.updated[0];
        assert_eq!(written.budget_period_limit, Some(500));
        assert_eq!(written.budget_period_spent, spent_after);
        assert_eq!(types(&r.events), ["agent.budget_updated"]);
        assert_eq!(r.events[0].payload["budgetPeriodLimit"], 500);
    }
}

#[test]
fn setting_a_budget_rolls_a_stale_period_over() {
    let mut child = stale(child_of(2, 4, 1));
    child.budget_period_spent = 80;
    let (tx, record) = store(vec![child]);
    let (service, _) = service_on(tx);

    let status =
        block_on(service.set_budget(&as_agent(&agent(1, 5)), agent_id(2), 100, false)).unwrap();

    assert_eq!(status.budget_period_spent, 0);
    assert_eq!(status.budget_period_start, today());
    assert_ne!(today(), EARLIER);
    let r = recorded(&record);
    assert_eq!(r.updated[0].0.budget_period_start, today());
}

#[test]
fn who_may_set_a_budget() {
    let child = current(child_of(2, 4, 1));
    let allowed = [
        as_agent(&agent(1, 5)),
        agent_caller(3, 10, AgentRole::Worker),
        agent_caller(3, 2, AgentRole::Admin),
        user_actor(UserRole::Admin),
        key_user(UserRole::Admin, ApiKeyScope::Admin),
    ];
    for actor in allowed {
        let (tx, _) = store(vec![child.clone()]);
        let (service, uow) = service_on(tx);
        block_on(service.set_budget(&actor, agent_id(2), 10, false)).unwrap();
        assert_eq!(uow.outcomes(), [Outcome::Committed], "{actor:?}");
    }
    let refused = [
        (agent_caller(3, 9, AgentRole::Hr), Forbidden::ParentRequired),
        (as_agent(&child_of(4, 4, 1)), Forbidden::ParentRequired),
        (user_actor(UserRole::Operator), Forbidden::ParentRequired),
        (
            key_user(UserRole::Admin, ApiKeyScope::Write),
            Forbidden::MissingScope(ApiKeyScope::Admin),
        ),
    ];
    for (actor, expected) in refused {
        let (tx, record) = read_only(vec![child.clone()]);
        let (service, uow) = service_on(tx);
        let err = block_on(service.set_budget(&actor, agent_id(2), 10, true)).unwrap_err();
        assert!(
            matches!(&err, ServiceError::Forbidden(f) if *f == expected),
            "{actor:?}: {err:?}"
        );
        assert_eq!(uow.outcomes(), [Outcome::RolledBack]);
        assert!(!recorded(&record).wrote());
    }
    // Read-only callers are refused before any transaction.
    let (tx, _) = read_only(vec![child]);
    let (service, uow) = service_on(tx);
    let err = block_on(service.set_budget(&user_actor(UserRole::Viewer), agent_id(2), 10, false))
        .unwrap_err();
    assert!(matches!(
        err,
        ServiceError::Forbidden(Forbidden::ViewerIsReadOnly)
    ));
    assert!(uow.outcomes().is_empty());
}

// ---------------------------------------------------------------------------------------
// bonus and penalty

fn change(amount: Option<i64>) -> ScoreChange {
    ScoreChange::new(Reason::new("reviewed".into()).unwrap(), amount).unwrap()
}

#[test]
fn who_may_give_a_bonus_or_penalty() {
    let target = child_of(2, 4, 1);
    let allowed = [
        agent_caller(3, 7, AgentRole::Worker),
        as_agent(&agent(1, 3)),
        user_actor(UserRole::Admin),
    ];
    for actor in allowed {
        for penalty in [false, true] {
            let (tx, record) = store(vec![target.clone()]);
            let (service, uow) = service_on(tx);
            let event = if penalty {
                block_on(service.penalty(&actor, agent_id(2), change(None)))
            } else {
                block_on(service.bonus(&actor, agent_id(2), change(None)))
            }
            .unwrap();
            assert_eq!(event.amount, if penalty { -10 } else { 10 }, "{actor:?}");
            assert_eq!(uow.outcomes(), [Outcome::Committed]);
            let r = recorded(&record);
            assert_eq!(
                r.updated[0].0.reputation_score,
                if penalty { 40 } else { 60 }
            );
            assert_eq!(types(&r.events), ["reputation.changed"]);
        }
    }
    let refused = [
        (
            agent_caller(3, 6, AgentRole::Hr),
            Forbidden::ReputationGiver,
        ),
        (as_agent(&child_of(4, 6, 1)), Forbidden::ReputationGiver),
        (user_actor(UserRole::Operator), Forbidden::ReputationGiver),
        (as_agent(&child_of(2, 10, 1)), Forbidden::OwnReputation),
    ];
    for (actor, expected) in refused {
        let (tx, record) = read_only(vec![target.clone()]);
        let (service, uow) = service_on(tx);
        let err = block_on(service.bonus(&actor, agent_id(2), change(None))).unwrap_err();
        assert!(
            matches!(&err, ServiceError::Forbidden(f) if *f == expected),
            "{actor:?}: {err:?}"
        );
        assert_eq!(uow.outcomes(), [Outcome::RolledBack]);
        assert!(!recorded(&record).wrote());
    }
    // Read-only callers are refused before any transaction.
    let observer = {
        let mut stored = agent(3, 10);
        stored.mode = AgentMode::Observer;
        as_agent(&stored)
    };
    for (actor, expected) in [
        (user_actor(UserRole::Viewer), Forbidden::ViewerIsReadOnly),
        (observer, Forbidden::ObserverIsReadOnly),
    ] {
        let (tx, _) = read_only(vec![target.clone()]);
        let (service, uow) = service_on(tx);
        let err = block_on(service.penalty(&actor, agent_id(2), change(None))).unwrap_err();
        assert!(matches!(&err, ServiceError::Forbidden(f) if *f == expected));
        assert!(uow.outcomes().is_empty());
    }
}

#[test]
fn scores_clamp_at_0_and_100_but_events_keep_the_amount() {
    let giver = user_actor(UserRole::Admin);
    // (score before, penalty?, amount, score after, stored amount)
    for (before, penalty, amount, after, stored) in [
        (80, false, 50, 100, 50),
        (10, true, 30, 0, -30),
        (100, false, 1, 100, 1),
        (55, true, 5, 50, -5),
    ] {
        let mut target = agent(2, 4);
        target.reputation_score = before;
        let (tx, record) = store(vec![target]);
        let (service, _) = service_on(tx);
        let event = if penalty {
            block_on(service.penalty(&giver, agent_id(2), change(Some(amount))))
        } else {
            block_on(service.bonus(&giver, agent_id(2), change(Some(amount))))
        }
        .unwrap();
        let kind = if penalty {
            ReputationKind::QualityPenalty
        } else {
            ReputationKind::QualityBonus
        };
        assert_eq!((event.kind, event.amount), (kind, stored));
        let r = recorded(&record);
        assert_eq!(
            r.updated[0].0.reputation_score, after,
            "{before} {stored:+}"
        );
        assert_eq!(r.reputation, [event]);
        assert_eq!(r.events[0].payload["scoreBefore"], before);
        assert_eq!(r.events[0].payload["scoreAfter"], after);
        assert_eq!(r.events[0].payload["amount"], stored);
    }
}
