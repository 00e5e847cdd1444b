//! A2A push notification configs on the in-memory store: webhooks scoped to one task,
//! set under the webhooks' policy, delivered through the same outbox with the body a
//! `PushRenderer` writes, their token and `Authorization` as headers.

use crate::common::world::World;

use std::sync::Arc;

use async_trait::async_trait;
use futures_executor::block_on;
use muster_domain::model::{
    Event, HookUrl, MAX_PUSH_CONFIGS_PER_TASK, OrgId, PushAuth, PushConfigId, TaskId, TaskStatus,
    UserRole,
};
use muster_domain::ports::{HookCall, PushRenderer, RepositoryError};
use muster_domain::service::{DeliveryService, NewPush, ServiceError, WebhookService};
use muster_memory::fakes::RecordingHookCaller;
use serde_json::{Value, json};

/// Names the task and the event it was asked about.
struct EchoRenderer;

#[async_trait]
impl PushRenderer for EchoRenderer {
    async fn render(
        &self,
        _org: OrgId,
        task: TaskId,
        event: &Event,
    ) -> Result<Value, RepositoryError> {
        Ok(json!({"task": task.to_string(), "event": event.event_type, "to": event.payload["to"]}))
    }
}

/// Cannot read the task.
struct BrokenRenderer;

#[async_trait]
impl PushRenderer for BrokenRenderer {
    async fn render(
        &self,
        _org: OrgId,
        _task: TaskId,
        _event: &Event,
    ) -> Result<Value, RepositoryError> {
        Err(RepositoryError::Internal("the disk is gone".into()))
    }
}

struct Rig {
    world: World,
    caller: Arc<RecordingHookCaller>,
    hooks: WebhookService,
    delivery: DeliveryService,
}

impl Rig {
    fn new() -> Self {
        let world = World::new();
        let caller = Arc::new(RecordingHookCaller::new(200, Vec::new()));
        let hooks = WebhookService::new(world.webhook_ports(caller.clone()));
        let delivery = Self::worker(&world, &caller, Arc::new(EchoRenderer));
        Self {
            world,
            caller,
            hooks,
            delivery,
        }
    }

    /// A delivery worker on `world`'s store, writing pushes with `renderer`.
    fn worker(
        world: &World,
        caller: &Arc<RecordingHookCaller>,
        renderer: Arc<dyn PushRenderer>,
    ) -> DeliveryService {
        let store = Arc::new(world.store.clone());
        DeliveryService::new(
            store.clone(),
            store.clone(),
            store,
            world.vault.clone(),
            caller.clone(),
            world.clock.clone(),
            world.ids.clone(),
        )
        .with_push(renderer)
    }

    fn run(&self) -> u32 {
        let mut delivered = 0;
        for (org, hook) in block_on(self.delivery.lease(10)).unwrap() {
            delivered += block_on(self.delivery.drain(org, hook)).unwrap().delivered;
        }
        delivered
    }

    fn push(id: Option<&str>, url: &str) -> NewPush {
        NewPush {
            config_id: id.map(|id| PushConfigId::new(id).unwrap()),
            url: HookUrl::new(url).unwrap(),
            token: None,
            auth: None,
        }
    }

    fn ids(&self, task: TaskId) -> Vec<String> {
        block_on(self.hooks.push_configs(&self.world.admin, task))
            .unwrap()
            .iter()
            .map(|h| h.push.as_ref().unwrap().config_id.as_str().to_owned())
            .collect()
    }

    fn move_to(&self, task: TaskId, status: TaskStatus) {
        block_on(
            self.world
                .tasks
                .transition(&self.world.admin, task, status, None),
        )
        .unwrap();
    }
}

#[test]
fn a_push_config_hears_only_its_tasks_moves_with_its_token_and_authorization() {
    let rig = Rig::new();
    let watched = rig.world.task("watched");
    let other = rig.world.task("other");
    let new = NewPush {
        token: Some("tok".into()),
        auth: Some(PushAuth::new("Bearer", Some("cred")).unwrap()),
        ..Rig::push(None, "https://push.example/in")
    };
    let hook = block_on(rig.hooks.set_push(&rig.world.admin, watched.id, new)).unwrap();
    assert!(
        hook.sealed_secret.as_deref() != Some(b"tok".as_slice()),
        "the token is sealed"
    );
    rig.move_to(other.id, TaskStatus::InProgress);
    rig.move_to(watched.id, TaskStatus::InProgress);
    rig.move_to(watched.id, TaskStatus::Done);
    assert_eq!(rig.run(), 2);
    let calls: Vec<HookCall> = rig.caller.calls();
    let bodies: Vec<Value> = calls
        .iter()
        .map(|c| serde_json::from_slice(&c.body).unwrap())
        .collect();
    assert_eq!(
        bodies,
        [
            json!({"task": watched.id.to_string(), "event": "task.transitioned", "to": "in_progress"}),
            json!({"task": watched.id.to_string(), "event": "task.transitioned", "to": "done"}),
        ]
    );
    for call in &calls {
        assert_eq!(call.url, "https://push.example/in");
        assert_eq!(call.content_type, HookCall::A2A_JSON);
        assert_eq!(call.secret.as_deref(), Some("tok"), "the token signs");
        assert_eq!(
            call.headers,
            [
                ("x-a2a-notification-token", "tok".to_owned()),
                ("authorization", "Bearer cred".to_owned())
            ]
        );
    }
    // The scheme can be read back, the credentials are never answered.
    assert_eq!(
        rig.hooks.push_scheme(&hook).unwrap().as_deref(),
        Some("Bearer")
    );
}

#[test]
fn the_organizations_webhooks_do_not_include_push_configs() {
    let rig = Rig::new();
    let task = rig.world.task("t");
    let hook = block_on(rig.hooks.set_push(
        &rig.world.admin,
        task.id,
        Rig::push(Some("p"), "https://push.example/in"),
    ))
    .unwrap();
    assert!(
        block_on(rig.hooks.list(&rig.world.admin))
            .unwrap()
            .is_empty()
    );
    let err = block_on(rig.hooks.get(&rig.world.admin, hook.id)).unwrap_err();
    assert!(matches!(err, ServiceError::NotFound(_)), "{err:?}");
    let err = block_on(rig.hooks.delete(&rig.world.admin, hook.id)).unwrap_err();
    assert!(matches!(err, ServiceError::NotFound(_)), "{err:?}");
    assert_eq!(rig.ids(task.id), ["p"]);
}

#[test]
fn a_task_has_at_most_ten_configs_and_an_id_set_again_is_replaced() {
    let rig = Rig::new();
    let task = rig.world.task("t");
    let admin = &rig.world.admin;
    for n in 0..MAX_PUSH_CONFIGS_PER_TASK {
        let new = Rig::push(Some(&format!("c{n}")), "https://push.example/a");
        block_on(rig.hooks.set_push(admin, task.id, new)).unwrap();
    }
    let eleventh = Rig::push(Some("c10"), "https://push.example/a");
    let err = block_on(rig.hooks.set_push(admin, task.id, eleventh)).unwrap_err();
    assert!(matches!(err, ServiceError::Invalid(_)), "{err:?}");
    let again = Rig::push(Some("c3"), "https://push.example/b");
    let replaced = block_on(rig.hooks.set_push(admin, task.id, again)).unwrap();
    assert_eq!(replaced.url.as_str(), "https://push.example/b");
    assert_eq!(rig.ids(task.id).len(), MAX_PUSH_CONFIGS_PER_TASK);
    assert_eq!(rig.world.events("webhook.updated").len(), 1);
    // Deleting is idempotent and audited once.
    for _ in 0..2 {
        let id = PushConfigId::new("c3").unwrap();
        block_on(rig.hooks.delete_push(admin, task.id, id)).unwrap();
    }
    assert_eq!(rig.ids(task.id).len(), MAX_PUSH_CONFIGS_PER_TASK - 1);
    assert_eq!(rig.world.events("webhook.deleted").len(), 1);
}

#[test]
fn only_users_who_may_write_set_configs_and_only_on_their_organizations_tasks() {
    let rig = Rig::new();
    let task = rig.world.task("t");
    let new = Rig::push(None, "https://push.example/in");
    let viewer = rig.world.user(UserRole::Viewer);
    for actor in [&rig.world.hr, &viewer] {
        let err = block_on(rig.hooks.set_push(actor, task.id, new.clone())).unwrap_err();
        assert!(matches!(err, ServiceError::Forbidden(_)), "{err:?}");
    }
    let err = block_on(rig.hooks.push_configs(&rig.world.hr, task.id)).unwrap_err();
    assert!(matches!(err, ServiceError::Forbidden(_)), "{err:?}");
    let missing = TaskId::from_uuid(uuid::Uuid::now_v7());
    let err = block_on(rig.hooks.set_push(&rig.world.admin, missing, new)).unwrap_err();
    assert!(matches!(err, ServiceError::NotFound(_)), "{err:?}");
    assert!(rig.world.events("webhook.created").is_empty());
}

#[test]
fn a_push_that_cannot_be_written_is_a_failed_attempt_retried_later() {
    let rig = Rig::new();
    let task = rig.world.task("t");
    let hook = block_on(rig.hooks.set_push(
        &rig.world.admin,
        task.id,
        Rig::push(Some("p"), "https://push.example/in"),
    ))
    .unwrap();
    rig.move_to(task.id, TaskStatus::InProgress);
    let broken = Rig::worker(&rig.world, &rig.caller, Arc::new(BrokenRenderer));
    let leased = block_on(broken.lease(10)).unwrap();
    assert_eq!(leased, [(rig.world.org, hook.id)]);
    let report = block_on(broken.drain(rig.world.org, hook.id)).unwrap();
    assert_eq!((report.delivered, report.failed), (0, 1));
    assert!(rig.caller.calls().is_empty(), "nothing was sent");
    let hooks = block_on(rig.hooks.push_configs(&rig.world.admin, task.id)).unwrap();
    assert_eq!(hooks[0].consecutive_failures, 1);
    assert!(
        hooks[0]
            .last_error
            .as_deref()
            .is_some_and(|e| e.contains("cannot write the push")),
        "{:?}",
        hooks[0].last_error
    );
    // Not due again before its wait; then the working renderer delivers it.
    assert_eq!(rig.run(), 0);
    rig.world.clock.advance(time::Duration::seconds(10));
    assert_eq!(rig.run(), 1);
}
