//! The live stream's reads of the audit log (`EventLog::start`, `after`, `position`): in
//! the order writes were committed, after a position, scoped to the organization and
//! the filter, and never past a write that is still open, so that an event committed
//! late is not passed over.

use crate::support::Store;
use std::time::Duration;

use muster_domain::model::{Event, EventPosition, StreamStart};
use muster_domain::ports::{EventFilter, EventLog, transact};

use crate::support::{OpenWrite, event, now_ms, seed_org};

contract_tests!(
    events_come_in_commit_order_after_a_position,
    a_write_still_open_holds_back_what_follows_it,
);

/// Appends `events` in one transaction.
async fn append(db: &impl Store, events: Vec<Event>) {
    transact(db, move |tx| {
        Box::pin(async move {
            tx.append_events(&events).await?;
            Ok(())
        })
    })
    .await
    .unwrap();
}

/// What a reader starting at `start` gets now (the recorded ones passed over).
async fn read(
    db: &impl Store,
    start: &StreamStart,
    org: muster_domain::model::OrgId,
) -> Vec<Event> {
    EventLog::after(db, org, &EventFilter::default(), start.after, 100)
        .await
        .unwrap()
        .into_iter()
        .filter(|(position, _)| !start.recorded.contains(position))
        .map(|(_, event)| event)
        .collect()
}

/// Reads from `start` (passing over what it lists as recorded before it) until at least
/// `n` events are there (10 s at most).
async fn read_at_least(
    db: &impl Store,
    org: muster_domain::model::OrgId,
    start: &StreamStart,
    n: usize,
) -> Vec<(EventPosition, Event)> {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let read: Vec<_> = EventLog::after(db, org, &EventFilter::default(), start.after, 100)
            .await
            .unwrap()
            .into_iter()
            .filter(|(position, _)| !start.recorded.contains(position))
            .collect();
        if read.len() >= n || tokio::time::Instant::now() > deadline {
            return read;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

async fn events_come_in_commit_order_after_a_position(db: &impl Store) {
    let seed = seed_org(db).await;
    let other = seed_org(db).await;
    let start = EventLog::start(db, seed.org).await.unwrap();
    let first: Vec<Event> = (0..3)
        .map(|_| event(seed.org, "task.created", now_ms()))
        .collect();
    append(db, first.clone()).await;
    append(db, vec![event(other.org, "task.created", now_ms())]).await;
    let second = vec![
        event(seed.org, "task.updated", now_ms()),
        event(seed.org, "task.created", now_ms()),
    ];
    append(db, second.clone()).await;

    // On PostgreSQL a transaction of another test on the same server may hold the
    // horizon back for a moment.
    let read_all = read_at_least(db, seed.org, &start, 5).await;
    let ids: Vec<_> = read_all.iter().map(|(_, e)| e.id).collect();
    let expected: Vec<_> = first.iter().chain(&second).map(|e| e.id).collect();
    assert_eq!(ids, expected, "commit order, this organization only");
    let positions: Vec<EventPosition> = read_all.iter().map(|(p, _)| *p).collect();
    assert!(positions.windows(2).all(|w| w[0] < w[1]), "{positions:?}");
    assert_eq!(read_all[1].1, first[1], "read back field for field");

    // After a position: exactly what follows it; `position` names the same place.
    let third = EventLog::position(db, seed.org, first[2].id).await.unwrap();
    assert_eq!(third, Some(positions[2]));
    let rest = EventLog::after(db, seed.org, &EventFilter::default(), positions[2], 100)
        .await
        .unwrap();
    assert_eq!(
        rest.iter().map(|(_, e)| e.id).collect::<Vec<_>>(),
        vec![second[0].id, second[1].id]
    );
    let none = EventLog::after(db, seed.org, &EventFilter::default(), positions[4], 100)
        .await
        .unwrap();
    assert!(none.is_empty());
    // Another organization's event has no position here.
    assert_eq!(
        EventLog::position(db, other.org, first[0].id)
            .await
            .unwrap(),
        None
    );
    // A limit and a filter.
    let two = EventLog::after(db, seed.org, &EventFilter::default(), positions[0], 2)
        .await
        .unwrap();
    assert_eq!(
        two.iter().map(|(_, e)| e.id).collect::<Vec<_>>(),
        vec![first[1].id, first[2].id]
    );
    let filter = EventFilter {
        event_type: Some("task.updated".into()),
        ..EventFilter::default()
    };
    let updated = EventLog::after(db, seed.org, &filter, positions[0], 100)
        .await
        .unwrap();
    assert_eq!(updated.len(), 1);
    assert_eq!(updated[0].1.id, second[0].id);
    // A reader starting now sees none of it.
    let later = EventLog::start(db, seed.org).await.unwrap();
    assert!(read(db, &later, seed.org).await.is_empty());
}

async fn a_write_still_open_holds_back_what_follows_it(db: &impl Store) {
    let seed = seed_org(db).await;
    let start = EventLog::start(db, seed.org).await.unwrap();
    let slow = event(seed.org, "task.created", now_ms());
    let quick = event(seed.org, "task.updated", now_ms());
    let slow_write = OpenWrite::start(db, vec![slow.clone()]).await;
    let quick_write = {
        let db = db.clone();
        let quick = quick.clone();
        tokio::spawn(async move { append(&db, vec![quick]).await })
    };
    // On PostgreSQL the quick write commits now; on SQLite it waits for the writer.
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(
        read(db, &start, seed.org).await.is_empty(),
        "nothing may be handed out while an earlier write is open"
    );
    slow_write.release().await;
    quick_write.await.unwrap();
    let ids: Vec<_> = read_at_least(db, seed.org, &start, 2)
        .await
        .iter()
        .map(|(_, e)| e.id)
        .collect();
    assert_eq!(ids, vec![slow.id, quick.id]);
}
