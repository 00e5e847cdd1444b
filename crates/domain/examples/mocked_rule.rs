//! Unit-testing a rule with the `mockall` mocks of the ports (feature `mocks`).
//!
//! The rule: a task in the backlog cannot jump straight to `done` (the transition table
//! refuses it), and a refused move writes nothing: no task update, no audit event, and
//! the unit of work rolls back. The mocked transaction states exactly which reads and
//! writes the use case may make; any other call fails the run.
//!
//! Run: `cargo run -p muster-domain --features mocks --example mocked_rule`.

use std::error::Error;
use std::sync::Arc;

use futures_executor::block_on;
use muster_domain::model::{
    Actor, ActorKind, Author, OrgId, Task, TaskId, TaskStatus, Title, UserId, UserRole,
};
use muster_domain::ports::{
    Lock, MockClock, MockIdGenerator, MockTaskRepository, MockTransaction, MockUnitOfWork, Outcome,
};
use muster_domain::service::{ServiceError, TaskService};
use time::OffsetDateTime;
use uuid::Uuid;

fn main() -> Result<(), Box<dyn Error>> {
    let org = OrgId::from_uuid(Uuid::from_u128(1));
    let id = TaskId::from_uuid(Uuid::from_u128(2));
    let operator = Actor {
        org_id: org,
        kind: ActorKind::User {
            id: UserId::from_uuid(Uuid::from_u128(3)),
            role: UserRole::Operator,
            key: None,
        },
    };
    let stored = backlog_task(org, id)?;

    // The transaction: the task is read once, locked for update, in the caller's
    // organization; nothing may be written.
    let mut tx = MockTransaction::new();
    tx.expect_task()
        .withf(move |o, t, lock| *o == org && *t == id && *lock == Lock::Update)
        .times(1)
        .returning(move |_, _, _| Ok(Some(stored.clone())));
    tx.expect_update_task().never();
    tx.expect_append_events().never();
    let uow = Arc::new(MockUnitOfWork::new(tx));

    let mut clock = MockClock::new();
    clock.expect_now().return_const(OffsetDateTime::UNIX_EPOCH);
    let mut ids = MockIdGenerator::new();
    ids.expect_new_id().returning(Uuid::nil);
    let service = TaskService::new(
        Arc::new(MockTaskRepository::new()),
        uow.clone(),
        Arc::new(clock),
        Arc::new(ids),
    );

    let refused = block_on(service.transition(&operator, id, TaskStatus::Done, None));
    match refused {
        Err(ServiceError::Transition(error)) => println!("refused as expected: {error}"),
        other => return Err(format!("expected a refused transition, got {other:?}").into()),
    }
    if uow.outcomes() != [Outcome::RolledBack] {
        return Err(format!("expected one rolled-back unit, got {:?}", uow.outcomes()).into());
    }
    println!("nothing was written and the unit of work rolled back");
    Ok(())
}

/// The stored task: in the backlog, at version 1.
fn backlog_task(org: OrgId, id: TaskId) -> Result<Task, Box<dyn Error>> {
    let title = Title::new("Write the report")?;
    Ok(Task {
        status: TaskStatus::Backlog,
        creator: Some(Author::User(UserId::from_uuid(Uuid::from_u128(3)))),
        ..Task::new(id, org, title, OffsetDateTime::UNIX_EPOCH)
    })
}
