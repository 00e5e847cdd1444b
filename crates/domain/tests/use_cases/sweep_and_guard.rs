//! The escalation sweep and the runaway guard's settings, on the in-memory store.

use crate::common::world::World;

use std::sync::Arc;

use futures_executor::block_on;
use muster_domain::model::{
    Breakers, EscalationReason, TaskPriority, TaskStatus, Threshold, Title, UserRole,
};
use muster_domain::rules::escalation::SweepThresholds;
use muster_domain::service::guard::{GuardPatch, GuardService, RunawayGuard};
use muster_domain::service::{EscalationSweep, NewTask, ServiceError};
use serde_json::json;
use time::Duration;

fn sweep(world: &World) -> EscalationSweep {
    EscalationSweep::new(world.tasks.clone(), SweepThresholds::default())
}

fn reasons(world: &World) -> Vec<EscalationReason> {
    block_on(sweep(world).run_once())
        .unwrap()
        .escalated
        .into_iter()
        .map(|e| e.reason)
        .collect()
}

#[test]
fn a_task_blocked_past_its_prioritys_threshold_is_escalated_once() {
    let world = World::new();
    let (worker, _) = world.worker("stuck", 2, &[]);
    let urgent = world.task_with("urgent", TaskPriority::Urgent, json!({}));
    let low = world.task_with("low", TaskPriority::Low, json!({}));
    for task in [&urgent, &low] {
        block_on(world.tasks.assign(&world.admin, task.id, worker.id)).unwrap();
        for to in [TaskStatus::InProgress, TaskStatus::Blocked] {
            block_on(world.tasks.transition(&world.admin, task.id, to, None)).unwrap();
        }
    }
    world
        .clock
        .advance(Duration::hours(2) - Duration::milliseconds(1));
    assert!(reasons(&world).is_empty(), "not yet two hours");
    world.clock.advance(Duration::milliseconds(2));
    assert_eq!(reasons(&world), [EscalationReason::BlockedTimeout]);
    let escalated = world.reread(&urgent);
    let hr = world.hr.agent_id().unwrap();
    assert_eq!(
        escalated.assignee_id,
        Some(hr),
        "handed to the senior agent"
    );
    assert_eq!(world.reread(&low).assignee_id, Some(worker.id));
    assert!(reasons(&world).is_empty(), "once per task and reason");
}

#[test]
fn stale_late_and_orphaned_tasks_are_escalated_for_their_reason() {
    let world = World::new();
    let (worker, _) = world.worker("worker", 2, &[]);
    let (gone, _) = world.worker("gone", 2, &[]);
    let stale = world.task("stale");
    block_on(world.tasks.assign(&world.admin, stale.id, worker.id)).unwrap();
    block_on(
        world
            .tasks
            .transition(&world.admin, stale.id, TaskStatus::InProgress, None),
    )
    .unwrap();
    let new = NewTask {
        due_at: Some(world.clock_now() + Duration::hours(1)),
        ..NewTask::new(Title::new("late").unwrap())
    };
    let late = block_on(world.tasks.create(&world.admin, new)).unwrap();
    let orphan = world.task("orphan");
    block_on(world.tasks.assign(&world.admin, orphan.id, gone.id)).unwrap();
    block_on(world.agents.suspend(&world.hr, gone.id)).unwrap();

    let mut first = reasons(&world);
    first.sort_by_key(|r| r.as_str());
    assert_eq!(first, [EscalationReason::AssigneeInactive]);
    world.clock.advance(Duration::hours(2));
    assert_eq!(reasons(&world), [EscalationReason::SlaBreach]);
    assert_eq!(
        world.reread(&late).status,
        TaskStatus::Todo,
        "nobody to hand it to: recorded, not moved"
    );
    world.clock.advance(Duration::hours(72));
    assert_eq!(reasons(&world), [EscalationReason::StaleTask]);
    assert!(reasons(&world).is_empty(), "each task once per reason");
    let escalated: Vec<_> = world
        .events("task.escalated")
        .into_iter()
        .map(|e| (e.entity_id, e.payload["reason"].clone()))
        .collect();
    assert_eq!(
        escalated,
        [
            (orphan.id.as_uuid(), serde_json::json!("ASSIGNEE_INACTIVE")),
            (late.id.as_uuid(), serde_json::json!("SLA_BREACH")),
            (stale.id.as_uuid(), serde_json::json!("STALE_TASK")),
        ],
        "each task for its own reason"
    );
}

fn guard_service(world: &World) -> GuardService {
    let defaults = Breakers {
        actions_per_minute: Threshold::new("actionsPerMinute", 600, 1_000_000).unwrap(),
        credits_per_hour: Threshold::OFF,
    };
    let guard = Arc::new(RunawayGuard::new(
        defaults,
        world.clock.clone(),
        world.ids.clone(),
    ));
    GuardService::new(
        Arc::new(world.store.clone()),
        guard,
        world.clock.clone(),
        world.ids.clone(),
    )
}

#[test]
fn an_admin_sets_the_organizations_own_thresholds_over_the_defaults() {
    let world = World::new();
    let guards = guard_service(&world);
    let view = block_on(guards.settings(&world.user(UserRole::Viewer))).unwrap();
    assert_eq!(view.own.actions_per_minute, None);
    assert_eq!(view.in_force.actions_per_minute.get(), 600);

    let patch = GuardPatch {
        actions_per_minute: Some(Some(
            Threshold::new("actionsPerMinute", 30, 1_000_000).unwrap(),
        )),
        credits_per_hour: None,
    };
    let view = block_on(guards.update(&world.admin, patch)).unwrap();
    assert_eq!(view.in_force.actions_per_minute.get(), 30);
    assert_eq!(view.defaults.actions_per_minute.get(), 600);
    assert!(view.in_force.credits_per_hour.is_off());
    let reread = block_on(guards.settings(&world.admin)).unwrap();
    assert_eq!(reread.own, view.own, "kept");
    assert_eq!(world.events("guard.updated").len(), 1);

    let back = GuardPatch {
        actions_per_minute: Some(None),
        credits_per_hour: None,
    };
    let view = block_on(guards.update(&world.admin, back)).unwrap();
    assert_eq!(
        view.in_force.actions_per_minute.get(),
        600,
        "the default again"
    );
}

#[test]
fn an_empty_change_or_a_caller_below_admin_changes_nothing() {
    let world = World::new();
    let guards = guard_service(&world);
    let err = block_on(guards.update(&world.admin, GuardPatch::default())).unwrap_err();
    assert!(matches!(err, ServiceError::Invalid(_)), "{err:?}");
    let patch = GuardPatch {
        actions_per_minute: None,
        credits_per_hour: Some(Some(
            Threshold::new("creditsPerHour", 5, 1_000_000).unwrap(),
        )),
    };
    for who in [world.user(UserRole::Operator), world.hr.clone()] {
        let err = block_on(guards.update(&who, patch)).unwrap_err();
        assert!(matches!(err, ServiceError::Forbidden(_)), "{err:?}");
    }
    let view = block_on(guards.settings(&world.admin)).unwrap();
    assert_eq!(view.own.credits_per_hour, None);
    assert!(world.events("guard.updated").is_empty());
}

#[test]
fn many_tasks_not_yet_due_do_not_hide_a_due_one_from_the_sweep() {
    let world = World::new();
    let (worker, _) = world.worker("busy", 2, &[]);
    // More tasks than one sweep batch (200), created first ...
    let move_all = |ids: &[muster_domain::model::TaskId], to: &[TaskStatus]| {
        for id in ids {
            for status in to {
                block_on(world.tasks.transition(&world.admin, *id, *status, None)).unwrap();
            }
        }
    };
    let early: Vec<_> = (0..=EscalationSweep::DEFAULT_BATCH)
        .map(|i| {
            world
                .task_with(
                    &format!("blocked later {i}"),
                    TaskPriority::Urgent,
                    json!({}),
                )
                .id
        })
        .collect();
    // ... then the one that blocks first and is due first.
    let due = world.task_with("blocked early", TaskPriority::Urgent, json!({}));
    block_on(world.tasks.assign(&world.admin, due.id, worker.id)).unwrap();
    move_all(&[due.id], &[TaskStatus::InProgress, TaskStatus::Blocked]);
    world.clock.advance(Duration::hours(1));
    move_all(&early, &[TaskStatus::InProgress, TaskStatus::Blocked]);
    world
        .clock
        .advance(Duration::hours(1) + Duration::milliseconds(1));

    let run = block_on(sweep(&world).run_once()).unwrap();
    let escalated: Vec<_> = run.escalated.iter().map(|e| e.task_id).collect();
    assert_eq!(
        escalated,
        [due.id],
        "only the due one, found despite the crowd"
    );
    assert!(run.failed.is_empty());
}

#[test]
fn many_active_tasks_do_not_hide_a_stale_one_from_the_sweep() {
    let world = World::new();
    let start = |id| {
        block_on(
            world
                .tasks
                .transition(&world.admin, id, TaskStatus::InProgress, None),
        )
        .unwrap();
    };
    let busy: Vec<_> = (0..=EscalationSweep::DEFAULT_BATCH)
        .map(|i| world.task(&format!("busy {i}")).id)
        .collect();
    let stale = world.task("forgotten");
    start(stale.id);
    world.clock.advance(Duration::hours(71));
    for id in &busy {
        start(*id);
    }
    world
        .clock
        .advance(Duration::hours(1) + Duration::milliseconds(1));
    let run = block_on(sweep(&world).run_once()).unwrap();
    let escalated: Vec<_> = run
        .escalated
        .iter()
        .map(|e| (e.task_id, e.reason))
        .collect();
    assert_eq!(escalated, [(stale.id, EscalationReason::StaleTask)]);
}
