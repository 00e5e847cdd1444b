//! Shared fixtures for the use-case tests: sample actors, agents and tasks, and
//! deterministic clock / id mocks. Each test binary uses a different subset.
#![allow(dead_code)]

pub mod accounts;
pub mod agents;
pub mod books;
pub mod economy;
pub mod runs;
pub mod world;
pub mod writes;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use muster_domain::model::{
    Actor, ActorKind, Agent, AgentHandle, AgentId, AgentMode, AgentRole, AgentStatus, Author,
    Event, FeePct, Level, OrgId, RewardPayer, Tags, Task, TaskId, TaskPriority, TaskStatus, Title,
    UserId, UserRole,
};
use muster_domain::ports::{MockClock, MockIdGenerator};
use muster_domain::service::NewTask;
use serde_json::Map;
use time::OffsetDateTime;
use time::macros::datetime;
use uuid::Uuid;

/// The fixed "now" every mocked clock answers.
pub const NOW: OffsetDateTime = datetime!(2025-03-04 05:06:07.089 UTC);

/// An earlier instant, for stored rows.
pub const EARLIER: OffsetDateTime = datetime!(2025-01-01 00:00:00 UTC);

/// The organization of every sample actor.
pub fn org() -> OrgId {
    OrgId::from_uuid(Uuid::from_u128(0x0a))
}

/// The agent id of [`agent_actor`].
pub fn actor_agent_id() -> AgentId {
    AgentId::from_uuid(Uuid::from_u128(0xa1))
}

/// The user id of [`user_actor`].
pub fn actor_user_id() -> UserId {
    UserId::from_uuid(Uuid::from_u128(0xb1))
}

/// An agent caller of [`org`] with `mode`.
pub fn agent_actor(mode: AgentMode) -> Actor {
    Actor {
        org_id: org(),
        kind: ActorKind::Agent {
            id: actor_agent_id(),
            role: AgentRole::Worker,
            mode,
            level: Level::new(3).unwrap(),
        },
    }
}

/// A human caller of [`org`] with `role`.
pub fn user_actor(role: UserRole) -> Actor {
    Actor {
        org_id: org(),
        kind: ActorKind::User {
            id: actor_user_id(),
            role,
            key: None,
        },
    }
}

/// The service itself, acting in [`org`].
pub fn system_actor() -> Actor {
    Actor {
        org_id: org(),
        kind: ActorKind::System,
    }
}

/// A stored agent of [`org`].
pub fn sample_agent(id: AgentId, mode: AgentMode, status: AgentStatus) -> Agent {
    Agent {
        id,
        org_id: org(),
        handle: AgentHandle::new("worker-7").unwrap(),
        name: "Worker Seven".into(),
        level: Level::new(2).unwrap(),
        model: Some("model-x".into()),
        role: AgentRole::Worker,
        mode,
        status,
        parent_id: None,
        current_balance: 0,
        budget_period_limit: None,
        budget_period_spent: 0,
        budget_period_start: EARLIER,
        reserved_credits: 0,
        budget_exhausted: false,
        management_fee_pct: FeePct::default(),
        reputation_score: 50,
        metadata: Map::new(),
        created_at: EARLIER,
    }
}

/// A stored task of [`org`] with id `id` in `status`, at version 7.
pub fn sample_task(id: TaskId, status: TaskStatus) -> Task {
    Task {
        status,
        priority: TaskPriority::High,
        creator: Some(Author::Agent(actor_agent_id())),
        version: 7,
        reward_payer: RewardPayer::Agent(actor_agent_id()),
        ..Task::new(id, org(), Title::new("Write the report").unwrap(), EARLIER)
    }
}

/// A task id built from a small number, for readable fixtures.
pub fn task_id(n: u128) -> TaskId {
    TaskId::from_uuid(Uuid::from_u128(0x7000 + n))
}

/// A minimal creation request.
pub fn new_task(title: &str) -> NewTask {
    NewTask {
        priority: TaskPriority::Urgent,
        tags: Tags::new(vec!["ops".into()]).unwrap(),
        ..NewTask::new(Title::new(title).unwrap())
    }
}

/// A clock stuck at [`NOW`].
pub fn clock() -> Arc<MockClock> {
    let mut clock = MockClock::new();
    clock.expect_now().return_const(NOW);
    Arc::new(clock)
}

/// An id generator answering distinct, increasing UUIDs starting at `0x1000`.
pub fn ids() -> Arc<MockIdGenerator> {
    let next = AtomicU64::new(0x1000);
    let mut ids = MockIdGenerator::new();
    ids.expect_new_id()
        .returning(move || Uuid::from_u128(u128::from(next.fetch_add(1, Ordering::SeqCst))));
    Arc::new(ids)
}

/// The `type` of each event, in order.
pub fn types(events: &[Event]) -> Vec<&str> {
    events.iter().map(|e| e.event_type.as_str()).collect()
}
