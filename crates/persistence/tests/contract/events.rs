//! `EventLog`: get scoped by organization; list with every filter (dates inclusive),
//! newest first, offset paging with a total independent of the page; and the audit log
//! is append-only even for raw SQL.

use crate::support::Store;

use crate::writes::Writes;
use muster_domain::model::{Event, EventId, EventSeverity, OrgId};
use muster_domain::ports::{EventFilter, EventLog};
use muster_persistence::{Database, Engine};
use serde_json::json;
use time::Duration;
use uuid::Uuid;

use crate::support::{OpenWrite, Seed, at_minute, event, new_id, raw_execute, seed_org, task};

contract_tests!(
    get_is_scoped_by_organization,
    list_is_newest_first_with_ties_by_id,
    list_filters_alone_and_combined,
    list_date_bounds_are_inclusive,
    list_total_ignores_offset_and_limit,
    list_total_follows_the_log_as_it_grows,
    list_pages_by_offset,
);
engine_contract_tests!(
    first_pages_at_once_agree_on_the_total,
    list_total_counts_a_write_that_commits_after_a_later_one,
    events_cannot_be_updated_or_deleted,
);

/// Stores `events` with a carrier task of their organization.
async fn append(db: &impl Store, seed: &Seed, events: &[Event]) {
    db.insert(&task(seed.org), events).await.unwrap();
}

/// A new organization with `count` "tick" events a minute apart, and the filter that
/// selects them.
async fn ticking_org(db: &impl Store, count: i64) -> (Seed, Vec<Event>, EventFilter) {
    let seed = seed_org(db).await;
    let events: Vec<Event> = (0..count)
        .map(|m| event(seed.org, "tick", at_minute(m)))
        .collect();
    append(db, &seed, &events).await;
    let ticks = EventFilter {
        event_type: Some("tick".into()),
        ..EventFilter::default()
    };
    (seed, events, ticks)
}

/// Newest first; equal instants by id, descending.
fn newest_first(mut events: Vec<Event>) -> Vec<Event> {
    events.sort_by_key(|e| std::cmp::Reverse((e.created_at, e.id)));
    events
}

async fn list_all(db: &impl Store, seed: &Seed, filter: &EventFilter) -> Vec<Event> {
    EventLog::list(db, seed.org, filter, 0, 1000)
        .await
        .unwrap()
        .events
}

async fn get_is_scoped_by_organization(db: &impl Store) {
    let mine = seed_org(db).await;
    let other = seed_org(db).await;
    let written = &mine.new.events[0];
    assert_eq!(
        EventLog::get(db, mine.org, written.id)
            .await
            .unwrap()
            .as_ref(),
        Some(written)
    );
    assert_eq!(
        EventLog::get(db, other.org, written.id).await.unwrap(),
        None
    );
    let unknown = EventId::from_uuid(new_id());
    assert_eq!(EventLog::get(db, mine.org, unknown).await.unwrap(), None);
}

async fn list_is_newest_first_with_ties_by_id(db: &impl Store) {
    let seed = seed_org(db).await;
    // Appended out of time order, three of them at the same instant.
    let events = vec![
        event(seed.org, "b", at_minute(5)),
        event(seed.org, "a", at_minute(1)),
        event(seed.org, "tie", at_minute(3)),
        event(seed.org, "tie", at_minute(3)),
        event(seed.org, "c", at_minute(9)),
        event(seed.org, "tie", at_minute(3)),
    ];
    append(db, &seed, &events).await;
    let all = newest_first([seed.new.events.clone(), events].concat());
    assert_eq!(list_all(db, &seed, &EventFilter::default()).await, all);
}

/// Varied events of `seed`'s organization, the same again in `other`; returns the
/// whole log of `seed`'s organization (bootstrap events included).
async fn varied_events(db: &impl Store, seed: &Seed, other: &Seed, actor: Uuid) -> Vec<Event> {
    let entity = new_id();
    let severities = [
        EventSeverity::Info,
        EventSeverity::Warning,
        EventSeverity::Error,
    ];
    let types = ["task.created", "task.transitioned", "task.done"];
    let build = |org| -> Vec<Event> {
        (0..9_usize)
            .map(|i| Event {
                actor_id: (i % 2 == 0).then_some(actor),
                entity_type: if i % 4 == 3 {
                    "agent".into()
                } else {
                    "task".into()
                },
                entity_id: if i % 3 == 0 { entity } else { new_id() },
                severity: severities[(i / 2) % 3],
                payload: json!({ "i": i }),
                ..event(org, types[i % 3], at_minute(i64::try_from(i / 2).unwrap()))
            })
            .collect()
    };
    let mine = build(seed.org);
    append(db, seed, &mine).await;
    append(db, other, &build(other.org)).await;
    [seed.new.events.clone(), mine].concat()
}

fn matches(event: &Event, filter: &EventFilter) -> bool {
    filter
        .event_type
        .as_ref()
        .is_none_or(|t| &event.event_type == t)
        && filter.actor_id.is_none_or(|a| event.actor_id == Some(a))
        && filter
            .entity_type
            .as_ref()
            .is_none_or(|t| &event.entity_type == t)
        && filter.entity_id.is_none_or(|e| event.entity_id == e)
        && filter.severity.is_none_or(|s| event.severity == s)
        && filter.start_date.is_none_or(|d| event.created_at >= d)
        && filter.end_date.is_none_or(|d| event.created_at <= d)
}

async fn list_filters_alone_and_combined(db: &impl Store) {
    let seed = seed_org(db).await;
    let other = seed_org(db).await;
    let actor = seed.hr.as_uuid();
    let log = varied_events(db, &seed, &other, actor).await;
    let entity = log[2].entity_id; // i = 0: the shared entity
    let none = EventFilter::default();
    let filters = [
        none.clone(),
        EventFilter {
            event_type: Some("task.transitioned".into()),
            ..none.clone()
        },
        EventFilter {
            event_type: Some("agent.registered".into()),
            ..none.clone()
        },
        EventFilter {
            event_type: Some("nothing.like.it".into()),
            ..none.clone()
        },
        EventFilter {
            actor_id: Some(actor),
            ..none.clone()
        },
        EventFilter {
            entity_type: Some("agent".into()),
            ..none.clone()
        },
        EventFilter {
            entity_id: Some(entity),
            ..none.clone()
        },
        EventFilter {
            severity: Some(EventSeverity::Warning),
            ..none.clone()
        },
        EventFilter {
            severity: Some(EventSeverity::Error),
            ..none.clone()
        },
        EventFilter {
            start_date: Some(at_minute(2)),
            ..none.clone()
        },
        EventFilter {
            end_date: Some(at_minute(2)),
            ..none.clone()
        },
        EventFilter {
            event_type: Some("task.created".into()),
            actor_id: Some(actor),
            entity_type: Some("task".into()),
            ..none.clone()
        },
        EventFilter {
            severity: Some(EventSeverity::Info),
            start_date: Some(at_minute(0)),
            end_date: Some(at_minute(3)),
            ..none.clone()
        },
        EventFilter {
            entity_id: Some(entity),
            entity_type: Some("agent".into()),
            ..none.clone()
        },
    ];
    for filter in &filters {
        let expected = newest_first(log.iter().filter(|e| matches(e, filter)).cloned().collect());
        let page = EventLog::list(db, seed.org, filter, 0, 1000).await.unwrap();
        assert_eq!(page.events, expected, "filter {filter:?}");
        assert_eq!(page.total, expected.len() as u64, "total for {filter:?}");
    }
    // The filters select something, and not everything.
    let by_actor = log.iter().filter(|e| matches(e, &filters[4])).count();
    assert!(by_actor > 0 && by_actor < log.len());
}

async fn list_date_bounds_are_inclusive(db: &impl Store) {
    let (seed, events, ticks) = ticking_org(db, 5).await;
    let window = |start, end| EventFilter {
        start_date: start,
        end_date: end,
        ..ticks.clone()
    };
    let ms = Duration::milliseconds(1);

    let exact = list_all(db, &seed, &window(Some(at_minute(2)), Some(at_minute(2)))).await;
    assert_eq!(
        exact,
        [events[2].clone()],
        "start = end = an event's instant includes it"
    );
    let from = list_all(db, &seed, &window(Some(at_minute(3)), None)).await;
    assert_eq!(from, [events[4].clone(), events[3].clone()]);
    let until = list_all(db, &seed, &window(None, Some(at_minute(1)))).await;
    assert_eq!(until, [events[1].clone(), events[0].clone()]);
    let after = list_all(db, &seed, &window(Some(at_minute(3) + ms), None)).await;
    assert_eq!(
        after,
        [events[4].clone()],
        "one millisecond later excludes it"
    );
    let before = list_all(db, &seed, &window(None, Some(at_minute(1) - ms))).await;
    assert_eq!(before, [events[0].clone()]);
    let empty = list_all(db, &seed, &window(Some(at_minute(3)), Some(at_minute(2)))).await;
    assert!(empty.is_empty());
}

async fn list_total_ignores_offset_and_limit(db: &impl Store) {
    let (seed, _, ticks) = ticking_org(db, 6).await;
    let all = EventFilter::default();
    for (offset, limit, shown) in [
        (0, 1000, 8),
        (0, 3, 3),
        (5, 2, 2),
        (7, 10, 1),
        (8, 10, 0),
        (50, 5, 0),
        (0, 0, 0),
    ] {
        let page = EventLog::list(db, seed.org, &all, offset, limit)
            .await
            .unwrap();
        assert_eq!(page.total, 8, "offset {offset} limit {limit}");
        assert_eq!(page.events.len(), shown, "offset {offset} limit {limit}");
        let page = EventLog::list(db, seed.org, &ticks, offset, limit)
            .await
            .unwrap();
        assert_eq!(page.total, 6, "filtered, offset {offset} limit {limit}");
    }
}

async fn total(db: &impl Store, org: OrgId, filter: &EventFilter) -> u64 {
    EventLog::list(db, org, filter, 0, 1).await.unwrap().total
}

/// Each instance keeps the count of the part of the log that can no longer change and
/// counts only what is newer: the total stays exact, page after page, as events arrive.
async fn list_total_follows_the_log_as_it_grows(db: &impl Store) {
    let seed = seed_org(db).await;
    let other = seed_org(db).await;
    let all = EventFilter::default();
    let ticks = EventFilter {
        event_type: Some("tick".into()),
        ..EventFilter::default()
    };
    let (mut all_expected, mut ticks_expected) = (seed.new.events.len() as u64, 0);
    for round in 0..4_i64 {
        for _ in 0..2 {
            assert_eq!(
                total(db, seed.org, &all).await,
                all_expected,
                "round {round}"
            );
            assert_eq!(
                total(db, seed.org, &ticks).await,
                ticks_expected,
                "round {round}"
            );
        }
        let mut events: Vec<Event> = (0..=round)
            .map(|m| event(seed.org, "tick", at_minute(m)))
            .collect();
        events.push(event(seed.org, "tock", at_minute(round)));
        append(db, &seed, &events).await;
        append(db, &other, &[event(other.org, "tick", at_minute(round))]).await;
        all_expected += events.len() as u64;
        ticks_expected += events.len() as u64 - 1;
    }
    assert_eq!(total(db, seed.org, &all).await, all_expected);
    assert_eq!(total(db, seed.org, &ticks).await, ticks_expected);
}

/// Pages asked at once for a pair not counted yet (one counts first, the others wait
/// for it and count what is newer): every one answers the exact total, also when
/// events arrive between the rounds.
async fn first_pages_at_once_agree_on_the_total(db: &Database) {
    let (seed, _, ticks) = ticking_org(db, 30).await;
    for (round, expected) in [(0, 30_u64), (1, 33)] {
        let pages = (0..16).map(|_| {
            let (db, ticks) = (db.clone(), ticks.clone());
            tokio::spawn(async move { EventLog::list(&db, seed.org, &ticks, 0, 5).await })
        });
        for page in futures_util::future::join_all(pages).await {
            let page = page.unwrap().unwrap();
            assert_eq!(page.total, expected, "round {round}");
            assert_eq!(page.events.len(), 5, "round {round}");
        }
        let more: Vec<Event> = (0..3)
            .map(|m| event(seed.org, "tick", at_minute(40 + m)))
            .collect();
        append(db, &seed, &more).await;
    }
}

/// A write that started first but commits last: its event must still be counted once
/// it commits, though a later write's event was counted before it.
async fn list_total_counts_a_write_that_commits_after_a_later_one(db: &Database) {
    let seed = seed_org(db).await;
    let all = EventFilter::default();
    let before = total(db, seed.org, &all).await;
    let slow_write =
        OpenWrite::start(db, vec![event(seed.org, "task.created", at_minute(1))]).await;
    let quick_write = {
        let (db, org) = (db.clone(), seed.org);
        let quick = event(org, "task.updated", at_minute(2));
        tokio::spawn(async move { db.insert(&task(org), &[quick]).await.unwrap() })
    };
    let waiting = if db.engine() == Engine::Postgres {
        // The later write commits while the first is still open.
        quick_write.await.unwrap();
        assert_eq!(total(db, seed.org, &all).await, before + 1);
        None
    } else {
        // SQLite: the later write waits for the one writer.
        assert_eq!(total(db, seed.org, &all).await, before);
        Some(quick_write)
    };
    slow_write.release().await;
    if let Some(quick_write) = waiting {
        quick_write.await.unwrap();
    }
    assert_eq!(total(db, seed.org, &all).await, before + 2);
}

async fn list_pages_by_offset(db: &impl Store) {
    let seed = seed_org(db).await;
    let events: Vec<Event> = (0..7)
        .map(|m| event(seed.org, "tick", at_minute(m)))
        .collect();
    append(db, &seed, &events).await;
    let expected = newest_first([seed.new.events.clone(), events].concat());
    let filter = EventFilter::default();
    let mut pages = Vec::new();
    for offset in (0..12).step_by(4) {
        pages.push(
            EventLog::list(db, seed.org, &filter, offset, 4)
                .await
                .unwrap()
                .events,
        );
    }
    assert_eq!(pages.iter().map(Vec::len).collect::<Vec<_>>(), [4, 4, 1]);
    assert_eq!(
        pages.concat(),
        expected,
        "no duplicates, no gaps, newest first"
    );
}

/// Decision D-70: the log is append-only even for someone with SQL access. A raw
/// connection, outside the pool and the ports, cannot change or remove an event.
async fn events_cannot_be_updated_or_deleted(db: &Database) {
    let seed = seed_org(db).await;
    let before = EventLog::list(db, seed.org, &EventFilter::default(), 0, 100)
        .await
        .unwrap();
    assert_eq!(before.total, 2);
    let id = seed.new.events[0].id;

    let mut attempts = vec![
        "UPDATE events SET type = 'x'".to_owned(),
        format!("UPDATE events SET payload = '{{}}' WHERE id = '{id}'"),
        "DELETE FROM events".to_owned(),
        format!("DELETE FROM events WHERE id = '{id}'"),
    ];
    if db.engine() == Engine::Postgres {
        attempts.push("TRUNCATE events".to_owned());
    }
    for sql in &attempts {
        let outcome = raw_execute(db, sql).await;
        let err = outcome.expect_err(&format!("{sql:?} must be refused"));
        assert!(
            err.to_string().contains("append-only"),
            "{sql:?} failed for another reason: {err}"
        );
    }

    let after = EventLog::list(db, seed.org, &EventFilter::default(), 0, 100)
        .await
        .unwrap();
    assert_eq!(after, before, "every event remains, unchanged");
    let stored = EventLog::get(db, seed.org, id).await.unwrap();
    assert_eq!(stored.as_ref(), Some(&seed.new.events[0]));
}
