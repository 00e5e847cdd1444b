//! `EventService` against a mocked event log.

use crate::common;

use std::sync::Arc;

use common::{NOW, agent_actor, org, user_actor};
use futures_executor::block_on;
use muster_domain::model::{AgentMode, Event, EventId, EventSeverity, OrgId, UserRole};
use muster_domain::ports::{EventFilter, EventPage, MockEventLog, RepositoryError};
use muster_domain::service::{Entity, EventQuery, EventService, ServiceError};
use serde_json::json;
use uuid::Uuid;

fn event_id(n: u128) -> EventId {
    EventId::from_uuid(Uuid::from_u128(0xe000 + n))
}

fn sample_event(id: EventId) -> Event {
    Event {
        id,
        org_id: org(),
        event_type: "task.created".into(),
        actor_id: Some(Uuid::from_u128(0xa1)),
        entity_type: "task".into(),
        entity_id: Uuid::from_u128(0x7001),
        severity: EventSeverity::Info,
        payload: json!({ "title": "Ship" }),
        created_at: NOW,
    }
}

fn filter() -> EventFilter {
    EventFilter {
        event_type: Some("task.done".into()),
        severity: Some(EventSeverity::Warning),
        entity_id: Some(Uuid::from_u128(0x7001)),
        ..EventFilter::default()
    }
}

/// Lists with `page` and `limit` when the log must not be asked.
fn rejected(page: u32, limit: u32) -> ServiceError {
    let mut log = MockEventLog::new();
    log.expect_list().never();
    let service = EventService::new(Arc::new(log));
    block_on(service.list(
        &agent_actor(AgentMode::Worker),
        &filter(),
        EventQuery { page, limit },
    ))
    .unwrap_err()
}

/// Lists with `page` and `limit`, expecting the log to be asked for `offset` and `limit`
/// with the actor's org and the filter unchanged.
fn accepted(page: u32, limit: u32, offset: u64) -> EventPage {
    let mut log = MockEventLog::new();
    log.expect_list()
        .withf(move |o: &OrgId, f: &EventFilter, off, lim| {
            *o == org() && *f == filter() && *off == offset && *lim == limit
        })
        .times(1)
        .returning(|_, _, _, _| {
            Ok(EventPage {
                events: vec![sample_event(event_id(1))],
                total: 41,
            })
        });
    let service = EventService::new(Arc::new(log));
    block_on(service.list(
        &agent_actor(AgentMode::Worker),
        &filter(),
        EventQuery { page, limit },
    ))
    .unwrap()
}

#[test]
fn page_zero_is_invalid() {
    let err = rejected(0, 20);
    assert!(
        matches!(&err, ServiceError::Invalid(m) if m.message().contains("page")),
        "{err:?}"
    );
}

#[test]
fn limit_outside_1_to_200_is_invalid() {
    for limit in [0, 201, u32::MAX] {
        let err = rejected(1, limit);
        assert!(
            matches!(&err, ServiceError::Invalid(m) if m.message() == "limit must be between 1 and 200"),
            "{limit}: {err:?}"
        );
    }
}

#[test]
fn page_3_of_20_skips_40() {
    let page = accepted(3, 20, 40);

    assert_eq!(
        page,
        EventPage {
            events: vec![sample_event(event_id(1))],
            total: 41
        }
    );
}

#[test]
fn first_page_starts_at_zero_and_limits_1_and_200_are_accepted() {
    accepted(1, 1, 0);
    accepted(1, 200, 0);
    accepted(2, 200, 200);
}

#[test]
fn large_page_numbers_do_not_overflow() {
    accepted(u32::MAX, 200, u64::from(u32::MAX - 1) * 200);
}

#[test]
fn storage_failures_are_reported() {
    let mut log = MockEventLog::new();
    log.expect_list()
        .returning(|_, _, _, _| Err(RepositoryError::unavailable("down")));
    let service = EventService::new(Arc::new(log));

    let err = block_on(service.list(
        &user_actor(UserRole::Viewer),
        &EventFilter::default(),
        EventQuery {
            page: 1,
            limit: EventQuery::DEFAULT_LIMIT,
        },
    ))
    .unwrap_err();

    assert!(matches!(err, ServiceError::Unavailable(_)), "{err:?}");
}

#[test]
fn get_returns_the_event_of_the_actor_org() {
    let mut log = MockEventLog::new();
    log.expect_get()
        .withf(|o, id| *o == org() && *id == event_id(2))
        .times(1)
        .returning(|_, id| Ok(Some(sample_event(id))));
    let service = EventService::new(Arc::new(log));

    let event = block_on(service.get(&user_actor(UserRole::Viewer), event_id(2))).unwrap();

    assert_eq!(event, sample_event(event_id(2)));
}

#[test]
fn get_of_a_missing_event_is_not_found() {
    let mut log = MockEventLog::new();
    log.expect_get().times(1).returning(|_, _| Ok(None));
    let service = EventService::new(Arc::new(log));

    let err = block_on(service.get(&agent_actor(AgentMode::Observer), event_id(3))).unwrap_err();

    let expected = format!("Event {} not found", event_id(3).as_uuid());
    assert!(
        matches!(&err, ServiceError::NotFound(_)) && err.to_string() == expected,
        "{err:?}"
    );
}

#[test]
fn type_filters_that_no_event_can_match_are_refused_before_the_port() {
    let mut log = MockEventLog::new();
    log.expect_list().never();
    let service = EventService::new(Arc::new(log));
    let query = EventQuery { page: 1, limit: 10 };
    let cases = [
        (
            EventFilter {
                event_type: Some("a\0b".into()),
                ..EventFilter::default()
            },
            "type must not contain the NUL character",
        ),
        (
            EventFilter {
                entity_type: Some("x".repeat(101)),
                ..EventFilter::default()
            },
            "entityType must be at most 100 characters",
        ),
    ];
    for (filter, message) in cases {
        let err =
            block_on(service.list(&agent_actor(AgentMode::Worker), &filter, query)).unwrap_err();
        assert!(
            matches!(&err, ServiceError::Invalid(m) if m.message() == message),
            "{err:?}"
        );
    }
}

mod streams {
    use muster_domain::model::{EventPosition, StreamStart};

    use super::*;

    #[test]
    fn a_new_stream_starts_where_the_log_says_for_the_actors_organization() {
        let mut log = MockEventLog::new();
        let start = StreamStart {
            after: EventPosition::new(7, 0),
            recorded: vec![EventPosition::new(7, 3)],
        };
        let answer = start.clone();
        log.expect_start()
            .withf(|o: &OrgId| *o == org())
            .times(1)
            .returning(move |_| Ok(answer.clone()));
        log.expect_position().never();
        let service = EventService::new(Arc::new(log));
        let got = block_on(service.stream_from(&agent_actor(AgentMode::Worker), &filter(), None));
        assert_eq!(got.unwrap(), start);
    }

    #[test]
    fn the_head_a_watcher_polls_is_the_logs_own() {
        let mut log = MockEventLog::new();
        log.expect_head()
            .times(1)
            .returning(|| Ok(EventPosition::new(12, 4)));
        let service = EventService::new(Arc::new(log));
        assert_eq!(block_on(service.head()).unwrap(), EventPosition::new(12, 4));
    }

    #[test]
    fn a_resumed_stream_continues_right_after_the_named_event() {
        let mut log = MockEventLog::new();
        log.expect_position()
            .withf(|o: &OrgId, id: &EventId| *o == org() && *id == event_id(4))
            .times(1)
            .returning(|_, _| Ok(Some(EventPosition::new(3, 9))));
        log.expect_start().never();
        let service = EventService::new(Arc::new(log));
        let got = block_on(service.stream_from(
            &user_actor(UserRole::Viewer),
            &EventFilter::default(),
            Some(event_id(4)),
        ));
        assert_eq!(
            got.unwrap(),
            StreamStart {
                after: EventPosition::new(3, 9),
                recorded: Vec::new(),
            }
        );
    }

    #[test]
    fn an_event_outside_the_organization_is_no_place_to_resume() {
        let mut log = MockEventLog::new();
        log.expect_position().times(1).returning(|_, _| Ok(None));
        let service = EventService::new(Arc::new(log));
        let err = block_on(service.stream_from(
            &agent_actor(AgentMode::Worker),
            &EventFilter::default(),
            Some(event_id(5)),
        ))
        .unwrap_err();
        assert!(
            matches!(&err, ServiceError::NotFound(e) if e.entity == Entity::Event),
            "{err:?}"
        );
    }

    #[test]
    fn a_stream_filter_is_checked_before_the_log_is_read() {
        let mut log = MockEventLog::new();
        log.expect_start().never();
        let service = EventService::new(Arc::new(log));
        let filter = EventFilter {
            event_type: Some("task.\0created".into()),
            ..EventFilter::default()
        };
        let err = block_on(service.stream_from(&agent_actor(AgentMode::Worker), &filter, None))
            .unwrap_err();
        assert!(matches!(err, ServiceError::Invalid(_)), "{err:?}");
    }

    #[test]
    fn reads_after_a_position_are_bounded_and_scoped_to_the_organization() {
        let mut log = MockEventLog::new();
        log.expect_after()
            .withf(
                |o: &OrgId, _f: &EventFilter, after: &EventPosition, limit: &u32| {
                    *o == org() && *after == EventPosition::new(1, 2) && *limit == 200
                },
            )
            .times(1)
            .returning(|_, _, _, _| {
                Ok(vec![(EventPosition::new(1, 3), sample_event(event_id(6)))])
            });
        let service = EventService::new(Arc::new(log));
        let got = block_on(service.after(
            &agent_actor(AgentMode::Worker),
            &EventFilter::default(),
            EventPosition::new(1, 2),
            10_000,
        ))
        .unwrap();
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].0, EventPosition::new(1, 3));
    }

    #[test]
    fn stream_order_is_transaction_first() {
        assert!(EventPosition::new(1, 99) < EventPosition::new(2, 1));
        assert!(EventPosition::new(2, 1) < EventPosition::new(2, 2));
    }
}
