//! `TaskService::create`, `get` and `list` against mocked ports.

use crate::common;

use std::sync::{Arc, Mutex};

use common::{
    NOW, actor_agent_id, actor_user_id, agent_actor, new_task, org, sample_agent, sample_task,
    system_actor, task_id, types, user_actor,
};
use futures_executor::block_on;
use muster_domain::model::{
    Actor, AgentId, AgentMode, AgentStatus, Author, Event, EventSeverity, OrgId, RewardPayer, Task,
    TaskStatus, UserRole,
};
use muster_domain::ports::{
    Lock, MockTaskRepository, MockTransaction, MockUnitOfWork, Outcome, RepositoryError,
    TaskFilter, UniqueKey,
};
use muster_domain::service::{Conflict, Entity, NewTask, NotFound, ServiceError, TaskService};
use serde_json::json;
use uuid::Uuid;

/// What one unit of work stored: the task, then the events.
type Inserted = Arc<Mutex<Vec<(Task, Vec<Event>)>>>;

/// The service, with no default reward: these tests are about the task row, so no
/// payer is read or charged (the escrow has its own tests, in `economy`).
fn service(tasks: MockTaskRepository, uow: &Arc<MockUnitOfWork>) -> TaskService {
    TaskService::new(Arc::new(tasks), uow.clone(), common::clock(), common::ids()).with_reward(0)
}

/// A service whose transaction is `tx` (no repository reads expected).
fn service_on(tx: MockTransaction) -> (TaskService, Arc<MockUnitOfWork>) {
    let uow = Arc::new(MockUnitOfWork::new(tx));
    (service(MockTaskRepository::new(), &uow), uow)
}

/// Expects exactly one task insert followed by one append of its events, in the same
/// transaction, and records what they were given.
fn expect_one_insert(tx: &mut MockTransaction) -> Inserted {
    let inserted: Inserted = Arc::default();
    let mut seq = mockall::Sequence::new();
    let sink = Arc::clone(&inserted);
    tx.expect_insert_task()
        .times(1)
        .in_sequence(&mut seq)
        .returning(move |task| {
            sink.lock().unwrap().push((task.clone(), Vec::new()));
            Ok(())
        });
    let sink = Arc::clone(&inserted);
    tx.expect_append_events()
        .times(1)
        .in_sequence(&mut seq)
        .returning(move |events| {
            sink.lock().unwrap()[0].1 = events.to_vec();
            Ok(())
        });
    inserted
}

fn assignee_id() -> AgentId {
    AgentId::from_uuid(Uuid::from_u128(0xa5))
}

/// Creates a task assigned to an agent stored with `mode` and `status`; nothing may be
/// written, and the unit of work must roll back.
fn create_with_assignee(stored: Option<(AgentMode, AgentStatus)>) -> ServiceError {
    let mut tx = MockTransaction::new();
    tx.expect_insert_task().never();
    tx.expect_append_events().never();
    tx.expect_agent()
        .withf(|o, id, lock| *o == org() && *id == assignee_id() && *lock == Lock::Share)
        .times(1)
        .returning(move |_, id, _| Ok(stored.map(|(mode, status)| sample_agent(id, mode, status))));
    let new = NewTask {
        assignee_id: Some(assignee_id()),
        ..new_task("Assigned")
    };
    let (service, uow) = service_on(tx);
    let err = block_on(service.create(&agent_actor(AgentMode::Worker), new)).unwrap_err();
    assert_eq!(uow.outcomes(), [Outcome::RolledBack]);
    err
}

#[test]
fn create_stores_a_todo_task_at_version_1_with_one_created_event() {
    let mut tx = MockTransaction::new();
    let inserted = expect_one_insert(&mut tx);
    let actor = agent_actor(AgentMode::Worker);
    let (service, uow) = service_on(tx);

    let task = block_on(service.create(&actor, new_task("Ship"))).unwrap();

    assert_eq!(uow.outcomes(), [Outcome::Committed]);

    assert_eq!(task.status, TaskStatus::Todo);
    assert_eq!(task.version, 1);
    assert_eq!(task.creator, Some(Author::Agent(actor_agent_id())));
    assert_eq!(task.reward_payer, RewardPayer::Agent(actor_agent_id()));
    assert_eq!(task.reward, 0);
    assert_eq!(task.org_id, org());
    assert_eq!(task.title.as_str(), "Ship");
    assert_eq!(task.tags.as_slice(), ["ops"], "the tags asked for");
    assert_eq!((task.created_at, task.updated_at), (NOW, NOW));

    let inserted = inserted.lock().unwrap();
    let (stored, events) = &inserted[0];
    assert_eq!(stored, &task, "the stored task is the one returned");
    assert_eq!(types(events), ["task.created"]);
    let event = &events[0];
    assert_eq!(event.org_id, org());
    assert_eq!(event.actor_id, Some(actor_agent_id().as_uuid()));
    assert_eq!(event.entity_type, "task");
    assert_eq!(event.entity_id, task.id.as_uuid());
    assert_eq!(event.severity, EventSeverity::Info);
    assert_eq!(event.created_at, NOW);
    assert_ne!(
        event.id.as_uuid(),
        task.id.as_uuid(),
        "event and task get their own ids"
    );
    assert_eq!(event.payload["title"], "Ship");
    assert_eq!(event.payload["status"], "todo");
    assert_eq!(event.payload["priority"], "urgent");
    assert_eq!(event.payload["reward"], 0);
}

#[test]
fn create_by_a_user_records_the_user_as_creator() {
    let mut tx = MockTransaction::new();
    let inserted = expect_one_insert(&mut tx);
    let (service, _) = service_on(tx);

    let task = block_on(service.create(&user_actor(UserRole::Operator), new_task("From a human")))
        .unwrap();

    assert_eq!(task.creator, Some(Author::User(actor_user_id())));
    assert_eq!(task.reward_payer, RewardPayer::Treasury);
    assert_eq!(task.status, TaskStatus::Todo);
    let events = &inserted.lock().unwrap()[0].1;
    assert_eq!(events[0].actor_id, Some(actor_user_id().as_uuid()));
}

#[test]
fn create_by_the_system_has_no_creator_and_no_event_actor() {
    let mut tx = MockTransaction::new();
    let inserted = expect_one_insert(&mut tx);
    let (service, _) = service_on(tx);

    let task = block_on(service.create(&system_actor(), new_task("Swept"))).unwrap();

    assert_eq!(task.creator, None);
    assert_eq!(task.reward_payer, RewardPayer::Treasury);
    assert_eq!(inserted.lock().unwrap()[0].1[0].actor_id, None);
}

#[test]
fn read_only_actors_cannot_create() {
    for actor in [
        agent_actor(AgentMode::Observer),
        user_actor(UserRole::Viewer),
    ] {
        // Refused before any transaction: nothing is read or written.
        let (service, uow) = service_on(MockTransaction::new());
        let new = NewTask {
            assignee_id: Some(assignee_id()),
            parent_task_id: Some(task_id(1)),
            ..new_task("Nope")
        };

        let err = block_on(service.create(&actor, new)).unwrap_err();

        assert!(uow.outcomes().is_empty(), "no transaction was opened");
        assert!(
            matches!(err, ServiceError::Forbidden(_)),
            "{actor:?}: {err:?}"
        );
    }
}

#[test]
fn create_with_an_active_worker_assignee_looks_it_up_in_the_actor_org() {
    let mut tx = MockTransaction::new();
    tx.expect_agent()
        .withf(|o, id, lock| *o == org() && *id == assignee_id() && *lock == Lock::Share)
        .times(1)
        .returning(|_, id, _| {
            Ok(Some(sample_agent(
                id,
                AgentMode::Worker,
                AgentStatus::Active,
            )))
        });
    let new = NewTask {
        assignee_id: Some(assignee_id()),
        ..new_task("Assigned")
    };

    let inserted = expect_one_insert(&mut tx);
    let (service, _) = service_on(tx);

    let task = block_on(service.create(&agent_actor(AgentMode::Worker), new)).unwrap();

    assert_eq!(task.assignee_id, Some(assignee_id()));
    let events = &inserted.lock().unwrap()[0].1;
    assert_eq!(
        events[0].payload["assigneeId"],
        json!(assignee_id().as_uuid())
    );
}

#[test]
fn create_with_an_unknown_assignee_is_not_found() {
    let err = create_with_assignee(None);
    assert!(
        matches!(&err, ServiceError::NotFound(nf) if *nf == NotFound::new(Entity::Agent, assignee_id())),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        format!("Agent {} not found", assignee_id())
    );
}

#[test]
fn create_with_an_inactive_assignee_is_a_conflict() {
    for status in [
        AgentStatus::Suspended,
        AgentStatus::Pending,
        AgentStatus::Revoked,
    ] {
        let err = create_with_assignee(Some((AgentMode::Worker, status)));
        assert!(
            matches!(err, ServiceError::Conflict(Conflict::AssigneeNotActive { agent }) if agent == assignee_id()),
            "{status:?}: {err:?}"
        );
    }
}

#[test]
fn create_with_an_orchestrator_or_observer_assignee_is_a_conflict() {
    for mode in [AgentMode::Orchestrator, AgentMode::Observer] {
        let err = create_with_assignee(Some((mode, AgentStatus::Active)));
        assert!(
            matches!(err, ServiceError::Conflict(Conflict::AssigneeDoesNotExecute { mode: m, .. }) if m == mode),
            "{mode:?}: {err:?}"
        );
    }
}

#[test]
fn create_under_an_unknown_parent_is_not_found() {
    let mut tx = MockTransaction::new();
    tx.expect_task()
        .withf(|o, id, lock| *o == org() && *id == task_id(1) && *lock == Lock::Share)
        .times(1)
        .returning(|_, _, _| Ok(None));
    tx.expect_insert_task().never();
    tx.expect_append_events().never();
    let new = NewTask {
        parent_task_id: Some(task_id(1)),
        ..new_task("Child")
    };
    let (service, uow) = service_on(tx);

    let err = block_on(service.create(&agent_actor(AgentMode::Worker), new)).unwrap_err();

    assert!(
        matches!(&err, ServiceError::NotFound(nf) if *nf == NotFound::new(Entity::ParentTask, task_id(1))),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        format!("Parent task {} not found", task_id(1))
    );
    assert_eq!(uow.outcomes(), [Outcome::RolledBack]);
}

#[test]
fn create_under_an_existing_parent_keeps_the_link() {
    let mut tx = MockTransaction::new();
    tx.expect_task()
        .withf(|o, id, lock| *o == org() && *id == task_id(1) && *lock == Lock::Share)
        .times(1)
        .returning(|_, id, _| Ok(Some(sample_task(id, TaskStatus::InProgress))));
    let inserted = expect_one_insert(&mut tx);
    let new = NewTask {
        parent_task_id: Some(task_id(1)),
        ..new_task("Child")
    };
    let (service, _) = service_on(tx);

    let task = block_on(service.create(&agent_actor(AgentMode::Worker), new)).unwrap();

    assert_eq!(task.parent_task_id, Some(task_id(1)));
    assert_eq!(
        inserted.lock().unwrap()[0].0.parent_task_id,
        Some(task_id(1))
    );
}

#[test]
fn get_returns_the_task_of_the_actor_org() {
    let mut tasks = MockTaskRepository::new();
    tasks
        .expect_get()
        .withf(|o, id| *o == org() && *id == task_id(2))
        .times(1)
        .returning(|_, id| Ok(Some(sample_task(id, TaskStatus::Review))));

    let uow = Arc::new(MockUnitOfWork::new(MockTransaction::new()));
    let task =
        block_on(service(tasks, &uow).get(&agent_actor(AgentMode::Observer), task_id(2))).unwrap();

    assert_eq!(task, sample_task(task_id(2), TaskStatus::Review));
}

#[test]
fn get_of_a_missing_task_is_not_found() {
    let mut tasks = MockTaskRepository::new();
    tasks.expect_get().returning(|_, _| Ok(None));

    let uow = Arc::new(MockUnitOfWork::new(MockTransaction::new()));
    let err = block_on(service(tasks, &uow).get(&agent_actor(AgentMode::Worker), task_id(3)))
        .unwrap_err();

    assert!(matches!(err, ServiceError::NotFound(_)), "{err:?}");
    assert_eq!(err.to_string(), format!("Task {} not found", task_id(3)));
}

/// Lists with `limit` while the repository holds `stored` matching rows; checks that the
/// repository is asked for one row more than the page size, with the actor's org and the
/// filter and cursor unchanged.
fn list_page(limit: u32, stored: u128) -> muster_domain::service::TaskPage {
    let filter = TaskFilter {
        status: Some(TaskStatus::Todo),
        assignee_id: Some(assignee_id()),
        creator_id: None,
        parent_task_id: Some(task_id(99)),
        ..TaskFilter::default()
    };
    let expected_filter = filter.clone();
    let mut tasks = MockTaskRepository::new();
    tasks
        .expect_list()
        .withf(move |o: &OrgId, f: &TaskFilter, before, asked| {
            *o == org()
                && *f == expected_filter
                && *before == Some(task_id(50))
                && *asked == limit + 1
        })
        .times(1)
        .returning(move |_, _, _, asked| {
            let rows = stored.min(u128::from(asked));
            Ok((0..rows)
                .map(|n| sample_task(task_id(n), TaskStatus::Todo))
                .collect())
        });
    let actor: Actor = agent_actor(AgentMode::Worker);

    let uow = Arc::new(MockUnitOfWork::new(MockTransaction::new()));
    block_on(service(tasks, &uow).list(&actor, &filter, Some(task_id(50)), limit)).unwrap()
}

#[test]
fn list_with_more_rows_than_the_page_returns_a_cursor_to_the_last_task() {
    let page = list_page(3, 10);

    let ids: Vec<_> = page.items.iter().map(|t| t.id).collect();
    assert_eq!(ids, [task_id(0), task_id(1), task_id(2)]);
    assert_eq!(page.next_cursor, Some(task_id(2)));
}

#[test]
fn list_of_exactly_one_page_has_no_cursor() {
    let page = list_page(3, 3);

    assert_eq!(page.items.len(), 3);
    assert_eq!(page.next_cursor, None);
}

#[test]
fn list_of_fewer_rows_than_the_page_has_no_cursor() {
    let page = list_page(5, 2);

    assert_eq!(page.items.len(), 2);
    assert_eq!(page.next_cursor, None);
}

#[test]
fn a_failed_write_rolls_the_whole_creation_back() {
    // The task row was written, then appending its event failed: the unit of work must
    // end in a rollback and the caller must see the storage failure.
    let mut tx = MockTransaction::new();
    tx.expect_insert_task().times(1).returning(|_| Ok(()));
    tx.expect_append_events()
        .times(1)
        .returning(|_| Err(RepositoryError::internal("disk full")));
    let (service, uow) = service_on(tx);

    let err =
        block_on(service.create(&agent_actor(AgentMode::Worker), new_task("Lost"))).unwrap_err();

    assert!(matches!(err, ServiceError::Internal(_)), "{err:?}");
    assert_eq!(uow.outcomes(), [Outcome::RolledBack]);
}

#[test]
fn a_taken_unique_value_is_a_typed_conflict() {
    let mut tx = MockTransaction::new();
    tx.expect_insert_task().times(1).returning(|_| {
        Err(RepositoryError::Duplicate(UniqueKey::Other(
            "tasks_pkey".into(),
        )))
    });
    let (service, uow) = service_on(tx);

    let err =
        block_on(service.create(&agent_actor(AgentMode::Worker), new_task("Twice"))).unwrap_err();

    assert!(
        matches!(&err, ServiceError::Conflict(Conflict::Duplicate(UniqueKey::Other(name))) if name == "tasks_pkey"),
        "{err:?}"
    );
    assert_eq!(uow.outcomes(), [Outcome::RolledBack]);
}
