//! `TaskRepository::update`: optimistic version check, events appended in the same
//! transaction, tenant scoping, concurrent writers, abandoned writes.

use crate::support::Store;
use crate::writes::Writes;
use muster_domain::model::{Description, Event, Task, TaskPriority, TaskStatus, Title};
use muster_domain::ports::{EventLog, TaskFilter};
use time::Duration;

use super::{get_task, list};
use crate::support::{event, full_task, seed_org, task};

contract_tests!(
    update_with_expected_version_persists_and_appends_events,
    update_with_stale_version_changes_nothing,
    update_is_scoped_by_organization,
    update_can_clear_optional_fields,
    concurrent_updates_of_one_version_let_exactly_one_win,
    abandoned_writes_are_all_or_nothing,
);
/// `task` changed the way the task service changes it: new status, text, version bump.
fn changed(task: &Task) -> Task {
    Task {
        title: Title::new("Renamed").unwrap(),
        description: Some(Description::new("now described".into()).unwrap()),
        status: TaskStatus::Done,
        priority: TaskPriority::Low,
        updated_at: task.updated_at + Duration::seconds(5),
        version: task.version + 1,
        ..task.clone()
    }
}

fn events_about(task: &Task, types: &[&str]) -> Vec<Event> {
    let at = task.updated_at;
    types
        .iter()
        .map(|t| Event {
            entity_id: task.id.as_uuid(),
            ..event(task.org_id, t, at)
        })
        .collect()
}

async fn update_with_expected_version_persists_and_appends_events(db: &impl Store) {
    let seed = seed_org(db).await;
    let original = task(seed.org);
    db.insert(&original, &[]).await.unwrap();
    let updated = changed(&original);
    let events = events_about(&updated, &["task.transitioned", "task.done"]);
    assert!(
        db.update(&updated, original.version, &events)
            .await
            .unwrap()
    );
    assert_eq!(
        get_task(db, &seed, original.id).await,
        Some(updated.clone())
    );
    for written in &events {
        assert_eq!(
            EventLog::get(db, seed.org, written.id)
                .await
                .unwrap()
                .as_ref(),
            Some(written)
        );
    }
    // And again from the new version.
    let again = changed(&updated);
    assert!(db.update(&again, updated.version, &[]).await.unwrap());
    assert_eq!(
        get_task(db, &seed, original.id).await.map(|t| t.version),
        Some(3)
    );
}

async fn update_with_stale_version_changes_nothing(db: &impl Store) {
    let seed = seed_org(db).await;
    let original = task(seed.org);
    db.insert(&original, &[]).await.unwrap();
    let winner = changed(&original);
    assert!(db.update(&winner, 1, &[]).await.unwrap());

    let loser = Task {
        title: Title::new("Lost update").unwrap(),
        ..changed(&original)
    };
    for stale in [1, 5] {
        let events = events_about(&loser, &["task.transitioned"]);
        assert!(
            !db.update(&loser, stale, &events).await.unwrap(),
            "version {stale}"
        );
        assert_eq!(
            EventLog::get(db, seed.org, events[0].id).await.unwrap(),
            None
        );
    }
    assert_eq!(get_task(db, &seed, original.id).await, Some(winner));
}

async fn update_is_scoped_by_organization(db: &impl Store) {
    let mine = seed_org(db).await;
    let other = seed_org(db).await;
    let original = task(mine.org);
    db.insert(&original, &[]).await.unwrap();
    let hijack = Task {
        org_id: other.org,
        ..changed(&original)
    };
    let events = events_about(&hijack, &["task.transitioned"]);
    assert!(!db.update(&hijack, original.version, &events).await.unwrap());
    assert_eq!(
        get_task(db, &mine, original.id).await,
        Some(original.clone())
    );
    assert_eq!(get_task(db, &other, original.id).await, None);
    assert_eq!(
        EventLog::get(db, other.org, events[0].id).await.unwrap(),
        None
    );
}

async fn update_can_clear_optional_fields(db: &impl Store) {
    let seed = seed_org(db).await;
    let parent = task(seed.org);
    db.insert(&parent, &[]).await.unwrap();
    let full = full_task(&seed, parent.id);
    db.insert(&full, &[]).await.unwrap();
    let cleared = Task {
        id: full.id,
        created_at: full.created_at,
        version: full.version + 1,
        ..task(seed.org)
    };
    assert!(db.update(&cleared, full.version, &[]).await.unwrap());
    assert_eq!(get_task(db, &seed, full.id).await, Some(cleared));
}

async fn concurrent_updates_of_one_version_let_exactly_one_win(db: &impl Store) {
    let seed = seed_org(db).await;
    let original = task(seed.org);
    db.insert(&original, &[]).await.unwrap();
    let mut handles = Vec::new();
    for i in 0..6 {
        let db = db.clone();
        let update = Task {
            title: Title::new(&format!("writer {i}")).unwrap(),
            ..changed(&original)
        };
        let events = events_about(&update, &["task.transitioned"]);
        handles.push(tokio::spawn(async move {
            let won = db.update(&update, 1, &events).await.unwrap();
            (won, update, events)
        }));
    }
    let mut winners = Vec::new();
    let mut losers = Vec::new();
    for handle in handles {
        let (won, update, events) = handle.await.unwrap();
        if won {
            winners.push(update);
        } else {
            losers.push(events);
        }
    }
    assert_eq!(winners.len(), 1, "exactly one writer wins version 1");
    assert_eq!(
        get_task(db, &seed, original.id).await.as_ref(),
        winners.first()
    );
    for events in losers {
        assert_eq!(
            EventLog::get(db, seed.org, events[0].id).await.unwrap(),
            None
        );
    }
}

/// A caller that goes away mid-write (a client disconnecting) never leaves half a change
/// behind, nor a pooled connection stuck inside a transaction.
async fn abandoned_writes_are_all_or_nothing(db: &impl Store) {
    let seed = seed_org(db).await;
    let mut abandoned = Vec::new();
    for i in 0..12 {
        let new = task(seed.org);
        let events = events_about(&new, &["task.created", "task.assigned"]);
        let patience = std::time::Duration::from_micros(100 * i);
        let _ = tokio::time::timeout(patience, db.insert(&new, &events)).await;
        abandoned.push((new, events));
    }
    // Let writes still under way settle: wait until the task count stops changing.
    let count = async || {
        list(db, seed.org, &TaskFilter::default(), None, 100)
            .await
            .len()
    };
    let mut last = usize::MAX;
    for _ in 0..50 {
        let now = count().await;
        if now == last {
            break;
        }
        last = now;
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    for (written, events) in &abandoned {
        let stored = get_task(db, &seed, written.id).await.is_some();
        for event in events {
            let logged = EventLog::get(db, seed.org, event.id)
                .await
                .unwrap()
                .is_some();
            assert_eq!(stored, logged, "task and its events are written together");
        }
    }
    // Every pooled connection still works, inside and outside transactions.
    for _ in 0..6 {
        let next = task(seed.org);
        db.insert(&next, &events_about(&next, &["task.created"]))
            .await
            .unwrap();
        assert!(db.update(&changed(&next), next.version, &[]).await.unwrap());
    }
}
