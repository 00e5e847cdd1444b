//! The task workflow's ports on both engines: dependencies and reachability, comments,
//! escalations (automatic ones once), templates, routing's roster, the sweep's queries,
//! the most senior agent, and the ledger and reputation rows.

use crate::support::Store;
use muster_domain::model::{
    AgentId, AgentMode, AgentStatus, Author, Capability, CapabilityId, CapabilityName, Comment,
    CommentBody, CommentId, CreditKind, DependencyId, Escalation, EscalationId, EscalationReason,
    LedgerEntry, LedgerEntryId, Level, Metadata, OrgId, Proficiency, Reason, ReputationEvent,
    ReputationEventId, ReputationKind, Tags, Task, TaskDependency, TaskId, TaskPriority,
    TaskStatus, TaskTemplate, TemplateId, TemplateName, Title,
};
use muster_domain::ports::{AgentRepository, Lock, Overdue, TaskRepository, UniqueKey, transact};
use muster_domain::rules::claimable::{CLAIMABLE, claim_key};
use muster_domain::service::{Conflict, ServiceError};
use serde_json::json;
use time::Duration;

use crate::support::{Once, Seed, change_agent, new_id, now_ms, seed_org, task};
use crate::writes::Writes;

contract_tests!(
    dependencies_round_trip_and_reach,
    comments_round_trip_and_page,
    automatic_escalations_are_stored_once,
    templates_round_trip_with_unique_names,
    roster_counts_open_tasks_and_capabilities,
    overdue_finds_each_reason_until_escalated,
    senior_agent_is_the_highest_then_earliest,
    ledger_and_reputation_rows_are_appended,
    the_first_claimable_of_those_asked_is_locked,
    claim_candidates_are_what_the_claim_rule_admits_in_claim_order,
);

async fn stored_task(db: &impl Store, org: OrgId) -> Task {
    let task = task(org);
    db.insert(&task, &[]).await.unwrap();
    task
}

pub(crate) fn dependency(org: OrgId, from: TaskId, to: TaskId, blocking: bool) -> TaskDependency {
    TaskDependency {
        id: DependencyId::from_uuid(new_id()),
        org_id: org,
        task_id: from,
        depends_on_id: to,
        blocking,
        created_at: now_ms(),
    }
}

pub(crate) async fn add(db: &impl Store, dependency: &TaskDependency) -> Result<(), ServiceError> {
    let dependency = dependency.clone();
    transact(db, move |tx| {
        Box::pin(async move {
            tx.lock_dependency_graph(dependency.org_id).await?;
            tx.insert_dependency(&dependency).await?;
            Ok(())
        })
    })
    .await
}

pub(crate) async fn reaches(db: &impl Store, org: OrgId, from: TaskId, to: TaskId) -> bool {
    transact(db, move |tx| {
        Box::pin(async move { Ok(tx.depends_transitively(org, from, to).await?) })
    })
    .await
    .unwrap()
}

async fn open_of(db: &impl Store, org: OrgId, task: TaskId) -> Vec<TaskId> {
    transact(db, move |tx| {
        Box::pin(async move { Ok(tx.open_blocking_dependencies(org, task).await?) })
    })
    .await
    .unwrap()
}

/// Which of `ids` a claim locks, in a transaction of its own.
async fn first_claimable(db: &impl Store, org: OrgId, ids: Vec<TaskId>) -> Option<TaskId> {
    transact(db, move |tx| {
        Box::pin(async move { Ok(tx.try_lock_first_claimable(org, &ids).await?) })
    })
    .await
    .unwrap()
}

/// A page of the claim's candidates, in a transaction of its own.
async fn candidates(db: &impl Store, org: OrgId, offset: u32, limit: u32) -> Vec<TaskId> {
    transact(db, move |tx| {
        Box::pin(async move { Ok(tx.claim_candidates(org, None, offset, limit).await?) })
    })
    .await
    .unwrap()
    .into_iter()
    .map(|t| t.id)
    .collect()
}

/// The stores translate the claim rule (`rules::claimable`) into their queries: what
/// they answer is what the rule admits, in its order, over every status, assignment
/// and blocker state, and pages of it.
async fn claim_candidates_are_what_the_claim_rule_admits_in_claim_order(db: &impl Store) {
    let seed = seed_org(db).await;
    let org = seed.org;
    let base = now_ms() - Duration::hours(1);
    let mut tasks: Vec<Task> = Vec::new();
    let mut n = 0;
    let mut next = |status: TaskStatus, assignee: Option<AgentId>| {
        n += 1;
        let mut t = task(org);
        t.status = status;
        t.assignee_id = assignee;
        t.priority = TaskPriority::ALL[n % TaskPriority::ALL.len()];
        // Two tasks share each instant, so that the id breaks ties.
        t.created_at = base + Duration::seconds(i64::try_from(n / 2).unwrap());
        t
    };
    for status in TaskStatus::ALL {
        for assignee in [None, Some(seed.hr)] {
            tasks.push(next(status, assignee));
        }
    }
    // An open task behind a dependency on a task in each status, blocking or not.
    let mut dependencies = Vec::new();
    for status in TaskStatus::ALL {
        for blocking in [true, false] {
            let blocker = next(status, None);
            let waiting = next(TaskStatus::Todo, None);
            dependencies.push(dependency(org, waiting.id, blocker.id, blocking));
            tasks.push(blocker);
            tasks.push(waiting);
        }
    }
    for t in &tasks {
        db.insert(t, &[]).await.unwrap();
    }
    for d in &dependencies {
        add(db, d).await.unwrap();
    }
    stored_task(db, seed_org(db).await.org).await;

    let mut admitted: Vec<&Task> = tasks
        .iter()
        .filter(|t| {
            let blockers = dependencies
                .iter()
                .filter(|d| d.task_id == t.id && d.blocking)
                .map(|d| {
                    tasks
                        .iter()
                        .find(|b| b.id == d.depends_on_id)
                        .map(|b| b.status)
                });
            CLAIMABLE.admits(t.status, t.assignee_id, blockers)
        })
        .collect();
    admitted.sort_by_key(|t| claim_key(t.priority, t.created_at, t.id));
    let expected: Vec<TaskId> = admitted.iter().map(|t| t.id).collect();
    assert!(expected.len() > 8, "{expected:?}");
    assert_eq!(candidates(db, org, 0, 100).await, expected);
    assert_eq!(candidates(db, org, 3, 4).await, expected[3..7]);
    assert_eq!(
        candidates(db, org, 0, 100).await.len(),
        candidates(db, org, 0, 200).await.len()
    );
}

async fn the_first_claimable_of_those_asked_is_locked(db: &impl Store) {
    let seed = seed_org(db).await;
    let org = seed.org;
    let mut assigned = task(org);
    assigned.assignee_id = Some(seed.hr);
    db.insert(&assigned, &[]).await.unwrap();
    let mut started = task(org);
    started.status = TaskStatus::InProgress;
    db.insert(&started, &[]).await.unwrap();
    let (b, c) = (stored_task(db, org).await, stored_task(db, org).await);
    let foreign = stored_task(db, seed_org(db).await.org).await;

    let asked = vec![assigned.id, started.id, b.id, c.id];
    assert_eq!(first_claimable(db, org, asked).await, Some(b.id));
    assert_eq!(
        first_claimable(db, org, vec![c.id, b.id]).await,
        Some(c.id),
        "in the order asked"
    );
    let none = vec![
        assigned.id,
        started.id,
        foreign.id,
        TaskId::from_uuid(new_id()),
    ];
    assert_eq!(first_claimable(db, org, none).await, None);
    assert_eq!(first_claimable(db, org, Vec::new()).await, None);
}

/// PostgreSQL only (on SQLite and in memory one writer holds everything, so a second
/// claimer could not even start): a task another open transaction holds is passed over
/// at once for the next one asked, not waited for.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_another_claimer_holds_is_passed_over_on_postgres() {
    let Some(test_db) =
        muster_persistence::testing::TestDatabase::new(muster_persistence::Engine::Postgres).await
    else {
        return;
    };
    let db = test_db.db.clone();
    let org = seed_org(&db).await.org;
    let (held, free) = (stored_task(&db, org).await, stored_task(&db, org).await);
    let (locked, is_locked) = tokio::sync::oneshot::channel();
    let (release, released) = tokio::sync::oneshot::channel::<()>();
    let (locked, released) = (Once::new(locked), Once::new(released));
    let holder = {
        let db = db.clone();
        tokio::spawn(async move {
            transact(&db, move |tx| {
                Box::pin(async move {
                    let got = tx.try_lock_first_claimable(org, &[held.id]).await?;
                    let _ = locked.take().send(got);
                    let _ = released.take().await;
                    Ok(())
                })
            })
            .await
        })
    };
    assert_eq!(is_locked.await.unwrap(), Some(held.id));
    let asked = vec![held.id, free.id];
    let passed_over = tokio::time::timeout(
        std::time::Duration::from_secs(10),
        first_claimable(&db, org, asked),
    );
    let got = passed_over
        .await
        .expect("waited for the holder instead of passing over");
    assert_eq!(got, Some(free.id));
    release.send(()).unwrap();
    holder.await.unwrap().unwrap();
    // Released without a change, it is claimable again.
    assert_eq!(
        first_claimable(&db, org, vec![held.id]).await,
        Some(held.id)
    );
}

async fn dependencies_round_trip_and_reach(db: &impl Store) {
    let seed = seed_org(db).await;
    let org = seed.org;
    let [a, b, c, d] = [
        stored_task(db, org).await,
        stored_task(db, org).await,
        stored_task(db, org).await,
        stored_task(db, org).await,
    ];
    let ab = dependency(org, a.id, b.id, true);
    let bc = dependency(org, b.id, c.id, false);
    add(db, &ab).await.unwrap();
    add(db, &bc).await.unwrap();
    assert_eq!(
        db.dependencies(org, a.id).await.unwrap(),
        std::slice::from_ref(&ab)
    );
    assert!(reaches(db, org, a.id, c.id).await);
    assert!(!reaches(db, org, c.id, a.id).await);
    assert!(!reaches(db, org, a.id, d.id).await);
    let again = add(db, &dependency(org, a.id, b.id, false)).await;
    assert!(
        matches!(
            again,
            Err(ServiceError::Conflict(Conflict::Duplicate(
                UniqueKey::Dependency
            )))
        ),
        "{again:?}"
    );
    // Only blocking dependencies that are not done hold a task back.
    assert_eq!(open_of(db, org, a.id).await, [b.id]);
    assert!(open_of(db, org, b.id).await.is_empty());
    let done = Task {
        status: TaskStatus::Done,
        version: b.version + 1,
        ..b.clone()
    };
    assert!(db.update(&done, b.version, &[]).await.unwrap());
    assert!(open_of(db, org, a.id).await.is_empty());
    // Deleting answers the row once, and only from its own task and organization.
    let other = seed_org(db).await;
    let delete = |org: OrgId, task: TaskId, id: DependencyId| {
        transact(db, move |tx| {
            Box::pin(async move { Ok(tx.delete_dependency(org, task, id).await?) })
        })
    };
    assert_eq!(delete(other.org, a.id, ab.id).await.unwrap(), None);
    assert_eq!(delete(org, b.id, ab.id).await.unwrap(), None);
    assert_eq!(delete(org, a.id, ab.id).await.unwrap(), Some(ab.clone()));
    assert_eq!(delete(org, a.id, ab.id).await.unwrap(), None);
    assert!(!reaches(db, org, a.id, c.id).await);
}

fn comment(
    seed: &Seed,
    task: TaskId,
    author: Option<Author>,
    parent: Option<CommentId>,
) -> Comment {
    Comment {
        id: CommentId::from_uuid(new_id()),
        org_id: seed.org,
        task_id: task,
        author,
        parent_comment_id: parent,
        body: CommentBody::new("ünïcode 'quotes' *markdown*".into()).unwrap(),
        created_at: now_ms(),
    }
}

async fn comments_round_trip_and_page(db: &impl Store) {
    let seed = seed_org(db).await;
    let t = stored_task(db, seed.org).await;
    let first = comment(&seed, t.id, Some(Author::Agent(seed.hr)), None);
    let second = comment(
        &seed,
        t.id,
        Some(Author::User(seed.new.admin.id)),
        Some(first.id),
    );
    let third = comment(&seed, t.id, None, None);
    let later = now_ms() + Duration::hours(1);
    let written = [first.clone(), second.clone(), third.clone()];
    let (org, id) = (seed.org, t.id);
    transact(db, move |tx| {
        Box::pin(async move {
            for c in &written {
                tx.insert_comment(c).await?;
            }
            tx.touch_task(org, id, later).await?;
            Ok(())
        })
    })
    .await
    .unwrap();
    let all = db.comments(seed.org, t.id, None, 10).await.unwrap();
    assert_eq!(all, [first.clone(), second.clone(), third.clone()]);
    let rest = db
        .comments(seed.org, t.id, Some(first.id), 1)
        .await
        .unwrap();
    assert_eq!(rest, std::slice::from_ref(&second));
    let found = transact(db, move |tx| {
        Box::pin(async move { Ok(tx.comment(org, id, first.id).await?) })
    })
    .await
    .unwrap();
    assert!(found.is_some());
    let other_task = stored_task(db, seed.org).await.id;
    let wrong_task = transact(db, move |tx| {
        Box::pin(async move { Ok(tx.comment(org, other_task, second.id).await?) })
    })
    .await
    .unwrap();
    assert_eq!(wrong_task, None);
    let touched = TaskRepository::get(db, seed.org, t.id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(touched.last_activity_at, later);
    assert_eq!(touched.version, t.version, "activity is not a change");
}

fn escalation(seed: &Seed, task: TaskId, reason: EscalationReason, automatic: bool) -> Escalation {
    Escalation {
        id: EscalationId::from_uuid(new_id()),
        org_id: seed.org,
        task_id: task,
        reason,
        notes: Some(Reason::new("see ticket".into()).unwrap()),
        from_agent_id: Some(seed.hr),
        to_agent_id: None,
        actor_id: automatic.then_some(seed.hr.as_uuid()),
        automatic,
        created_at: now_ms(),
    }
}

async fn insert_escalation(db: &impl Store, e: &Escalation) -> bool {
    let e = e.clone();
    transact(db, move |tx| {
        Box::pin(async move { Ok(tx.insert_escalation(&e).await?) })
    })
    .await
    .unwrap()
}

async fn automatic_escalations_are_stored_once(db: &impl Store) {
    let seed = seed_org(db).await;
    let t = stored_task(db, seed.org).await;
    let manual = escalation(&seed, t.id, EscalationReason::SlaBreach, false);
    let manual_again = escalation(&seed, t.id, EscalationReason::SlaBreach, false);
    let swept = escalation(&seed, t.id, EscalationReason::SlaBreach, true);
    let swept_again = escalation(&seed, t.id, EscalationReason::SlaBreach, true);
    let other_reason = escalation(&seed, t.id, EscalationReason::StaleTask, true);
    assert!(insert_escalation(db, &manual).await);
    assert!(
        insert_escalation(db, &manual_again).await,
        "people may repeat"
    );
    assert!(insert_escalation(db, &swept).await);
    assert!(
        !insert_escalation(db, &swept_again).await,
        "the sweep may not"
    );
    assert!(insert_escalation(db, &other_reason).await);
    let stored = db.escalations(seed.org, t.id, None, 10).await.unwrap();
    assert_eq!(
        stored,
        [
            other_reason,
            swept.clone(),
            manual_again.clone(),
            manual.clone()
        ]
    );
    let page = db
        .escalations(seed.org, t.id, Some(swept.id), 10)
        .await
        .unwrap();
    assert_eq!(
        page,
        [manual_again, manual],
        "older than the cursor, newest first"
    );
}

fn template(org: OrgId, name: &str) -> TaskTemplate {
    TaskTemplate {
        id: TemplateId::from_uuid(new_id()),
        org_id: org,
        name: TemplateName::new(name).unwrap(),
        title: Title::new("Weekly report").unwrap(),
        description: Some(muster_domain::model::Description::new("# Body".into()).unwrap()),
        priority: TaskPriority::High,
        tags: Tags::new(vec!["ops".into(), "ünï".into()]).unwrap(),
        approval_required: true,
        metadata: Metadata::new(json!({"requiredCapabilities": ["sql"], "n": 2.5})).unwrap(),
        created_from_task_id: None,
        created_at: now_ms(),
    }
}

async fn insert_template(db: &impl Store, t: &TaskTemplate) -> Result<(), ServiceError> {
    let t = t.clone();
    transact(db, move |tx| {
        Box::pin(async move { Ok(tx.insert_template(&t).await?) })
    })
    .await
}

async fn templates_round_trip_with_unique_names(db: &impl Store) {
    let seed = seed_org(db).await;
    let source = stored_task(db, seed.org).await;
    let first = TaskTemplate {
        created_from_task_id: Some(source.id),
        ..template(seed.org, "Weekly Report")
    };
    let second = TaskTemplate {
        description: None,
        tags: Tags::default(),
        metadata: Metadata::default(),
        approval_required: false,
        ..template(seed.org, "Daily")
    };
    insert_template(db, &first).await.unwrap();
    insert_template(db, &second).await.unwrap();
    let clash = insert_template(db, &template(seed.org, "weekly report")).await;
    assert!(
        matches!(
            clash,
            Err(ServiceError::Conflict(Conflict::Duplicate(
                UniqueKey::TemplateName
            )))
        ),
        "{clash:?}"
    );
    let other = seed_org(db).await;
    insert_template(db, &template(other.org, "weekly report"))
        .await
        .unwrap();
    assert_eq!(
        db.templates(seed.org, None, 10).await.unwrap(),
        [second.clone(), first.clone()]
    );
    assert_eq!(
        db.templates(seed.org, Some(second.id), 10).await.unwrap(),
        std::slice::from_ref(&first)
    );
    assert_eq!(db.template(seed.org, first.id).await.unwrap(), Some(first));
    assert_eq!(db.template(other.org, second.id).await.unwrap(), None);
}

async fn insert_capability(db: &impl Store, seed: &Seed, agent: AgentId, name: &str, level: &str) {
    let capability = Capability {
        id: CapabilityId::from_uuid(new_id()),
        org_id: seed.org,
        agent_id: agent,
        name: CapabilityName::new(name).unwrap(),
        proficiency: Proficiency::parse(level).unwrap(),
        created_at: now_ms(),
    };
    transact(db, move |tx| {
        Box::pin(async move { Ok(tx.insert_capabilities(&[capability]).await?) })
    })
    .await
    .unwrap();
}

async fn roster_counts_open_tasks_and_capabilities(db: &impl Store) {
    let seed = seed_org(db).await;
    insert_capability(db, &seed, seed.hr, "rust", "expert").await;
    insert_capability(db, &seed, seed.hr, "sql", "basic").await;
    for status in [TaskStatus::Todo, TaskStatus::Blocked, TaskStatus::Done] {
        let t = Task {
            assignee_id: Some(seed.hr),
            status,
            ..task(seed.org)
        };
        db.insert(&t, &[]).await.unwrap();
    }
    let other = seed_org(db).await;
    let roster = TaskRepository::roster(db, seed.org).await.unwrap();
    assert_eq!(roster.len(), 1, "only the organization's active agents");
    let entry = &roster[0];
    assert_eq!(entry.agent.id, seed.hr);
    assert_eq!(entry.open_tasks, 2, "done tasks are not open");
    let mut skills: Vec<(String, &str)> = entry
        .capabilities
        .iter()
        .map(|(n, p)| (n.as_str().to_owned(), p.as_str()))
        .collect();
    skills.sort();
    assert_eq!(
        skills,
        [("rust".to_owned(), "expert"), ("sql".to_owned(), "basic")]
    );
    let theirs = TaskRepository::roster(db, other.org).await.unwrap();
    assert!(theirs[0].capabilities.is_empty());
    assert_eq!(theirs[0].open_tasks, 0);
}

async fn overdue_finds_each_reason_until_escalated(db: &impl Store) {
    let seed = seed_org(db).await;
    let now = now_ms();
    let old = now - Duration::days(10);
    let blocked = Task {
        status: TaskStatus::Blocked,
        priority: TaskPriority::Urgent,
        status_changed_at: old,
        ..task(seed.org)
    };
    let idle = Task {
        status: TaskStatus::InProgress,
        last_activity_at: old,
        lease_expires_at: None,
        ..task(seed.org)
    };
    let late = Task {
        due_at: Some(old),
        ..task(seed.org)
    };
    let late_but_done = Task {
        status: TaskStatus::Done,
        due_at: Some(old),
        ..task(seed.org)
    };
    for t in [&blocked, &idle, &late, &late_but_done] {
        db.insert(t, &[]).await.unwrap();
    }
    let found = |query| async move {
        db.overdue(query, 100)
            .await
            .unwrap()
            .into_iter()
            .map(|(_, id)| id)
            .collect::<Vec<_>>()
    };
    let blocked_query = Overdue::BlockedSince {
        priority: TaskPriority::Urgent,
        since: now - Duration::hours(2),
    };
    assert_eq!(found(blocked_query).await, [blocked.id]);
    let high = Overdue::BlockedSince {
        priority: TaskPriority::High,
        since: now,
    };
    assert!(found(high).await.is_empty(), "another priority");
    let idle_query = Overdue::IdleSince {
        since: now - Duration::hours(72),
    };
    assert_eq!(found(idle_query).await, [idle.id]);
    assert_eq!(found(Overdue::PastDue { now }).await, [late.id]);
    assert!(found(Overdue::AssigneeInactive).await.is_empty());
    let assigned = Task {
        assignee_id: Some(seed.hr),
        ..task(seed.org)
    };
    db.insert(&assigned, &[]).await.unwrap();
    change_agent(db, seed.org, seed.hr, |a| a.status = AgentStatus::Suspended).await;
    assert_eq!(found(Overdue::AssigneeInactive).await, [assigned.id]);
    // Once escalated automatically for its reason, a task is not found again for it.
    let swept = Escalation {
        task_id: late.id,
        ..escalation(&seed, late.id, EscalationReason::SlaBreach, true)
    };
    assert!(insert_escalation(db, &swept).await);
    assert!(found(Overdue::PastDue { now }).await.is_empty());
    let manual = escalation(&seed, idle.id, EscalationReason::StaleTask, false);
    assert!(insert_escalation(db, &manual).await);
    assert_eq!(
        found(idle_query).await,
        [idle.id],
        "a manual one does not count"
    );
}

async fn senior_agent_is_the_highest_then_earliest(db: &impl Store) {
    let seed = seed_org(db).await;
    // The HR agent is level 10 and active: the senior of everyone below 10.
    let senior = |level: Option<u8>| {
        let org = seed.org;
        transact(db, move |tx| {
            Box::pin(async move {
                let level = level.map(|l| Level::new(i64::from(l)).unwrap());
                Ok(tx.senior_agent_above(org, level).await?.map(|a| a.id))
            })
        })
    };
    assert_eq!(senior(None).await.unwrap(), Some(seed.hr));
    assert_eq!(senior(Some(9)).await.unwrap(), Some(seed.hr));
    assert_eq!(senior(Some(10)).await.unwrap(), None, "strictly above");
    change_agent(db, seed.org, seed.hr, |a| a.mode = AgentMode::Orchestrator).await;
    assert_eq!(
        senior(None).await.unwrap(),
        None,
        "only agents that execute"
    );
}

async fn ledger_and_reputation_rows_are_appended(db: &impl Store) {
    let seed = seed_org(db).await;
    let t = stored_task(db, seed.org).await;
    let entry = |kind, amount, after| LedgerEntry {
        id: LedgerEntryId::from_uuid(new_id()),
        org_id: seed.org,
        agent_id: seed.hr,
        kind,
        amount,
        balance_after: after,
        reason: Some("reward".into()),
        task_id: Some(t.id),
        counterparty_id: None,
        created_at: now_ms(),
    };
    let entries = vec![
        entry(CreditKind::Earned, 9, 9),
        entry(CreditKind::Fee, 1, 10),
    ];
    let change = ReputationEvent {
        id: ReputationEventId::from_uuid(new_id()),
        org_id: seed.org,
        agent_id: seed.hr,
        kind: ReputationKind::TaskCompleted,
        amount: 5,
        reason: "done".into(),
        task_id: Some(t.id),
        created_at: now_ms(),
    };
    let org = seed.org;
    let hr = seed.hr;
    transact(db, move |tx| {
        Box::pin(async move {
            tx.insert_ledger_entries(&entries).await?;
            tx.insert_reputation_events(&[change]).await?;
            // Read back inside the same transaction: the agent row is still there.
            let agent = tx.agent(org, hr, Lock::Share).await?;
            assert!(agent.is_some());
            Ok(())
        })
    })
    .await
    .unwrap();
    let ledger = AgentRepository::ledger(db, seed.org, seed.hr, None, 100)
        .await
        .unwrap();
    assert_eq!(ledger.len(), 2);
    let (reputation, total) = db
        .reputation_history(seed.org, seed.hr, 100, 0)
        .await
        .unwrap();
    assert_eq!((reputation.len(), total), (1, 1));
}
