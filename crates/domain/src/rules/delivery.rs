//! Delivering post-hooks (decision D-83): the retry schedule, the stable delivery id,
//! when a hook is switched off, and the body every receiver parses.

use serde_json::{Value, json};
use time::{Duration, OffsetDateTime};
use uuid::Uuid;

use crate::model::instant::format_millis;
use crate::model::{Event, WebhookId};

/// Waits before each attempt at one event: now, 10 s, 1 min, 10 min, 1 h, 6 h.
pub const RETRY_SCHEDULE: [Duration; 6] = [
    Duration::ZERO,
    Duration::seconds(10),
    Duration::minutes(1),
    Duration::minutes(10),
    Duration::hours(1),
    Duration::hours(6),
];

/// Consecutive failed calls that switch a hook off (with `webhook.disabled`).
pub const DISABLE_AFTER_FAILURES: u32 = 10;

/// The event type of a test delivery (decision D-85).
pub const TEST_EVENT_TYPE: &str = "webhook.test";

/// The message a test delivery carries in its data (decision D-85).
pub const TEST_MESSAGE: &str = "Test delivery from Muster";

/// The waits between attempts at one event; tests and operators' drills may shorten
/// them, the service uses [`RETRY_SCHEDULE`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetrySchedule(Vec<Duration>);

impl Default for RetrySchedule {
    fn default() -> Self {
        Self(RETRY_SCHEDULE.to_vec())
    }
}

impl RetrySchedule {
    /// A schedule of `waits`, the first being the wait before the first attempt (usually
    /// zero). Empty means one attempt.
    pub fn new(waits: Vec<Duration>) -> Self {
        if waits.is_empty() {
            Self(vec![Duration::ZERO])
        } else {
            Self(waits)
        }
    }

    /// How many attempts an event gets in all.
    pub fn max_attempts(&self) -> u32 {
        u32::try_from(self.0.len()).unwrap_or(u32::MAX)
    }

    /// When to try again after attempt number `attempts_made` (1-based) failed at `now`;
    /// `None` when that was the last attempt.
    ///
    /// ```
    /// use muster_domain::rules::delivery::RetrySchedule;
    /// use time::{Duration, macros::datetime};
    /// let now = datetime!(2026-11-23 12:00 UTC);
    /// let schedule = RetrySchedule::default();
    /// assert_eq!(schedule.next_attempt(1, now), Some(now + Duration::seconds(10)));
    /// assert_eq!(schedule.next_attempt(5, now), Some(now + Duration::hours(6)));
    /// assert_eq!(schedule.next_attempt(6, now), None);
    /// ```
    pub fn next_attempt(&self, attempts_made: u32, now: OffsetDateTime) -> Option<OffsetDateTime> {
        let index = usize::try_from(attempts_made).ok()?;
        self.0.get(index).map(|wait| now + *wait)
    }
}

/// Whether a receiver's status code means the delivery arrived: any 2xx.
pub fn is_success(status: u16) -> bool {
    (200..300).contains(&status)
}

/// The outcome of one failed call for the hook: how many failures in a row it has now,
/// and whether that switches it off.
pub fn after_failure(consecutive_failures: u32) -> (u32, bool) {
    let failures = consecutive_failures.saturating_add(1);
    (failures, failures >= DISABLE_AFTER_FAILURES)
}

/// The `X-Service-Delivery` of `event` to `hook`: a name-based UUID (v5) of the pair, so
/// every retry carries the same id without storing one, and no two pairs share it.
pub fn delivery_id(hook: WebhookId, event: Uuid) -> Uuid {
    let mut name = [0u8; 32];
    name[..16].copy_from_slice(hook.as_uuid().as_bytes());
    name[16..].copy_from_slice(event.as_bytes());
    Uuid::new_v5(&DELIVERY_NAMESPACE, &name)
}

/// The namespace of [`delivery_id`]: fixed forever, so ids stay stable across releases.
const DELIVERY_NAMESPACE: Uuid = Uuid::from_u128(0x6d75_7374_6572_4000_8000_7765_6268_6f6f);

/// The body of a delivery (the contract's shape): `{event, timestamp, data: {id,
/// actorId, entityType, entityId, severity, data, createdAt}}`, `timestamp` being when
/// it is sent.
pub fn delivery_body(event: &Event, sent_at: OffsetDateTime) -> Value {
    json!({
        "event": event.event_type,
        "timestamp": format_millis(sent_at).ok(),
        "data": {
            "id": event.id.as_uuid(),
            "actorId": event.actor_id,
            "entityType": event.entity_type,
            "entityId": event.entity_id,
            "severity": event.severity.as_str(),
            "data": event.payload,
            "createdAt": format_millis(event.created_at).ok(),
        },
    })
}

#[cfg(test)]
mod tests {
    use time::macros::datetime;

    use super::*;
    use crate::model::{EventId, EventSeverity, OrgId};

    #[test]
    fn the_schedule_is_d83() {
        let now = datetime!(2026-11-23 12:00 UTC);
        let schedule = RetrySchedule::default();
        assert_eq!(schedule.max_attempts(), 6);
        let waits: Vec<_> = (1..=6)
            .map(|n| schedule.next_attempt(n, now).map(|at| at - now))
            .collect();
        assert_eq!(
            waits,
            [
                Some(Duration::seconds(10)),
                Some(Duration::minutes(1)),
                Some(Duration::minutes(10)),
                Some(Duration::hours(1)),
                Some(Duration::hours(6)),
                None
            ]
        );
        assert_eq!(RetrySchedule::new(vec![]).max_attempts(), 1);
    }

    #[test]
    fn ten_failures_in_a_row_disable() {
        assert_eq!(after_failure(0), (1, false));
        assert_eq!(after_failure(8), (9, false));
        assert_eq!(after_failure(9), (10, true));
        assert_eq!(after_failure(u32::MAX), (u32::MAX, true));
    }

    #[test]
    fn success_is_2xx() {
        assert!(!is_success(199));
        assert!(is_success(200) && is_success(204) && is_success(299));
        assert!(!is_success(300) && !is_success(500));
    }

    #[test]
    fn delivery_ids_are_stable_and_distinct() {
        let hook = WebhookId::from_uuid(Uuid::from_u128(1));
        let other = WebhookId::from_uuid(Uuid::from_u128(2));
        let event = Uuid::from_u128(3);
        assert_eq!(delivery_id(hook, event), delivery_id(hook, event));
        assert_ne!(delivery_id(hook, event), delivery_id(other, event));
        assert_ne!(
            delivery_id(hook, event),
            delivery_id(hook, Uuid::from_u128(4))
        );
        assert_eq!(delivery_id(hook, event).get_version_num(), 5);
    }

    #[test]
    fn the_body_has_the_contract_shape() {
        let event = Event {
            id: EventId::from_uuid(Uuid::from_u128(9)),
            org_id: OrgId::from_uuid(Uuid::from_u128(1)),
            event_type: "task.created".into(),
            actor_id: None,
            entity_type: "task".into(),
            entity_id: Uuid::from_u128(7),
            severity: EventSeverity::Info,
            payload: json!({"title": "t"}),
            created_at: datetime!(2026-11-23 12:00:00.5 UTC),
        };
        let body = delivery_body(&event, datetime!(2026-11-23 12:00:01 UTC));
        assert_eq!(
            body,
            json!({
                "event": "task.created",
                "timestamp": "2026-11-23T12:00:01.000Z",
                "data": {
                    "id": "00000000-0000-0000-0000-000000000009",
                    "actorId": null,
                    "entityType": "task",
                    "entityId": "00000000-0000-0000-0000-000000000007",
                    "severity": "info",
                    "data": {"title": "t"},
                    "createdAt": "2026-11-23T12:00:00.500Z"
                }
            })
        );
    }
}
