//! `AgentService`: spawning, the hierarchy, capabilities, reputation and budgets, on the
//! in-memory store.

use crate::common::world::{World, actor_of};

use futures_executor::block_on;
use muster_domain::model::{
    AgentMode, AgentStatus, CapabilityName, Proficiency, Reason, ReputationKind,
};
use muster_domain::ports::UniqueKey;
use muster_domain::rules::spawn::capacity;
use muster_domain::service::{
    AgentPatch, Conflict, MatchQuery, NewAgent, NewChild, ScoreChange, ServiceError,
};

fn child(handle: &str, level: Option<i64>) -> NewChild {
    World::new_child(handle, level)
}

fn change(amount: i64) -> ScoreChange {
    ScoreChange::new(Reason::new("review".into()).unwrap(), Some(amount)).unwrap()
}

#[test]
fn a_spawned_child_is_pending_below_its_parent_until_the_parent_activates_it() {
    let world = World::new();
    let (parent, parent_actor) = world.worker("lead", 5, &[]);
    let spawned = block_on(world.agents.spawn(&parent_actor, child("helper", None))).unwrap();
    let helper = spawned.view.agent;
    assert_eq!(helper.status, AgentStatus::Pending);
    assert_eq!(helper.parent_id, Some(parent.id));
    assert!(helper.level < parent.level);
    assert_eq!(spawned.view.capabilities.len(), 1);
    assert_eq!(spawned.secret.expose().len(), 64);
    assert_eq!(
        block_on(world.agents.pending(&parent_actor)).unwrap(),
        std::slice::from_ref(&helper)
    );

    let err = block_on(
        world
            .agents
            .spawn(&parent_actor, child("too-high", Some(5))),
    )
    .unwrap_err();
    assert!(matches!(err, ServiceError::Invalid(_)), "{err:?}");
    let active = block_on(world.agents.activate(&parent_actor, helper.id)).unwrap();
    assert_eq!(active.status, AgentStatus::Active);
    let err = block_on(world.agents.activate(&parent_actor, helper.id)).unwrap_err();
    assert!(
        matches!(err, ServiceError::Conflict(Conflict::AgentStatus { .. })),
        "{err:?}"
    );
    let tree = block_on(world.agents.hierarchy(&world.admin, parent.id, 2)).unwrap();
    assert_eq!(tree.agent.id, parent.id);
    assert_eq!(tree.children.len(), 1);
    assert_eq!(tree.children[0].agent.id, helper.id);
    assert_eq!(world.events("agent.spawned").len(), 1);
}

#[test]
fn spawning_stops_at_the_parents_capacity_and_a_rejection_frees_a_place() {
    let world = World::new();
    let (parent, parent_actor) = world.worker("lead", 3, &[]);
    let max = capacity(parent.level);
    let mut children = Vec::new();
    for i in 0..max {
        let spawned = block_on(
            world
                .agents
                .spawn(&parent_actor, child(&format!("kid-{i}"), None)),
        )
        .unwrap();
        children.push(spawned.view.agent);
    }
    let room = block_on(world.agents.capacity(&parent_actor)).unwrap();
    assert_eq!((room.can_spawn, room.current, room.max), (false, max, max));
    let err = block_on(world.agents.spawn(&parent_actor, child("one-more", None))).unwrap_err();
    assert!(
        matches!(err, ServiceError::Conflict(Conflict::SpawnCapacity { current, max: m }) if current == max && m == max),
        "{err:?}"
    );

    let rejected = block_on(world.agents.reject(&parent_actor, children[0].id, None)).unwrap();
    assert_eq!(rejected.id, children[0].id);
    assert_eq!(world.events("agent.rejected").len(), 1);
    // The handle is free again, and so is the place.
    let again = block_on(world.agents.spawn(&parent_actor, child("kid-0", None))).unwrap();
    assert_eq!(again.view.agent.handle.as_str(), "kid-0");
    let room = block_on(world.agents.capacity(&parent_actor)).unwrap();
    assert_eq!(room.current, max);
    // Users cannot spawn.
    let room = block_on(world.agents.capacity(&world.admin)).unwrap();
    assert!(!room.can_spawn);
}

#[test]
fn capabilities_are_added_changed_removed_and_matched() {
    let world = World::new();
    let (agent, _) = world.worker("dev", 3, &[("rust", Proficiency::Basic)]);
    let (other, _) = world.worker("ops", 3, &[("terraform", Proficiency::Expert)]);
    let sql = block_on(world.agents.add_capability(
        &world.admin,
        agent.id,
        CapabilityName::new("sql").unwrap(),
        Proficiency::Standard,
    ))
    .unwrap();
    let err = block_on(world.agents.add_capability(
        &world.admin,
        agent.id,
        CapabilityName::new("SQL").unwrap(),
        Proficiency::Expert,
    ))
    .unwrap_err();
    assert!(
        matches!(
            err,
            ServiceError::Conflict(Conflict::Duplicate(UniqueKey::Capability))
        ),
        "{err:?}"
    );
    let expert = block_on(world.agents.update_capability(
        &world.admin,
        sql.id,
        Proficiency::Expert,
    ))
    .unwrap();
    assert_eq!(expert.proficiency, Proficiency::Expert);
    let names: Vec<String> = block_on(world.agents.capability_names(&world.admin))
        .unwrap()
        .iter()
        .map(|n| n.as_str().to_owned())
        .collect();
    assert_eq!(names, ["rust", "sql", "terraform"]);

    let query = MatchQuery::new("sql", Some(Proficiency::Expert), true).unwrap();
    let matched = block_on(world.agents.matching(&world.admin, &query)).unwrap();
    assert_eq!(matched.len(), 1);
    assert_eq!(matched[0].agent.id, agent.id);

    block_on(world.agents.remove_capability(&world.admin, sql.id)).unwrap();
    let left = block_on(world.agents.capabilities(&world.admin, agent.id)).unwrap();
    assert_eq!(left.len(), 1);
    assert!(
        block_on(world.agents.matching(&world.admin, &query))
            .unwrap()
            .is_empty()
    );
    let err = block_on(world.agents.remove_capability(&world.admin, sql.id)).unwrap_err();
    assert!(matches!(err, ServiceError::NotFound(_)), "{err:?}");
    assert_eq!(
        block_on(world.agents.capabilities(&world.admin, other.id))
            .unwrap()
            .len(),
        1
    );
}

#[test]
fn bonuses_and_penalties_move_the_score_within_its_bounds_and_rank_the_board() {
    let world = World::new();
    let (star, _) = world.worker("star", 3, &[]);
    let (slow, _) = world.worker("slow", 3, &[]);
    let start = star.reputation_score;
    let bonus = block_on(world.agents.bonus(&world.admin, star.id, change(30))).unwrap();
    assert_eq!(
        (bonus.kind, bonus.amount),
        (ReputationKind::QualityBonus, 30)
    );
    let penalty = block_on(world.agents.penalty(&world.admin, slow.id, change(20))).unwrap();
    assert_eq!(
        (penalty.kind, penalty.amount),
        (ReputationKind::QualityPenalty, -20)
    );
    for _ in 0..3 {
        block_on(world.agents.bonus(&world.admin, star.id, change(50))).unwrap();
        block_on(world.agents.penalty(&world.admin, slow.id, change(50))).unwrap();
    }
    let top = block_on(world.agents.reputation(&world.admin, star.id)).unwrap();
    assert_eq!(top.reputation_score, 100, "clamped at 100 (from {start})");
    assert_eq!(top.total_events, 4);
    let bottom = block_on(world.agents.reputation(&world.admin, slow.id)).unwrap();
    assert_eq!(bottom.reputation_score, 0, "clamped at 0");

    let (history, total) =
        block_on(world.agents.reputation_history(&world.admin, star.id, 2, 0)).unwrap();
    assert_eq!(total, 4);
    assert_eq!(history.len(), 2);
    assert_eq!(history[1].amount, 50, "newest first");
    let board = block_on(world.agents.leaderboard(&world.admin, 10)).unwrap();
    assert_eq!(board[0].agent.id, star.id);
    assert_eq!(board.last().unwrap().agent.id, slow.id);
    let err = block_on(world.agents.bonus(&actor_of(&slow), star.id, change(5))).unwrap_err();
    assert!(
        matches!(err, ServiceError::Forbidden(_)),
        "a peer does not score a peer: {err:?}"
    );
}

#[test]
fn a_budget_limits_spending_and_raises_an_alert_near_its_end() {
    let world = World::new();
    let (agent, _) = world.worker("spender", 3, &[]);
    let status = block_on(world.agents.set_budget(&world.admin, agent.id, 100, false)).unwrap();
    assert_eq!(
        (status.budget_period_limit, status.budget_remaining),
        (Some(100), Some(100))
    );
    let can = block_on(world.agents.can_spend(&world.admin, agent.id, 50)).unwrap();
    assert!(!can.can_spend, "the balance is empty");
    // The use case checks the limit itself, whatever adapter calls it.
    let err = block_on(world.agents.set_budget(&world.admin, agent.id, -1, false)).unwrap_err();
    assert!(matches!(err, ServiceError::Invalid(_)), "{err:?}");
    let negative = NewChild {
        budget_period_limit: Some(-5),
        ..child("broke", None)
    };
    let (_, lead) = world.worker("lead", 5, &[]);
    let err = block_on(world.agents.spawn(&lead, negative)).unwrap_err();
    assert!(matches!(err, ServiceError::Invalid(_)), "{err:?}");
    let patch = AgentPatch {
        budget_period_limit: Some(Some(-1)),
        ..AgentPatch::default()
    };
    let err = block_on(world.agents.update(&world.admin, agent.id, patch)).unwrap_err();
    assert!(matches!(err, ServiceError::Invalid(_)), "{err:?}");
    let stored = block_on(world.agents.budget(&world.admin, agent.id)).unwrap();
    assert_eq!(stored.budget_period_limit, Some(100), "nothing changed");
    let new = NewAgent {
        budget_period_limit: Some(-1),
        ..World::new_worker("overdrawn", 3, &[])
    };
    let err = block_on(world.agents.register(&world.hr, new)).unwrap_err();
    assert!(matches!(err, ServiceError::Invalid(_)), "{err:?}");
    assert_eq!(
        world.events("agent.registered").len(),
        1 + 2,
        "HR, spender and lead"
    );
    assert!(
        block_on(world.agents.budget_alerts(&world.admin))
            .unwrap()
            .is_empty()
    );
}

#[test]
fn an_active_agent_with_credits_can_spend_and_heavy_spenders_raise_alerts() {
    let world = World::new();
    let (agent, actor) = world.worker("spender", 3, &[]);
    let (idle, _) = world.worker("idle", 3, &[]);
    for who in [agent.id, idle.id] {
        block_on(world.agents.set_budget(&world.admin, who, 100, false)).unwrap();
        block_on(world.agents.grant(
            &world.admin,
            who,
            muster_domain::service::CreditAmount::new(500).unwrap(),
            None,
        ))
        .unwrap();
    }
    let can = block_on(world.agents.can_spend(&world.admin, agent.id, 80)).unwrap();
    assert!(can.can_spend);
    assert_eq!(can.remaining, 100, "the budget is the bound");
    assert!(
        !block_on(world.agents.can_spend(&world.admin, agent.id, 101))
            .unwrap()
            .can_spend
    );
    block_on(world.agents.spend(
        &actor,
        muster_domain::service::CreditAmount::new(80).unwrap(),
        None,
    ))
    .unwrap();
    let alerts = block_on(world.agents.budget_alerts(&world.admin)).unwrap();
    assert_eq!(
        alerts.len(),
        1,
        "80 % used: an alert; the idle one has none"
    );
    assert_eq!(alerts[0].agent_id, agent.id);
    block_on(world.agents.suspend(&world.hr, idle.id)).unwrap();
    assert!(
        !block_on(world.agents.can_spend(&world.admin, idle.id, 1))
            .unwrap()
            .can_spend,
        "a suspended agent spends nothing"
    );
}

#[test]
fn observers_cannot_spawn_and_pending_agents_are_shown_to_who_may_activate_them() {
    let world = World::new();
    let (_, watcher) = world.register("watcher", 5, AgentMode::Observer, &[]);
    let room = block_on(world.agents.capacity(&watcher)).unwrap();
    assert!(!room.can_spawn);
    assert_eq!(
        room.reason.as_deref(),
        Some("observer agents are read-only"),
        "it has room, yet may not use it"
    );

    let (_, lead_a) = world.worker("lead-a", 5, &[]);
    let (_, lead_b) = world.worker("lead-b", 5, &[]);
    let kid_a = block_on(world.agents.spawn(&lead_a, child("kid-a", None)))
        .unwrap()
        .view
        .agent;
    let kid_b = block_on(world.agents.spawn(&lead_b, child("kid-b", None)))
        .unwrap()
        .view
        .agent;
    let ids = |actor| {
        let mut ids: Vec<_> = block_on(world.agents.pending(actor))
            .unwrap()
            .into_iter()
            .map(|a| a.id)
            .collect();
        ids.sort();
        ids
    };
    let mut both = vec![kid_a.id, kid_b.id];
    both.sort();
    assert_eq!(ids(&lead_a), [kid_a.id], "a parent sees its own children");
    assert_eq!(
        ids(&world.hr),
        both,
        "a level-10 agent sees every pending agent"
    );
    assert_eq!(ids(&world.admin), both, "so does an admin");
    assert!(ids(&world.user(muster_domain::model::UserRole::Operator)).is_empty());
}
