//! The pre-hook gate (decision D-84) with mocked ports: a change is asked about only when
//! it wrote events and a pre-hook hears one, between a run that is rolled back and one
//! that commits; a blocking `allow: false` leaves the change rolled back and records the
//! refusal; a listener's `allow: false`, a timeout or an error let it through; the hook
//! list is read once a second, not once a change.

use crate::common;

use std::sync::Arc;

use common::{NOW, clock, ids, org, types};
use futures_executor::block_on;
use muster_domain::model::{
    Event, EventId, EventSeverity, HookEvents, HookName, HookTimeout, HookType, HookUrl, Webhook,
    WebhookId,
};
use muster_domain::policy::Forbidden;
use muster_domain::ports::{
    CallResult, MockHookCaller, MockSecretVault, MockTransaction, MockUnitOfWork, Outcome,
    UnitOfWork, transact,
};
use muster_domain::service::{GatedUnitOfWork, HookGate, ServiceError};
use serde_json::json;
use uuid::Uuid;

fn pre_hook(name: &str, can_block: bool, events: &[&str]) -> Webhook {
    Webhook {
        id: WebhookId::from_uuid(Uuid::from_u128(0xa0)),
        org_id: org(),
        name: HookName::new(name).unwrap(),
        url: HookUrl::new("https://hooks.example/gate").unwrap(),
        sealed_secret: None,
        events: HookEvents::new(events.iter().map(|e| (*e).to_owned()).collect()).unwrap(),
        hook_type: HookType::Pre,
        can_block,
        timeout: HookTimeout::DEFAULT,
        enabled: true,
        consecutive_failures: 0,
        last_error: None,
        push: None,
        remote: None,
        created_at: NOW,
        updated_at: NOW,
    }
}

fn created() -> Event {
    Event {
        id: EventId::from_uuid(Uuid::from_u128(0xe1)),
        org_id: org(),
        event_type: "task.created".into(),
        actor_id: Some(Uuid::from_u128(0xac)),
        entity_type: "task".into(),
        entity_id: Uuid::from_u128(0x7a),
        severity: EventSeverity::Info,
        payload: json!({"title": "t"}),
        created_at: NOW,
    }
}

fn answer(status: Option<u16>, body: &str) -> CallResult {
    CallResult {
        status,
        duration_ms: 3,
        error: status
            .filter(|s| *s >= 300)
            .map(|s| format!("the receiver answered {s}")),
        body: body.as_bytes().to_vec(),
    }
}

/// A gated unit of work whose change writes `written`, over a transaction that serves
/// `hooks` as the org's pre-hooks; the caller answers `result`. Answers the run's result,
/// how each inner run ended, and what was appended and logged after the change.
struct Run {
    result: Result<(), ServiceError>,
    outcomes: Vec<Outcome>,
    calls: usize,
}

fn run(written: Vec<Event>, hooks: Vec<Webhook>, result: CallResult, changes: usize) -> Run {
    let mut tx = MockTransaction::new();
    tx.expect_written_events().return_const(written);
    tx.expect_pre_hooks()
        .times(1)
        .returning(move |_| Ok(hooks.clone()));
    tx.expect_insert_delivery_attempts().returning(|_| Ok(()));
    tx.expect_append_events().returning(|events| {
        assert_eq!(types(events), ["webhook.blocked"]);
        assert_eq!(
            events[0].actor_id,
            Some(Uuid::from_u128(0xac)),
            "the blocked actor"
        );
        assert_eq!(events[0].payload["blockedEventType"], "task.created");
        Ok(())
    });
    let inner = Arc::new(MockUnitOfWork::new(tx));
    let mut caller = MockHookCaller::new();
    let calls = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counted = calls.clone();
    caller.expect_call().returning(move |call| {
        counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        assert_eq!(call.hook_type, HookType::Pre);
        assert_eq!(call.event_type, "task.created");
        result.clone()
    });
    let gate = Arc::new(HookGate::new(
        Arc::new(caller),
        Arc::new(MockSecretVault::new()),
        clock(),
        ids(),
    ));
    let gated = GatedUnitOfWork::new(inner.clone(), gate);
    let mut last = Ok(());
    for _ in 0..changes.max(1) {
        last = block_on(transact(&gated as &dyn UnitOfWork, |_tx| {
            Box::pin(async move { Ok(()) })
        }));
    }
    Run {
        result: last,
        outcomes: inner.outcomes(),
        calls: calls.load(std::sync::atomic::Ordering::SeqCst),
    }
}

#[test]
fn a_blocking_refusal_rolls_the_change_back_and_is_recorded() {
    let run = run(
        vec![created()],
        vec![pre_hook("Freeze", true, &["task.created"])],
        answer(Some(200), r#"{"allow": false, "reason": "change freeze"}"#),
        1,
    );
    assert!(
        matches!(
            &run.result,
            Err(ServiceError::Forbidden(Forbidden::BlockedByHook { hook, reason }))
                if hook == "Freeze" && reason == "change freeze"
        ),
        "{:?}",
        run.result
    );
    assert_eq!(
        run.result.unwrap_err().to_string(),
        "Blocked by webhook Freeze: change freeze"
    );
    assert_eq!(
        run.outcomes,
        [Outcome::RolledBack, Outcome::Committed],
        "decided and rolled back to ask, then the log"
    );
    assert_eq!(run.calls, 1);
}

#[test]
fn listeners_timeouts_errors_and_odd_answers_let_the_change_through() {
    let refusing_listener = run(
        vec![created()],
        vec![pre_hook("Listener", false, &["*"])],
        answer(Some(200), r#"{"allow": false}"#),
        1,
    );
    assert!(refusing_listener.result.is_ok());
    for result in [
        answer(None, ""),
        answer(Some(500), r#"{"allow": false}"#),
        answer(Some(302), r#"{"allow": false}"#),
        answer(Some(200), "no"),
        answer(Some(200), r#"{"allowed": false}"#),
        answer(Some(200), r#"{"allow": true}"#),
    ] {
        let run = run(
            vec![created()],
            vec![pre_hook("Gate", true, &["task.created"])],
            result.clone(),
            1,
        );
        assert!(run.result.is_ok(), "{result:?}");
        assert_eq!(
            run.outcomes,
            [Outcome::RolledBack, Outcome::Committed, Outcome::Committed],
            "decided, asked, decided again and committed, then the log"
        );
    }
}

#[test]
fn nothing_is_asked_without_a_hook_for_the_event() {
    let other_type = run(
        vec![created()],
        vec![pre_hook("Done only", true, &["task.done"])],
        answer(Some(200), r#"{"allow": false}"#),
        1,
    );
    assert!(other_type.result.is_ok());
    assert_eq!(other_type.calls, 0);
    assert_eq!(other_type.outcomes, [Outcome::Committed], "no log to write");
}

#[test]
fn a_change_without_events_reads_no_hooks() {
    let mut tx = MockTransaction::new();
    tx.expect_written_events().return_const(Vec::<Event>::new());
    tx.expect_pre_hooks().never();
    let inner = Arc::new(MockUnitOfWork::new(tx));
    let mut caller = MockHookCaller::new();
    caller.expect_call().never();
    let gate = Arc::new(HookGate::new(
        Arc::new(caller),
        Arc::new(MockSecretVault::new()),
        clock(),
        ids(),
    ));
    let gated = GatedUnitOfWork::new(inner.clone(), gate);
    let result: Result<(), ServiceError> = block_on(transact(&gated as &dyn UnitOfWork, |_tx| {
        Box::pin(async move { Ok(()) })
    }));
    assert!(result.is_ok());
    assert_eq!(inner.outcomes(), [Outcome::Committed]);
}

#[test]
fn the_hook_list_is_read_once_a_second_not_once_a_change() {
    // The clock stands still: three changes, one read of the list (`times(1)` in `run`).
    let run = run(
        vec![created()],
        vec![pre_hook("Gate", true, &["task.created"])],
        answer(Some(200), r#"{"allow": true}"#),
        3,
    );
    assert!(run.result.is_ok());
    assert_eq!(run.calls, 3, "asked at every change");
}
