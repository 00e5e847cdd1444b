//! `TaskService::release` on the in-memory store: the agent holding a task gives it
//! back to the pool, as the lease sweep does for a silent one: `todo`, unassigned, no
//! lease, the claim's reservation given back, an open run asked to stop; anyone else,
//! or a task not in progress, is refused and nothing changes.

use crate::common::economy::{agent, checked, refused_unchanged};
use crate::common::runs::{claim_request, code, funded, start, task_for};
use crate::common::world::World;

use futures_executor::block_on;
use muster_domain::model::{
    Actor, AgentMode, Reason, RunStatus, StopReason, Task, TaskStatus, UserRole,
};
use muster_domain::ports::{Lock, UnitOfWork, transact};
use muster_domain::service::{ClaimRequest, Conflict, ServiceError};
use serde_json::json;
use time::Duration;
use uuid::Uuid;

/// Claims the world's one claimable task as `actor`, reserving `credits`.
fn claim(world: &World, actor: &Actor, credits: i64) -> Task {
    let request = ClaimRequest {
        reserve_credits: credits,
        ..claim_request(900)
    };
    block_on(world.tasks.claim(actor, request))
        .unwrap()
        .unwrap()
}

fn release(
    world: &World,
    actor: &Actor,
    task: &Task,
    reason: Option<&str>,
) -> Result<Task, ServiceError> {
    let reason = reason.map(|r| Reason::new(r.to_owned()).unwrap());
    block_on(world.tasks.release(actor, task.id, reason))
}

/// Whether a claim reservation of `task` is stored.
fn reservation_held(world: &World, task: &Task) -> bool {
    let (org, id) = (world.org, task.id);
    block_on(transact(&world.store as &dyn UnitOfWork, move |tx| {
        Box::pin(async move { Ok(tx.claim_reservation(org, id, Lock::Nothing).await?) })
    }))
    .unwrap()
    .is_some()
}

#[test]
fn a_released_task_is_todo_unassigned_and_claimable_again() {
    let world = World::new();
    let (me, actor) = funded(&world, "giver", 100);
    let (next, next_actor) = world.worker("taker", 3, &[]);
    let task = world.task("work");
    let balance = agent(&world, me.id).current_balance;
    claim(&world, &actor, 40);
    assert_eq!(agent(&world, me.id).reserved_credits, 40);

    world.clock.advance(Duration::seconds(5));
    let back = release(&world, &actor, &task, None).unwrap();
    assert_eq!(
        (back.status, back.assignee_id, back.lease_expires_at),
        (TaskStatus::Todo, None, None)
    );
    assert_eq!(back.status_changed_at, world.clock_now());
    assert_eq!(world.reread(&task), back, "the answer is what is stored");
    // The claim's reservation went back; nothing was spent.
    assert!(!reservation_held(&world, &task));
    let after = agent(&world, me.id);
    assert_eq!(
        (after.reserved_credits, after.current_balance),
        (0, balance)
    );
    checked(&world);

    // One transition, by the agent, with the reason; no new kind of event.
    let moves = world.events("task.transitioned");
    let last = moves.last().unwrap();
    assert_eq!(last.entity_id, task.id.as_uuid());
    assert_eq!(last.actor_id, Some(me.id.as_uuid()));
    assert_eq!(
        last.payload,
        json!({"from": "in_progress", "to": "todo", "reason": "released"})
    );
    assert_eq!(world.events("task.assigned").len(), 1, "the claim's only");
    assert!(world.events("task.lease_expired").is_empty());

    let taken = claim(&world, &next_actor, 0);
    assert_eq!((taken.id, taken.assignee_id), (task.id, Some(next.id)));
}

#[test]
fn the_reason_given_follows_released_in_the_transition() {
    let world = World::new();
    let (_, actor) = world.worker("giver", 3, &[]);
    let task = world.task("work");
    claim(&world, &actor, 0);
    let longest = "x".repeat(Reason::MAX_CHARS);
    release(&world, &actor, &task, Some(&longest)).unwrap();
    let moved = world.events("task.transitioned").pop().unwrap();
    assert_eq!(
        moved.payload["reason"],
        json!(format!("released: {longest}"))
    );

    claim(&world, &actor, 0);
    release(
        &world,
        &actor,
        &task,
        Some("tests failed; any worker may retry"),
    )
    .unwrap();
    let moved = world.events("task.transitioned").pop().unwrap();
    assert_eq!(
        moved.payload["reason"],
        "released: tests failed; any worker may retry"
    );
}

#[test]
fn a_task_moved_to_in_progress_without_a_claim_is_released_too() {
    let world = World::new();
    let (me, actor) = world.worker("assignee", 3, &[]);
    let task = task_for(&world, me.id, &actor, "assigned");
    assert_eq!(task.lease_expires_at, None);
    let back = release(&world, &actor, &task, None).unwrap();
    assert_eq!((back.status, back.assignee_id), (TaskStatus::Todo, None));
}

#[test]
fn a_claim_whose_lease_ran_out_is_still_its_holders_to_release() {
    let world = World::new();
    let (_, actor) = world.worker("late", 3, &[]);
    let task = world.task("work");
    claim(&world, &actor, 0);
    world.clock.advance(Duration::hours(1));
    // The sweep has not run: the task is still the agent's, and goes back the same way.
    let back = release(&world, &actor, &task, None).unwrap();
    assert_eq!((back.status, back.assignee_id), (TaskStatus::Todo, None));
    assert_eq!(
        block_on(world.tasks.expire_leases(None, 10)).unwrap(),
        [],
        "nothing left for the sweep"
    );
}

#[test]
fn an_open_run_of_the_released_task_is_asked_to_stop() {
    let world = World::new();
    let (me, actor) = funded(&world, "runner", 100);
    let task = world.task("work");
    claim(&world, &actor, 30);
    let run = start(&world, &actor, &task, 5).unwrap();
    assert_eq!(run.reserved_credits, 35);

    release(&world, &actor, &task, None).unwrap();
    let after = block_on(world.runs.get(&world.admin, run.id)).unwrap();
    assert_eq!(after.status, RunStatus::Running, "it finishes itself");
    assert!(after.stop_requested);
    assert_eq!(after.stop_reason, Some(StopReason::Reassigned));
    let asked = world.events("run.stop_requested");
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0].entity_id, run.id.as_uuid());
    assert_eq!(asked[0].payload["reason"], "reassigned");
    // The run keeps what it took from the claim until it finishes.
    assert_eq!(agent(&world, me.id).reserved_credits, 35);
    checked(&world);
}

#[test]
fn only_the_assignee_of_a_task_in_progress_releases_it() {
    let world = World::new();
    let (me, actor) = funded(&world, "holder", 100);
    let (_, stranger) = world.worker("stranger", 3, &[]);
    let (_, observer) = world.register("watcher", 3, AgentMode::Observer, &[]);
    let task = world.task("work");
    claim(&world, &actor, 20);
    let held = world.reread(&task);

    let viewer = world.user(UserRole::Viewer);
    for (who, expected) in [
        (&stranger, "not_task_assignee"),
        (&world.admin, "agent_required"),
        (&viewer, "agent_required"),
        (&observer, "observer_read_only"),
    ] {
        let err = refused_unchanged(&world, || release(&world, who, &task, None), |_| true);
        assert_eq!(err.code(), expected, "{err:?}");
    }
    assert!(matches!(
        release(&world, &stranger, &task, None),
        Err(ServiceError::Conflict(Conflict::NotTaskAssignee))
    ));
    assert_eq!(world.reread(&task), held, "nothing changed");
    assert!(reservation_held(&world, &task));
    assert_eq!(agent(&world, me.id).reserved_credits, 20);

    // Out of in_progress, even its assignee cannot.
    block_on(
        world
            .tasks
            .transition(&actor, task.id, TaskStatus::Review, None),
    )
    .unwrap();
    let err = release(&world, &actor, &task, None).unwrap_err();
    assert!(
        matches!(
            err,
            ServiceError::Conflict(Conflict::TaskNotInProgress {
                status: TaskStatus::Review
            })
        ),
        "{err:?}"
    );
    assert_eq!(world.reread(&task).status, TaskStatus::Review);

    let missing = Task {
        id: muster_domain::model::TaskId::from_uuid(Uuid::now_v7()),
        ..task.clone()
    };
    assert_eq!(
        code(release(&world, &actor, &missing, None)),
        "task_not_found"
    );
}

#[test]
fn a_second_release_finds_the_task_given_back() {
    let world = World::new();
    let (_, actor) = world.worker("holder", 3, &[]);
    let task = world.task("work");
    claim(&world, &actor, 0);
    release(&world, &actor, &task, None).unwrap();
    assert_eq!(
        code(release(&world, &actor, &task, None)),
        "task_not_in_progress"
    );
    assert_eq!(world.events("task.transitioned").len(), 2);
}
