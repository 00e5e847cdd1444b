//! Helpers of the closed-economy tests (decision D-101) on the in-memory store: tasks
//! created with rewards and moved along, the rewards patched, family members with fees,
//! and refusals that must leave the [`Books`] as they were.

use futures_executor::block_on;
use muster_domain::model::{
    Actor, ActorKind, Agent, AgentId, ApiKeyId, ApiKeyScope, Event, FeePct, KeyAccess, Task,
    TaskId, TaskStatus, UserRole,
};
use muster_domain::service::{CreditAmount, NewAgent, NewTask, ServiceError, TaskPatch};
use serde_json::Value;
use uuid::Uuid;

use super::books::Books;
use super::new_task;
use super::world::{World, actor_of};

pub fn credits(n: i64) -> CreditAmount {
    CreditAmount::new(n).unwrap()
}

/// Grants `n` credits to `agent` (as the admin).
pub fn grant(world: &World, agent: AgentId, n: i64) {
    block_on(world.agents.grant(&world.admin, agent, credits(n), None)).unwrap();
}

/// Creates a task as `actor`, assigned to `assignee`, with `reward` (`None`: the default).
pub fn create(
    world: &World,
    actor: &Actor,
    reward: Option<i64>,
    assignee: Option<AgentId>,
) -> Result<Task, ServiceError> {
    let new = NewTask {
        assignee_id: assignee,
        reward,
        ..new_task("paid work")
    };
    block_on(world.tasks.create(actor, new))
}

/// Moves the task `id` to `to` as `actor`.
pub fn move_to(world: &World, actor: &Actor, id: TaskId, to: TaskStatus) -> Task {
    block_on(world.tasks.transition(actor, id, to, None)).unwrap()
}

/// Moves the task `id` to in progress, then done, as `actor`.
pub fn finish(world: &World, actor: &Actor, id: TaskId) -> Task {
    move_to(world, actor, id, TaskStatus::InProgress);
    move_to(world, actor, id, TaskStatus::Done)
}

/// Sets the reward of the task `id` as `actor`.
pub fn set_reward(
    world: &World,
    actor: &Actor,
    id: TaskId,
    reward: i64,
) -> Result<Task, ServiceError> {
    let patch = TaskPatch {
        reward: Some(reward),
        ..TaskPatch::default()
    };
    block_on(world.tasks.update(actor, id, patch))
}

/// The events of `event_type` about the task `task`, oldest first.
pub fn task_events(world: &World, event_type: &str, task: TaskId) -> Vec<Event> {
    world
        .events(event_type)
        .into_iter()
        .filter(|e| e.entity_id == task.as_uuid())
        .collect()
}

/// The payload of the one `event_type` event about `task`.
pub fn payload(world: &World, event_type: &str, task: TaskId) -> Value {
    let events = task_events(world, event_type, task);
    assert_eq!(events.len(), 1, "{event_type} of {task}: {events:?}");
    events[0].payload.clone()
}

/// The agent `id` as stored now.
pub fn agent(world: &World, id: AgentId) -> Agent {
    block_on(world.agents.balance(&world.admin, id)).unwrap()
}

/// A worker registered with a `fee` % management fee.
pub fn manager(world: &World, handle: &str, level: i64, fee: i64) -> (Agent, Actor) {
    let new = NewAgent {
        management_fee_pct: FeePct::new(fee).unwrap(),
        ..World::new_worker(handle, level, &[])
    };
    let agent = block_on(world.agents.register(&world.hr, new))
        .unwrap()
        .view
        .agent;
    let actor = actor_of(&agent);
    (agent, actor)
}

/// A worker child of `parent`, one level below it, spawned and activated.
pub fn child(world: &World, parent: &Actor, handle: &str) -> (Agent, Actor) {
    let spawned = block_on(world.agents.spawn(parent, World::new_child(handle, None)))
        .unwrap()
        .view
        .agent;
    let active = block_on(world.agents.activate(parent, spawned.id)).unwrap();
    let actor = actor_of(&active);
    (active, actor)
}

/// A user of the organization signed in through an API key of `scope`.
pub fn key_user(world: &World, role: UserRole, scope: ApiKeyScope) -> Actor {
    let ActorKind::User { id, .. } = world.admin.kind else {
        unreachable!()
    };
    Actor {
        org_id: world.org,
        kind: ActorKind::User {
            id,
            role,
            key: Some(KeyAccess {
                id: ApiKeyId::from_uuid(Uuid::from_u128(0x4e1)),
                scope,
            }),
        },
    }
}

/// The books now, checked against the conservation equation.
pub fn checked(world: &World) -> Books {
    let books = Books::of(world);
    books.check().unwrap();
    books
}

/// Runs `refused`, which must fail with what `expected` accepts and change nothing.
pub fn refused_unchanged<T: std::fmt::Debug>(
    world: &World,
    refused: impl FnOnce() -> Result<T, ServiceError>,
    expected: impl Fn(&ServiceError) -> bool,
) -> ServiceError {
    let before = checked(world);
    let err = refused().unwrap_err();
    assert!(expected(&err), "{err:?}");
    assert_eq!(
        Books::of(world),
        before,
        "a refusal changed something: {err:?}"
    );
    err
}
