//! `TaskService::create`, `get` and `list` against mocked ports.
// Helpers outside `#[test]` functions are not covered by clippy.toml's allow-*-in-tests.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::{Arc, Mutex};

use common::{
    NOW, actor_agent_id, actor_user_id, agent_actor, new_task, org, sample_agent, sample_task,
    system_actor, task_id, types, user_actor,
};
use futures_executor::block_on;
use muster_domain::model::{
    Actor, AgentId, AgentMode, AgentStatus, Event, EventSeverity, OrgId, Task, TaskStatus, UserRole,
};
use muster_domain::ports::{MockAgentRepository, MockTaskRepository, TaskFilter};
use muster_domain::service::{NewTask, ServiceError, TaskService};
use serde_json::json;
use uuid::Uuid;

type Inserted = Arc<Mutex<Vec<(Task, Vec<Event>)>>>;

fn service(tasks: MockTaskRepository, agents: MockAgentRepository) -> TaskService {
    TaskService::new(
        Arc::new(tasks),
        Arc::new(agents),
        common::clock(),
        common::ids(),
    )
}

/// Expects exactly one `insert` and records what it was given.
fn expect_one_insert(tasks: &mut MockTaskRepository) -> Inserted {
    let inserted: Inserted = Arc::default();
    let sink = Arc::clone(&inserted);
    tasks
        .expect_insert()
        .times(1)
        .returning(move |task, events| {
            sink.lock().unwrap().push((task.clone(), events.to_vec()));
            Ok(())
        });
    inserted
}

fn assignee_id() -> AgentId {
    AgentId::from_uuid(Uuid::from_u128(0xa5))
}

/// Creates a task assigned to an agent stored with `mode` and `status`; the insert must
/// not happen.
fn create_with_assignee(stored: Option<(AgentMode, AgentStatus)>) -> ServiceError {
    let mut tasks = MockTaskRepository::new();
    tasks.expect_insert().never();
    let mut agents = MockAgentRepository::new();
    agents
        .expect_get()
        .withf(|o, id| *o == org() && *id == assignee_id())
        .times(1)
        .returning(move |_, id| Ok(stored.map(|(mode, status)| sample_agent(id, mode, status))));
    let new = NewTask {
        assignee_id: Some(assignee_id()),
        ..new_task("Assigned")
    };
    block_on(service(tasks, agents).create(&agent_actor(AgentMode::Worker), new)).unwrap_err()
}

#[test]
fn create_stores_a_todo_task_at_version_1_with_one_created_event() {
    let mut tasks = MockTaskRepository::new();
    let inserted = expect_one_insert(&mut tasks);
    let actor = agent_actor(AgentMode::Worker);

    let task =
        block_on(service(tasks, MockAgentRepository::new()).create(&actor, new_task("Ship")))
            .unwrap();

    assert_eq!(task.status, TaskStatus::Todo);
    assert_eq!(task.version, 1);
    assert_eq!(task.creator_id, Some(actor_agent_id()));
    assert_eq!(task.org_id, org());
    assert_eq!(task.title.as_str(), "Ship");
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
}

#[test]
fn create_by_a_user_has_no_agent_creator_but_records_the_user() {
    let mut tasks = MockTaskRepository::new();
    let inserted = expect_one_insert(&mut tasks);

    let task = block_on(
        service(tasks, MockAgentRepository::new())
            .create(&user_actor(UserRole::Operator), new_task("From a human")),
    )
    .unwrap();

    assert_eq!(task.creator_id, None);
    assert_eq!(task.status, TaskStatus::Todo);
    let events = &inserted.lock().unwrap()[0].1;
    assert_eq!(events[0].actor_id, Some(actor_user_id().as_uuid()));
}

#[test]
fn create_by_the_system_has_no_creator_and_no_event_actor() {
    let mut tasks = MockTaskRepository::new();
    let inserted = expect_one_insert(&mut tasks);

    let task = block_on(
        service(tasks, MockAgentRepository::new()).create(&system_actor(), new_task("Swept")),
    )
    .unwrap();

    assert_eq!(task.creator_id, None);
    assert_eq!(inserted.lock().unwrap()[0].1[0].actor_id, None);
}

#[test]
fn read_only_actors_cannot_create() {
    for actor in [
        agent_actor(AgentMode::Observer),
        user_actor(UserRole::Viewer),
    ] {
        // Lookups may or may not happen; whatever they find, nothing is stored.
        let mut tasks = MockTaskRepository::new();
        tasks.expect_insert().never();
        tasks
            .expect_get()
            .returning(|_, id| Ok(Some(sample_task(id, TaskStatus::Todo))));
        let mut agents = MockAgentRepository::new();
        agents.expect_get().returning(|_, id| {
            Ok(Some(sample_agent(
                id,
                AgentMode::Worker,
                AgentStatus::Active,
            )))
        });
        let new = NewTask {
            assignee_id: Some(assignee_id()),
            parent_task_id: Some(task_id(1)),
            ..new_task("Nope")
        };

        let err = block_on(service(tasks, agents).create(&actor, new)).unwrap_err();

        assert!(
            matches!(err, ServiceError::Forbidden(_)),
            "{actor:?}: {err:?}"
        );
    }
}

#[test]
fn create_with_an_active_worker_assignee_looks_it_up_in_the_actor_org() {
    let mut tasks = MockTaskRepository::new();
    let inserted = expect_one_insert(&mut tasks);
    let mut agents = MockAgentRepository::new();
    agents
        .expect_get()
        .withf(|o, id| *o == org() && *id == assignee_id())
        .times(1)
        .returning(|_, id| {
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

    let task =
        block_on(service(tasks, agents).create(&agent_actor(AgentMode::Worker), new)).unwrap();

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
    assert!(matches!(&err, ServiceError::NotFound(m) if m.contains(&assignee_id().to_string())));
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
            matches!(err, ServiceError::Conflict(_)),
            "{status:?}: {err:?}"
        );
    }
}

#[test]
fn create_with_an_orchestrator_or_observer_assignee_is_a_conflict() {
    for mode in [AgentMode::Orchestrator, AgentMode::Observer] {
        let err = create_with_assignee(Some((mode, AgentStatus::Active)));
        assert!(
            matches!(err, ServiceError::Conflict(_)),
            "{mode:?}: {err:?}"
        );
    }
}

#[test]
fn create_under_an_unknown_parent_is_not_found() {
    let mut tasks = MockTaskRepository::new();
    tasks
        .expect_get()
        .withf(|o, id| *o == org() && *id == task_id(1))
        .times(1)
        .returning(|_, _| Ok(None));
    tasks.expect_insert().never();
    let new = NewTask {
        parent_task_id: Some(task_id(1)),
        ..new_task("Child")
    };

    let err = block_on(
        service(tasks, MockAgentRepository::new()).create(&agent_actor(AgentMode::Worker), new),
    )
    .unwrap_err();

    assert!(matches!(&err, ServiceError::NotFound(m) if m.contains(&task_id(1).to_string())));
}

#[test]
fn create_under_an_existing_parent_keeps_the_link() {
    let mut tasks = MockTaskRepository::new();
    tasks
        .expect_get()
        .withf(|o, id| *o == org() && *id == task_id(1))
        .times(1)
        .returning(|_, id| Ok(Some(sample_task(id, TaskStatus::InProgress))));
    let inserted = expect_one_insert(&mut tasks);
    let new = NewTask {
        parent_task_id: Some(task_id(1)),
        ..new_task("Child")
    };

    let task = block_on(
        service(tasks, MockAgentRepository::new()).create(&agent_actor(AgentMode::Worker), new),
    )
    .unwrap();

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

    let task = block_on(
        service(tasks, MockAgentRepository::new())
            .get(&agent_actor(AgentMode::Observer), task_id(2)),
    )
    .unwrap();

    assert_eq!(task, sample_task(task_id(2), TaskStatus::Review));
}

#[test]
fn get_of_a_missing_task_is_not_found() {
    let mut tasks = MockTaskRepository::new();
    tasks.expect_get().returning(|_, _| Ok(None));

    let err = block_on(
        service(tasks, MockAgentRepository::new()).get(&agent_actor(AgentMode::Worker), task_id(3)),
    )
    .unwrap_err();

    let expected = format!("Task {} not found", task_id(3).as_uuid());
    assert!(
        matches!(&err, ServiceError::NotFound(m) if *m == expected),
        "{err:?}"
    );
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

    block_on(service(tasks, MockAgentRepository::new()).list(
        &actor,
        &filter,
        Some(task_id(50)),
        limit,
    ))
    .unwrap()
}

#[test]
fn list_with_more_rows_than_the_page_returns_a_cursor_to_the_last_task() {
    let page = list_page(3, 10);

    let ids: Vec<_> = page.tasks.iter().map(|t| t.id).collect();
    assert_eq!(ids, [task_id(0), task_id(1), task_id(2)]);
    assert_eq!(page.next_cursor, Some(task_id(2)));
}

#[test]
fn list_of_exactly_one_page_has_no_cursor() {
    let page = list_page(3, 3);

    assert_eq!(page.tasks.len(), 3);
    assert_eq!(page.next_cursor, None);
}

#[test]
fn list_of_fewer_rows_than_the_page_has_no_cursor() {
    let page = list_page(5, 2);

    assert_eq!(page.tasks.len(), 2);
    assert_eq!(page.next_cursor, None);
}
