//! The credit ledger under random sequences of grants (to agents and to the treasury),
//! spends, transfers and finished tasks whose reward, escrowed from the treasury, pays a
//! management fee, on the in-memory store: credits are only created by grants and only
//! destroyed by spending (decision D-101), no balance goes below zero, every agent's
//! ledger and the treasury's add up to their balances, and a refused operation changes
//! nothing. (`economy_properties` covers escrows left open, agent payers and patches.)

use crate::common::world::{World, actor_of};

use futures_executor::block_on;
use proptest::prelude::*;

use muster_domain::model::{Actor, Agent, AgentHandle, FeePct, TaskStatus};
use muster_domain::ports::{AgentRepository, TreasuryRepository};
use muster_domain::service::{CreditAmount, NewAgent, NewChild};

/// What the operator grants the treasury at bootstrap.
const TREASURY: i64 = 60;

/// One step of a sequence; agents by index into the family (0 is the parent).
#[derive(Debug, Clone)]
enum Op {
    Grant(usize, i64),
    GrantTreasury(i64),
    Spend(usize, i64),
    Transfer(usize, usize, i64),
    Finish(usize),
}

fn op() -> impl Strategy<Value = Op> {
    let who = 0..3_usize;
    let amount = 1..400_i64;
    prop_oneof![
        (who.clone(), amount.clone()).prop_map(|(w, a)| Op::Grant(w, a)),
        (1..40_i64).prop_map(Op::GrantTreasury),
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
        let new = NewChild::new(AgentHandle::new(name).unwrap(), name.to_owned());
        let child = block_on(world.agents.spawn(&parent_actor, new))
            .unwrap()
            .view
            .agent;
        let child = block_on(world.agents.activate(&parent_actor, child.id)).unwrap();
        members.push((child.clone(), actor_of(&child)));
    }
    members
}

/// The family's balances, then the treasury's.
fn balances(world: &World, family: &[(Agent, Actor)]) -> Vec<i64> {
    family
        .iter()
        .map(|(agent, _)| {
            block_on(world.agents.balance(&world.admin, agent.id))
                .unwrap()
                .current_balance
        })
        .chain([block_on(world.treasury.get(&world.admin)).unwrap().balance])
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
        Op::GrantTreasury(a) => block_on(world.treasury.grant(&world.admin, amount(a), None))
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
        // The admin's task: its default reward comes from the treasury while it lasts
        // (reward 0 after), and is paid out in full: nothing is created or destroyed.
        Op::Finish(who) => {
            let task = world.task("paid work");
            block_on(world.tasks.assign(&world.admin, task.id, family[who].0.id)).unwrap();
            for to in [TaskStatus::InProgress, TaskStatus::Done] {
                block_on(world.tasks.transition(&world.admin, task.id, to, None)).unwrap();
            }
            Some(0)
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
        let world = World::with_treasury(TREASURY);
        let family = family(&world, fee);
        let mut circulating = TREASURY;
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
        let treasury = block_on(world.treasury.get(&world.admin)).unwrap().balance;
        let entries = block_on(TreasuryRepository::history(&world.store, world.org, None, 10_000)).unwrap();
        prop_assert_eq!(entries.iter().map(|e| e.amount).sum::<i64>(), treasury);
        prop_assert_eq!(entries.first().map(|e| e.balance_after), Some(treasury));
    }
}
