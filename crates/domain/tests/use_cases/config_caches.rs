//! The per-organization settings every change consults — the runaway guard's thresholds
//! and the pre-hook list — are read at most once a second per instance: a change made on
//! another instance is seen a second later at the latest, one made on this instance at
//! once. On the in-memory store with a manual clock.

use crate::common::new_task;
use crate::common::world::World;

use std::sync::Arc;

use futures_executor::block_on;
use muster_domain::model::{Actor, Breakers, HookEvents, HookName, HookType, HookUrl, Threshold};
use muster_domain::service::guard::{GuardPatch, GuardService, GuardedUnitOfWork, RunawayGuard};
use muster_domain::service::{
    GatedUnitOfWork, HookGate, NewWebhook, ServiceError, TaskService, WebhookService,
};
use muster_memory::fakes::RecordingHookCaller;
use time::Duration;

const OFF: Breakers = Breakers {
    actions_per_minute: Threshold::OFF,
    credits_per_hour: Threshold::OFF,
};

fn create(tasks: &TaskService, actor: &Actor) -> Result<(), ServiceError> {
    block_on(tasks.create(actor, new_task("one more"))).map(|_| ())
}

/// A guard (off by default), a task service whose changes it counts, and a settings
/// service on the same guard.
fn guarded(world: &World) -> (TaskService, GuardService) {
    let store = Arc::new(world.store.clone());
    let guard = Arc::new(RunawayGuard::new(
        OFF,
        world.clock.clone(),
        world.ids.clone(),
    ));
    let uow = Arc::new(GuardedUnitOfWork::new(
        store.clone(),
        store.clone(),
        guard.clone(),
    ));
    let tasks = TaskService::new(store.clone(), uow, world.clock.clone(), world.ids.clone());
    let settings = GuardService::new(store, guard, world.clock.clone(), world.ids.clone());
    (tasks, settings)
}

/// One write a minute at most.
fn one_a_minute() -> GuardPatch {
    GuardPatch {
        actions_per_minute: Some(Some(
            Threshold::new("actionsPerMinute", 1, 1_000_000).unwrap(),
        )),
        credits_per_hour: None,
    }
}

#[test]
fn thresholds_set_on_another_instance_apply_one_second_after_the_last_read() {
    let world = World::new();
    let (tasks, _) = guarded(&world);
    let (_, busy) = world.worker("busy", 3, &[]);
    create(&tasks, &busy).unwrap();
    let (_, elsewhere) = guarded(&world);
    block_on(elsewhere.update(&world.admin, one_a_minute())).unwrap();

    world.clock.advance(Duration::milliseconds(999));
    create(&tasks, &busy).unwrap();
    create(&tasks, &busy).unwrap();

    world.clock.advance(Duration::milliseconds(1));
    create(&tasks, &busy).unwrap();
    let err = create(&tasks, &busy).unwrap_err();
    assert!(err.to_string().contains("writes"), "{err}");
    assert_eq!(world.events("agent.suspended").len(), 1);
}

#[test]
fn thresholds_set_on_this_instance_apply_at_once() {
    let world = World::new();
    let (tasks, settings) = guarded(&world);
    let (_, busy) = world.worker("busy", 3, &[]);
    create(&tasks, &busy).unwrap();
    block_on(settings.update(&world.admin, one_a_minute())).unwrap();
    world.clock.advance(Duration::milliseconds(1));
    create(&tasks, &busy).unwrap();
    assert!(
        create(&tasks, &busy).is_err(),
        "the second write this minute"
    );
}

/// A pre-hook that hears about new tasks.
fn pre_hook() -> NewWebhook {
    NewWebhook {
        hook_type: HookType::Pre,
        can_block: true,
        ..NewWebhook::new(
            HookName::new("gate").unwrap(),
            HookUrl::new("https://hooks.example/gate").unwrap(),
            HookEvents::new(vec!["task.created".into()]).unwrap(),
        )
    }
}

#[test]
fn a_pre_hook_registered_on_another_instance_is_asked_one_second_after_the_last_read() {
    let world = World::new();
    let store = Arc::new(world.store.clone());
    let caller = Arc::new(RecordingHookCaller::new(
        200,
        br#"{"allow": true}"#.to_vec(),
    ));
    let gate = Arc::new(HookGate::new(
        caller.clone(),
        world.vault.clone(),
        world.clock.clone(),
        world.ids.clone(),
    ));
    let ports = world.webhook_ports(caller.clone());
    let gated = Arc::new(GatedUnitOfWork::new(store.clone(), gate.clone()));
    let tasks = TaskService::new(store, gated, world.clock.clone(), world.ids.clone());

    create(&tasks, &world.admin).unwrap();
    let elsewhere = WebhookService::new(ports.clone());
    block_on(elsewhere.register(&world.admin, pre_hook())).unwrap();
    world.clock.advance(Duration::milliseconds(999));
    create(&tasks, &world.admin).unwrap();
    assert!(
        caller.calls().is_empty(),
        "the list read a moment ago holds"
    );
    world.clock.advance(Duration::milliseconds(1));
    create(&tasks, &world.admin).unwrap();
    assert_eq!(caller.calls().len(), 1, "read again after a second");

    // Removed on this instance: forgotten at once.
    let here = WebhookService::new(ports).with_gate(gate);
    let hook = block_on(here.list(&world.admin)).unwrap().remove(0);
    block_on(here.delete(&world.admin, hook.id)).unwrap();
    create(&tasks, &world.admin).unwrap();
    assert_eq!(caller.calls().len(), 1, "no longer asked");
}
