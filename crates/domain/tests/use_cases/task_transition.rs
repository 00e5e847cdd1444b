//! `TaskService::transition` against mocked ports.

use crate::common;

use std::sync::{Arc, Mutex};

use common::{NOW, actor_agent_id, agent_actor, org, sample_task, task_id, types, user_actor};
use futures_executor::block_on;
use muster_domain::model::{
    Actor, AgentMode, Event, EventSeverity, Reason, Task, TaskStatus, UserRole,
};
use muster_domain::ports::{
    Lock, MockTaskRepository, MockTransaction, MockUnitOfWork, Outcome, RepositoryError,
};
use muster_domain::rules::transition::TransitionError;
use muster_domain::service::{Conflict, Entity, ServiceError, TaskService};
use serde_json::json;

use TaskStatus::{Backlog, Blocked, Cancelled, Done, InProgress, Review, Todo};

/// What the transaction was given: the new task, the expected version and the events.
type Updated = Arc<Mutex<Vec<(Task, i64, Vec<Event>)>>>;

/// A service whose transaction holds `stored` (or nothing) under [`task_id`]`(1)`, found
/// only when locked for update in the actor's org. `update_task` answers
/// `update_result` and records its arguments; `None` means nothing may be written. The
/// events are appended after a successful update, in the same transaction.
fn service(
    stored: Option<Task>,
    update_result: Option<bool>,
) -> (TaskService, Updated, Arc<MockUnitOfWork>) {
    let mut tx = MockTransaction::new();
    no_open_dependencies(&mut tx);
    tx.expect_task()
        .withf(|o, id, lock| *o == org() && *id == task_id(1) && *lock == Lock::Update)
        .times(1)
        .returning(move |_, _, _| Ok(stored.clone()));
    let updated: Updated = Arc::default();
    if let Some(result) = update_result {
        let mut seq = mockall::Sequence::new();
        let sink = Arc::clone(&updated);
        tx.expect_update_task()
            .times(1)
            .in_sequence(&mut seq)
            .returning(move |task, expected| {
                sink.lock()
                    .unwrap()
                    .push((task.clone(), expected, Vec::new()));
                Ok(result)
            });
        let sink = Arc::clone(&updated);
        tx.expect_append_events()
            .times(usize::from(result))
            .in_sequence(&mut seq)
            .returning(move |events| {
                sink.lock().unwrap()[0].2 = events.to_vec();
                Ok(())
            });
    } else {
        tx.expect_update_task().never();
        tx.expect_append_events().never();
    }
    let uow = Arc::new(MockUnitOfWork::new(tx));
    let service = TaskService::new(
        Arc::new(MockTaskRepository::new()),
        uow.clone(),
        common::clock(),
        common::ids(),
    );
    (service, updated, uow)
}

/// Every dependency of the task is done (or it has none).
fn no_open_dependencies(tx: &mut MockTransaction) {
    tx.expect_open_blocking_dependencies()
        .returning(|_, _| Ok(Vec::new()));
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

/// Runs a refused transition of a stored task: nothing may be written, and the unit of
/// work rolls back.
fn refused(actor: &Actor, stored: Task, to: TaskStatus) -> ServiceError {
    let (service, _, uow) = service(Some(stored), None);
    let err = block_on(service.transition(actor, task_id(1), to, None)).unwrap_err();
    assert_eq!(uow.outcomes(), [Outcome::RolledBack]);
    err
}

/// Runs an accepted transition; returns the result and the single `update` call.
fn accepted(actor: &Actor, from: TaskStatus, to: TaskStatus) -> (Task, (Task, i64, Vec<Event>)) {
    let (service, updated, _) = service(Some(task(from)), Some(true));
    let result =
        block_on(service.transition(actor, task_id(1), to, Some(reason("because")))).unwrap();
    let call = updated.lock().unwrap().pop().unwrap();
    (result, call)
}

#[test]
fn allowed_move_updates_status_and_version_with_the_old_version_as_guard() {
    let (service, updated, _) = service(Some(task(Todo)), Some(true));

    let moved = block_on(service.transition(&worker(), task_id(1), InProgress, Some(reason("go"))))
        .unwrap();

    assert_eq!(moved.status, InProgress);
    assert_eq!(moved.version, 8);
    assert_eq!(moved.updated_at, NOW);
    let unchanged = Task {
        status: InProgress,
        version: 8,
        updated_at: NOW,
        status_changed_at: NOW,
        last_activity_at: NOW,
        lease_expires_at: None,
        ..task(Todo)
    };
    assert_eq!(
        moved, unchanged,
        "only status, version and the change and activity stamps change"
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
    let (service, updated, _) = service(Some(task(InProgress)), Some(true));

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
        matches!(
            err,
            ServiceError::Transition(TransitionError::NotAllowed {
                from: Todo,
                to: Done
            })
        ),
        "{err:?}"
    );
    assert_eq!(err.to_string(), "Invalid transition: todo -> done");
}

#[test]
fn terminal_tasks_cannot_move() {
    for from in [Done, Cancelled] {
        for to in [Todo, InProgress, Review] {
            let err = refused(&worker(), task(from), to);
            assert!(
                matches!(
                    err,
                    ServiceError::Transition(TransitionError::NotAllowed { .. })
                ),
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
        assert!(matches!(err, ServiceError::Transition(_)), "{err:?}");
        assert_eq!(err.to_string(), expected);
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
            matches!(
                err,
                ServiceError::Transition(TransitionError::ApprovalRequired)
            ),
            "{from:?}: {err:?}"
        );
        assert_eq!(err.to_string(), "Task requires approval");
    }
}

#[test]
fn a_task_requiring_approval_still_moves_to_other_states() {
    let (service, _, _) = service(
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
    let (service, updated, _) = service(Some(task(Todo)), Some(false));

    let err = block_on(service.transition(&worker(), task_id(1), InProgress, None)).unwrap_err();

    assert!(
        matches!(
            err,
            ServiceError::Conflict(Conflict::ChangedConcurrently {
                entity: Entity::Task
            })
        ),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        "Task was changed by another request; reload it and retry"
    );
    assert_eq!(updated.lock().unwrap().len(), 1);
}

#[test]
fn a_storage_failure_on_update_is_reported_and_rolls_back() {
    let mut tx = MockTransaction::new();
    no_open_dependencies(&mut tx);
    tx.expect_task()
        .returning(|_, id, _| Ok(Some(sample_task(id, Todo))));
    tx.expect_update_task()
        .times(1)
        .returning(|_, _| Err(RepositoryError::unavailable("db down")));
    tx.expect_append_events().never();
    let uow = Arc::new(MockUnitOfWork::new(tx));
    let service = TaskService::new(
        Arc::new(MockTaskRepository::new()),
        uow.clone(),
        common::clock(),
        common::ids(),
    );

    let err = block_on(service.transition(&worker(), task_id(1), InProgress, None)).unwrap_err();

    assert!(matches!(err, ServiceError::Unavailable(_)), "{err:?}");
    assert_eq!(uow.outcomes(), [Outcome::RolledBack]);
}

#[test]
fn a_failed_event_append_rolls_back_the_status_change() {
    let (service, uow) = {
        let mut tx = MockTransaction::new();
        no_open_dependencies(&mut tx);
        tx.expect_task()
            .returning(|_, id, _| Ok(Some(sample_task(id, InProgress))));
        tx.expect_update_task().times(1).returning(|_, _| Ok(true));
        tx.expect_append_events()
            .times(1)
            .returning(|_| Err(RepositoryError::internal("disk full")));
        let uow = Arc::new(MockUnitOfWork::new(tx));
        let service = TaskService::new(
            Arc::new(MockTaskRepository::new()),
            uow.clone(),
            common::clock(),
            common::ids(),
        );
        (service, uow)
    };

    let err = block_on(service.transition(&worker(), task_id(1), Done, None)).unwrap_err();

    assert!(matches!(err, ServiceError::Internal(_)), "{err:?}");
    assert_eq!(uow.outcomes(), [Outcome::RolledBack]);
}

#[test]
fn a_missing_task_is_not_found() {
    let (service, _, _) = service(None, None);

    let err = block_on(service.transition(&worker(), task_id(1), InProgress, None)).unwrap_err();

    assert!(matches!(err, ServiceError::NotFound(_)), "{err:?}");
    assert_eq!(err.to_string(), format!("Task {} not found", task_id(1)));
}

#[test]
fn a_cancel_may_say_the_task_failed_or_was_rejected_and_a_move_may_carry_a_result() {
    use muster_domain::model::{TaskOutcome, TaskResult};
    use muster_domain::service::TaskMove;
    let result = || Some(TaskResult::new("The vendor said no".into()).unwrap());
    let (tasks, updated, _) = service(Some(task(InProgress)), Some(true));
    let rejected = TaskMove {
        to: Cancelled,
        reason: None,
        result: result(),
        outcome: Some(TaskOutcome::Rejected),
    };
    let moved = block_on(tasks.transition_with(&worker(), task_id(1), rejected)).unwrap();
    assert_eq!(moved.outcome, Some(TaskOutcome::Rejected));
    assert_eq!(moved.result, result());
    let (stored, _, _) = updated.lock().unwrap().pop().unwrap();
    assert_eq!((stored.outcome, stored.result), (moved.outcome, result()));

    // An outcome goes with a cancel only: refused, and nothing changes.
    let world = crate::common::world::World::new();
    let stored = world.task("not failed");
    let done = TaskMove {
        to: InProgress,
        reason: None,
        result: None,
        outcome: Some(TaskOutcome::Failed),
    };
    let err = block_on(world.tasks.transition_with(&world.admin, stored.id, done));
    assert!(matches!(err, Err(ServiceError::Invalid(_))), "{err:?}");
    assert_eq!(world.reread(&stored), stored);
}
