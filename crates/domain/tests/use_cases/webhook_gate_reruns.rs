//! The pre-hook gate asks with no transaction open (decision D-84, issue 61): a change is
//! decided, rolled back, its questions asked, then decided again and committed only if
//! it raises no question left unasked. Against the in-memory store, whose one writer
//! stands for SQLite's: a receiver that tries the writer while it is being asked finds
//! it free, and may change the store meanwhile as another request would.

use crate::common::world::World;

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use futures_executor::block_on;
use futures_util::FutureExt;
use muster_domain::model::{
    Actor, HookEvents, HookName, HookType, HookUrl, Task, TaskId, TaskStatus,
};
use muster_domain::ports::{CallResult, HookCall, HookCaller, UnitOfWork, transact};
use muster_domain::service::{
    Conflict, GatedUnitOfWork, HookGate, NewWebhook, ServiceError, TaskService, WebhookService,
};
use muster_memory::MemoryStore;
use serde_json::Value;
use uuid::Uuid;

/// A pre-hook receiver that, while asked, checks that the store's writer is free and
/// (the first times) moves a task as another request would, then answers `answer`.
struct Receiver {
    store: MemoryStore,
    /// Ungated: the other request.
    tasks: TaskService,
    admin: Actor,
    task: TaskId,
    moves: Mutex<VecDeque<TaskStatus>>,
    answer: Vec<u8>,
    bodies: Mutex<Vec<Value>>,
    delivery_ids: Mutex<Vec<Uuid>>,
    writer_held: AtomicBool,
}

#[async_trait]
impl HookCaller for Receiver {
    async fn call(&self, call: &HookCall) -> CallResult {
        self.bodies
            .lock()
            .unwrap()
            .push(serde_json::from_slice(&call.body).unwrap());
        self.delivery_ids.lock().unwrap().push(call.delivery_id);
        let noop = transact(&self.store as &dyn UnitOfWork, |_tx| {
            Box::pin(async { Ok(()) })
        });
        if noop.now_or_never().is_none() {
            // Moving the task now would wait for the writer forever.
            self.writer_held.store(true, Ordering::SeqCst);
        } else {
            let next = self.moves.lock().unwrap().pop_front();
            if let Some(to) = next {
                let moved = self.tasks.transition(&self.admin, self.task, to, None);
                moved.await.unwrap();
            }
        }
        CallResult {
            status: Some(200),
            duration_ms: 1,
            error: None,
            body: self.answer.clone(),
        }
    }
}

/// A world with a task in `start`, a blocking pre-hook on `task.cancelled` answering
/// `answer` (moving the task through `moves` while asked), and a task service gated by
/// it.
struct Rig {
    world: World,
    task: Task,
    receiver: Arc<Receiver>,
    gated: TaskService,
}

impl Rig {
    fn new(start: &[TaskStatus], moves: &[TaskStatus], answer: &str) -> Self {
        let world = World::new();
        let task = world.task("to cancel");
        for to in start {
            block_on(world.tasks.transition(&world.admin, task.id, *to, None)).unwrap();
        }
        let receiver = Arc::new(Receiver {
            store: world.store.clone(),
            tasks: world.tasks.clone(),
            admin: world.admin.clone(),
            task: task.id,
            moves: Mutex::new(moves.iter().copied().collect()),
            answer: answer.as_bytes().to_vec(),
            bodies: Mutex::default(),
            delivery_ids: Mutex::default(),
            writer_held: AtomicBool::new(false),
        });
        let hooks = WebhookService::new(world.webhook_ports(receiver.clone()));
        block_on(hooks.register(
            &world.admin,
            NewWebhook {
                hook_type: HookType::Pre,
                can_block: true,
                ..NewWebhook::new(
                    HookName::new("gate").unwrap(),
                    HookUrl::new("https://hooks.example/gate").unwrap(),
                    HookEvents::new(vec!["task.cancelled".into()]).unwrap(),
                )
            },
        ))
        .unwrap();
        let gate = Arc::new(HookGate::new(
            receiver.clone(),
            world.vault.clone(),
            world.clock.clone(),
            world.ids.clone(),
        ));
        let store = Arc::new(world.store.clone());
        let gated = TaskService::new(
            store.clone(),
            Arc::new(GatedUnitOfWork::new(store, gate)),
            world.clock.clone(),
            world.ids.clone(),
        );
        Self {
            world,
            task,
            receiver,
            gated,
        }
    }

    fn cancel(&self) -> Result<Task, ServiceError> {
        block_on(self.gated.transition(
            &self.world.admin,
            self.task.id,
            TaskStatus::Cancelled,
            None,
        ))
    }

    /// The `from` of each question asked, in order.
    fn asked_from(&self) -> Vec<String> {
        let bodies = self.receiver.bodies.lock().unwrap();
        bodies
            .iter()
            .map(|b| b["data"]["data"]["from"].as_str().unwrap().to_owned())
            .collect()
    }

    fn status(&self) -> TaskStatus {
        self.world.reread(&self.task).status
    }
}

const ALLOW: &str = r#"{"allow": true}"#;

#[test]
fn hooks_are_asked_with_the_writer_free_and_the_event_asked_about_is_committed() {
    let rig = Rig::new(&[], &[], ALLOW);
    rig.cancel().unwrap();
    assert!(
        !rig.receiver.writer_held.load(Ordering::SeqCst),
        "no transaction was open while the hook answered"
    );
    let bodies = rig.receiver.bodies.lock().unwrap().clone();
    assert_eq!(bodies.len(), 1, "asked once");
    let stored = rig.world.events("task.cancelled");
    assert_eq!(stored.len(), 1);
    let asked = &bodies[0]["data"];
    assert_eq!(
        asked["id"],
        stored[0].id.as_uuid().to_string(),
        "same event id"
    );
    assert_eq!(asked["data"], stored[0].payload);
    assert_eq!(rig.status(), TaskStatus::Cancelled);
}

#[test]
fn a_change_whose_inputs_moved_while_asked_is_decided_again_and_asked_again() {
    // While asked about todo -> cancelled, another request starts the task.
    let rig = Rig::new(&[], &[TaskStatus::InProgress], ALLOW);
    rig.cancel().unwrap();
    assert_eq!(rig.asked_from(), ["todo", "in_progress"]);
    let bodies = rig.receiver.bodies.lock().unwrap().clone();
    assert_eq!(
        bodies[0]["data"]["id"], bodies[1]["data"]["id"],
        "the same would-be event, worked out anew"
    );
    let ids = rig.receiver.delivery_ids.lock().unwrap().clone();
    assert_ne!(
        ids[0], ids[1],
        "a new question, with a delivery id of its own"
    );
    let stored = rig.world.events("task.cancelled");
    assert_eq!(stored.len(), 1, "committed once");
    assert_eq!(stored[0].payload["from"], "in_progress", "as decided again");
    assert_eq!(rig.status(), TaskStatus::Cancelled);
    assert!(!rig.receiver.writer_held.load(Ordering::SeqCst));
}

#[test]
fn a_change_no_longer_possible_once_asked_fails_as_decided_again() {
    // Cancelled meanwhile by the other request: nothing left to cancel.
    let rig = Rig::new(&[], &[TaskStatus::Cancelled], ALLOW);
    let err = rig.cancel().unwrap_err();
    assert_eq!(
        err.to_string(),
        "Invalid transition: cancelled -> cancelled"
    );
    assert_eq!(rig.asked_from(), ["todo"]);
    let stored = rig.world.events("task.cancelled");
    assert_eq!(stored.len(), 1, "the other request's only");
    assert!(stored[0].payload["reason"].is_null());
}

#[test]
fn a_change_overtaken_at_every_round_is_refused_and_writes_nothing() {
    // From backlog, each question moves the task on: four different decisions.
    let rig = Rig::new(
        &[TaskStatus::Backlog],
        &[TaskStatus::Todo, TaskStatus::InProgress, TaskStatus::Review],
        ALLOW,
    );
    let err = rig.cancel().unwrap_err();
    assert!(
        matches!(err, ServiceError::Conflict(Conflict::OvertakenWhileAsking)),
        "{err:?}"
    );
    assert_eq!(rig.asked_from(), ["backlog", "todo", "in_progress"]);
    assert!(rig.world.events("task.cancelled").is_empty());
    assert_eq!(
        rig.status(),
        TaskStatus::Review,
        "as the other request left it"
    );
}

#[test]
fn a_blocked_change_writes_nothing_but_the_record_of_its_refusal() {
    let rig = Rig::new(
        &[],
        &[TaskStatus::InProgress],
        r#"{"allow": false, "reason": "frozen"}"#,
    );
    let err = rig.cancel().unwrap_err();
    assert_eq!(err.to_string(), "Blocked by webhook gate: frozen");
    assert_eq!(rig.asked_from(), ["todo"], "refused at the first answer");
    assert!(rig.world.events("task.cancelled").is_empty());
    assert_eq!(rig.world.events("webhook.blocked").len(), 1);
    assert_eq!(
        rig.status(),
        TaskStatus::InProgress,
        "the other request's move only"
    );
}
