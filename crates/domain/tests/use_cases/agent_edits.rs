//! Editing agents (`AgentService::update` and `demote`) and the budget rollover job, on
//! the in-memory store: what a caller gets back, what is stored and what the audit log
//! says about it.

use crate::common::world::World;

use std::sync::Arc;

use futures_executor::block_on;
use muster_domain::model::{AgentMode, FeePct, Level, Metadata, Reason};
use muster_domain::rules::budget::BudgetPeriod;
use muster_domain::service::{AgentPatch, BudgetRollover, ServiceError};
use serde_json::{Value, json};
use time::Duration;

/// The `fields` of every `agent.updated` event, oldest first.
fn updated_fields(world: &World) -> Vec<Value> {
    world
        .events("agent.updated")
        .into_iter()
        .map(|e| e.payload["fields"].clone())
        .collect()
}

#[test]
fn an_edit_names_each_field_it_changed_and_only_those() {
    let world = World::new();
    let (agent, _) = world.worker("editor", 3, &[]);
    let edits = [
        (
            "name",
            AgentPatch {
                name: Some("Renamed".into()),
                ..AgentPatch::default()
            },
        ),
        (
            "level",
            AgentPatch {
                level: Some(Level::new(4).unwrap()),
                ..AgentPatch::default()
            },
        ),
        (
            "model",
            AgentPatch {
                model: Some(Some("gpt-x".into())),
                ..AgentPatch::default()
            },
        ),
        (
            "mode",
            AgentPatch {
                mode: Some(AgentMode::Orchestrator),
                ..AgentPatch::default()
            },
        ),
        (
            "managementFeePct",
            AgentPatch {
                management_fee_pct: Some(FeePct::new(15).unwrap()),
                ..AgentPatch::default()
            },
        ),
        (
            "budgetPeriodLimit",
            AgentPatch {
                budget_period_limit: Some(Some(250)),
                ..AgentPatch::default()
            },
        ),
        (
            "metadata",
            AgentPatch {
                metadata: Some(Metadata::new(json!({"team": "blue"})).unwrap()),
                ..AgentPatch::default()
            },
        ),
    ];
    for (field, patch) in edits.iter().cloned() {
        block_on(world.agents.update(&world.admin, agent.id, patch)).unwrap();
        assert_eq!(
            updated_fields(&world).last(),
            Some(&json!([field])),
            "an edit of {field} names it alone"
        );
    }
    let view = block_on(world.agents.get(&world.admin, agent.id)).unwrap();
    let stored = view.agent;
    assert_eq!(stored.name, "Renamed");
    assert_eq!(stored.level.get(), 4);
    assert_eq!(stored.model.as_deref(), Some("gpt-x"));
    assert_eq!(stored.mode, AgentMode::Orchestrator);
    assert_eq!(stored.management_fee_pct, FeePct::new(15).unwrap());
    assert_eq!(stored.budget_period_limit, Some(250));
    assert_eq!(stored.metadata.get("team"), Some(&json!("blue")));

    // The same edits again change nothing: no event, no new version of the agent.
    for (field, patch) in edits {
        let again = block_on(world.agents.update(&world.admin, agent.id, patch)).unwrap();
        assert_eq!(again.agent, stored, "repeating the {field} edit");
    }
    assert_eq!(updated_fields(&world).len(), 7, "one event per real change");

    let all = AgentPatch {
        name: Some("Both".into()),
        model: Some(None),
        budget_period_limit: Some(Some(250)),
        ..AgentPatch::default()
    };
    block_on(world.agents.update(&world.admin, agent.id, all)).unwrap();
    assert_eq!(
        updated_fields(&world).last(),
        Some(&json!(["name", "model"])),
        "the limit was already 250"
    );
}

#[test]
fn an_edit_naming_no_field_is_refused() {
    let world = World::new();
    let (agent, _) = world.worker("idle", 3, &[]);
    let err = block_on(
        world
            .agents
            .update(&world.admin, agent.id, AgentPatch::default()),
    )
    .unwrap_err();
    assert!(matches!(err, ServiceError::Invalid(_)), "{err:?}");
    assert!(err.to_string().contains("at least one field"), "{err}");
    assert!(updated_fields(&world).is_empty());
}

#[test]
fn a_budget_limit_of_zero_is_a_limit_and_below_zero_is_refused() {
    let world = World::new();
    let new = muster_domain::service::NewAgent {
        budget_period_limit: Some(0),
        ..World::new_worker("frozen", 3, &[])
    };
    let registered = block_on(world.agents.register(&world.hr, new)).unwrap();
    assert_eq!(registered.view.agent.budget_period_limit, Some(0));

    let (agent, _) = world.worker("thrifty", 3, &[]);
    let zero = AgentPatch {
        budget_period_limit: Some(Some(0)),
        ..AgentPatch::default()
    };
    let view = block_on(world.agents.update(&world.admin, agent.id, zero)).unwrap();
    assert_eq!(view.agent.budget_period_limit, Some(0));
    let negative = AgentPatch {
        budget_period_limit: Some(Some(-1)),
        ..AgentPatch::default()
    };
    let err = block_on(world.agents.update(&world.admin, agent.id, negative)).unwrap_err();
    assert!(err.to_string().contains("at least 0"), "{err}");
}

/// The `reason` of the newest `reputation.changed` event.
fn last_reason(world: &World) -> Value {
    world
        .events("reputation.changed")
        .last()
        .map(|e| e.payload["reason"].clone())
        .unwrap()
}

#[test]
fn a_demotion_keeps_the_reason_given_and_explains_itself_when_none_or_a_blank_one_is() {
    let world = World::new();
    let (agent, _) = world.worker("slipping", 6, &[]);
    let demote = |reason: Option<&str>| {
        let reason = reason.map(|r| Reason::new(r.to_owned()).unwrap());
        block_on(world.agents.demote(&world.admin, agent.id, reason)).unwrap()
    };
    demote(Some("  missed three deadlines "));
    assert_eq!(last_reason(&world), json!("missed three deadlines"));
    demote(Some("   "));
    assert_eq!(last_reason(&world), json!("demoted from level 5 to 4"));
    let after = demote(None);
    assert_eq!(last_reason(&world), json!("demoted from level 4 to 3"));
    assert_eq!(after.level.get(), 3);
}

#[test]
fn the_rollover_starts_a_new_period_for_every_agent_once() {
    let world = World::new();
    world.worker("one", 3, &[]);
    world.worker("two", 3, &[]);
    let rollover = BudgetRollover::new(
        Arc::new(world.store.clone()),
        world.clock.clone(),
        BudgetPeriod::Day,
    );
    assert_eq!(block_on(rollover.run_once()).unwrap(), 0, "same day");
    world.clock.advance(Duration::days(1));
    assert_eq!(
        block_on(rollover.run_once()).unwrap(),
        3,
        "the HR agent and both workers"
    );
    assert_eq!(block_on(rollover.run_once()).unwrap(), 0, "already rolled");
}
