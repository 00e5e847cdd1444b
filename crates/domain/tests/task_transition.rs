//! `TaskService::transition` against mocked ports.
// Helpers outside `#[test]` functions are not covered by clippy.toml's allow-*-in-tests.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::{Arc, Mutex};

use common::{NOW, actor_agent_id, agent_actor, org, sample_task, task_id, types, user_actor};
use futures_executor::block_on;
use muster_domain::model::{
    Actor, AgentMode, Event, EventSeverity, Reason, Task, TaskStatus, UserRole,
};
use muster_domain::ports::{MockAgentRepository, MockTaskRepository, RepositoryError};
use muster_domain::service::{ServiceError, TaskService};
use serde_json::json;

use TaskStatus::{Backlog, Blocked, Cancelled, Done, InProgress, Review, Todo};

/// What `update` was given: the new task, the expected version and the events.
type Updated = Arc<Mutex<Vec<(Task, i64, Vec<Event>)>>>;

/// A service whose repository holds `stored` (or nothing) under [`task_id`]`(1)`; the
/// stored task is only found when looked up in the actor's org (whether a refused request
/// reads it at all is left open). `update` answers
/// `update_result` and records its arguments; `None` means it must not be called.
fn service(stored: Option<Task>, update_result: Option<bool>) -> (TaskService, Updated) {
    let mut tasks = MockTaskRepository::new();
    tasks
        .expect_get()
        .withf(|o, id| *o == org() && *id == task_id(1))
        .times(..=1)
        .returning(move |_, _| Ok(stored.clone()));
    let updated: Updated = Arc::default();
    match update_result {
        Some(result) => {
            let sink = Arc::clone(&updated);
            tasks
                .expect_update()
                .times(1)
                .returning(move |task, expected, events| {
                    sink.lock()
                        .unwrap()
                        .push((task.clone(), expected, events.to_vec()));
                    Ok(result)
                });
        }
        None => {
            tasks.expect_update().never();
        }
    }
    let service = TaskService::new(
        Arc::new(tasks),
        Arc::new(MockAgentRepository::new()),
        common::clock(),
        common::ids(),
    );
    (service, updated)
}

fn task(status: TaskStatus) -> Task {
    sample_task(task_id(1), status)
}

fn worker() -> Actor {
    agent_actor(AgentMode::Worker)
}

fn reason(text: &str) -> Reason {
    Reason::new(text.into()).unwrap()
}

/// Runs a refused transition of a stored task: `update` must not be called.
fn refused(actor: &Actor, stored: Task, to: TaskStatus) -> ServiceError {
    let (service, _) = service(Some(stored), None);
    block_on(service.transition(actor, task_id(1), to, None)).unwrap_err()
}

/// Runs an accepted transition; returns the result and the single `update` call.
fn accepted(actor: &Actor, from: TaskStatus, to: TaskStatus) -> (Task, (Task, i64, Vec<Event>)) {
    let (service, updated) = service(Some(task(from)), Some(true));
    let result =
        block_on(service.transition(actor, task_id(1), to, Some(reason("because")))).unwrap();
    let call = updated.lock().unwrap().pop().unwrap();
    (result, call)
}

#[test]
fn allowed_move_updates_status_and_version_with_the_old_version_as_guard() {
    let (service, updated) = service(Some(task(Todo)), Some(true));

    let moved = block_on(service.transition(&worker(), task_id(1), InProgress, Some(reason("go"))))
        .unwrap();

    assert_eq!(moved.status, InProgress);
    assert_eq!(moved.version, 8);
    assert_eq!(moved.updated_at, NOW);
    let unchanged = Task {
        status: InProgress,
        version: 8,
        updated_at: NOW,
        ..task(Todo)
    };
    assert_eq!(
        moved, unchanged,
        "only status, version and updatedAt change"
    );

    let calls = updated.lock().unwrap();
    assert_eq!(calls.len(), 1);
    let (stored, expected_version, events) = &calls[0];
    assert_eq!(stored, &moved);
    assert_eq!(*expected_version, 7);
    assert_eq!(types(events), ["task.transitioned"]);
    let event = &events[0];
    assert_eq!(event.org_id, org());
    assert_eq!(event.actor_id, Some(actor_agent_id().as_uuid()));
    assert_eq!(event.entity_type, "task");
    assert_eq!(event.entity_id, task_id(1).as_uuid());
    assert_eq!(event.severity, EventSeverity::Info);
    assert_eq!(event.created_at, NOW);
    assert_eq!(
        event.payload,
        json!({ "from": "todo", "to": "in_progress", "reason": "go" })
    );
}

#[test]
fn done_writes_transitioned_then_done() {
    let (result, (_, _, events)) = accepted(&worker(), InProgress, Done);

    assert_eq!(result.status, Done);
    assert_eq!(types(&events), ["task.transitioned", "task.done"]);
    for event in &events {
        assert_eq!(event.entity_id, task_id(1).as_uuid());
        assert_eq!(
            event.payload,
            json!({ "from": "in_progress", "to": "done", "reason": "because" })
        );
    }
    assert_ne!(events[0].id, events[1].id, "each event has its own id");
}

#[test]
fn cancel_writes_transitioned_then_cancelled() {
    for from in [Backlog, Todo, InProgress, Review, Blocked] {
        let (result, (_, _, events)) = accepted(&worker(), from, Cancelled);

        assert_eq!(result.status, Cancelled);
        assert_eq!(
            types(&events),
            ["task.transitioned", "task.cancelled"],
            "from {from:?}"
        );
        assert_eq!(events[1].payload["from"], from.as_str());
        assert_eq!(events[1].payload["to"], "cancelled");
        assert_eq!(events[1].payload["reason"], "because");
    }
}

#[test]
fn every_allowed_move_succeeds_with_the_matching_events() {
    let table = [
        (Backlog, Todo),
        (Todo, InProgress),
        (Todo, Backlog),
        (InProgress, Review),
        (InProgress, Blocked),
        (InProgress, Todo),
        (Review, Done),
        (Review, InProgress),
        (Blocked, InProgress),
    ];
    for (from, to) in table {
        let (result, (_, expected_version, events)) = accepted(&worker(), from, to);

        assert_eq!(result.status, to, "{from:?} -> {to:?}");
        assert_eq!(expected_version, 7, "{from:?} -> {to:?}");
        let expected: &[&str] = if to == Done {
            &["task.transitioned", "task.done"]
        } else {
            &["task.transitioned"]
        };
        assert_eq!(types(&events), expected, "{from:?} -> {to:?}");
    }
}

#[test]
fn a_missing_reason_is_recorded_as_null() {
    let (service, updated) = service(Some(task(InProgress)), Some(true));

    block_on(service.transition(&worker(), task_id(1), Review, None)).unwrap();

    let events = &updated.lock().unwrap()[0].2;
    assert_eq!(
        events[0].payload,
        json!({ "from": "in_progress", "to": "review", "reason": null })
    );
}

#[test]
fn a_move_outside_the_table_is_a_conflict_naming_both_states() {
    let err = refused(&worker(), task(Todo), Done);

    assert!(
        matches!(&err, ServiceError::Conflict(m) if m == "Invalid transition: todo -> done"),
        "{err:?}"
    );
}

#[test]
fn terminal_tasks_cannot_move() {
    for from in [Done, Cancelled] {
        for to in [Todo, InProgress, Review] {
            let err = refused(&worker(), task(from), to);
            assert!(
                matches!(err, ServiceError::Conflict(_)),
                "{from:?} -> {to:?}: {err:?}"
            );
        }
    }
}

#[test]
fn staying_in_the_same_status_is_a_conflict() {
    for status in TaskStatus::ALL {
        let err = refused(&worker(), task(status), status);

        let expected = format!("Invalid transition: {0} -> {0}", status.as_str());
        assert!(
            matches!(&err, ServiceError::Conflict(m) if *m == expected),
            "{err:?}"
        );
    }
}

#[test]
fn a_task_requiring_approval_cannot_be_transitioned_to_done() {
    for from in [InProgress, Review] {
        let stored = Task {
            approval_required: true,
            ..task(from)
        };

        let err = refused(&worker(), stored, Done);

        assert!(
            matches!(&err, ServiceError::Forbidden(m) if m == "Task requires approval"),
            "{from:?}: {err:?}"
        );
    }
}

#[test]
fn a_task_requiring_approval_still_moves_to_other_states() {
    let (service, _) = service(
        Some(Task {
            approval_required: true,
            ..task(InProgress)
        }),
        Some(true),
    );

    let moved = block_on(service.transition(&worker(), task_id(1), Review, None)).unwrap();

    assert_eq!(moved.status, Review);
}

#[test]
fn orchestrators_cannot_start_work() {
    for from in [Todo, Review, Blocked] {
        let err = refused(
            &agent_actor(AgentMode::Orchestrator),
            task(from),
            InProgress,
        );
        assert!(
            matches!(err, ServiceError::Forbidden(_)),
            "{from:?}: {err:?}"
        );
    }
}

#[test]
fn orchestrators_may_make_other_moves() {
    let (result, _) = accepted(&agent_actor(AgentMode::Orchestrator), Todo, Cancelled);

    assert_eq!(result.status, Cancelled);
}

#[test]
fn read_only_actors_cannot_transition() {
    for actor in [
        agent_actor(AgentMode::Observer),
        user_actor(UserRole::Viewer),
    ] {
        for (from, to) in [(Todo, InProgress), (InProgress, Review), (Todo, Cancelled)] {
            let err = refused(&actor, task(from), to);
            assert!(
                matches!(err, ServiceError::Forbidden(_)),
                "{actor:?} {to:?}: {err:?}"
            );
        }
    }
}

#[test]
fn a_lost_race_on_update_is_a_conflict() {
    let (service, updated) = service(Some(task(Todo)), Some(false));

    let err = block_on(service.transition(&worker(), task_id(1), InProgress, None)).unwrap_err();

    assert!(matches!(err, ServiceError::Conflict(_)), "{err:?}");
    assert_eq!(updated.lock().unwrap().len(), 1);
}

#[test]
fn a_storage_failure_on_update_is_reported() {
    let mut tasks = MockTaskRepository::new();
    tasks
        .expect_get()
        .returning(|_, id| Ok(Some(sample_task(id, Todo))));
    tasks
        .expect_update()
        .times(1)
        .returning(|_, _, _| Err(RepositoryError::Unavailable("db down".into())));
    let service = TaskService::new(
        Arc::new(tasks),
        Arc::new(MockAgentRepository::new()),
        common::clock(),
        common::ids(),
    );

    let err = block_on(service.transition(&worker(), task_id(1), InProgress, None)).unwrap_err();

    assert!(matches!(err, ServiceError::Unavailable(_)), "{err:?}");
}

#[test]
fn a_missing_task_is_not_found() {
    let (service, _) = service(None, None);

    let err = block_on(service.transition(&worker(), task_id(1), InProgress, None)).unwrap_err();

    let expected = format!("Task {} not found", task_id(1).as_uuid());
    assert!(
        matches!(&err, ServiceError::NotFound(m) if *m == expected),
        "{err:?}"
    );
}
