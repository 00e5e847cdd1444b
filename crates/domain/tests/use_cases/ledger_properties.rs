//! The credit ledger under random sequences of grants, spends, transfers and finished
//! tasks whose reward pays a management fee, on the in-memory store: credits are only
//! created by grants and rewards and only destroyed by spending, no balance goes below
//! zero, every agent's ledger adds up to its balance, and a refused operation changes
//! nothing.

use crate::common::world::{World, actor_of};

use futures_executor::block_on;
use proptest::prelude::*;

use muster_domain::model::{Actor, Agent, AgentHandle, AgentMode, FeePct, Metadata, TaskStatus};
use muster_domain::ports::AgentRepository;
use muster_domain::rules::reward::DEFAULT_TASK_REWARD;
use muster_domain::service::{CreditAmount, NewAgent, NewChild};

/// One step of a sequence; agents by index into the family (0 is the parent).
#[derive(Debug, Clone)]
enum Op {
    Grant(usize, i64),
    Spend(usize, i64),
    Transfer(usize, usize, i64),
    Finish(usize),
}

fn op() -> impl Strategy<Value = Op> {
    let who = 0..3_usize;
    let amount = 1..400_i64;
    prop_oneof![
        (who.clone(), amount.clone()).prop_map(|(w, a)| Op::Grant(w, a)),
        (who.clone(), amount.clone()).prop_map(|(w, a)| Op::Spend(w, a)),
        (who.clone(), who.clone(), amount).prop_map(|(f, t, a)| Op::Transfer(f, t, a)),
        who.prop_map(Op::Finish),
    ]
}

/// A parent taking a `fee` % management fee, and two children it spawned.
fn family(world: &World, fee: i64) -> Vec<(Agent, Actor)> {
    let new = NewAgent {
        management_fee_pct: FeePct::new(fee).unwrap(),
        ..World::new_worker("parent", 5, &[])
    };
    let parent = block_on(world.agents.register(&world.hr, new))
        .unwrap()
        .view
        .agent;
    let parent_actor = actor_of(&parent);
    let mut members = vec![(parent, parent_actor.clone())];
    for name in ["child-a", "child-b"] {
        let new = NewChild {
            handle: AgentHandle::new(name).unwrap(),
            name: name.to_owned(),
            level: None,
            model: None,
            mode: AgentMode::Worker,
            budget_period_limit: None,
            capabilities: Vec::new(),
            metadata: Metadata::default(),
        };
        let child = block_on(world.agents.spawn(&parent_actor, new))
            .unwrap()
            .view
            .agent;
        let child = block_on(world.agents.activate(&parent_actor, child.id)).unwrap();
        members.push((child.clone(), actor_of(&child)));
    }
    members
}

fn balances(world: &World, family: &[(Agent, Actor)]) -> Vec<i64> {
    family
        .iter()
        .map(|(agent, _)| {
            block_on(world.agents.balance(&world.admin, agent.id))
                .unwrap()
                .current_balance
        })
        .collect()
}

/// What the step did to the credits in circulation, or `None` when it was refused.
fn apply(world: &World, family: &[(Agent, Actor)], op: &Op) -> Option<i64> {
    let amount = |a: i64| CreditAmount::new(a).unwrap();
    match *op {
        Op::Grant(who, a) => block_on(world.agents.grant(
            &world.admin,
            family[who].0.id,
            amount(a),
            None,
        ))
        .ok()
        .map(|_| a),
        Op::Spend(who, a) => block_on(world.agents.spend(&family[who].1, amount(a), None))
            .ok()
            .map(|_| -a),
        Op::Transfer(from, to, a) => block_on(world.agents.transfer(
            &family[from].1,
            family[to].0.id,
            amount(a),
            None,
        ))
        .ok()
        .map(|_| 0),
        Op::Finish(who) => {
            let task = world.task("paid work");
            block_on(world.tasks.assign(&world.admin, task.id, family[who].0.id)).unwrap();
            for to in [TaskStatus::InProgress, TaskStatus::Done] {
                block_on(world.tasks.transition(&world.admin, task.id, to, None)).unwrap();
            }
            Some(DEFAULT_TASK_REWARD)
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn credits_are_conserved_and_every_ledger_adds_up(
        fee in 0..=50_i64,
        ops in prop::collection::vec(op(), 1..24),
    ) {
        let world = World::new();
        let family = family(&world, fee);
        let mut circulating = 0_i64;
        for op in &ops {
            let before = balances(&world, &family);
            if let Some(change) = apply(&world, &family, op) {
                circulating += change;
            } else {
                prop_assert_eq!(balances(&world, &family), before, "{:?} was refused", op);
            }
            let now = balances(&world, &family);
            prop_assert!(now.iter().all(|b| *b >= 0), "{:?}: {:?}", op, now);
            prop_assert_eq!(now.iter().sum::<i64>(), circulating, "after {:?}", op);
        }
        for (agent, _) in &family {
            let entries = block_on(world.store.ledger(world.org, agent.id, None, 10_000)).unwrap();
            let balance = block_on(world.agents.balance(&world.admin, agent.id)).unwrap().current_balance;
            prop_assert_eq!(entries.iter().map(|e| e.amount).sum::<i64>(), balance);
            if let Some(newest) = entries.first() {
                prop_assert_eq!(newest.balance_after, balance);
            }
        }
    }
}
