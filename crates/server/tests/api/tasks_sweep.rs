//! The background escalation sweep (decision D-37), driven by a clock the test sets far
//! in the future: each reason's threshold (just under, at, just over), once per task and
//! reason, tasks that moved on or closed left alone, and two sweeps racing over the
//! same tasks.

use std::collections::BTreeSet;

use muster_domain::model::{AgentStatus, EscalationReason, OrgId, TaskId};
use muster_domain::rules::escalation::SweepThresholds;
use muster_domain::service::EscalationSweep;
use serde_json::{Value, json};
use time::{Duration, OffsetDateTime};
use uuid::Uuid;

use crate::helpers::{Agent, Org, TestApp};
use crate::stored::{all_escalations, change_agent, change_task, set_parent};
use crate::task_support::{
    TestClock, another_instance, assigned_task, escalations_of, events_typed, instant, sweep_on,
    task_of, task_service, walk,
};
use crate::task_tools::events_everywhere;

api_tests!(
    blocked_tasks_escalate_after_their_prioritys_threshold,
    stale_in_progress_tasks_escalate_after_72_hours,
    activity_keeps_an_in_progress_task_from_going_stale,
    past_due_tasks_escalate_once,
    tasks_of_an_inactive_assignee_escalate_once,
    a_task_that_moved_on_is_not_escalated,
    terminal_tasks_are_never_escalated,
    concurrent_sweeps_escalate_each_task_once_per_reason,
);

/// Far in the future: every task the tests make is old by then, unless a test sets its
/// clocks relative to this.
fn t0() -> OffsetDateTime {
    instant("2099-01-01T00:00:00.000Z")
}

/// Stamps `task`'s last activity and its last change of status at `at` (the server
/// stamps both with its real clock; no route moves them).
async fn idle_since(app: &TestApp, task: &str, at: OffsetDateTime) {
    change_task(app, task, move |t| {
        t.last_activity_at = at;
        t.status_changed_at = at;
    })
    .await;
}

/// One pass of `sweep`, as sorted `(task, reason)` pairs.
async fn run(sweep: &EscalationSweep) -> Vec<(String, String)> {
    let run_result = sweep.run_once().await.unwrap();
    assert!(run_result.failed.is_empty(), "{:?}", run_result.failed);
    let made = run_result.escalated;
    let mut pairs: Vec<(String, String)> = made
        .iter()
        .map(|e| {
            assert!(e.automatic, "{e:?}");
            (
                e.task_id.as_uuid().to_string(),
                e.reason.as_str().to_owned(),
            )
        })
        .collect();
    pairs.sort();
    pairs
}

/// Asserts `task` has exactly the automatic escalations `reasons` (oldest first), each
/// from `from` to `to`, and one `task.escalated` warning per escalation, by nobody.
async fn assert_escalated(
    app: &TestApp,
    org: &Org,
    task: &str,
    reasons: &[&str],
    from: &Agent,
    to: &Agent,
) {
    let mut listed = escalations_of(app, &org.hr, task).await;
    listed.reverse();
    let got: Vec<&Value> = listed.iter().map(|e| &e["reason"]).collect();
    assert_eq!(got, reasons, "escalations of {task}: {listed:?}");
    for (i, escalation) in listed.iter().enumerate() {
        assert_eq!(escalation["automatic"], true);
        assert_eq!(escalation["taskId"], task);
        assert_eq!(escalation["actorId"], Value::Null);
        assert_eq!(escalation["notes"], Value::Null);
        if i == 0 {
            assert_eq!(escalation["fromAgentId"], from.uuid.to_string());
        }
        assert_eq!(escalation["toAgentId"], to.uuid.to_string());
    }
    let events = events_typed(app, &org.hr, task, "task.escalated").await;
    assert_eq!(events.len(), reasons.len(), "{events:?}");
    for event in &events {
        assert_eq!(event["severity"], "warning");
        assert_eq!(event["actorId"], Value::Null);
    }
    let mut event_reasons: Vec<&str> = events
        .iter()
        .map(|e| e["payload"]["reason"].as_str().unwrap())
        .collect();
    event_reasons.sort_unstable();
    let mut expected = reasons.to_vec();
    expected.sort_unstable();
    assert_eq!(event_reasons, expected);
    assert_eq!(
        task_of(app, &org.hr, task).await["assigneeId"],
        to.uuid.to_string()
    );
}

/// Asserts `task` was never escalated.
async fn assert_not_escalated(app: &TestApp, task: &str) {
    assert!(
        escalations_of(app, &app.org.hr, task).await.is_empty(),
        "{task} was escalated"
    );
    assert!(
        events_typed(app, &app.org.hr, task, "task.escalated")
            .await
            .is_empty()
    );
}

async fn blocked_tasks_escalate_after_their_prioritys_threshold(app: &TestApp) {
    let worker = app.worker(&app.org).await;
    let mut tasks = Vec::new();
    for (priority, hours) in [("urgent", 2), ("high", 8), ("normal", 24), ("low", 72)] {
        let task = assigned_task(app, &app.org.hr, &worker, json!({ "priority": priority })).await;
        walk(app, &worker, &task, &["in_progress", "blocked"]).await;
        change_task(app, &task, |t| t.status_changed_at = t0()).await;
        tasks.push((task, hours));
    }
    let clock = TestClock::at(t0());
    let sweep = sweep_on(app, clock.clone());
    for (task, hours) in &tasks {
        let threshold = t0() + Duration::hours(*hours);
        for not_yet in [threshold - Duration::milliseconds(1), threshold] {
            clock.set(not_yet);
            assert_eq!(run(&sweep).await, [], "{hours} h at {not_yet}");
        }
        clock.set(threshold + Duration::milliseconds(1));
        assert_eq!(
            run(&sweep).await,
            [(task.clone(), "BLOCKED_TIMEOUT".to_owned())],
            "{hours} h just over"
        );
        assert_eq!(run(&sweep).await, [], "a second run makes nothing");
    }
    // Much later, still nothing more.
    clock.set(t0() + Duration::days(3650));
    assert_eq!(run(&sweep).await, []);
    for (task, _) in &tasks {
        assert_escalated(
            app,
            &app.org,
            task,
            &["BLOCKED_TIMEOUT"],
            &worker,
            &app.org.hr,
        )
        .await;
        assert_eq!(task_of(app, &app.org.hr, task).await["status"], "blocked");
    }
}

async fn stale_in_progress_tasks_escalate_after_72_hours(app: &TestApp) {
    let worker = app.worker(&app.org).await;
    let stale = assigned_task(app, &app.org.hr, &worker, json!({})).await;
    walk(app, &worker, &stale, &["in_progress"]).await;
    // Idle as long, but not in progress: never stale.
    let waiting = assigned_task(app, &app.org.hr, &worker, json!({})).await;
    let reviewed = assigned_task(app, &app.org.hr, &worker, json!({})).await;
    walk(app, &worker, &reviewed, &["in_progress", "review"]).await;
    for task in [&stale, &waiting, &reviewed] {
        idle_since(app, task, t0()).await;
    }
    let threshold = t0() + Duration::hours(72);
    let clock = TestClock::at(threshold - Duration::milliseconds(1));
    let sweep = sweep_on(app, clock.clone());
    assert_eq!(run(&sweep).await, []);
    clock.set(threshold);
    assert_eq!(run(&sweep).await, []);
    clock.set(threshold + Duration::milliseconds(1));
    assert_eq!(
        run(&sweep).await,
        [(stale.clone(), "STALE_TASK".to_owned())]
    );
    assert_eq!(run(&sweep).await, []);
    clock.set(threshold + Duration::days(30));
    assert_eq!(run(&sweep).await, []);
    assert_escalated(app, &app.org, &stale, &["STALE_TASK"], &worker, &app.org.hr).await;
    assert_not_escalated(app, &waiting).await;
    assert_not_escalated(app, &reviewed).await;
}

async fn activity_keeps_an_in_progress_task_from_going_stale(app: &TestApp) {
    // The server stamps activity with the real clock, so this sweep runs just after now
    // on tasks last touched 73 hours ago; a comment or an edit counts as activity.
    let worker = app.worker(&app.org).await;
    let long_ago = OffsetDateTime::now_utc() - Duration::hours(73);
    let mut tasks = Vec::new();
    for _ in 0..3 {
        let task = assigned_task(app, &app.org.hr, &worker, json!({})).await;
        walk(app, &worker, &task, &["in_progress"]).await;
        idle_since(app, &task, long_ago).await;
        tasks.push(task);
    }
    let (idle, commented, edited) = (&tasks[0], &tasks[1], &tasks[2]);
    let reply = app
        .post(
            &worker,
            &format!("/tasks/{commented}/comments"),
            &json!({ "body": "still on it" }).to_string(),
        )
        .await;
    assert_eq!(reply.status.as_u16(), 200, "{}", reply.text);
    let patch = json!({ "description": "narrowed down" }).to_string();
    let reply = crate::helpers::send(app.signed(
        &worker,
        reqwest::Method::PATCH,
        &format!("/tasks/{edited}"),
        Some(&patch),
    ))
    .await;
    assert_eq!(reply.status.as_u16(), 200, "{}", reply.text);

    let clock = TestClock::at(OffsetDateTime::now_utc() + Duration::minutes(1));
    let sweep = sweep_on(app, clock);
    assert_eq!(run(&sweep).await, [(idle.clone(), "STALE_TASK".to_owned())]);
    assert_escalated(app, &app.org, idle, &["STALE_TASK"], &worker, &app.org.hr).await;
    assert_not_escalated(app, commented).await;
    assert_not_escalated(app, edited).await;
}

async fn past_due_tasks_escalate_once(app: &TestApp) {
    let worker = app.worker(&app.org).await;
    let due = "2099-01-01T00:00:00.000Z";
    let mut tasks = Vec::new();
    for path in [
        &["backlog"][..],
        &[][..],
        &["in_progress"][..],
        &["in_progress", "review"][..],
        &["in_progress", "blocked"][..],
    ] {
        let task = assigned_task(app, &app.org.hr, &worker, json!({ "dueAt": due })).await;
        walk(app, &worker, &task, path).await;
        // Nothing else is due at the test's instants.
        idle_since(app, &task, t0()).await;
        tasks.push(task);
    }
    let without_due = assigned_task(app, &app.org.hr, &worker, json!({})).await;
    change_task(app, &without_due, |t| t.last_activity_at = t0()).await;

    let clock = TestClock::at(t0() - Duration::milliseconds(1));
    let sweep = sweep_on(app, clock.clone());
    assert_eq!(run(&sweep).await, []);
    clock.set(t0());
    assert_eq!(
        run(&sweep).await,
        [],
        "at the due instant it is not late yet"
    );
    clock.set(t0() + Duration::milliseconds(1));
    let mut expected: Vec<(String, String)> = tasks
        .iter()
        .map(|t| (t.clone(), "SLA_BREACH".to_owned()))
        .collect();
    expected.sort();
    assert_eq!(run(&sweep).await, expected);
    assert_eq!(run(&sweep).await, []);
    for task in &tasks {
        assert_escalated(app, &app.org, task, &["SLA_BREACH"], &worker, &app.org.hr).await;
    }
    assert_not_escalated(app, &without_due).await;
}

async fn tasks_of_an_inactive_assignee_escalate_once(app: &TestApp) {
    let suspended = app.worker(&app.org).await;
    let revoked = app.worker(&app.org).await;
    let parent = app.worker(&app.org).await;
    let orphaned_child = app.worker(&app.org).await;
    set_parent(app, &orphaned_child, &parent).await;
    let active = app.worker(&app.org).await;
    let foreign = app.worker(&app.other).await;

    let of_suspended = assigned_task(app, &app.org.hr, &suspended, json!({})).await;
    let of_revoked = assigned_task(app, &app.org.hr, &revoked, json!({})).await;
    walk(app, &revoked, &of_revoked, &["in_progress", "review"]).await;
    let of_child = assigned_task(app, &app.org.hr, &orphaned_child, json!({})).await;
    let of_active = assigned_task(app, &app.org.hr, &active, json!({})).await;
    let of_foreign = assigned_task(app, &app.other.hr, &foreign, json!({})).await;
    // Closed tasks of a suspended agent stay as they are.
    let closed = assigned_task(app, &app.org.hr, &suspended, json!({})).await;
    walk(app, &suspended, &closed, &["cancelled"]).await;

    change_agent(app, &suspended, |a| a.status = AgentStatus::Suspended).await;
    change_agent(app, &revoked, |a| a.status = AgentStatus::Revoked).await;
    change_agent(app, &orphaned_child, |a| a.status = AgentStatus::Suspended).await;
    change_agent(app, &foreign, |a| a.status = AgentStatus::Suspended).await;

    // Soon after now: nothing else is due.
    let clock = TestClock::at(OffsetDateTime::now_utc() + Duration::minutes(1));
    let sweep = sweep_on(app, clock.clone());
    let mut expected: Vec<(String, String)> = [&of_suspended, &of_revoked, &of_child, &of_foreign]
        .into_iter()
        .map(|t| (t.clone(), "ASSIGNEE_INACTIVE".to_owned()))
        .collect();
    expected.sort();
    assert_eq!(run(&sweep).await, expected);
    assert_eq!(run(&sweep).await, []);

    let reason = ["ASSIGNEE_INACTIVE"];
    assert_escalated(
        app,
        &app.org,
        &of_suspended,
        &reason,
        &suspended,
        &app.org.hr,
    )
    .await;
    assert_escalated(app, &app.org, &of_revoked, &reason, &revoked, &app.org.hr).await;
    assert_escalated(app, &app.org, &of_child, &reason, &orphaned_child, &parent).await;
    // The other organization's task goes to its own senior agent.
    assert_escalated(
        app,
        &app.other,
        &of_foreign,
        &reason,
        &foreign,
        &app.other.hr,
    )
    .await;
    assert_not_escalated(app, &of_active).await;
    assert_not_escalated(app, &closed).await;
}

async fn a_task_that_moved_on_is_not_escalated(app: &TestApp) {
    let worker = app.worker(&app.org).await;
    let org = OrgId::from_uuid(app.org.id);
    // Blocked long ago, then unblocked and sent to review: nothing applies any more.
    let unblocked = assigned_task(app, &app.org.hr, &worker, json!({ "priority": "urgent" })).await;
    walk(app, &worker, &unblocked, &["in_progress", "blocked"]).await;
    change_task(app, &unblocked, |t| t.status_changed_at = t0()).await;
    walk(app, &worker, &unblocked, &["in_progress", "review"]).await;
    let clock = TestClock::at(t0() + Duration::days(365));
    let sweep = sweep_on(app, clock.clone());
    assert_eq!(run(&sweep).await, []);
    assert_not_escalated(app, &unblocked).await;

    // The sweep re-checks each task on its locked row: a task its query found that
    // moved meanwhile is left alone.
    let service = task_service(&app.db().db, clock.clone());
    let thresholds = SweepThresholds::default();
    let now = clock_now(&clock);
    let id = TaskId::from_uuid(Uuid::parse_str(&unblocked).unwrap());
    for reason in [
        EscalationReason::BlockedTimeout,
        EscalationReason::StaleTask,
        EscalationReason::SlaBreach,
        EscalationReason::AssigneeInactive,
    ] {
        let made = service
            .escalate_overdue(org, id, reason, thresholds, now)
            .await
            .unwrap();
        assert_eq!(made, None, "{reason:?}");
    }
    // A due date moved later is not breached; an assignee reactivated is not inactive.
    let postponed = assigned_task(
        app,
        &app.org.hr,
        &worker,
        json!({ "dueAt": "2099-01-01T00:00:00.000Z" }),
    )
    .await;
    let postponed_id = TaskId::from_uuid(Uuid::parse_str(&postponed).unwrap());
    let patch = json!({ "dueAt": "2100-06-01T00:00:00.000Z" }).to_string();
    let reply = crate::helpers::send(app.signed(
        &app.org.hr,
        reqwest::Method::PATCH,
        &format!("/tasks/{postponed}"),
        Some(&patch),
    ))
    .await;
    assert_eq!(reply.status.as_u16(), 200, "{}", reply.text);
    let made = service
        .escalate_overdue(
            org,
            postponed_id,
            EscalationReason::SlaBreach,
            thresholds,
            now,
        )
        .await
        .unwrap();
    assert_eq!(made, None);
    // Unknown tasks and tasks of another organization are nothing to do.
    let unknown = TaskId::from_uuid(Uuid::now_v7());
    let made = service
        .escalate_overdue(org, unknown, EscalationReason::SlaBreach, thresholds, now)
        .await
        .unwrap();
    assert_eq!(made, None);
    let other = OrgId::from_uuid(app.other.id);
    let made = service
        .escalate_overdue(
            other,
            postponed_id,
            EscalationReason::StaleTask,
            thresholds,
            now,
        )
        .await
        .unwrap();
    assert_eq!(made, None);
    assert_eq!(run(&sweep).await, []);
    assert_not_escalated(app, &postponed).await;
    let escalations = all_escalations(app).await;
    assert!(escalations.is_empty(), "{escalations:?}");
}

fn clock_now(clock: &TestClock) -> OffsetDateTime {
    muster_domain::ports::Clock::now(clock)
}

async fn terminal_tasks_are_never_escalated(app: &TestApp) {
    let worker = app.worker(&app.org).await;
    let org = OrgId::from_uuid(app.org.id);
    let mut closed = Vec::new();
    for path in [
        &["in_progress", "done"][..],
        &["in_progress", "review", "done"][..],
        &["cancelled"][..],
        &["in_progress", "blocked", "cancelled"][..],
    ] {
        let task = assigned_task(
            app,
            &app.org.hr,
            &worker,
            json!({ "dueAt": "2098-01-01T00:00:00.000Z" }),
        )
        .await;
        walk(app, &worker, &task, path).await;
        idle_since(app, &task, instant("2000-01-01T00:00:00.000Z")).await;
        closed.push(task);
    }
    change_agent(app, &worker, |a| a.status = AgentStatus::Suspended).await;
    let clock = TestClock::at(t0() + Duration::days(3650));
    let sweep = sweep_on(app, clock.clone());
    assert_eq!(run(&sweep).await, []);
    let service = task_service(&app.db().db, clock.clone());
    for task in &closed {
        let id = TaskId::from_uuid(Uuid::parse_str(task).unwrap());
        for reason in EscalationReason::ALL {
            let made = service
                .escalate_overdue(
                    org,
                    id,
                    reason,
                    SweepThresholds::default(),
                    clock_now(&clock),
                )
                .await
                .unwrap();
            assert_eq!(made, None, "{task} {reason:?}");
        }
        assert_not_escalated(app, task).await;
    }
}

async fn concurrent_sweeps_escalate_each_task_once_per_reason(app: &TestApp) {
    const TASKS: usize = 20;
    const INACTIVE: usize = 5;
    let worker = app.worker(&app.org).await;
    let gone = app.worker(&app.org).await;
    let due = "2099-01-01T00:00:00.000Z";
    let mut expected = BTreeSet::new();
    let mut blocked = Vec::new();
    for _ in 0..TASKS {
        // Blocked for 100 h (normal: 24 h) and past due: two reasons.
        let task = assigned_task(app, &app.org.hr, &worker, json!({ "dueAt": due })).await;
        walk(app, &worker, &task, &["in_progress", "blocked"]).await;
        change_task(app, &task, |t| {
            t.status_changed_at = t0() - Duration::hours(100);
        })
        .await;
        expected.insert((task.clone(), "BLOCKED_TIMEOUT".to_owned()));
        expected.insert((task.clone(), "SLA_BREACH".to_owned()));
        blocked.push(task);
    }
    let mut orphaned = Vec::new();
    for _ in 0..INACTIVE {
        let task = assigned_task(app, &app.org.hr, &gone, json!({})).await;
        expected.insert((task.clone(), "ASSIGNEE_INACTIVE".to_owned()));
        orphaned.push(task);
    }
    change_agent(app, &gone, |a| a.status = AgentStatus::Suspended).await;

    // Two instances of the service, each with its own connections, at the same instant.
    let clock = TestClock::at(t0() + Duration::hours(1));
    let first = EscalationSweep::new(
        task_service(&another_instance(app).await, clock.clone()),
        SweepThresholds::default(),
    );
    let second = EscalationSweep::new(
        task_service(&another_instance(app).await, clock.clone()),
        SweepThresholds::default(),
    );
    let (a, b) = tokio::join!(first.run_once(), second.run_once());
    let (a, b) = (a.unwrap().escalated, b.unwrap().escalated);
    let mut made: Vec<(String, String)> = a
        .iter()
        .chain(&b)
        .map(|e| {
            (
                e.task_id.as_uuid().to_string(),
                e.reason.as_str().to_owned(),
            )
        })
        .collect();
    made.sort();
    let unique: BTreeSet<(String, String)> = made.iter().cloned().collect();
    assert_eq!(made.len(), unique.len(), "a task escalated twice: {made:?}");
    assert_eq!(unique, expected);

    // The store agrees: one automatic escalation and one event per task and reason.
    let automatic = all_escalations(app)
        .await
        .into_iter()
        .filter(|e| e.automatic)
        .count();
    assert_eq!(automatic, expected.len());
    assert_eq!(
        events_everywhere(app, "task.escalated").await,
        u64::try_from(expected.len()).unwrap()
    );
    for task in &blocked {
        let reasons: BTreeSet<String> = escalations_of(app, &app.org.hr, task)
            .await
            .iter()
            .map(|e| e["reason"].as_str().unwrap().to_owned())
            .collect();
        assert_eq!(
            reasons,
            BTreeSet::from(["BLOCKED_TIMEOUT".to_owned(), "SLA_BREACH".to_owned()])
        );
    }
    for task in &orphaned {
        assert_escalated(
            app,
            &app.org,
            task,
            &["ASSIGNEE_INACTIVE"],
            &gone,
            &app.org.hr,
        )
        .await;
    }

    // Racing again finds nothing.
    let (a, b) = tokio::join!(first.run_once(), second.run_once());
    assert!(a.unwrap().escalated.is_empty());
    assert!(b.unwrap().escalated.is_empty());
}
