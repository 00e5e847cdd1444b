//! The closed economy (decision D-101) under random sequences on the in-memory store:
//! grants to agents and to the treasury; tasks created by agents and by a user with
//! explicit and default rewards, assigned and reassigned, moved through in progress and
//! review to done or cancelled; rewards patched; transfers and spends; a parent taking
//! a management fee. After every operation, accepted or refused: the organization's
//! agents' balances + treasury + open escrows = everything granted − everything spent,
//! no balance is below 0, every ledger adds up, and a refused operation changed nothing.

use crate::common::books::Books;
use crate::common::new_task;
use crate::common::world::{World, actor_of};

use futures_executor::block_on;
use proptest::prelude::*;

use muster_domain::model::{Actor, Agent, FeePct, RewardPayer, TaskId, TaskStatus};
use muster_domain::service::{CreditAmount, NewAgent, NewTask, ServiceError, TaskPatch};

/// Agents by index: 0 the parent (taking the fee), 1 and 2 its children, 3 unrelated.
const AGENTS: usize = 4;

/// Who acts: an agent by index, or (`None`) the admin user, whose tasks the treasury pays.
type Who = Option<usize>;

/// One step; tasks by index into those created so far (modulo their number).
#[derive(Debug, Clone)]
enum Op {
    Grant(usize, i64),
    GrantTreasury(i64),
    Create {
        by: Who,
        reward: Option<i64>,
        assignee: Option<usize>,
    },
    Assign(usize, usize),
    /// One step of an open task towards done (through review or not), as `Who`.
    Advance(usize, Who, bool),
    /// An open task cancelled, as `Who`.
    Cancel(usize, Who),
    /// Any move, mostly refused by the transition table.
    Move(usize, Who, TaskStatus),
    /// A new reward set by whoever pays the task.
    Reprice(usize, i64),
    /// A new reward set by anyone (mostly refused: not the payer).
    Reward(usize, Who, i64),
    Transfer(usize, usize, i64),
    Spend(usize, i64),
    Limit(usize, i64),
}

fn who() -> impl Strategy<Value = Who> {
    prop_oneof![Just(None), (0..AGENTS).prop_map(Some)]
}

fn status() -> impl Strategy<Value = TaskStatus> {
    use TaskStatus::{Blocked, Cancelled, Done, InProgress, Review, Todo};
    prop_oneof![
        3 => Just(InProgress),
        2 => Just(Review),
        3 => Just(Done),
        1 => Just(Cancelled),
        1 => Just(Todo),
        1 => Just(Blocked),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    let agent = 0..AGENTS;
    let amount = 1..60_i64;
    let task = 0..16_usize;
    prop_oneof![
        3 => (agent.clone(), 1..100_i64).prop_map(|(a, n)| Op::Grant(a, n)),
        2 => (1..100_i64).prop_map(Op::GrantTreasury),
        5 => (who(), prop::option::of(0..40_i64), prop::option::of(agent.clone()))
            .prop_map(|(by, reward, assignee)| Op::Create { by, reward, assignee }),
        2 => (task.clone(), agent.clone()).prop_map(|(t, a)| Op::Assign(t, a)),
        10 => (task.clone(), who(), any::<bool>()).prop_map(|(t, w, r)| Op::Advance(t, w, r)),
        2 => (task.clone(), who()).prop_map(|(t, w)| Op::Cancel(t, w)),
        2 => (task.clone(), who(), status()).prop_map(|(t, w, s)| Op::Move(t, w, s)),
        2 => (task.clone(), 0..40_i64).prop_map(|(t, r)| Op::Reprice(t, r)),
        1 => (task, who(), 0..40_i64).prop_map(|(t, w, r)| Op::Reward(t, w, r)),
        2 => (0..3_usize, 0..3_usize, amount.clone()).prop_map(|(f, t, n)| Op::Transfer(f, t, n)),
        2 => (agent.clone(), amount).prop_map(|(a, n)| Op::Spend(a, n)),
        1 => (agent, 0..100_i64).prop_map(|(a, l)| Op::Limit(a, l)),
    ]
}

/// The parent (fee `fee` %), its two children, and an unrelated worker.
fn agents(world: &World, fee: i64) -> Vec<(Agent, Actor)> {
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
        let spawned = block_on(
            world
                .agents
                .spawn(&parent_actor, World::new_child(name, None)),
        )
        .unwrap()
        .view
        .agent;
        let child = block_on(world.agents.activate(&parent_actor, spawned.id)).unwrap();
        members.push((child.clone(), actor_of(&child)));
    }
    members.push(world.worker("outsider", 3, &[]));
    members
}

/// The caller `who`: an agent, or the admin.
fn actor(world: &World, agents: &[(Agent, Actor)], who: Who) -> Actor {
    match who {
        Some(i) => agents[i].1.clone(),
        None => world.admin.clone(),
    }
}

fn credits(n: i64) -> CreditAmount {
    CreditAmount::new(n).unwrap()
}

/// Runs `op`: `None` when it does not apply (no task yet), else what the service said,
/// with the credits it created (grants) or destroyed (spends, negative) when accepted.
fn apply(
    world: &World,
    agents: &[(Agent, Actor)],
    tasks: &mut Vec<TaskId>,
    op: &Op,
) -> Option<Result<i64, ServiceError>> {
    Some(match *op {
        Op::Grant(a, n) => block_on(world.agents.grant(
            &world.admin,
            agents[a].0.id,
            credits(n),
            None,
        ))
        .map(|_| n),
        Op::GrantTreasury(n) => {
            block_on(world.treasury.grant(&world.admin, credits(n), None)).map(|_| n)
        }
        Op::Create {
            by,
            reward,
            assignee,
        } => {
            let new = NewTask {
                assignee_id: assignee.map(|a| agents[a].0.id),
                reward,
                ..new_task("work")
            };
            block_on(world.tasks.create(&actor(world, agents, by), new)).map(|t| {
                tasks.push(t.id);
                0
            })
        }
        Op::Transfer(from, to, n) => block_on(world.agents.transfer(
            &agents[from].1,
            agents[to].0.id,
            credits(n),
            None,
        ))
        .map(|_| 0),
        Op::Spend(a, n) => block_on(world.agents.spend(&agents[a].1, credits(n), None)).map(|_| -n),
        Op::Limit(a, limit) => block_on(world.agents.set_budget(
            &world.admin,
            agents[a].0.id,
            limit,
            false,
        ))
        .map(|_| 0),
        _ => return apply_to_task(world, agents, tasks, op),
    })
}

/// Runs `op` on one of `tasks` (any, or one still open): `None` when there is none.
fn apply_to_task(
    world: &World,
    agents: &[(Agent, Actor)],
    tasks: &[TaskId],
    op: &Op,
) -> Option<Result<i64, ServiceError>> {
    let read = |id: TaskId| block_on(world.tasks.get(&world.admin, id)).unwrap();
    let any = |i: usize| (!tasks.is_empty()).then(|| tasks[i % tasks.len()]);
    let open: Vec<TaskId> = tasks
        .iter()
        .copied()
        .filter(|id| !matches!(read(*id).status, TaskStatus::Done | TaskStatus::Cancelled))
        .collect();
    let open = |i: usize| (!open.is_empty()).then(|| open[i % open.len()]);
    let reward = |r: i64| TaskPatch {
        reward: Some(r),
        ..TaskPatch::default()
    };
    let outcome = match *op {
        Op::Assign(t, a) => {
            block_on(world.tasks.assign(&world.admin, any(t)?, agents[a].0.id)).map(|_| ())
        }
        Op::Advance(t, w, via_review) => {
            let id = open(t)?;
            let to = match read(id).status {
                TaskStatus::Backlog => TaskStatus::Todo,
                TaskStatus::Todo | TaskStatus::Blocked => TaskStatus::InProgress,
                TaskStatus::InProgress if via_review => TaskStatus::Review,
                TaskStatus::InProgress | TaskStatus::Review => TaskStatus::Done,
                TaskStatus::Done | TaskStatus::Cancelled => return None,
            };
            block_on(
                world
                    .tasks
                    .transition(&actor(world, agents, w), id, to, None),
            )
            .map(|_| ())
        }
        Op::Cancel(t, w) => block_on(world.tasks.transition(
            &actor(world, agents, w),
            open(t)?,
            TaskStatus::Cancelled,
            None,
        ))
        .map(|_| ()),
        Op::Move(t, w, to) => block_on(world.tasks.transition(
            &actor(world, agents, w),
            any(t)?,
            to,
            None,
        ))
        .map(|_| ()),
        Op::Reprice(t, r) => {
            let id = open(t)?;
            let payer = match read(id).reward_payer {
                RewardPayer::Agent(payer) => agents
                    .iter()
                    .find(|(a, _)| a.id == payer)
                    .unwrap()
                    .1
                    .clone(),
                RewardPayer::Treasury => world.admin.clone(),
            };
            block_on(world.tasks.update(&payer, id, reward(r))).map(|_| ())
        }
        Op::Reward(t, w, r) => block_on(world.tasks.update(
            &actor(world, agents, w),
            any(t)?,
            reward(r),
        ))
        .map(|_| ()),
        _ => unreachable!("not a task's: {op:?}"),
    };
    Some(outcome.map(|()| 0))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn every_credit_is_granted_held_or_spent_after_every_operation(
        fee in 0..=50_i64,
        ops in prop::collection::vec(op(), 1..64),
    ) {
        let world = World::new();
        let agents = agents(&world, fee);
        let mut tasks = Vec::new();
        // Credits created minus credits destroyed, by the test's own count.
        let mut existing = 0_i64;
        let mut books = Books::of(&world);
        prop_assert_eq!(books.check(), Ok(()));
        for (step, op) in ops.iter().enumerate() {
            let Some(outcome) = apply(&world, &agents, &mut tasks, op) else {
                continue;
            };
            let after = Books::of(&world);
            match outcome {
                Ok(change) => existing += change,
                Err(err) => prop_assert_eq!(
                    &after, &books, "step {} {:?} was refused ({}) but changed something",
                    step, op, err
                ),
            }
            prop_assert_eq!(after.check(), Ok(()), "after step {} {:?}", step, op);
            prop_assert_eq!(after.held(), existing, "after step {} {:?}", step, op);
            prop_assert_eq!(after.granted() - after.spent(), existing);
            books = after;
        }
    }
}
