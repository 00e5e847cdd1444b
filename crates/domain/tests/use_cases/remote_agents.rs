//! Remote A2A agents on the in-memory store: registered from a (mocked) card, handed
//! their tasks through the outbox (the body a `PushRenderer` writes, with a per-task
//! push URL and token), and moved by their reports as the transition rules allow.

use crate::common::world::World;

use std::sync::Arc;

use async_trait::async_trait;
use futures_executor::block_on;
use muster_domain::model::{
    AgentId, Event, HookUrl, OrgId, PushAuth, TaskId, TaskOutcome, TaskResult, TaskStatus, Title,
    UserRole,
};
use muster_domain::ports::{
    CallResult, HandoverTarget, HookCall, HookCaller, MockCardFetcher, MockTargetGuard,
    PushRenderer, RemoteCard, RepositoryError, TargetRefusal, TaskRepository,
};
use muster_domain::rules::remote::RemoteState;
use muster_domain::service::{
    DeliveryService, NewRemoteAgent, NewTask, RemoteAgentService, RemotePorts, RemoteReport,
    ServiceError, WebhookService,
};
use muster_memory::MemoryStore;
use muster_memory::fakes::{OpenTargets, RecordingHookCaller};
use serde_json::{Value, json};

/// Writes the hand-over as the arguments it was given, when the task (read from the
/// store) is still open and the agent's, as the contract asks.
struct EchoRenderer(MemoryStore);

#[async_trait]
impl PushRenderer for EchoRenderer {
    async fn render(&self, _: OrgId, _: TaskId, _: &Event) -> Result<Value, RepositoryError> {
        Ok(json!({}))
    }

    async fn render_handover(
        &self,
        org: OrgId,
        task: TaskId,
        target: &HandoverTarget,
    ) -> Result<Option<Value>, RepositoryError> {
        let due = TaskRepository::get(&self.0, org, task)
            .await?
            .is_some_and(|t| !t.status.is_terminal() && t.assignee_id == Some(target.agent));
        Ok(due.then(|| {
            json!({"task": task.to_string(), "id": target.request_id.to_string(),
                   "url": target.push_url, "token": target.token})
        }))
    }
}

fn card() -> RemoteCard {
    RemoteCard {
        name: "Translator".into(),
        description: "Translates".into(),
        endpoint: "https://remote.example/rpc".into(),
        skills: vec!["translate".into(), "Translate".into(), String::new()],
    }
}

fn cards(answer: Result<RemoteCard, String>) -> MockCardFetcher {
    let mut cards = MockCardFetcher::new();
    cards.expect_fetch().returning(move |_| answer.clone());
    cards
}

struct Rig {
    world: World,
    remote: RemoteAgentService,
}

impl Rig {
    fn new(cards: MockCardFetcher, guard: Arc<dyn muster_domain::ports::TargetGuard>) -> Self {
        let world = World::new();
        let store = Arc::new(world.store.clone());
        let remote = RemoteAgentService::new(
            world.agents.clone(),
            world.tasks.clone(),
            RemotePorts {
                agents: store.clone(),
                hooks: store.clone(),
                uow: store,
                vault: world.vault.clone(),
                signer: world.signer.clone(),
                guard,
                cards: Arc::new(cards),
                clock: world.clock.clone(),
                ids: world.ids.clone(),
            },
        );
        Self { world, remote }
    }

    fn open() -> Self {
        Self::new(cards(Ok(card())), Arc::new(OpenTargets))
    }

    fn new_remote() -> NewRemoteAgent {
        NewRemoteAgent {
            card_url: HookUrl::new("https://remote.example/card").unwrap(),
            handle: None,
            callback_url: "https://muster.example/".into(),
            auth: Some(PushAuth::new("Bearer", Some("cred")).unwrap()),
        }
    }

    fn register(&self) -> AgentId {
        block_on(self.remote.register(&self.world.admin, Self::new_remote()))
            .unwrap()
            .view
            .agent
            .id
    }

    /// Runs the delivery worker once with `caller`; the calls it made.
    fn deliver(&self, caller: &Arc<RecordingHookCaller>) -> Vec<HookCall> {
        let store = Arc::new(self.world.store.clone());
        let worker = DeliveryService::new(
            store.clone(),
            store.clone(),
            store,
            self.world.vault.clone(),
            caller.clone(),
            self.world.clock.clone(),
            self.world.ids.clone(),
        )
        .with_push(Arc::new(EchoRenderer(self.world.store.clone())))
        .with_remote(self.world.signer.clone());
        for (org, hook) in block_on(worker.lease(10)).unwrap() {
            block_on(worker.drain(org, hook)).unwrap();
        }
        caller.calls()
    }

    fn assigned_task(&self, agent: AgentId) -> TaskId {
        let task = self.world.task("Translate");
        block_on(self.world.tasks.assign(&self.world.admin, task.id, agent)).unwrap();
        task.id
    }

    fn report(
        &self,
        agent: AgentId,
        task: TaskId,
        token: &str,
        state: RemoteState,
    ) -> Result<Option<TaskStatus>, ServiceError> {
        let report = RemoteReport {
            state,
            message: Some("all done".into()),
        };
        block_on(self.remote.report(agent, task, token, Ok(Some(report))))
            .map(|moved| moved.map(|m| m.task.status))
    }
}

/// A remote agent that takes every hand-over.
fn accepting() -> Arc<RecordingHookCaller> {
    Arc::new(RecordingHookCaller::new(
        200,
        br#"{"jsonrpc":"2.0","id":"1","result":{}}"#.to_vec(),
    ))
}

fn body(call: &HookCall) -> Value {
    serde_json::from_slice(&call.body).unwrap()
}

#[test]
fn registering_makes_an_active_worker_with_the_cards_skills_and_a_hidden_channel() {
    let rig = Rig::open();
    let before = rig.world.events("agent.registered").len();
    let registered = block_on(rig.remote.register(&rig.world.admin, Rig::new_remote())).unwrap();
    let agent = &registered.view.agent;
    assert_eq!(agent.name, "Translator");
    assert!(agent.handle.as_str().starts_with("a2a-translator-"));
    assert_eq!(agent.metadata["endpoint"], "https://remote.example/rpc");
    let skills: Vec<&str> = registered
        .view
        .capabilities
        .iter()
        .map(|c| c.name.as_str())
        .collect();
    assert_eq!(skills, ["translate"]);
    assert_eq!(registered.link.callback_url, "https://muster.example");
    assert_eq!(rig.world.events("agent.registered").len(), before + 1);
    let caller = Arc::new(RecordingHookCaller::new(200, Vec::new()));
    let hooks = WebhookService::new(rig.world.webhook_ports(caller));
    assert!(block_on(hooks.list(&rig.world.admin)).unwrap().is_empty());
}

#[test]
fn only_admin_users_register_and_bad_cards_or_targets_are_400() {
    let rig = Rig::open();
    for actor in [rig.world.hr.clone(), rig.world.user(UserRole::Operator)] {
        let refused = block_on(rig.remote.register(&actor, Rig::new_remote()));
        assert!(
            matches!(refused, Err(ServiceError::Forbidden(_))),
            "{refused:?}"
        );
    }
    let unreadable = Rig::new(
        cards(Err("the server answered 404".into())),
        Arc::new(OpenTargets),
    );
    let refused = block_on(
        unreadable
            .remote
            .register(&unreadable.world.admin, Rig::new_remote()),
    );
    assert!(
        matches!(&refused, Err(ServiceError::Invalid(e)) if e.to_string().contains("404")),
        "{refused:?}"
    );
    // The endpoint the card names is checked like the card's own URL.
    let mut guard = MockTargetGuard::new();
    guard.expect_check().returning(|url| {
        if url.contains("/rpc") {
            Err(TargetRefusal::Private)
        } else {
            Ok(())
        }
    });
    let private = Rig::new(cards(Ok(card())), Arc::new(guard));
    let before = private.world.events("agent.registered").len();
    let refused = block_on(
        private
            .remote
            .register(&private.world.admin, Rig::new_remote()),
    );
    assert!(
        matches!(&refused, Err(ServiceError::Invalid(e)) if e.to_string().contains("endpoint")),
        "{refused:?}"
    );
    assert_eq!(
        private.world.events("agent.registered").len(),
        before,
        "nothing stored"
    );
}

#[test]
fn an_assignment_is_handed_over_once_with_a_token_that_moves_only_its_task() {
    let rig = Rig::open();
    let agent = rig.register();
    let unrelated = rig.world.task("Not theirs");
    let task = rig.assigned_task(agent);
    let other = rig.assigned_task(agent);
    let caller = accepting();
    let calls = rig.deliver(&caller);
    assert_eq!(calls.len(), 2, "one hand-over per assigned task");
    let call = calls
        .iter()
        .find(|c| body(c)["task"] == task.to_string())
        .unwrap();
    assert_eq!(call.url, "https://remote.example/rpc");
    assert!(call.secret.is_none(), "the channel's secret is never sent");
    assert!(
        call.headers
            .contains(&("authorization", "Bearer cred".into()))
    );
    assert!(call.headers.contains(&("a2a-version", "1.0".into())));
    let sent = body(call);
    assert_eq!(
        sent["url"],
        format!("https://muster.example/a2a/remote/{agent}/tasks/{task}/push")
    );
    let token = sent["token"].as_str().unwrap().to_owned();
    assert!(rig.deliver(&caller).len() == 2, "delivered once");

    for (target, wrong) in [
        (task, "nope".to_owned()),
        (other, token.clone()),
        (unrelated.id, token.clone()),
    ] {
        let refused = rig.report(agent, target, &wrong, RemoteState::Working);
        assert!(
            matches!(refused, Err(ServiceError::Unauthorized(_))),
            "{refused:?}"
        );
    }
    assert_eq!(
        rig.report(agent, task, &token, RemoteState::Submitted)
            .unwrap(),
        None
    );
    assert_eq!(
        rig.report(agent, task, &token, RemoteState::Working)
            .unwrap(),
        Some(TaskStatus::InProgress)
    );
    assert_eq!(
        rig.report(agent, task, &token, RemoteState::Completed)
            .unwrap(),
        Some(TaskStatus::Done)
    );
    let done = block_on(rig.world.tasks.get(&rig.world.admin, task)).unwrap();
    assert_eq!(
        done.result.as_ref().map(TaskResult::as_str),
        Some("all done")
    );
}

#[test]
fn a_failure_cancels_with_its_outcome_and_a_reassigned_task_refuses_reports() {
    let rig = Rig::open();
    let agent = rig.register();
    let task = rig.assigned_task(agent);
    let other = rig.assigned_task(agent);
    let caller = accepting();
    let calls = rig.deliver(&caller);
    let token_of = |id: TaskId| {
        calls
            .iter()
            .map(body)
            .find(|b| b["task"] == id.to_string())
            .map(|b| b["token"].as_str().unwrap().to_owned())
            .unwrap()
    };
    assert_eq!(
        rig.report(agent, task, &token_of(task), RemoteState::Rejected)
            .unwrap(),
        Some(TaskStatus::Cancelled)
    );
    let rejected = block_on(rig.world.tasks.get(&rig.world.admin, task)).unwrap();
    assert_eq!(rejected.outcome, Some(TaskOutcome::Rejected));

    let hr = rig.world.hr.agent_id().unwrap();
    block_on(rig.world.tasks.assign(&rig.world.admin, other, hr)).unwrap();
    let refused = rig.report(agent, other, &token_of(other), RemoteState::Working);
    assert!(
        matches!(refused, Err(ServiceError::Conflict(_))),
        "{refused:?}"
    );
}

/// Answers every call with a JSON-RPC error in a 200.
struct Refusing;

#[async_trait]
impl HookCaller for Refusing {
    async fn call(&self, _: &HookCall) -> CallResult {
        CallResult {
            status: Some(200),
            duration_ms: 1,
            error: None,
            body: br#"{"jsonrpc":"2.0","id":"1","error":{"code":-32001,"message":"no"}}"#.to_vec(),
        }
    }
}

#[test]
fn a_json_rpc_error_in_a_2xx_is_a_failed_attempt() {
    let rig = Rig::open();
    let agent = rig.register();
    rig.assigned_task(agent);
    let store = Arc::new(rig.world.store.clone());
    let worker = DeliveryService::new(
        store.clone(),
        store.clone(),
        store,
        rig.world.vault.clone(),
        Arc::new(Refusing),
        rig.world.clock.clone(),
        rig.world.ids.clone(),
    )
    .with_push(Arc::new(EchoRenderer(rig.world.store.clone())))
    .with_remote(rig.world.signer.clone());
    let leased = block_on(worker.lease(10)).unwrap();
    assert_eq!(leased.len(), 1);
    let (org, hook) = leased[0];
    let report = block_on(worker.drain(org, hook)).unwrap();
    assert_eq!((report.delivered, report.failed), (0, 1));
}

#[test]
fn a_hand_over_no_longer_due_is_not_sent_and_escalations_hand_over_too() {
    let rig = Rig::open();
    let agent = rig.register();
    let task = rig.assigned_task(agent);
    // Reassigned before the worker ran: the hand-over is dropped, not sent.
    let hr = rig.world.hr.agent_id().unwrap();
    block_on(rig.world.tasks.assign(&rig.world.admin, task, hr)).unwrap();
    let caller = accepting();
    assert!(rig.deliver(&caller).is_empty(), "nothing sent");
    // An escalation to the remote agent hands the task over.
    let escalated = rig.world.task("Escalate me");
    block_on(rig.world.tasks.assign(&rig.world.admin, escalated.id, hr)).unwrap();
    let new = muster_domain::service::NewEscalation {
        reason: muster_domain::model::EscalationReason::Manual,
        notes: None,
        target: Some(agent),
    };
    block_on(
        rig.world
            .tasks
            .escalate(&rig.world.admin, escalated.id, new),
    )
    .unwrap();
    let calls = rig.deliver(&caller);
    assert_eq!(calls.len(), 1, "{calls:?}");
    assert_eq!(body(&calls[0])["task"], escalated.id.to_string());
}

#[test]
fn in_review_only_a_final_state_moves_the_task() {
    let rig = Rig::open();
    let agent = rig.register();
    let new = NewTask {
        assignee_id: Some(agent),
        approval_required: true,
        ..NewTask::new(Title::new("Needs approval").unwrap())
    };
    let task = block_on(rig.world.tasks.create(&rig.world.admin, new)).unwrap();
    let caller = accepting();
    let token = body(&rig.deliver(&caller)[0])["token"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(
        rig.report(agent, task.id, &token, RemoteState::Completed)
            .unwrap(),
        Some(TaskStatus::Review),
        "approval holds it in review"
    );
    for late in [RemoteState::Working, RemoteState::InputRequired] {
        assert_eq!(
            rig.report(agent, task.id, &token, late).unwrap(),
            Some(TaskStatus::Review),
            "{late:?} after completed does not undo the review"
        );
    }
    assert_eq!(
        rig.report(agent, task.id, &token, RemoteState::Canceled)
            .unwrap(),
        Some(TaskStatus::Cancelled)
    );
}

#[test]
fn nothing_is_said_before_the_token_holds() {
    let rig = Rig::open();
    let agent = rig.register();
    let task = rig.assigned_task(agent);
    let unknown = AgentId::from_uuid(uuid::Uuid::from_u128(7));
    for (who, parsed) in [
        (unknown, Ok(None)),
        (agent, Err("not JSON".to_owned())),
        (agent, Ok(None)),
    ] {
        let refused = block_on(rig.remote.report(who, task, "wrong", parsed));
        assert!(
            matches!(refused, Err(ServiceError::Unauthorized(_))),
            "{refused:?}"
        );
    }
}
