//! How runs end without their agent (decision D-106): a lapsed lease loses the run and
//! releases what it held; a cancelled or reassigned task asks it to stop; the run's
//! heartbeat keeps its task's lease.

use serde_json::{Value, json};

use crate::helpers::{TestApp, str_of};
use crate::runs_support::{funded_worker, money_of, run_of, running, start_run};
use crate::task_support::{TestClock, task_of, task_service};

api_tests!(
    a_lapsed_lease_loses_the_run_and_releases_its_hold,
    a_cancelled_or_reassigned_task_asks_its_run_to_stop,
);

fn seconds_until(stamp: &str) -> i64 {
    let at = crate::task_support::instant(stamp);
    (at - time::OffsetDateTime::now_utc()).whole_seconds()
}

async fn a_lapsed_lease_loses_the_run_and_releases_its_hold(app: &TestApp) {
    let worker = funded_worker(app, 50).await;
    let (balance, _, _) = money_of(app, &worker).await;
    let task = app.task_titled(&app.org.hr, "leased").await;
    let claimed = app
        .post(&worker, "/tasks/claim", r#"{"leaseSeconds": 60}"#)
        .await;
    assert_eq!(str_of(claimed.data(), "id"), task);
    let run = str_of(
        &start_run(app, &worker, &task, &json!({"reserveCredits": 30})).await,
        "id",
    );
    assert_eq!(money_of(app, &worker).await, (balance, 30, false));
    // The run's heartbeat extends its task's lease.
    let beat = app
        .post(
            &worker,
            &format!("/runs/{run}/heartbeat"),
            r#"{"leaseSeconds": 120}"#,
        )
        .await;
    assert_eq!(beat.data()["status"], "running");
    let lease = seconds_until(&str_of(
        &task_of(app, &worker, &task).await,
        "leaseExpiresAt",
    ));
    assert!((100..=120).contains(&lease), "{lease}");
    // Five minutes on, the expiry job hands the task back and loses the run.
    let clock = TestClock::at(time::OffsetDateTime::now_utc() + time::Duration::minutes(5));
    let tasks = task_service(&app.db().db, clock);
    let org = muster_domain::model::OrgId::from_uuid(app.org.id);
    let expired = tasks.expire_leases(Some(org), 100).await.unwrap();
    assert_eq!(expired.len(), 1);
    let lost = run_of(app, &worker, &run).await;
    assert_eq!(lost["status"], "lost", "{lost}");
    assert_eq!(lost["reservedCredits"], 0);
    assert_ne!(lost["endedAt"], Value::Null);
    assert_eq!(money_of(app, &worker).await, (balance, 0, false));
    assert_eq!(task_of(app, &worker, &task).await["status"], "todo");
    let finished = app.events_of_type(&app.org.hr, &run, "run.finished").await;
    assert_eq!(finished.len(), 1);
    assert_eq!(finished[0]["payload"]["status"], "lost");
    // A lost run takes no more.
    let late = app
        .post(
            &worker,
            &format!("/runs/{run}/finish"),
            r#"{"status":"succeeded"}"#,
        )
        .await;
    crate::helpers::assert_error_code(&late, 409, "run_closed");
}

async fn a_cancelled_or_reassigned_task_asks_its_run_to_stop(app: &TestApp) {
    let hr = &app.org.hr;
    let (worker, task, run) = running(app, 0, &json!({})).await;
    let cancelled = app
        .transition(hr, &task, r#"{"status":"cancelled","reason":"not needed"}"#)
        .await;
    assert_eq!(cancelled.data()["status"], "cancelled");
    let asked = run_of(app, &worker, &run).await;
    assert_eq!(asked["stopRequested"], true);
    assert_eq!(asked["stopReason"], "cancelled");
    assert_eq!(asked["status"], "running", "the agent finishes it");
    // Its agent learns it from any answer, and finishes it.
    let beat = app
        .post(&worker, &format!("/runs/{run}/heartbeat"), "")
        .await;
    assert_eq!(beat.data()["stopReason"], "cancelled");
    let done = app
        .post(
            &worker,
            &format!("/runs/{run}/finish"),
            r#"{"status":"cancelled"}"#,
        )
        .await;
    assert_eq!(done.data()["status"], "cancelled");

    let (worker, task, run) = running(app, 0, &json!({})).await;
    let other = funded_worker(app, 0).await;
    let body = json!({"assigneeId": other.uuid}).to_string();
    let moved = app.post(hr, &format!("/tasks/{task}/assign"), &body).await;
    assert_eq!(moved.status.as_u16(), 200, "{}", moved.text);
    let asked = run_of(app, &worker, &run).await;
    assert_eq!(asked["stopRequested"], true);
    assert_eq!(asked["stopReason"], "reassigned");
    let events = app.events_of_type(hr, &run, "run.stop_requested").await;
    assert_eq!(events.len(), 1);
    assert_eq!(events[0]["payload"]["reason"], "reassigned");
}
