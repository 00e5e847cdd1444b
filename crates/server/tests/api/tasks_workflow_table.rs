//! The whole transition table through HTTP (decision D-30): all 49 (from, to) pairs, the
//! reason in the audit trail (D-5, D-70), blocking dependencies (D-31) and many
//! simultaneous moves of one task.

use futures_util::future::join_all;
use serde_json::{Value, json};

use crate::helpers::{Reply, TestApp, assert_error, assert_error_exact};
use crate::task_tools::{depend, move_ok, set_status, task_state, task_with, types};

api_tests!(
    all_49_pairs_follow_the_table,
    reason_is_recorded_and_limited_to_2000_characters,
    blocking_dependencies_hold_back_work_review_and_done,
    non_blocking_dependencies_never_block,
    concurrent_moves_of_one_task_have_one_winner_per_step,
);

const STATUSES: [&str; 7] = [
    "backlog",
    "todo",
    "in_progress",
    "review",
    "done",
    "blocked",
    "cancelled",
];

/// The contract's table, row by row.
const ALLOWED: [(&str, &str); 15] = [
    ("backlog", "todo"),
    ("backlog", "cancelled"),
    ("todo", "in_progress"),
    ("todo", "backlog"),
    ("todo", "cancelled"),
    ("in_progress", "review"),
    ("in_progress", "blocked"),
    ("in_progress", "todo"),
    ("in_progress", "done"),
    ("in_progress", "cancelled"),
    ("review", "done"),
    ("review", "in_progress"),
    ("review", "cancelled"),
    ("blocked", "in_progress"),
    ("blocked", "cancelled"),
];

async fn all_49_pairs_follow_the_table(app: &TestApp) {
    let hr = &app.org.hr;
    let worker = app.worker(&app.org).await;
    // One task per pair, each assigned (so that closing moves settle an assignee too),
    // put into its `from` status.
    let mut pairs = Vec::new();
    for from in STATUSES {
        for to in STATUSES {
            let body = json!({ "title": format!("{from} -> {to}"), "assigneeId": worker.uuid });
            pairs.push((from, to, task_with(app, hr, &body).await));
        }
    }
    assert_eq!(pairs.len(), 49);
    for from in STATUSES {
        let ids: Vec<&str> = pairs
            .iter()
            .filter(|(f, _, _)| *f == from)
            .map(|(_, _, id)| id.as_str())
            .collect();
        set_status(app, &ids, from).await;
    }

    let mut legal = 0;
    for (from, to, id) in &pairs {
        let before = task_state(app, hr, id).await;
        assert_eq!(before.0["status"], *from);
        let reason = format!("moving {from} to {to}");
        let body = json!({ "status": to, "reason": reason }).to_string();
        let reply = app.transition(hr, id, &body).await;
        if ALLOWED.contains(&(from, to)) {
            legal += 1;
            assert_eq!(reply.status.as_u16(), 200, "{from} -> {to}: {}", reply.text);
            let task = reply.data();
            assert_eq!(task["status"], *to, "{from} -> {to}");
            assert_eq!(app.get(hr, &format!("/tasks/{id}")).await.data(), task);
            let events = app.events_of(hr, id).await;
            let new = &events[..events.len() - before.1.len()];
            let expected: &[&str] = match *to {
                "done" => &["task.done", "task.transitioned"],
                "cancelled" => &["task.cancelled", "task.transitioned"],
                _ => &["task.transitioned"],
            };
            assert_eq!(types(new), expected, "{from} -> {to}");
            for event in new {
                assert_eq!(
                    event["payload"],
                    json!({ "from": from, "to": to, "reason": reason }),
                    "{from} -> {to}"
                );
                assert_eq!(event["actorId"], hr.uuid.to_string());
                assert_eq!(event["createdAt"], task["updatedAt"]);
            }
        } else {
            assert_error_exact(&reply, 409, &format!("Invalid transition: {from} -> {to}"));
            assert_eq!(
                task_state(app, hr, id).await,
                before,
                "{from} -> {to} changed something"
            );
        }
    }
    assert_eq!(legal, ALLOWED.len());
}

async fn reason_is_recorded_and_limited_to_2000_characters(app: &TestApp) {
    let hr = &app.org.hr;
    let id = app.task_titled(hr, "why").await;
    move_ok(app, hr, &id, "in_progress").await;

    // Too long: refused whatever the move, nothing written.
    let before = task_state(app, hr, &id).await;
    for to in ["blocked", "review", "done", "cancelled", "todo"] {
        let body = json!({ "status": to, "reason": "r".repeat(2001) }).to_string();
        assert_error_exact(
            &app.transition(hr, &id, &body).await,
            400,
            "reason must be at most 2000 characters",
        );
    }
    // Characters, not bytes: 2001 two-byte characters are too many too.
    let body = json!({ "status": "blocked", "reason": "é".repeat(2001) }).to_string();
    assert_error_exact(
        &app.transition(hr, &id, &body).await,
        400,
        "reason must be at most 2000 characters",
    );
    assert_eq!(task_state(app, hr, &id).await, before);

    // 2000 characters of any width are recorded as given.
    let reason = "é".repeat(2000);
    let body = json!({ "status": "blocked", "reason": reason }).to_string();
    assert_eq!(
        app.transition(hr, &id, &body).await.data()["status"],
        "blocked"
    );
    let events = app.events_of(hr, &id).await;
    assert_eq!(events[0]["payload"]["reason"], reason);

    // An empty reason is kept as given; a missing one is null.
    let body = json!({ "status": "in_progress", "reason": "" }).to_string();
    app.transition(hr, &id, &body).await.data();
    assert_eq!(app.events_of(hr, &id).await[0]["payload"]["reason"], "");
    move_ok(app, hr, &id, "review").await;
    assert_eq!(
        app.events_of(hr, &id).await[0]["payload"]["reason"],
        Value::Null
    );
    // A reason with markup and newlines is data, stored byte for byte.
    let reason = "line 1\nline \"2\" <b>&amp;</b> \u{1F600}";
    let body = json!({ "status": "cancelled", "reason": reason }).to_string();
    app.transition(hr, &id, &body).await.data();
    let events = app.events_of(hr, &id).await;
    assert_eq!(types(&events[..2]), ["task.cancelled", "task.transitioned"]);
    assert_eq!(events[0]["payload"]["reason"], reason);
    assert_eq!(events[1]["payload"]["reason"], reason);
}

/// The 409 of a move held back by open blocking dependencies, naming each of `open`.
#[track_caller]
fn assert_blocked_by(reply: &Reply, open: &[&str]) {
    assert_error(reply, 409, "Task has open blocking dependencies: ");
    let message = reply.body["message"].as_str().unwrap();
    for id in open {
        assert!(message.contains(id), "{message} does not name {id}");
    }
    let named = message
        .trim_start_matches("Task has open blocking dependencies: ")
        .split(", ")
        .count();
    assert_eq!(named, open.len(), "{message}");
}

async fn blocking_dependencies_hold_back_work_review_and_done(app: &TestApp) {
    let hr = &app.org.hr;
    let dep = app.task_titled(hr, "dependency").await;
    let task = app.task_titled(hr, "waits").await;
    let added = depend(app, hr, &task, &dep, true).await;
    assert_eq!(added["blocking"], true);

    // todo -> in_progress is held back.
    let before = task_state(app, hr, &task).await;
    let reply = app
        .transition(hr, &task, r#"{"status":"in_progress"}"#)
        .await;
    assert_blocked_by(&reply, &[&dep]);
    assert_eq!(task_state(app, hr, &task).await, before);

    // From every status with a move to in_progress, review or done, those moves are
    // held back; the others are not.
    for (from, to) in [
        ("in_progress", "review"),
        ("in_progress", "done"),
        ("review", "done"),
        ("review", "in_progress"),
        ("blocked", "in_progress"),
    ] {
        set_status(app, &[&task], from).await;
        let before = task_state(app, hr, &task).await;
        let reply = app
            .transition(hr, &task, &json!({ "status": to }).to_string())
            .await;
        assert_blocked_by(&reply, &[&dep]);
        assert_eq!(task_state(app, hr, &task).await, before, "{from} -> {to}");
    }
    for (from, to) in [
        ("todo", "backlog"),
        ("backlog", "todo"),
        ("in_progress", "blocked"),
        ("in_progress", "todo"),
        ("review", "cancelled"),
    ] {
        set_status(app, &[&task], from).await;
        move_ok(app, hr, &task, to).await;
    }

    // A second open dependency is named as well.
    let task = app.task_titled(hr, "waits for two").await;
    let other = app.task_titled(hr, "other dependency").await;
    depend(app, hr, &task, &dep, true).await;
    depend(app, hr, &task, &other, true).await;
    let reply = app
        .transition(hr, &task, r#"{"status":"in_progress"}"#)
        .await;
    assert_blocked_by(&reply, &[&dep, &other]);

    // Work on a dependency is not enough; neither is review, nor cancelling it.
    move_ok(app, hr, &dep, "in_progress").await;
    let reply = app
        .transition(hr, &task, r#"{"status":"in_progress"}"#)
        .await;
    assert_blocked_by(&reply, &[&dep, &other]);
    move_ok(app, hr, &dep, "review").await;
    move_ok(app, hr, &other, "cancelled").await;
    let reply = app
        .transition(hr, &task, r#"{"status":"in_progress"}"#)
        .await;
    assert_blocked_by(&reply, &[&dep, &other]);

    // Done satisfies it: only the cancelled one is still named.
    move_ok(app, hr, &dep, "done").await;
    let reply = app
        .transition(hr, &task, r#"{"status":"in_progress"}"#)
        .await;
    assert_error_exact(
        &reply,
        409,
        &format!("Task has open blocking dependencies: {other}"),
    );

    // With every blocking dependency done, the whole way is open.
    let free = app.task_titled(hr, "free").await;
    depend(app, hr, &free, &dep, true).await;
    for to in ["in_progress", "review", "in_progress", "review", "done"] {
        move_ok(app, hr, &free, to).await;
    }
}

async fn non_blocking_dependencies_never_block(app: &TestApp) {
    let hr = &app.org.hr;
    let dep = app.task_titled(hr, "informational").await;
    let task = app.task_titled(hr, "goes ahead").await;
    let added = depend(app, hr, &task, &dep, false).await;
    assert_eq!(added["blocking"], false);
    // `blocking` defaults to false.
    let other = app.task_titled(hr, "also informational").await;
    let body = json!({ "dependsOnId": other }).to_string();
    let added = app
        .post(hr, &format!("/tasks/{task}/dependencies"), &body)
        .await;
    assert_eq!(added.data()["blocking"], false);
    for to in ["in_progress", "blocked", "in_progress", "review", "done"] {
        move_ok(app, hr, &task, to).await;
    }
    assert_eq!(
        app.get(hr, &format!("/tasks/{dep}")).await.data()["status"],
        "todo"
    );
}

/// Sends every body in `bodies` as a move of `task` at once; answers the replies.
async fn all_at_once(app: &TestApp, task: &str, bodies: &[&str]) -> Vec<Reply> {
    let hr = &app.org.hr;
    join_all(bodies.iter().map(|body| app.transition(hr, task, body))).await
}

/// The one successful reply among `replies`, asserting every other one is a 409.
#[track_caller]
fn one_winner(replies: &[Reply], round: &str) -> Value {
    let texts: Vec<&String> = replies.iter().map(|r| &r.text).collect();
    let won: Vec<&Reply> = replies
        .iter()
        .filter(|r| r.status.as_u16() == 200)
        .collect();
    assert_eq!(won.len(), 1, "{round}: {texts:?}");
    for reply in replies.iter().filter(|r| r.status.as_u16() != 200) {
        assert_error(reply, 409, "");
    }
    won[0].data().clone()
}

async fn concurrent_moves_of_one_task_have_one_winner_per_step(app: &TestApp) {
    let hr = &app.org.hr;
    let worker = app.worker(&app.org).await;
    // The HR agent pays the task's reward into escrow (decision D-101).
    crate::agent_support::grant(app, &app.org, hr, 10).await;
    let id = task_with(
        app,
        hr,
        &json!({ "title": "contended", "assigneeId": worker.uuid }),
    )
    .await;
    let mut winners = Vec::new();

    // 20 identical starts.
    let replies = all_at_once(app, &id, &[r#"{"status":"in_progress"}"#; 20]).await;
    let task = one_winner(&replies, "start");
    assert_eq!(task["status"], "in_progress");
    winners.push(("todo", "in_progress"));

    // 10 to review and 10 to blocked, interleaved: once one lands, the others are
    // illegal from there.
    let mixed: Vec<&str> = (0..20)
        .map(|i| {
            if i % 2 == 0 {
                r#"{"status":"review"}"#
            } else {
                r#"{"status":"blocked"}"#
            }
        })
        .collect();
    let replies = all_at_once(app, &id, &mixed).await;
    let task = one_winner(&replies, "review or blocked");
    let second = if task["status"] == "review" {
        "review"
    } else {
        "blocked"
    };
    assert_eq!(task["status"], second);
    winners.push(("in_progress", second));

    // 20 back to work: legal from either, once.
    let replies = all_at_once(app, &id, &[r#"{"status":"in_progress"}"#; 20]).await;
    assert_eq!(one_winner(&replies, "resume")["status"], "in_progress");
    winners.push((second, "in_progress"));

    // 10 done and 10 cancelled: both close the task, so exactly one lands.
    let closing: Vec<&str> = (0..20)
        .map(|i| {
            if i % 2 == 0 {
                r#"{"status":"done"}"#
            } else {
                r#"{"status":"cancelled"}"#
            }
        })
        .collect();
    let replies = all_at_once(app, &id, &closing).await;
    let task = one_winner(&replies, "close");
    let last = if task["status"] == "done" {
        "done"
    } else {
        "cancelled"
    };
    winners.push(("in_progress", last));

    // The log holds exactly one transition per step that won, in order.
    let events = app.events_of(hr, &id).await;
    let moves: Vec<(String, String)> = events
        .iter()
        .rev()
        .filter(|e| e["type"] == "task.transitioned")
        .map(|e| {
            (
                e["payload"]["from"].as_str().unwrap().to_owned(),
                e["payload"]["to"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let expected: Vec<(String, String)> = winners
        .iter()
        .map(|(f, t)| ((*f).to_owned(), (*t).to_owned()))
        .collect();
    assert_eq!(moves, expected);
    let closing_type = format!("task.{last}");
    assert_eq!(
        events.iter().filter(|e| e["type"] == closing_type).count(),
        1
    );
    let of_task = events
        .iter()
        .filter(|e| e["type"].as_str().is_some_and(|t| t.starts_with("task.")))
        .count();
    assert_eq!(of_task, 1 + 4 + 1, "created, four moves, one closing event");
    // The escrow went in once, and came back once if the task was cancelled.
    let credits = |kind: &str| events.iter().filter(|e| e["type"] == kind).count();
    assert_eq!(credits("credits.escrowed"), 1);
    assert_eq!(
        credits("credits.refunded"),
        usize::from(last == "cancelled")
    );
    let stored = app.get(hr, &format!("/tasks/{id}")).await;
    assert_eq!(stored.data()["status"], last);

    // A done task pays its assignee once, however many asked to finish it.
    let earned = app
        .get(
            hr,
            &format!("/events?type=credits.earned&entityId={}", worker.uuid),
        )
        .await;
    let expected = u64::from(last == "done");
    assert_eq!(earned.body["meta"]["total"], expected, "{}", earned.text);
}
