//! The task workflow's use cases against mocked ports: approve, dependencies, comments,
//! escalation, the sweep's single step, edits, and the reward and reputation a move
//! settles — each decided in the domain and written in one unit of work.

use crate::common;

use std::sync::{Arc, Mutex};

use common::{
    NOW, actor_agent_id, agent_actor, org, sample_agent, sample_task, task_id, types, user_actor,
};
use futures_executor::block_on;
use muster_domain::model::{
    Agent, AgentId, AgentMode, AgentStatus, CommentBody, CommentId, CreditKind, EscalationReason,
    Event, FeePct, LedgerEntry, ReputationEvent, ReputationKind, Task, TaskStatus, Title, UserRole,
};
use muster_domain::policy::Forbidden;
use muster_domain::ports::{MockTaskRepository, MockTransaction, MockUnitOfWork, Outcome};
use muster_domain::rules::escalation::SweepThresholds;
use muster_domain::service::{
    Conflict, Entity, NewEscalation, NotFound, ServiceError, TaskPatch, TaskService,
};
use time::Duration;
use uuid::Uuid;

/// Everything a unit of work wrote.
#[derive(Debug, Default)]
struct Written {
    tasks: Vec<(Task, i64)>,
    agents: Vec<Agent>,
    ledger: Vec<LedgerEntry>,
    reputation: Vec<ReputationEvent>,
    events: Vec<Event>,
}

type Sink = Arc<Mutex<Written>>;

fn service_on(tx: MockTransaction) -> (TaskService, Arc<MockUnitOfWork>) {
    let uow = Arc::new(MockUnitOfWork::new(tx));
    let service = TaskService::new(
        Arc::new(MockTaskRepository::new()),
        uow.clone(),
        common::clock(),
        common::ids(),
    );
    (service, uow)
}

/// A transaction that holds `tasks` and `agents`, has no open dependencies, no open
/// runs and no claim reservations, and records every write.
fn store(tasks: Vec<Task>, agents: Vec<Agent>) -> (MockTransaction, Sink) {
    let sink: Sink = Arc::default();
    let mut tx = MockTransaction::new();
    tx.expect_task()
        .returning(move |o, id, _| Ok(tasks.iter().find(|t| t.id == id && o == org()).cloned()));
    tx.expect_agent()
        .returning(move |_, id, _| Ok(agents.iter().find(|a| a.id == id).cloned()));
    tx.expect_open_blocking_dependencies()
        .returning(|_, _| Ok(Vec::new()));
    tx.expect_open_run().returning(|_, _, _| Ok(None));
    tx.expect_claim_reservation().returning(|_, _, _| Ok(None));
    let s = sink.clone();
    tx.expect_update_task().returning(move |task, expected| {
        s.lock().unwrap().tasks.push((task.clone(), expected));
        Ok(true)
    });
    let s = sink.clone();
    tx.expect_update_agent().returning(move |agent, _| {
        s.lock().unwrap().agents.push(agent.clone());
        Ok(true)
    });
    let s = sink.clone();
    tx.expect_insert_ledger_entries().returning(move |rows| {
        s.lock().unwrap().ledger.extend_from_slice(rows);
        Ok(())
    });
    let s = sink.clone();
    tx.expect_insert_reputation_events().returning(move |rows| {
        s.lock().unwrap().reputation.extend_from_slice(rows);
        Ok(())
    });
    let s = sink.clone();
    tx.expect_append_events().returning(move |events| {
        s.lock().unwrap().events.extend_from_slice(events);
        Ok(())
    });
    (tx, sink)
}

fn agent_id(n: u128) -> AgentId {
    AgentId::from_uuid(Uuid::from_u128(0xa000 + n))
}

fn worker(n: u128) -> Agent {
    sample_agent(agent_id(n), AgentMode::Worker, AgentStatus::Active)
}

/// A task in review needing approval, assigned to agent 1 (child of agent 2, fee 10%),
/// with 10 credits of its creator's in escrow.
fn review_task() -> (Task, Vec<Agent>) {
    let mut task = sample_task(task_id(1), TaskStatus::Review);
    task.reward = 10;
    task.approval_required = true;
    task.assignee_id = Some(agent_id(1));
    let mut child = worker(1);
    child.parent_id = Some(agent_id(2));
    child.current_balance = 100;
    let mut parent = worker(2);
    parent.management_fee_pct = FeePct::new(10).unwrap();
    parent.current_balance = 7;
    (task, vec![child, parent])
}

#[test]
fn approving_closes_the_task_and_pays_the_assignee_and_its_parent() {
    let (task, agents) = review_task();
    let (tx, sink) = store(vec![task], agents);
    let (service, uow) = service_on(tx);
    let approver = user_actor(UserRole::Operator);

    let done = block_on(service.approve(&approver, task_id(1))).unwrap();

    assert_eq!(done.status, TaskStatus::Done);
    assert_eq!(done.approved_by, approver.actor_id());
    assert_eq!(done.approved_at, Some(NOW));
    assert_eq!(uow.outcomes(), [Outcome::Committed]);
    let written = sink.lock().unwrap();
    assert_eq!(
        types(&written.events),
        [
            "task.approved",
            "task.transitioned",
            "task.done",
            "credits.earned",
            "credits.earned",
            "reputation.changed",
        ]
    );
    let balances: Vec<(AgentId, i64)> = written
        .agents
        .iter()
        .map(|a| (a.id, a.current_balance))
        .collect();
    // Written in the order they are locked: ascending id.
    assert_eq!(balances, [(agent_id(1), 109), (agent_id(2), 8)]);
    let ledger: Vec<(CreditKind, i64, i64)> = written
        .ledger
        .iter()
        .map(|e| (e.kind, e.amount, e.balance_after))
        .collect();
    assert_eq!(
        ledger,
        [(CreditKind::Earned, 9, 109), (CreditKind::Fee, 1, 8)]
    );
    assert_eq!(written.ledger[1].counterparty_id, Some(agent_id(1)));
    assert_eq!(written.reputation.len(), 1);
    assert_eq!(written.reputation[0].kind, ReputationKind::TaskCompleted);
    assert_eq!(written.agents[0].reputation_score, 55);
}

/// What a refusal must be.
type Expected = fn(&ServiceError) -> bool;

#[test]
fn approval_refusals_write_nothing() {
    let (task, agents) = review_task();
    let cases: Vec<(Task, muster_domain::model::Actor, Expected)> = vec![
        (
            Task {
                approval_required: false,
                ..task.clone()
            },
            user_actor(UserRole::Operator),
            |e| matches!(e, ServiceError::Conflict(Conflict::ApprovalNotRequired)),
        ),
        (
            Task {
                status: TaskStatus::InProgress,
                ..task.clone()
            },
            user_actor(UserRole::Operator),
            |e| {
                matches!(
                    e,
                    ServiceError::Conflict(Conflict::NotInReview {
                        status: TaskStatus::InProgress
                    })
                )
            },
        ),
        (
            Task {
                assignee_id: Some(actor_agent_id()),
                ..task.clone()
            },
            agent_actor(AgentMode::Worker),
            |e| matches!(e, ServiceError::Forbidden(Forbidden::ApproverIsAssignee)),
        ),
    ];
    for (stored, actor, expected) in cases {
        let (tx, sink) = store(vec![stored], agents.clone());
        let (service, uow) = service_on(tx);
        let err = block_on(service.approve(&actor, task_id(1))).unwrap_err();
        assert!(expected(&err), "{err:?}");
        assert_eq!(uow.outcomes(), [Outcome::RolledBack]);
        assert!(sink.lock().unwrap().events.is_empty());
    }
    // A viewer is refused before anything is read.
    let (service, uow) = service_on(MockTransaction::new());
    let err = block_on(service.approve(&user_actor(UserRole::Viewer), task_id(1))).unwrap_err();
    assert!(matches!(
        err,
        ServiceError::Forbidden(Forbidden::ViewerIsReadOnly)
    ));
    assert!(uow.outcomes().is_empty());
}

#[test]
fn open_blocking_dependencies_hold_work_back_and_are_named() {
    let mut tx = MockTransaction::new();
    tx.expect_task()
        .returning(|_, id, _| Ok(Some(sample_task(id, TaskStatus::Todo))));
    tx.expect_open_blocking_dependencies()
        .withf(|o, t| *o == org() && *t == task_id(1))
        .returning(|_, _| Ok(vec![task_id(5), task_id(6)]));
    tx.expect_update_task().never();
    let (service, uow) = service_on(tx);

    let err = block_on(service.transition(
        &agent_actor(AgentMode::Worker),
        task_id(1),
        TaskStatus::InProgress,
        None,
    ))
    .unwrap_err();

    assert_eq!(
        err.to_string(),
        format!(
            "Task has open blocking dependencies: {}, {}",
            task_id(5),
            task_id(6)
        )
    );
    assert_eq!(uow.outcomes(), [Outcome::RolledBack]);
}

#[test]
fn cancelling_started_work_costs_reputation_but_pays_nothing() {
    let mut task = sample_task(task_id(1), TaskStatus::InProgress);
    task.assignee_id = Some(agent_id(1));
    let mut assignee = worker(1);
    assignee.reputation_score = 4;
    let (tx, sink) = store(vec![task], vec![assignee]);
    let (service, _) = service_on(tx);

    block_on(service.transition(
        &user_actor(UserRole::Admin),
        task_id(1),
        TaskStatus::Cancelled,
        None,
    ))
    .unwrap();

    let written = sink.lock().unwrap();
    assert!(written.ledger.is_empty());
    assert_eq!(written.reputation[0].kind, ReputationKind::TaskFailed);
    assert_eq!(
        written.reputation[0].amount, -10,
        "the nominal amount is kept"
    );
    assert_eq!(
        written.agents[0].reputation_score, 0,
        "the score clamps at 0"
    );
    assert_eq!(
        types(&written.events),
        ["task.transitioned", "task.cancelled", "reputation.changed"]
    );
}

#[test]
fn dependency_refusals() {
    let tasks = vec![
        sample_task(task_id(1), TaskStatus::Todo),
        sample_task(task_id(2), TaskStatus::Todo),
    ];
    let run = |depends_on, cycle: bool| {
        let (mut tx, sink) = store(tasks.clone(), Vec::new());
        tx.expect_lock_dependency_graph()
            .times(1)
            .returning(|_| Ok(()));
        tx.expect_depends_transitively()
            .returning(move |_, from, to| Ok(cycle && from == task_id(2) && to == task_id(1)));
        tx.expect_insert_dependency().returning(|_| Ok(()));
        let (service, uow) = service_on(tx);
        let result = block_on(service.add_dependency(
            &agent_actor(AgentMode::Worker),
            task_id(1),
            depends_on,
            true,
        ));
        let events = types(&sink.lock().unwrap().events)
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>();
        (result, uow.outcomes(), events)
    };

    let (result, outcomes, _) = run(task_id(1), false);
    assert!(matches!(
        result,
        Err(ServiceError::Conflict(Conflict::SelfDependency))
    ));
    assert_eq!(outcomes, [Outcome::RolledBack]);

    let (result, _, _) = run(task_id(2), true);
    let err = result.unwrap_err();
    assert!(matches!(
        err,
        ServiceError::Conflict(Conflict::DependencyCycle { .. })
    ));

    let (result, _, _) = run(task_id(9), false);
    assert_eq!(
        result.unwrap_err().to_string(),
        NotFound::new(Entity::DependsOnTask, task_id(9)).to_string()
    );

    let (result, outcomes, events) = run(task_id(2), false);
    let dependency = result.unwrap();
    assert_eq!(
        (
            dependency.task_id,
            dependency.depends_on_id,
            dependency.blocking
        ),
        (task_id(1), task_id(2), true)
    );
    assert_eq!(outcomes, [Outcome::Committed]);
    assert_eq!(events, ["task.dependency_added"]);
}

#[test]
fn a_reply_must_answer_a_comment_of_the_same_task() {
    let (mut tx, sink) = store(vec![sample_task(task_id(1), TaskStatus::Todo)], Vec::new());
    tx.expect_comment().returning(|_, _, _| Ok(None));
    tx.expect_insert_comment().never();
    let (service, uow) = service_on(tx);
    let err = block_on(service.comment(
        &user_actor(UserRole::Operator),
        task_id(1),
        CommentBody::new("+1".into()).unwrap(),
        Some(CommentId::from_uuid(Uuid::from_u128(77))),
    ))
    .unwrap_err();
    assert!(matches!(err, ServiceError::Invalid(_)), "{err:?}");
    assert_eq!(uow.outcomes(), [Outcome::RolledBack]);
    assert!(sink.lock().unwrap().events.is_empty());

    let (mut tx, sink) = store(vec![sample_task(task_id(1), TaskStatus::Todo)], Vec::new());
    tx.expect_insert_comment().times(1).returning(|_| Ok(()));
    tx.expect_touch_task()
        .withf(|_, id, at| *id == task_id(1) && *at == NOW)
        .times(1)
        .returning(|_, _, _| Ok(()));
    let (service, _) = service_on(tx);
    let comment = block_on(service.comment(
        &user_actor(UserRole::Operator),
        task_id(1),
        CommentBody::new("+1".into()).unwrap(),
        None,
    ))
    .unwrap();
    assert_eq!(
        comment.author.and_then(muster_domain::model::Author::user),
        Some(common::actor_user_id())
    );
    assert_eq!(types(&sink.lock().unwrap().events), ["task.commented"]);
}

/// A task assigned to agent 1, whose parent is agent 2.
fn escalation_store(parent: Agent, senior: Option<Agent>) -> (TaskService, Sink) {
    let mut task = sample_task(task_id(1), TaskStatus::InProgress);
    task.assignee_id = Some(agent_id(1));
    let mut assignee = worker(1);
    assignee.parent_id = Some(parent.id);
    let (mut tx, sink) = store(vec![task], vec![assignee, parent]);
    tx.expect_senior_agent_above()
        .returning(move |_, _| Ok(senior.clone()));
    tx.expect_insert_escalation().returning(|_| Ok(true));
    (service_on(tx).0, sink)
}

fn manual() -> NewEscalation {
    NewEscalation {
        reason: EscalationReason::Manual,
        notes: None,
        target: None,
    }
}

#[test]
fn escalation_goes_to_the_parent_or_else_the_senior() {
    let (service, sink) = escalation_store(worker(2), None);
    let made =
        block_on(service.escalate(&user_actor(UserRole::Operator), task_id(1), manual())).unwrap();
    assert_eq!(made.to_agent_id, Some(agent_id(2)));
    assert_eq!(made.from_agent_id, Some(agent_id(1)));
    let written = sink.lock().unwrap();
    assert_eq!(written.tasks[0].0.assignee_id, Some(agent_id(2)));
    assert_eq!(types(&written.events), ["task.escalated"]);
    drop(written);

    let orchestrator = sample_agent(agent_id(2), AgentMode::Orchestrator, AgentStatus::Active);
    let (service, _) = escalation_store(orchestrator.clone(), Some(worker(3)));
    let made =
        block_on(service.escalate(&user_actor(UserRole::Operator), task_id(1), manual())).unwrap();
    assert_eq!(made.to_agent_id, Some(agent_id(3)));

    let (service, sink) = escalation_store(orchestrator, None);
    let err = block_on(service.escalate(&user_actor(UserRole::Operator), task_id(1), manual()))
        .unwrap_err();
    assert!(matches!(
        err,
        ServiceError::Conflict(Conflict::NoEscalationTarget)
    ));
    assert!(sink.lock().unwrap().events.is_empty());
}

#[test]
fn the_sweep_escalates_once_and_leaves_tasks_that_moved_on() {
    let far = NOW + Duration::days(30);
    let thresholds = SweepThresholds::default();
    // Already escalated for this reason: the insert reports it, nothing else is written.
    let mut task = sample_task(task_id(1), TaskStatus::Todo);
    task.due_at = Some(NOW);
    let (mut tx, sink) = store(vec![task.clone()], Vec::new());
    tx.expect_insert_escalation()
        .times(1)
        .returning(|_| Ok(false));
    let (service, _) = service_on(tx);
    let made = block_on(service.escalate_overdue(
        org(),
        task_id(1),
        EscalationReason::SlaBreach,
        thresholds,
        far,
    ))
    .unwrap();
    assert!(made.is_none());
    assert!(sink.lock().unwrap().events.is_empty());

    // No longer due: nothing is even tried.
    let (mut tx, _) = store(
        vec![Task {
            due_at: None,
            ..task.clone()
        }],
        Vec::new(),
    );
    tx.expect_insert_escalation().never();
    let (service, _) = service_on(tx);
    let made = block_on(service.escalate_overdue(
        org(),
        task_id(1),
        EscalationReason::SlaBreach,
        thresholds,
        far,
    ))
    .unwrap();
    assert!(made.is_none());

    // Due, unassigned: recorded without a new assignee, with the event.
    let (mut tx, sink) = store(vec![task], Vec::new());
    tx.expect_insert_escalation()
        .times(1)
        .returning(|_| Ok(true));
    let (service, _) = service_on(tx);
    let made = block_on(service.escalate_overdue(
        org(),
        task_id(1),
        EscalationReason::SlaBreach,
        thresholds,
        far,
    ))
    .unwrap()
    .unwrap();
    assert!(made.automatic && made.to_agent_id.is_none() && made.actor_id.is_none());
    let written = sink.lock().unwrap();
    assert!(written.tasks.is_empty(), "no new assignee, no task change");
    assert_eq!(types(&written.events), ["task.escalated"]);
    assert_eq!(written.events[0].actor_id, None);
}

#[test]
fn edits_name_what_changed_and_skip_what_did_not() {
    let stored = sample_task(task_id(1), TaskStatus::Todo);
    let (tx, sink) = store(vec![stored.clone()], Vec::new());
    let (service, _) = service_on(tx);
    let same = TaskPatch {
        title: Some(stored.title.clone()),
        ..TaskPatch::default()
    };
    let unchanged =
        block_on(service.update(&user_actor(UserRole::Operator), task_id(1), same)).unwrap();
    assert_eq!(unchanged, stored);
    assert!(sink.lock().unwrap().events.is_empty());

    let (tx, sink) = store(vec![stored.clone()], Vec::new());
    let (service, _) = service_on(tx);
    let patch = TaskPatch {
        title: Some(Title::new("New title").unwrap()),
        due_at: Some(Some(NOW)),
        description: Some(None),
        ..TaskPatch::default()
    };
    let edited =
        block_on(service.update(&user_actor(UserRole::Operator), task_id(1), patch)).unwrap();
    assert_eq!(edited.title.as_str(), "New title");
    assert_eq!(edited.version, stored.version + 1);
    let written = sink.lock().unwrap();
    assert_eq!(
        written.events[0].payload["fields"],
        serde_json::json!(["title", "dueAt"])
    );

    let (service, uow) = service_on(MockTransaction::new());
    let err = block_on(service.update(
        &user_actor(UserRole::Operator),
        task_id(1),
        TaskPatch::default(),
    ))
    .unwrap_err();
    assert!(matches!(err, ServiceError::Invalid(_)));
    assert!(uow.outcomes().is_empty());

    let (tx, _) = store(vec![sample_task(task_id(1), TaskStatus::Done)], Vec::new());
    let (service, _) = service_on(tx);
    let patch = TaskPatch {
        priority: Some(muster_domain::model::TaskPriority::Low),
        ..TaskPatch::default()
    };
    let err =
        block_on(service.update(&user_actor(UserRole::Operator), task_id(1), patch)).unwrap_err();
    assert!(matches!(
        err,
        ServiceError::Conflict(Conflict::TaskClosed {
            status: TaskStatus::Done
        })
    ));
}

#[test]
fn assigning_checks_the_agent_inside_the_transaction() {
    let mut observer = sample_agent(agent_id(4), AgentMode::Observer, AgentStatus::Active);
    observer.level = muster_domain::model::Level::new(9).unwrap();
    let (tx, sink) = store(
        vec![sample_task(task_id(1), TaskStatus::Todo)],
        vec![observer, worker(5)],
    );
    let (service, _) = service_on(tx);
    let err = block_on(service.assign(
        &agent_actor(AgentMode::Orchestrator),
        task_id(1),
        agent_id(4),
    ))
    .unwrap_err();
    assert!(matches!(
        err,
        ServiceError::Conflict(Conflict::AssigneeDoesNotExecute { .. })
    ));
    let assigned = block_on(service.assign(
        &agent_actor(AgentMode::Orchestrator),
        task_id(1),
        agent_id(5),
    ))
    .unwrap();
    assert_eq!(assigned.assignee_id, Some(agent_id(5)));
    let written = sink.lock().unwrap();
    assert_eq!(types(&written.events), ["task.assigned"]);
    assert_eq!(
        written.events[0].payload,
        serde_json::json!({"assigneeId": agent_id(5), "previousAssigneeId": null})
    );
}
