//! The runaway guard with mocked ports: every change an agent makes is counted in its
//! own transaction; a change past a threshold is refused and its agent suspended in a
//! second transaction with an `agent.suspended` event naming the breaker; nothing is
//! counted while both thresholds are off; spending counts the credits the events name.

use crate::common;

use std::sync::{Arc, Mutex};

use common::agents::{Heard, agent};
use common::{NOW, clock, ids, org, types};
use futures_executor::block_on;
use muster_domain::model::{
    AgentId, AgentStatus, Breakers, Event, EventId, EventSeverity, GuardSettings, Tally, TallyAdd,
    Threshold,
};
use muster_domain::ports::{Lock, MockTransaction, MockUnitOfWork, Outcome, transact};
use muster_domain::rules::guard::Breaker;
use muster_domain::service::ServiceError;
use muster_domain::service::guard::{GuardedUnitOfWork, RunawayGuard};
use serde_json::json;
use uuid::Uuid;

fn event(event_type: &str, actor: Option<Uuid>, payload: serde_json::Value) -> Event {
    Event {
        id: EventId::from_uuid(Uuid::from_u128(0xe1)),
        org_id: org(),
        event_type: event_type.into(),
        actor_id: actor,
        entity_type: "task".into(),
        entity_id: Uuid::from_u128(0x7a),
        severity: EventSeverity::Info,
        payload,
        created_at: NOW,
    }
}

fn thresholds(actions: i64, credits: i64) -> Breakers {
    Breakers {
        actions_per_minute: Threshold::from_stored(actions),
        credits_per_hour: Threshold::from_stored(credits),
    }
}

/// What the change's transaction saw, and how the suspension went.
struct Seen {
    result: Result<(), ServiceError>,
    tallies: Vec<(Uuid, TallyAdd)>,
    outcomes: Vec<Outcome>,
    suspensions: Vec<Outcome>,
    suspended: Vec<Event>,
    /// The agents whose cached credentials the guard said to forget.
    heard: Vec<AgentId>,
}

/// Runs one change writing `written` under `defaults` (the org has no thresholds of its
/// own); the agents' windows after counting are `after` (actions, credits).
fn change(written: Vec<Event>, defaults: Breakers, after: (i64, i64)) -> Seen {
    let tallies = Arc::new(Mutex::new(Vec::new()));
    let mut tx = MockTransaction::new();
    tx.expect_written_events().return_const(written);
    tx.expect_guard_settings()
        .returning(|_| Ok(GuardSettings::default()));
    let seen = tallies.clone();
    tx.expect_tally_agent().returning(move |o, actor, add| {
        assert_eq!(o, org());
        seen.lock().unwrap().push((actor, *add));
        Ok((actor == agent(1, 3).id.as_uuid()).then_some(Tally {
            actions: after.0,
            actions_since: Some(NOW - time::Duration::seconds(30)),
            credits: after.1,
            credits_since: (after.1 > 0).then_some(NOW - time::Duration::minutes(10)),
        }))
    });
    let inner = Arc::new(MockUnitOfWork::new(tx));

    let suspended = Arc::new(Mutex::new(Vec::new()));
    let mut direct_tx = MockTransaction::new();
    direct_tx.expect_agent().returning(|_, id, lock| {
        assert_eq!(lock, Lock::Update);
        assert_eq!(id, agent(1, 3).id);
        Ok(Some(agent(1, 3)))
    });
    direct_tx.expect_update_agent().returning(|a, _| {
        assert_eq!(a.status, AgentStatus::Suspended);
        Ok(true)
    });
    let log = suspended.clone();
    direct_tx.expect_append_events().returning(move |events| {
        log.lock().unwrap().extend_from_slice(events);
        Ok(())
    });
    let direct = Arc::new(MockUnitOfWork::new(direct_tx));

    let heard = Arc::new(Heard::default());
    let guard = Arc::new(RunawayGuard::new(defaults, clock(), ids()).with_changes(heard.clone()));
    let guarded = GuardedUnitOfWork::new(inner.clone(), direct.clone(), guard);
    let result = block_on(transact(&guarded, |_tx| Box::pin(async { Ok(()) })));
    let tallies = tallies.lock().unwrap().clone();
    let suspended = suspended.lock().unwrap().clone();
    Seen {
        result,
        tallies,
        outcomes: inner.outcomes(),
        suspensions: direct.outcomes(),
        suspended,
        heard: heard.take(),
    }
}

fn agent_uuid() -> Uuid {
    agent(1, 3).id.as_uuid()
}

#[test]
fn a_change_at_the_threshold_commits_and_suspends_nobody() {
    let seen = change(
        vec![event("task.created", Some(agent_uuid()), json!({}))],
        thresholds(5, 0),
        (5, 0),
    );
    assert!(seen.result.is_ok(), "{:?}", seen.result);
    assert_eq!(seen.outcomes, [Outcome::Committed]);
    assert!(seen.suspensions.is_empty());
    assert!(seen.heard.is_empty());
    assert_eq!(seen.tallies.len(), 1);
    let (actor, add) = seen.tallies[0];
    assert_eq!(
        (actor, add.actions, add.credits, add.at),
        (agent_uuid(), 1, 0, NOW)
    );
    assert_eq!(add.actions_expired_at, NOW - time::Duration::minutes(1));
    assert_eq!(add.credits_expired_at, NOW - time::Duration::hours(1));
}

#[test]
fn a_change_past_the_threshold_rolls_back_and_suspends_its_agent() {
    let seen = change(
        vec![event("task.created", Some(agent_uuid()), json!({}))],
        thresholds(5, 0),
        (6, 0),
    );
    let Err(ServiceError::Runaway(runaway)) = &seen.result else {
        panic!("refused by the guard: {:?}", seen.result)
    };
    assert_eq!(runaway.agent_id, agent(1, 3).id);
    assert_eq!(
        (
            runaway.trip.breaker,
            runaway.trip.measured,
            runaway.trip.limit
        ),
        (Breaker::ActionRate, 6, 5)
    );
    assert_eq!(seen.outcomes, [Outcome::RolledBack]);
    assert_eq!(seen.suspensions, [Outcome::Committed]);
    assert_eq!(types(&seen.suspended), ["agent.suspended"]);
    assert_eq!(seen.heard, [agent(1, 3).id], "told once it is committed");
    let suspended = &seen.suspended[0];
    assert_eq!(suspended.actor_id, None, "the service itself suspends");
    assert_eq!(suspended.entity_id, agent_uuid());
    assert_eq!(suspended.severity, EventSeverity::Warning);
    assert_eq!(
        suspended.payload["breaker"],
        json!({"kind": "action_rate", "measured": 6, "limit": 5, "per": "minute",
               "withinSeconds": 30})
    );
    assert!(
        suspended.payload["reason"]
            .as_str()
            .unwrap()
            .starts_with("runaway guard: 6 writes within 30 s"),
        "{}",
        suspended.payload["reason"]
    );
}

#[test]
fn spending_counts_the_credits_its_events_name() {
    let seen = change(
        vec![
            event("credits.spent", Some(agent_uuid()), json!({"amount": 40})),
            event(
                "credits.transferred",
                Some(agent_uuid()),
                json!({"amount": 2}),
            ),
        ],
        thresholds(0, 100),
        (2, 101),
    );
    assert_eq!(seen.tallies.len(), 1, "one count per actor and change");
    assert_eq!(
        (seen.tallies[0].1.actions, seen.tallies[0].1.credits),
        (1, 42)
    );
    let Err(ServiceError::Runaway(runaway)) = &seen.result else {
        panic!("refused by the guard: {:?}", seen.result)
    };
    assert_eq!(runaway.trip.breaker, Breaker::SpendVelocity);
    assert_eq!(seen.suspended[0].payload["breaker"]["per"], "hour");
}

#[test]
fn a_reward_an_agent_escrows_counts_like_a_spend_and_a_refund_gives_nothing_back() {
    let payer = json!({"kind": "agent", "id": agent_uuid()});
    let seen = change(
        vec![
            event("task.created", Some(agent_uuid()), json!({"reward": 30})),
            event(
                "credits.escrowed",
                Some(agent_uuid()),
                json!({"amount": 30, "payer": payer, "balanceAfter": 0}),
            ),
            event(
                "credits.refunded",
                Some(agent_uuid()),
                json!({"amount": 5, "payer": payer, "balanceAfter": 5, "reason": "lowered"}),
            ),
        ],
        thresholds(0, 100),
        (1, 30),
    );
    assert_eq!(
        (seen.tallies[0].1.actions, seen.tallies[0].1.credits),
        (1, 30)
    );
    assert!(seen.result.is_ok(), "{:?}", seen.result);
}

#[test]
fn users_and_the_service_are_not_agents() {
    let user = Uuid::from_u128(0x05e7);
    let seen = change(
        vec![
            event("task.created", Some(user), json!({})),
            event("task.lease_expired", None, json!({})),
        ],
        thresholds(1, 1),
        (100, 100),
    );
    assert!(seen.result.is_ok());
    assert_eq!(
        seen.tallies.len(),
        1,
        "the user is asked about, the service is not"
    );
    assert!(seen.suspensions.is_empty());
}

#[test]
fn nothing_is_counted_while_both_breakers_are_off() {
    let seen = change(
        vec![event("task.created", Some(agent_uuid()), json!({}))],
        thresholds(0, 0),
        (1_000, 0),
    );
    assert!(seen.result.is_ok());
    assert!(seen.tallies.is_empty());
}

#[test]
fn a_change_without_events_is_not_a_write() {
    let seen = change(Vec::new(), thresholds(1, 0), (100, 0));
    assert!(seen.result.is_ok());
    assert!(seen.tallies.is_empty());
}
