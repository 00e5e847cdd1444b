//! Projects (issue 66) on every store: a project's every field round trips, edits are
//! guarded by its version, lists page newest first by status, another organization's
//! project is not there; a task keeps its project; the tally counts a project's tasks by
//! status with the overdue and blocked ones; claims and the audit log can be limited
//! to a project.

use crate::support::Store;
use muster_domain::model::{
    Author, Description, Event, OrgId, Project, ProjectGoal, ProjectId, ProjectName, ProjectStatus,
    Task, TaskStatus,
};
use muster_domain::ports::{EventFilter, EventLog, Lock, TaskRepository, transact};
use time::Duration;

use crate::support::{at_minute, event, new_id, now_ms, seed_org, task};
use crate::writes::Writes;

contract_tests!(
    a_project_round_trips_with_every_field,
    a_project_changes_only_at_its_version,
    projects_page_newest_first_and_by_status,
    another_organizations_project_is_not_there,
    a_task_keeps_its_project_and_lists_by_it,
    a_tally_counts_a_projects_tasks,
    task_spans_say_when_each_task_was_created_and_done,
    claim_candidates_may_be_limited_to_a_project,
    the_audit_log_may_be_limited_to_a_project,
);

/// An active project of `org` named `name`, created now.
fn project(org: OrgId, name: &str) -> Project {
    let now = now_ms();
    Project {
        id: ProjectId::from_uuid(new_id()),
        org_id: org,
        name: ProjectName::new(name).unwrap(),
        goal: None,
        description: None,
        due_at: None,
        status: ProjectStatus::Active,
        creator: None,
        created_at: now,
        updated_at: now,
        archived_at: None,
        version: 1,
    }
}

async fn store(db: &impl Store, project: &Project) {
    let project = project.clone();
    transact(db, move |tx| {
        Box::pin(async move { Ok(tx.insert_project(&project).await?) })
    })
    .await
    .unwrap();
}

async fn stored(db: &impl Store, org: OrgId, name: &str) -> Project {
    let p = project(org, name);
    store(db, &p).await;
    p
}

/// A task of `org` in `project` with `status`, stored.
async fn task_in(db: &impl Store, org: OrgId, project: ProjectId, status: TaskStatus) -> Task {
    let t = Task {
        project_id: Some(project),
        status,
        ..task(org)
    };
    db.insert(&t, &[]).await.unwrap();
    t
}

async fn a_project_round_trips_with_every_field(db: &impl Store) {
    let seed = seed_org(db).await;
    let full = Project {
        goal: Some(ProjectGoal::new("Ten customers on the beta, ünïcode".into()).unwrap()),
        description: Some(Description::new("# Plan\n\n*markdown*".into()).unwrap()),
        due_at: Some(at_minute(60 * 24 * 30)),
        status: ProjectStatus::Archived,
        creator: Some(Author::Agent(seed.hr)),
        archived_at: Some(at_minute(90)),
        version: 4,
        ..project(seed.org, "Launch")
    };
    store(db, &full).await;
    assert_eq!(
        db.project(seed.org, full.id).await.unwrap(),
        Some(full.clone())
    );
    let id = full.id;
    let locked = transact(db, move |tx| {
        Box::pin(async move { Ok(tx.project(seed.org, id, Lock::Update).await?) })
    })
    .await
    .unwrap();
    assert_eq!(locked, Some(full));
    let empty = stored(db, seed.org, "Bare").await;
    assert_eq!(db.project(seed.org, empty.id).await.unwrap(), Some(empty));
}

async fn a_project_changes_only_at_its_version(db: &impl Store) {
    let seed = seed_org(db).await;
    let original = stored(db, seed.org, "Launch").await;
    let changed = Project {
        name: ProjectName::new("Relaunch").unwrap(),
        version: 2,
        ..original.clone()
    };
    let update = |p: Project, expected: i64| async move {
        transact(db, move |tx| {
            Box::pin(async move { Ok(tx.update_project(&p, expected).await?) })
        })
        .await
        .unwrap()
    };
    assert!(update(changed.clone(), 1).await);
    assert!(
        !update(changed.clone(), 1).await,
        "a stale version changes nothing"
    );
    let read = db.project(seed.org, original.id).await.unwrap().unwrap();
    assert_eq!((read.name.as_str(), read.version), ("Relaunch", 2));
}

async fn projects_page_newest_first_and_by_status(db: &impl Store) {
    let seed = seed_org(db).await;
    let mut ids = Vec::new();
    for i in 0..4 {
        let mut p = project(seed.org, &format!("p{i}"));
        if i == 1 {
            p.status = ProjectStatus::Archived;
        }
        store(db, &p).await;
        ids.push(p.id);
    }
    let all = db.projects(seed.org, None, None, 10).await.unwrap();
    let got: Vec<ProjectId> = all.iter().map(|p| p.id).collect();
    assert_eq!(got, [ids[3], ids[2], ids[1], ids[0]]);
    let older = db.projects(seed.org, None, Some(ids[2]), 2).await.unwrap();
    assert_eq!(
        older.iter().map(|p| p.id).collect::<Vec<_>>(),
        [ids[1], ids[0]]
    );
    let active = db
        .projects(seed.org, Some(ProjectStatus::Active), None, 10)
        .await
        .unwrap();
    assert_eq!(active.len(), 3);
    assert!(active.iter().all(|p| p.status == ProjectStatus::Active));
}

async fn another_organizations_project_is_not_there(db: &impl Store) {
    let ours = seed_org(db).await;
    let theirs = seed_org(db).await;
    let p = stored(db, theirs.org, "Theirs").await;
    assert_eq!(db.project(ours.org, p.id).await.unwrap(), None);
    assert!(
        db.projects(ours.org, None, None, 10)
            .await
            .unwrap()
            .is_empty()
    );
    let id = p.id;
    let locked = transact(db, move |tx| {
        Box::pin(async move { Ok(tx.project(ours.org, id, Lock::Share).await?) })
    })
    .await
    .unwrap();
    assert_eq!(locked, None);
    let tally = db.tally(ours.org, p.id, now_ms()).await.unwrap();
    assert_eq!(tally, muster_domain::model::ProjectTally::default());
}

async fn a_task_keeps_its_project_and_lists_by_it(db: &impl Store) {
    let seed = seed_org(db).await;
    let p = stored(db, seed.org, "Launch").await;
    let inside = task_in(db, seed.org, p.id, TaskStatus::Todo).await;
    db.insert(&task(seed.org), &[]).await.unwrap();
    let read = TaskRepository::get(db, seed.org, inside.id).await.unwrap();
    assert_eq!(read.map(|t| t.project_id), Some(Some(p.id)));
    let filter = muster_domain::ports::TaskFilter {
        project_id: Some(p.id),
        ..Default::default()
    };
    let listed = TaskRepository::list(db, seed.org, &filter, None, 10)
        .await
        .unwrap();
    assert_eq!(listed.iter().map(|t| t.id).collect::<Vec<_>>(), [inside.id]);
    assert_eq!(
        TaskRepository::count(db, seed.org, &filter).await.unwrap(),
        1
    );
    // Out of the project again.
    let out = Task {
        project_id: None,
        version: inside.version + 1,
        ..inside.clone()
    };
    assert!(db.update(&out, inside.version, &[]).await.unwrap());
    assert_eq!(
        TaskRepository::count(db, seed.org, &filter).await.unwrap(),
        0
    );
}

async fn a_tally_counts_a_projects_tasks(db: &impl Store) {
    let seed = seed_org(db).await;
    let p = stored(db, seed.org, "Launch").await;
    let now = now_ms();
    let due = |t: Task, at| Task {
        due_at: Some(at),
        ..t
    };
    // Two open tasks past due (the older due first), one cancelled past due, one
    // due later; two blocked (the longer blocked first); one done; one elsewhere.
    let first_late = due(
        Task {
            project_id: Some(p.id),
            ..task(seed.org)
        },
        now - Duration::days(2),
    );
    let second_late = due(
        Task {
            project_id: Some(p.id),
            status: TaskStatus::InProgress,
            ..task(seed.org)
        },
        now - Duration::days(1),
    );
    let closed_late = due(
        Task {
            project_id: Some(p.id),
            status: TaskStatus::Cancelled,
            ..task(seed.org)
        },
        now - Duration::days(3),
    );
    let not_yet = due(
        Task {
            project_id: Some(p.id),
            ..task(seed.org)
        },
        now + Duration::days(1),
    );
    for t in [&second_late, &first_late, &closed_late, &not_yet] {
        db.insert(t, &[]).await.unwrap();
    }
    let blocked_later = Task {
        project_id: Some(p.id),
        status: TaskStatus::Blocked,
        status_changed_at: now - Duration::hours(1),
        ..task(seed.org)
    };
    let blocked_longer = Task {
        project_id: Some(p.id),
        status: TaskStatus::Blocked,
        status_changed_at: now - Duration::hours(5),
        ..task(seed.org)
    };
    db.insert(&blocked_later, &[]).await.unwrap();
    db.insert(&blocked_longer, &[]).await.unwrap();
    task_in(db, seed.org, p.id, TaskStatus::Done).await;
    db.insert(&task(seed.org), &[]).await.unwrap();

    let tally = db.tally(seed.org, p.id, now).await.unwrap();
    let counts: Vec<u64> = TaskStatus::ALL.iter().map(|s| tally.count(*s)).collect();
    // backlog, todo, in_progress, review, done, blocked, cancelled
    assert_eq!(counts, [0, 2, 1, 0, 1, 2, 1]);
    assert_eq!(tally.overdue, 2);
    let overdue: Vec<_> = tally.overdue_tasks.iter().map(|b| b.id).collect();
    assert_eq!(overdue, [first_late.id, second_late.id]);
    assert_eq!(tally.overdue_tasks[0].due_at, first_late.due_at);
    assert_eq!(tally.overdue_tasks[0].title, "Contract task");
    let blocked: Vec<_> = tally.blocked_tasks.iter().map(|b| b.id).collect();
    assert_eq!(blocked, [blocked_longer.id, blocked_later.id]);
    assert_eq!(
        tally.blocked_tasks[0].status_changed_at,
        blocked_longer.status_changed_at
    );
    assert_eq!((tally.spent_credits, tally.cost_microusd), (0, 0));
}

async fn task_spans_say_when_each_task_was_created_and_done(db: &impl Store) {
    let seed = seed_org(db).await;
    let p = stored(db, seed.org, "Launch").await;
    let open = task_in(db, seed.org, p.id, TaskStatus::Todo).await;
    let done = Task {
        project_id: Some(p.id),
        status: TaskStatus::Done,
        status_changed_at: now_ms() + Duration::minutes(5),
        ..task(seed.org)
    };
    db.insert(&done, &[]).await.unwrap();
    let spans = db
        .task_spans(seed.org, p.id, now_ms() + Duration::hours(1), 10)
        .await
        .unwrap();
    assert_eq!(spans.len(), 2);
    assert_eq!(
        (spans[0].created_at, spans[0].done_at),
        (open.created_at, None)
    );
    assert_eq!(spans[1].done_at, Some(done.status_changed_at));
    let before = db
        .task_spans(seed.org, p.id, open.created_at, 10)
        .await
        .unwrap();
    assert!(before.is_empty(), "only tasks created before `until`");
}

async fn claim_candidates_may_be_limited_to_a_project(db: &impl Store) {
    let seed = seed_org(db).await;
    let p = stored(db, seed.org, "Launch").await;
    let outside = task(seed.org);
    db.insert(&outside, &[]).await.unwrap();
    let inside = task_in(db, seed.org, p.id, TaskStatus::Todo).await;
    let org = seed.org;
    let (all, limited) = transact(db, move |tx| {
        Box::pin(async move {
            let all = tx.claim_candidates(org, None, 0, 10).await?;
            let limited = tx.claim_candidates(org, Some(p.id), 0, 10).await?;
            Ok((all, limited))
        })
    })
    .await
    .unwrap();
    assert_eq!(all.len(), 2);
    assert_eq!(
        limited.iter().map(|t| t.id).collect::<Vec<_>>(),
        [inside.id]
    );
}

async fn the_audit_log_may_be_limited_to_a_project(db: &impl Store) {
    let seed = seed_org(db).await;
    let p = stored(db, seed.org, "Launch").await;
    let about = |entity: uuid::Uuid, entity_type: &str, kind: &str| Event {
        entity_id: entity,
        entity_type: entity_type.into(),
        ..event(seed.org, kind, now_ms())
    };
    let inside = Task {
        project_id: Some(p.id),
        ..task(seed.org)
    };
    let outside = task(seed.org);
    let wanted = [
        about(p.id.as_uuid(), "project", "project.created"),
        about(inside.id.as_uuid(), "task", "task.created"),
    ];
    db.insert(&inside, &wanted).await.unwrap();
    db.insert(
        &outside,
        &[about(outside.id.as_uuid(), "task", "task.created")],
    )
    .await
    .unwrap();
    let filter = EventFilter {
        project_id: Some(p.id),
        ..EventFilter::default()
    };
    let page = EventLog::list(db, seed.org, &filter, 0, 10).await.unwrap();
    let mut got: Vec<_> = page.events.iter().map(|e| e.id).collect();
    got.sort_unstable();
    let mut expected: Vec<_> = wanted.iter().map(|e| e.id).collect();
    expected.sort_unstable();
    assert_eq!((got, page.total), (expected, 2));
    // With a type besides: the project's own events only.
    let typed = EventFilter {
        event_type: Some("project.created".into()),
        ..filter.clone()
    };
    assert_eq!(
        EventLog::list(db, seed.org, &typed, 0, 10)
            .await
            .unwrap()
            .total,
        1
    );
    // A task that leaves the project takes its events with it, and the count follows.
    let left = Task {
        project_id: None,
        version: inside.version + 1,
        ..inside.clone()
    };
    assert!(db.update(&left, inside.version, &[]).await.unwrap());
    assert_eq!(
        EventLog::list(db, seed.org, &filter, 0, 10)
            .await
            .unwrap()
            .total,
        1
    );
    // The stream reads the same filter.
    let start = muster_domain::model::EventPosition::new(0, 0);
    let streamed = db.after(seed.org, &filter, start, 10).await.unwrap();
    assert!(streamed.iter().all(|(_, e)| e.entity_id == p.id.as_uuid()));
}
