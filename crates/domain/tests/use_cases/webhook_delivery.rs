//! `WebhookService` and `DeliveryService`: outbound hooks, the outbox and its retries,
//! on the in-memory store.

use crate::common::world::World;

use std::sync::Arc;

use futures_executor::block_on;
use muster_domain::model::{
    HookEvents, HookName, HookTimeout, HookType, HookUrl, UserRole, Webhook,
};
use muster_domain::ports::{MockTargetGuard, TargetGuard, TargetRefusal};
use muster_domain::rules::delivery::{DISABLE_AFTER_FAILURES, RetrySchedule};
use muster_domain::service::{
    DeliveryService, NewWebhook, ServiceError, WebhookPatch, WebhookPorts, WebhookService,
};
use muster_memory::fakes::{OpenTargets, RecordingHookCaller};
use time::Duration;

/// A world with a recording receiver, the hook service and a delivery worker.
struct Rig {
    world: World,
    caller: Arc<RecordingHookCaller>,
    hooks: WebhookService,
    delivery: DeliveryService,
}

impl Rig {
    fn new() -> Self {
        Self::guarded(Arc::new(OpenTargets))
    }

    fn guarded(guard: Arc<dyn TargetGuard>) -> Self {
        let world = World::new();
        let caller = Arc::new(RecordingHookCaller::new(200, Vec::new()));
        let hooks = WebhookService::new(WebhookPorts {
            hooks: Arc::new(world.store.clone()),
            uow: Arc::new(world.store.clone()),
            guard,
            vault: world.vault.clone(),
            caller: caller.clone(),
            clock: world.clock.clone(),
            ids: world.ids.clone(),
        });
        let delivery = DeliveryService::new(
            Arc::new(world.store.clone()),
            Arc::new(world.store.clone()),
            Arc::new(world.store.clone()),
            world.vault.clone(),
            caller.clone(),
            world.clock.clone(),
            world.ids.clone(),
        )
        .with_schedule(RetrySchedule::new(vec![
            Duration::ZERO,
            Duration::minutes(1),
            Duration::minutes(5),
        ]));
        Self {
            world,
            caller,
            hooks,
            delivery,
        }
    }

    fn register(&self, events: &[&str], secret: Option<&str>) -> Webhook {
        let new = NewWebhook {
            secret: secret.map(str::to_owned),
            ..NewWebhook::new(
                HookName::new("receiver").unwrap(),
                HookUrl::new("https://hooks.example/in").unwrap(),
                HookEvents::new(events.iter().map(|e| (*e).to_owned()).collect()).unwrap(),
            )
        };
        block_on(self.hooks.register(&self.world.admin, new)).unwrap()
    }

    /// Leases every due hook and drains it: (delivered, failed) in all.
    fn run(&self) -> (u32, u32) {
        let mut totals = (0, 0);
        for (org, hook) in block_on(self.delivery.lease(10)).unwrap() {
            let report = block_on(self.delivery.drain(org, hook)).unwrap();
            totals.0 += report.delivered;
            totals.1 += report.failed;
        }
        totals
    }
}

#[test]
fn a_subscribed_event_is_delivered_once_signed_with_the_hooks_secret() {
    let hooks = Rig::new();
    let hook = hooks.register(&["task.created"], Some("whsec"));
    let task = hooks.world.task("deliver me");
    hooks.world.task("and me");

    assert_eq!(hooks.run(), (2, 0));
    let calls = hooks.caller.calls();
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0].event_type, "task.created");
    assert_eq!(calls[0].url, "https://hooks.example/in");
    assert_eq!(calls[0].secret.as_deref(), Some("whsec"));
    assert_eq!(calls[0].hook_type, HookType::Post);
    let body: serde_json::Value = serde_json::from_slice(&calls[0].body).unwrap();
    assert_eq!(body["event"], "task.created");
    assert_eq!(body["data"]["entityId"], serde_json::json!(task.id));
    assert_eq!(hooks.run(), (0, 0), "delivered events leave the outbox");

    let (log, total) =
        block_on(hooks.hooks.attempts(&hooks.world.admin, hook.id, None, 0)).unwrap();
    assert_eq!(total, 2);
    assert!(
        log.iter()
            .all(|a| a.status_code == Some(200) && a.attempt == 1)
    );
    // A transition is not what it subscribed to.
    block_on(hooks.world.tasks.transition(
        &hooks.world.admin,
        task.id,
        muster_domain::model::TaskStatus::InProgress,
        None,
    ))
    .unwrap();
    assert_eq!(hooks.run(), (0, 0));
}

#[test]
fn a_failed_delivery_is_retried_on_schedule_until_it_succeeds() {
    let hooks = Rig::new();
    let hook = hooks.register(&["task.created"], None);
    hooks.caller.answer(503, Vec::new());
    hooks.world.task("flaky receiver");

    assert_eq!(hooks.run(), (0, 1));
    assert_eq!(hooks.run(), (0, 0), "not due again before its wait");
    hooks.world.clock.advance(Duration::minutes(1));
    hooks.caller.answer(200, Vec::new());
    assert_eq!(hooks.run(), (1, 0));
    let (log, _) = block_on(hooks.hooks.attempts(&hooks.world.admin, hook.id, None, 0)).unwrap();
    let tries: Vec<_> = log.iter().map(|a| (a.attempt, a.status_code)).collect();
    assert_eq!(tries, [(2, Some(200)), (1, Some(503))], "newest first");
    let stored = block_on(hooks.hooks.get(&hooks.world.admin, hook.id)).unwrap();
    assert_eq!(stored.consecutive_failures, 0, "a success resets the count");
}

#[test]
fn a_delivery_out_of_attempts_leaves_the_outbox() {
    let hooks = Rig::new();
    hooks.register(&["task.created"], None);
    hooks.caller.answer(500, Vec::new());
    hooks.world.task("never delivered");
    assert_eq!(hooks.run(), (0, 1));
    hooks.world.clock.advance(Duration::minutes(1));
    assert_eq!(hooks.run(), (0, 1));
    hooks.world.clock.advance(Duration::minutes(5));
    assert_eq!(hooks.run(), (0, 1), "the third and last attempt");
    hooks.world.clock.advance(Duration::hours(1));
    assert_eq!(hooks.run(), (0, 0));
    assert_eq!(hooks.caller.calls().len(), 3);
}

#[test]
fn consecutive_failures_switch_the_hook_off() {
    let hooks = Rig::new();
    let hook = hooks.register(&["task.created"], None);
    hooks.caller.answer(500, Vec::new());
    for i in 0..DISABLE_AFTER_FAILURES + 2 {
        hooks.world.task(&format!("task {i}"));
    }
    let (delivered, failed) = hooks.run();
    assert_eq!((delivered, failed), (0, DISABLE_AFTER_FAILURES));
    let stored = block_on(hooks.hooks.get(&hooks.world.admin, hook.id)).unwrap();
    assert!(!stored.enabled);
    assert_eq!(stored.consecutive_failures, DISABLE_AFTER_FAILURES);
    assert!(stored.last_error.is_some());
    assert_eq!(hooks.world.events("webhook.disabled").len(), 1);
    hooks.world.clock.advance(Duration::hours(1));
    assert_eq!(hooks.run(), (0, 0), "a hook that is off gets nothing");
}

#[test]
fn a_disabled_or_deleted_hook_gets_nothing_and_deleting_empties_its_outbox() {
    let hooks = Rig::new();
    let hook = hooks.register(&["task.created"], None);
    let off = WebhookPatch {
        enabled: Some(false),
        ..WebhookPatch::default()
    };
    block_on(hooks.hooks.update(&hooks.world.admin, hook.id, off)).unwrap();
    hooks.world.task("while off");
    assert_eq!(hooks.run(), (0, 0));

    let on = WebhookPatch {
        enabled: Some(true),
        ..WebhookPatch::default()
    };
    block_on(hooks.hooks.update(&hooks.world.admin, hook.id, on)).unwrap();
    hooks.world.task("while on");
    block_on(hooks.hooks.delete(&hooks.world.admin, hook.id)).unwrap();
    assert_eq!(hooks.run(), (0, 0));
    assert!(hooks.caller.calls().is_empty());
    let err = block_on(hooks.hooks.get(&hooks.world.admin, hook.id)).unwrap_err();
    assert!(matches!(err, ServiceError::NotFound(_)), "{err:?}");
}

#[test]
fn registering_needs_a_writer_and_a_target_the_guard_allows() {
    let mut guard = MockTargetGuard::new();
    guard
        .expect_check()
        .returning(|_| Err(TargetRefusal::Private));
    let hooks = Rig::guarded(Arc::new(guard));
    let new = || {
        NewWebhook::new(
            HookName::new("inside").unwrap(),
            HookUrl::new("https://10.0.0.1/hook").unwrap(),
            HookEvents::new(vec!["*".into()]).unwrap(),
        )
    };
    let err = block_on(hooks.hooks.register(&hooks.world.admin, new())).unwrap_err();
    assert!(!matches!(err, ServiceError::Forbidden(_)), "{err:?}");
    assert!(err.to_string().contains("internal/private"), "{err}");
    let viewer = hooks.world.user(UserRole::Viewer);
    let err = block_on(hooks.hooks.register(&viewer, new())).unwrap_err();
    assert!(matches!(err, ServiceError::Forbidden(_)), "{err:?}");
    assert!(
        block_on(hooks.hooks.list(&hooks.world.admin))
            .unwrap()
            .is_empty()
    );
    assert!(hooks.world.events("webhook.created").is_empty());
}

fn post_hook(name: &str) -> NewWebhook {
    NewWebhook::new(
        HookName::new(name).unwrap(),
        HookUrl::new("https://hooks.example/in").unwrap(),
        HookEvents::new(vec!["task.created".into()]).unwrap(),
    )
}

#[test]
fn hooks_are_listed_newest_first_and_bad_registrations_are_refused() {
    let rig = Rig::new();
    let admin = &rig.world.admin;
    let first = block_on(rig.hooks.register(admin, post_hook("first"))).unwrap();
    rig.world.clock.advance(Duration::seconds(1));
    let second = block_on(rig.hooks.register(admin, post_hook("second"))).unwrap();
    let listed: Vec<_> = block_on(rig.hooks.list(admin))
        .unwrap()
        .into_iter()
        .map(|h| h.id)
        .collect();
    assert_eq!(listed, [second.id, first.id]);

    let blocking_post = NewWebhook {
        can_block: true,
        ..post_hook("blocks after the fact")
    };
    let err = block_on(rig.hooks.register(admin, blocking_post)).unwrap_err();
    assert!(matches!(err, ServiceError::Invalid(_)), "{err:?}");
    for secret in [String::new(), "s".repeat(256)] {
        let with_secret = NewWebhook {
            secret: Some(secret),
            ..post_hook("secretive")
        };
        let err = block_on(rig.hooks.register(admin, with_secret)).unwrap_err();
        assert!(matches!(err, ServiceError::Invalid(_)), "{err:?}");
    }
    assert_eq!(block_on(rig.hooks.list(admin)).unwrap().len(), 2);
}

#[test]
fn a_patch_changes_what_it_names_and_keeps_can_block_meaningful() {
    let rig = Rig::new();
    let admin = &rig.world.admin;
    let pre = NewWebhook {
        hook_type: HookType::Pre,
        can_block: true,
        ..post_hook("gatekeeper")
    };
    let hook = block_on(rig.hooks.register(admin, pre)).unwrap();
    let err = block_on(rig.hooks.update(admin, hook.id, WebhookPatch::default())).unwrap_err();
    assert!(
        matches!(err, ServiceError::Invalid(_)),
        "an empty patch: {err:?}"
    );
    let still_pre = WebhookPatch {
        hook_type: Some(HookType::Pre),
        ..WebhookPatch::default()
    };
    let same = block_on(rig.hooks.update(admin, hook.id, still_pre)).unwrap();
    assert!(
        same.can_block,
        "a pre hook keeps blocking when its type is restated"
    );

    let to_post = WebhookPatch {
        hook_type: Some(HookType::Post),
        ..WebhookPatch::default()
    };
    let post = block_on(rig.hooks.update(admin, hook.id, to_post)).unwrap();
    assert_eq!((post.hook_type, post.can_block), (HookType::Post, false));
    let blocking_post = WebhookPatch {
        can_block: Some(true),
        ..WebhookPatch::default()
    };
    let err = block_on(rig.hooks.update(admin, hook.id, blocking_post)).unwrap_err();
    assert!(matches!(err, ServiceError::Invalid(_)), "{err:?}");
    let back = WebhookPatch {
        hook_type: Some(HookType::Pre),
        can_block: Some(true),
        name: Some(HookName::new("gate again").unwrap()),
        timeout: Some(HookTimeout::new(2_000).unwrap()),
        ..WebhookPatch::default()
    };
    let pre = block_on(rig.hooks.update(admin, hook.id, back)).unwrap();
    assert_eq!((pre.hook_type, pre.can_block), (HookType::Pre, true));
    assert_eq!((pre.name.as_str(), pre.timeout.ms()), ("gate again", 2_000));
    assert_eq!(block_on(rig.hooks.get(admin, hook.id)).unwrap(), pre);
}

#[test]
fn switching_a_hook_back_on_forgets_its_failures_but_a_no_op_does_not() {
    let rig = Rig::new();
    let admin = &rig.world.admin;
    let hook = rig.register(&["task.created"], None);
    rig.caller.answer(500, Vec::new());
    for i in 0..3 {
        rig.world.task(&format!("fails {i}"));
    }
    rig.run();
    let on = || WebhookPatch {
        enabled: Some(true),
        ..WebhookPatch::default()
    };
    let still_on = block_on(rig.hooks.update(admin, hook.id, on())).unwrap();
    assert_eq!(
        still_on.consecutive_failures, 3,
        "it was on: nothing to forget"
    );
    let off = WebhookPatch {
        enabled: Some(false),
        ..WebhookPatch::default()
    };
    block_on(rig.hooks.update(admin, hook.id, off)).unwrap();
    let back_on = block_on(rig.hooks.update(admin, hook.id, on())).unwrap();
    assert_eq!((back_on.enabled, back_on.consecutive_failures), (true, 0));
}

#[test]
fn a_pre_hook_registered_on_this_instance_is_asked_at_once() {
    use muster_domain::service::{GatedUnitOfWork, HookGate, TaskService};

    let rig = Rig::new();
    let world = &rig.world;
    let gate = Arc::new(HookGate::new(
        rig.caller.clone(),
        world.vault.clone(),
        world.clock.clone(),
        world.ids.clone(),
    ));
    let gated = Arc::new(GatedUnitOfWork::new(
        Arc::new(world.store.clone()),
        gate.clone(),
    ));
    let tasks = TaskService::new(
        Arc::new(world.store.clone()),
        gated,
        world.clock.clone(),
        world.ids.clone(),
    );
    let hooks = rig.hooks.clone().with_gate(gate);
    let new_task = |title: &str| {
        muster_domain::service::NewTask::new(muster_domain::model::Title::new(title).unwrap())
    };
    // The gate reads the organization's pre-hooks (none) and keeps them for a second.
    block_on(tasks.create(&world.admin, new_task("before"))).unwrap();

    rig.caller
        .answer(200, br#"{"allow": false, "reason": "frozen"}"#.to_vec());
    let blocking = NewWebhook {
        hook_type: HookType::Pre,
        can_block: true,
        ..post_hook("freeze")
    };
    block_on(hooks.register(&world.admin, blocking)).unwrap();
    // Within that second, on this instance, the new hook is asked all the same.
    let err = block_on(tasks.create(&world.admin, new_task("during the freeze"))).unwrap_err();
    assert!(matches!(err, ServiceError::Forbidden(_)), "{err:?}");
    assert!(err.to_string().contains("frozen"), "{err}");
    assert_eq!(world.events("task.created").len(), 1);
}

#[test]
fn a_leased_hook_belongs_to_one_worker_until_it_lets_go() {
    let rig = Rig::new();
    rig.register(&["task.created"], None);
    rig.world.task("to deliver");
    let other = DeliveryService::new(
        Arc::new(rig.world.store.clone()),
        Arc::new(rig.world.store.clone()),
        Arc::new(rig.world.store.clone()),
        rig.world.vault.clone(),
        rig.caller.clone(),
        rig.world.clock.clone(),
        rig.world.ids.clone(),
    );
    let leased = block_on(rig.delivery.lease(10)).unwrap();
    assert_eq!(leased.len(), 1);
    assert!(
        block_on(other.lease(10)).unwrap().is_empty(),
        "another worker waits for the lease"
    );
    rig.world.clock.advance(Duration::seconds(29));
    assert!(block_on(other.lease(10)).unwrap().is_empty(), "still held");
    assert_eq!(block_on(rig.delivery.release_all()).unwrap(), 1);
    assert_eq!(block_on(rig.delivery.release_all()).unwrap(), 0);
    assert_eq!(block_on(other.lease(10)).unwrap(), leased, "free at once");
    assert!(block_on(rig.delivery.lease(0)).unwrap().is_empty());
}

/// A receiver that takes 20 s per call on the world's clock, and meanwhile checks
/// whether another worker could take the hook's lease.
struct SlowReceiver {
    clock: Arc<muster_memory::ManualClock>,
    rival: std::sync::Mutex<Option<DeliveryService>>,
    stolen: std::sync::Mutex<Vec<bool>>,
    /// The store, and the hook whose delivery log is read at each call.
    store: muster_memory::MemoryStore,
    hook: std::sync::Mutex<Option<(muster_domain::model::OrgId, muster_domain::model::WebhookId)>>,
    logged: std::sync::Mutex<Vec<u64>>,
}

#[async_trait::async_trait]
impl muster_domain::ports::HookCaller for SlowReceiver {
    async fn call(
        &self,
        _call: &muster_domain::ports::HookCall,
    ) -> muster_domain::ports::CallResult {
        self.clock.advance(Duration::seconds(20));
        let rival = self.rival.lock().unwrap().clone();
        if let Some(rival) = rival {
            let stolen = !rival.lease(10).await.unwrap().is_empty();
            self.stolen.lock().unwrap().push(stolen);
        }
        let hook = *self.hook.lock().unwrap();
        if let Some((org, id)) = hook {
            let (_, total) =
                muster_domain::ports::WebhookRepository::attempts(&self.store, org, id, 100, 0)
                    .await
                    .unwrap();
            self.logged.lock().unwrap().push(total);
        }
        muster_domain::ports::CallResult {
            status: Some(200),
            ..muster_domain::ports::CallResult::default()
        }
    }
}

#[test]
fn a_long_drain_keeps_its_lease_and_records_as_it_goes() {
    let rig = Rig::new();
    let world = &rig.world;
    rig.register(&["task.created"], None);
    let receiver = Arc::new(SlowReceiver {
        clock: world.clock.clone(),
        rival: std::sync::Mutex::new(None),
        stolen: std::sync::Mutex::new(Vec::new()),
        store: world.store.clone(),
        hook: std::sync::Mutex::new(None),
        logged: std::sync::Mutex::new(Vec::new()),
    });
    let worker = |caller: Arc<dyn muster_domain::ports::HookCaller>| {
        DeliveryService::new(
            Arc::new(world.store.clone()),
            Arc::new(world.store.clone()),
            Arc::new(world.store.clone()),
            world.vault.clone(),
            caller,
            world.clock.clone(),
            world.ids.clone(),
        )
    };
    let slow = worker(receiver.clone());
    *receiver.rival.lock().unwrap() = Some(worker(rig.caller.clone()));
    for i in 0..6 {
        world.task(&format!("task {i}"));
    }
    let leased = block_on(slow.lease(10)).unwrap();
    *receiver.hook.lock().unwrap() = Some(leased[0]);
    let report = block_on(slow.drain(leased[0].0, leased[0].1)).unwrap();
    assert_eq!((report.delivered, report.failed), (6, 0));
    assert_eq!(
        *receiver.stolen.lock().unwrap(),
        [false; 6],
        "two minutes of calls, and the lease was extended before each could lapse"
    );
    assert_eq!(
        *receiver.logged.lock().unwrap(),
        [0, 1, 2, 3, 4, 5],
        "each 20 s call is in the log before the next starts (recorded at least once a second)"
    );
}

#[test]
fn a_drain_that_switches_the_hook_off_says_so() {
    let rig = Rig::new();
    rig.register(&["task.created"], None);
    rig.caller.answer(500, Vec::new());
    for i in 0..DISABLE_AFTER_FAILURES {
        rig.world.task(&format!("task {i}"));
    }
    let leased = block_on(rig.delivery.lease(10)).unwrap();
    let report = block_on(rig.delivery.drain(leased[0].0, leased[0].1)).unwrap();
    assert!(report.disabled);
    assert_eq!(report.failed, DISABLE_AFTER_FAILURES);
}
