//! `TaskRepository`: insert with events (atomic), get, list (filters, newest first,
//! keyset paging, tenant isolation); `update` in [`updates`].

use crate::support::Store;
mod updates;

use crate::writes::Writes;
use muster_domain::model::{
    AgentId, Author, Description, Event, OrgId, Tags, Task, TaskId, TaskOutcome, TaskPriority,
    TaskStatus, Title,
};
use muster_domain::ports::{EventLog, OutcomeFilter, TaskFilter, TaskRepository};
use muster_domain::service::{Conflict, ServiceError};

use crate::support::{Seed, event, full_task, new_id, seed_org, task};

contract_tests!(
    insert_writes_task_and_events,
    insert_is_atomic,
    insert_of_a_taken_id_conflicts,
    get_is_scoped_by_organization,
    list_is_newest_first,
    list_filters_alone_and_combined,
    list_filters_by_status_change_and_context,
    list_filters_by_priority_tag_and_text,
    list_pages_with_keyset_cursor,
    list_pages_within_a_filter,
    list_never_returns_another_organizations_tasks,
);

fn get_task(db: &impl Store, seed: &Seed, id: TaskId) -> impl Future<Output = Option<Task>> {
    let (db, org) = (db.clone(), seed.org);
    async move { TaskRepository::get(&db, org, id).await.unwrap() }
}

async fn insert_writes_task_and_events(db: &impl Store) {
    let seed = seed_org(db).await;
    let new = task(seed.org);
    let events = [
        Event {
            entity_id: new.id.as_uuid(),
            ..event(seed.org, "task.created", new.created_at)
        },
        Event {
            entity_id: new.id.as_uuid(),
            ..event(seed.org, "task.assigned", new.created_at)
        },
    ];
    db.insert(&new, &events).await.unwrap();
    assert_eq!(get_task(db, &seed, new.id).await, Some(new));
    for written in &events {
        assert_eq!(
            EventLog::get(db, seed.org, written.id)
                .await
                .unwrap()
                .as_ref(),
            Some(written)
        );
    }
}

/// An event that cannot be stored (its id is taken) rolls the task back too.
async fn insert_is_atomic(db: &impl Store) {
    let seed = seed_org(db).await;
    let taken = seed.new.events[0].clone();
    let new = task(seed.org);
    let fresh = Event {
        entity_id: new.id.as_uuid(),
        ..event(seed.org, "task.created", new.created_at)
    };
    let duplicate = Event {
        entity_id: new.id.as_uuid(),
        ..taken.clone()
    };
    let err = db
        .insert(&new, &[fresh.clone(), duplicate])
        .await
        .expect_err("event id is taken");
    assert!(
        matches!(err, ServiceError::Conflict(Conflict::Duplicate(_))),
        "got {err:?}"
    );
    assert_eq!(get_task(db, &seed, new.id).await, None);
    assert_eq!(EventLog::get(db, seed.org, fresh.id).await.unwrap(), None);
    assert_eq!(
        EventLog::get(db, seed.org, taken.id).await.unwrap(),
        Some(taken)
    );
}

async fn insert_of_a_taken_id_conflicts(db: &impl Store) {
    let seed = seed_org(db).await;
    let first = task(seed.org);
    db.insert(&first, &[]).await.unwrap();
    let again = Task {
        title: Title::new("Other").unwrap(),
        ..first.clone()
    };
    let err = db.insert(&again, &[]).await.expect_err("id is taken");
    assert!(
        matches!(err, ServiceError::Conflict(Conflict::Duplicate(_))),
        "got {err:?}"
    );
    assert_eq!(get_task(db, &seed, first.id).await, Some(first));
}

async fn get_is_scoped_by_organization(db: &impl Store) {
    let mine = seed_org(db).await;
    let other = seed_org(db).await;
    let new = task(mine.org);
    db.insert(&new, &[]).await.unwrap();
    assert_eq!(get_task(db, &mine, new.id).await, Some(new.clone()));
    assert_eq!(get_task(db, &other, new.id).await, None);
    assert_eq!(get_task(db, &mine, TaskId::from_uuid(new_id())).await, None);
}

async fn list(
    db: &impl Store,
    org: OrgId,
    filter: &TaskFilter,
    before: Option<TaskId>,
    limit: u32,
) -> Vec<Task> {
    TaskRepository::list(db, org, filter, before, limit)
        .await
        .unwrap()
}

/// Inserts `count` bare tasks of `seed`'s organization; returns them newest first.
async fn insert_tasks(db: &impl Store, seed: &Seed, count: usize) -> Vec<Task> {
    let mut tasks = Vec::new();
    for _ in 0..count {
        let new = task(seed.org);
        db.insert(&new, &[]).await.unwrap();
        tasks.push(new);
    }
    tasks.sort_by_key(|t| std::cmp::Reverse(t.id));
    tasks
}

async fn list_is_newest_first(db: &impl Store) {
    let seed = seed_org(db).await;
    let expected = insert_tasks(db, &seed, 5).await;
    let listed = list(db, seed.org, &TaskFilter::default(), None, 100).await;
    assert_eq!(listed, expected);
    assert!(listed.windows(2).all(|w| w[0].id > w[1].id));
}

/// Twelve tasks of varied status, assignee, creator and parent, plus the parent: the
/// parent's id and all thirteen, newest first.
async fn varied_tasks(db: &impl Store, seed: &Seed) -> (TaskId, Vec<Task>) {
    let parent = task(seed.org);
    db.insert(&parent, &[]).await.unwrap();
    let statuses = [TaskStatus::Todo, TaskStatus::InProgress, TaskStatus::Done];
    let mut all = vec![parent.clone()];
    for i in 0..12_usize {
        let new = Task {
            status: statuses[i % 3],
            assignee_id: (i % 2 == 0).then_some(seed.hr),
            creator: ((i / 2) % 2 == 0).then_some(Author::Agent(seed.hr)),
            parent_task_id: ((i / 3) % 2 == 0).then_some(parent.id),
            ..task(seed.org)
        };
        db.insert(&new, &[]).await.unwrap();
        all.push(new);
    }
    // In review, with and without an approval to wait for.
    for approval_required in [true, false] {
        let new = Task {
            status: TaskStatus::Review,
            approval_required,
            ..task(seed.org)
        };
        db.insert(&new, &[]).await.unwrap();
        all.push(new);
    }
    all.sort_by_key(|t| std::cmp::Reverse(t.id));
    (parent.id, all)
}

fn matches(task: &Task, filter: &TaskFilter) -> bool {
    filter.status.is_none_or(|s| task.status == s)
        && filter
            .assignee_id
            .is_none_or(|a| task.assignee_id == Some(a))
        && filter
            .creator_id
            .is_none_or(|c| task.creator.map(Author::as_uuid) == Some(c))
        && filter
            .parent_task_id
            .is_none_or(|p| task.parent_task_id == Some(p))
        && (filter.any_status.is_empty() || filter.any_status.contains(&task.status))
        && filter.awaiting_approval.is_none_or(|awaiting| {
            awaiting == (task.status == TaskStatus::Review && task.approval_required)
        })
        && filter
            .status_changed_since
            .is_none_or(|since| task.status_changed_at >= since)
        && filter.context_id.is_none_or(|context| {
            task.parent_task_id == Some(context)
                || (task.id == context && task.parent_task_id.is_none())
        })
        && filter.outcome.is_none_or(|kept| kept.keeps(task.outcome))
        && filter.priority.is_none_or(|p| task.priority == p)
        && filter.tag.as_deref().is_none_or(|tag| {
            task.tags
                .as_slice()
                .iter()
                .any(|t| t.eq_ignore_ascii_case(tag))
        })
        && filter.text.as_deref().is_none_or(|text| {
            let text = text.to_ascii_lowercase();
            task.title.as_str().to_ascii_lowercase().contains(&text)
                || task
                    .description
                    .as_ref()
                    .is_some_and(|d| d.as_str().to_ascii_lowercase().contains(&text))
        })
}

async fn list_filters_by_priority_tag_and_text(db: &impl Store) {
    let seed = seed_org(db).await;
    let specs: [(&str, Option<&str>, TaskPriority, &[&str]); 4] = [
        (
            "Ship the release",
            Some("Notes on 100% of it"),
            TaskPriority::High,
            &["Q4", "release"],
        ),
        ("Water the plants", None, TaskPriority::Low, &["home"]),
        (
            "ship_it later",
            Some("under_score"),
            TaskPriority::Normal,
            &[],
        ),
        (
            "Plain",
            Some("a \\ backslash"),
            TaskPriority::Urgent,
            &["q4x"],
        ),
    ];
    let mut all = Vec::new();
    for (title, description, priority, tags) in specs {
        let new = Task {
            title: Title::new(title).unwrap(),
            description: description.map(|d| Description::new(d.to_owned()).unwrap()),
            priority,
            tags: Tags::new(tags.iter().map(|t| (*t).to_owned()).collect()).unwrap(),
            ..task(seed.org)
        };
        db.insert(&new, &[]).await.unwrap();
        all.push(new);
    }
    all.sort_by_key(|t| std::cmp::Reverse(t.id));
    let text = |t: &str| TaskFilter {
        text: Some(t.to_owned()),
        ..TaskFilter::default()
    };
    let tag = |t: &str| TaskFilter {
        tag: Some(t.to_owned()),
        ..TaskFilter::default()
    };
    let cases = [
        (
            TaskFilter {
                priority: Some(TaskPriority::High),
                ..TaskFilter::default()
            },
            1,
        ),
        // A whole tag, case ignored: `q4` is not `q4x`.
        (tag("q4"), 1),
        (tag("RELEASE"), 1),
        (tag("plants"), 0),
        // In the title or the description, case ignored.
        (text("SHIP"), 2),
        (text("notes"), 1),
        // LIKE's wildcards and its escape character are plain text here.
        (text("100%"), 1),
        (text("e_s"), 0),
        (text("p_i"), 1),
        (text("a \\ b"), 1),
        (text("%"), 1),
        // No stored text holds a NUL (PostgreSQL could not bind one): nothing matches.
        (text("a\0b"), 0),
        (tag("q4\0"), 0),
        (
            TaskFilter {
                priority: Some(TaskPriority::High),
                tag: Some("q4".to_owned()),
                text: Some("release".to_owned()),
                ..TaskFilter::default()
            },
            1,
        ),
        (
            TaskFilter {
                tag: Some("home".to_owned()),
                text: Some("ship".to_owned()),
                ..TaskFilter::default()
            },
            0,
        ),
    ];
    for (filter, want) in cases {
        let found = lists_as_the_reference(db, seed.org, &all, &filter).await;
        assert_eq!(found, want, "{filter:?}");
        assert_eq!(
            all.iter().filter(|t| filter.matches(t)).count(),
            want,
            "the domain's {filter:?}"
        );
    }
}

async fn list_filters_alone_and_combined(db: &impl Store) {
    let seed = seed_org(db).await;
    let (parent, all) = varied_tasks(db, &seed).await;
    let hr = Some(seed.hr);
    let filters = [
        TaskFilter::default(),
        TaskFilter {
            status: Some(TaskStatus::InProgress),
            ..TaskFilter::default()
        },
        TaskFilter {
            status: Some(TaskStatus::Blocked),
            ..TaskFilter::default()
        },
        TaskFilter {
            assignee_id: hr,
            ..TaskFilter::default()
        },
        TaskFilter {
            creator_id: hr.map(AgentId::as_uuid),
            ..TaskFilter::default()
        },
        TaskFilter {
            parent_task_id: Some(parent),
            ..TaskFilter::default()
        },
        TaskFilter {
            status: Some(TaskStatus::Todo),
            assignee_id: hr,
            ..TaskFilter::default()
        },
        TaskFilter {
            assignee_id: hr,
            creator_id: hr.map(AgentId::as_uuid),
            ..TaskFilter::default()
        },
        TaskFilter {
            creator_id: hr.map(AgentId::as_uuid),
            parent_task_id: Some(parent),
            ..TaskFilter::default()
        },
        TaskFilter {
            status: Some(TaskStatus::Done),
            assignee_id: hr,
            creator_id: hr.map(AgentId::as_uuid),
            parent_task_id: Some(parent),
            ..TaskFilter::default()
        },
        TaskFilter {
            assignee_id: Some(AgentId::from_uuid(new_id())),
            ..TaskFilter::default()
        },
        TaskFilter {
            any_status: vec![TaskStatus::Todo, TaskStatus::Review],
            ..TaskFilter::default()
        },
        TaskFilter {
            any_status: vec![TaskStatus::InProgress, TaskStatus::Review],
            awaiting_approval: Some(false),
            ..TaskFilter::default()
        },
        TaskFilter {
            awaiting_approval: Some(true),
            ..TaskFilter::default()
        },
        TaskFilter {
            status: Some(TaskStatus::Todo),
            any_status: vec![TaskStatus::Done],
            ..TaskFilter::default()
        },
    ];
    for filter in &filters {
        let expected: Vec<Task> = all.iter().filter(|t| matches(t, filter)).cloned().collect();
        let listed = list(db, seed.org, filter, None, 100).await;
        assert_eq!(listed, expected, "filter {filter:?}");
        let counted = TaskRepository::count(db, seed.org, filter).await.unwrap();
        assert_eq!(counted, expected.len() as u64, "count of {filter:?}");
    }
    // The new filters are not vacuous either.
    let awaiting = filters.iter().find(|f| f.awaiting_approval == Some(true));
    let awaiting = awaiting.unwrap();
    assert_eq!(all.iter().filter(|t| matches(t, awaiting)).count(), 1);
    // The combinations above are not vacuous.
    let done_all = &filters[9];
    assert_eq!(all.iter().filter(|t| matches(t, done_all)).count(), 1);
}

/// Lists and counts `filter` on the store and checks both against the reference filter
/// over `all` (newest first); answers how many tasks it keeps.
async fn lists_as_the_reference(
    db: &impl Store,
    org: OrgId,
    all: &[Task],
    filter: &TaskFilter,
) -> usize {
    let expected: Vec<Task> = all.iter().filter(|t| matches(t, filter)).cloned().collect();
    let listed = list(db, org, filter, None, 100).await;
    assert_eq!(listed, expected, "filter {filter:?}");
    let counted = TaskRepository::count(db, org, filter).await.unwrap();
    assert_eq!(counted, expected.len() as u64, "count of {filter:?}");
    expected.len()
}

async fn list_filters_by_status_change_and_context(db: &impl Store) {
    let seed = seed_org(db).await;
    let (parent, all) = varied_tasks(db, &seed).await;
    // Status changes since an instant: all of them since the first, none after the last.
    let mut changes: Vec<_> = all.iter().map(|t| t.status_changed_at).collect();
    changes.sort_unstable();
    let since_filters = [
        (changes[0], all.len()),
        (changes[changes.len() / 2], usize::MAX),
        (
            changes[changes.len() - 1] + time::Duration::milliseconds(1),
            0,
        ),
    ];
    for (since, want) in since_filters {
        let filter = TaskFilter {
            status_changed_since: Some(since),
            ..TaskFilter::default()
        };
        let found = lists_as_the_reference(db, seed.org, &all, &filter).await;
        if want != usize::MAX {
            assert_eq!(found, want, "the reference filter since {since}");
        }
    }
    // Outcomes: one task failed (the newest), the others have none.
    let failed = Task {
        status: TaskStatus::Cancelled,
        outcome: Some(TaskOutcome::Failed),
        ..task(seed.org)
    };
    db.insert(&failed, &[]).await.unwrap();
    let mut all = all;
    all.insert(
        0,
        TaskRepository::get(db, seed.org, failed.id)
            .await
            .unwrap()
            .unwrap(),
    );
    for (kept, want) in [
        (OutcomeFilter::Is(TaskOutcome::Failed), 1),
        (OutcomeFilter::Is(TaskOutcome::Rejected), 0),
        (OutcomeFilter::Without, all.len() - 1),
    ] {
        let filter = TaskFilter {
            outcome: Some(kept),
            ..TaskFilter::default()
        };
        let found = lists_as_the_reference(db, seed.org, &all, &filter).await;
        assert_eq!(found, want, "the reference filter {kept:?}");
    }
    // A conversation: the parent and its sub-tasks.
    let context = TaskFilter {
        context_id: Some(parent),
        ..TaskFilter::default()
    };
    let expected: Vec<Task> = all
        .iter()
        .filter(|t| matches(t, &context))
        .cloned()
        .collect();
    assert!(expected.iter().any(|t| t.id == parent) && expected.len() > 1);
    assert_eq!(list(db, seed.org, &context, None, 100).await, expected);
}

async fn list_pages_with_keyset_cursor(db: &impl Store) {
    let seed = seed_org(db).await;
    let expected = insert_tasks(db, &seed, 7).await;
    let filter = TaskFilter::default();
    let mut pages = Vec::new();
    let mut cursor = None;
    loop {
        let page = list(db, seed.org, &filter, cursor, 3).await;
        if page.is_empty() {
            break;
        }
        cursor = page.last().map(|t| t.id);
        pages.push(page);
        assert!(pages.len() <= 3, "paging must end");
    }
    assert_eq!(pages.iter().map(Vec::len).collect::<Vec<_>>(), [3, 3, 1]);
    assert_eq!(
        pages.concat(),
        expected,
        "no duplicates, no gaps, newest first"
    );
    // The cursor need not be a listed task: anything strictly older than it comes back.
    let between = list(db, seed.org, &filter, Some(expected[3].id), 2).await;
    assert_eq!(between, expected[4..6]);
    assert!(
        list(db, seed.org, &filter, Some(expected[6].id), 3)
            .await
            .is_empty()
    );
}

async fn list_pages_within_a_filter(db: &impl Store) {
    let seed = seed_org(db).await;
    let (_, all) = varied_tasks(db, &seed).await;
    let filter = TaskFilter {
        assignee_id: Some(seed.hr),
        ..TaskFilter::default()
    };
    let expected: Vec<Task> = all
        .iter()
        .filter(|t| matches(t, &filter))
        .cloned()
        .collect();
    assert_eq!(expected.len(), 6);
    let first = list(db, seed.org, &filter, None, 4).await;
    let second = list(db, seed.org, &filter, first.last().map(|t| t.id), 4).await;
    assert_eq!((first.len(), second.len()), (4, 2));
    assert_eq!([first, second].concat(), expected);
}

/// Another organization's tasks never show, even when they reference this
/// organization's agent and parent task (the foreign keys do not check the tenant).
async fn list_never_returns_another_organizations_tasks(db: &impl Store) {
    let mine = seed_org(db).await;
    let other = seed_org(db).await;
    let parent = task(mine.org);
    db.insert(&parent, &[]).await.unwrap();
    let mut foreign = full_task(&mine, parent.id);
    foreign.org_id = other.org;
    db.insert(&foreign, &[]).await.unwrap();

    let all = TaskFilter::default();
    assert_eq!(
        list(db, mine.org, &all, None, 100).await,
        std::slice::from_ref(&parent)
    );
    assert_eq!(
        list(db, other.org, &all, None, 100).await,
        [foreign.clone()]
    );
    let exact = TaskFilter {
        status: Some(foreign.status),
        assignee_id: Some(mine.hr),
        creator_id: Some(mine.hr.as_uuid()),
        parent_task_id: Some(parent.id),
        ..TaskFilter::default()
    };
    assert!(list(db, mine.org, &exact, None, 100).await.is_empty());
    assert_eq!(
        TaskRepository::count(db, mine.org, &exact).await.unwrap(),
        0
    );
    assert_eq!(TaskRepository::count(db, other.org, &all).await.unwrap(), 1);
    let cursor = Some(TaskId::from_uuid(new_id()));
    assert_eq!(list(db, mine.org, &all, cursor, 100).await, [parent]);
}
