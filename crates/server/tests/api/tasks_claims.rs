//! `POST /tasks/claim` and `POST /tasks/:id/heartbeat`: an agent gets the best
//! claimable task (priority, then age; capabilities; dependencies), assigned and started
//! at once with a lease; heartbeats extend it; a silent claimer's task goes back to
//! `todo`; however many claimers race, on one instance or two, each task is claimed
//! once.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use reqwest::Method;
use serde_json::{Value, json};

use crate::helpers::{Agent, TestApp, assert_error, assert_error_exact, send, str_of};
use crate::task_support::{TestClock, task_service};

api_tests!(
    a_claim_gets_the_best_task_and_starts_it,
    claims_honour_capabilities_and_dependencies,
    bad_claims_are_refused_and_change_nothing,
    heartbeats_extend_only_the_holders_lease,
    a_silent_claimer_loses_its_task,
    the_expiry_job_hands_back_run_out_leases,
    racing_claimers_claim_each_task_once,
    claimers_on_two_instances_claim_each_task_once,
);

async fn claim(app: &TestApp, agent: &Agent, body: &str) -> crate::helpers::Reply {
    app.post(agent, "/tasks/claim", body).await
}

async fn create(app: &TestApp, body: &Value) -> String {
    str_of(&app.create_task(&app.org.hr, body).await, "id")
}

fn seconds_until(stamp: &str) -> i64 {
    let at =
        time::OffsetDateTime::parse(stamp, &time::format_description::well_known::Rfc3339).unwrap();
    (at - time::OffsetDateTime::now_utc()).whole_seconds()
}

async fn a_claim_gets_the_best_task_and_starts_it(app: &TestApp) {
    let worker = app.add_agent(&app.org, "worker", "active").await;
    let low = create(app, &json!({"title": "low", "priority": "low"})).await;
    let first_urgent = create(app, &json!({"title": "urgent 1", "priority": "urgent"})).await;
    let normal = create(app, &json!({"title": "normal"})).await;
    let second_urgent = create(app, &json!({"title": "urgent 2", "priority": "urgent"})).await;
    let taken = create(
        app,
        &json!({"title": "taken", "priority": "urgent",
                                      "assigneeId": app.org.hr.uuid}),
    )
    .await;

    let reply = claim(app, &worker, "").await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    let data = reply.data();
    assert_eq!(
        str_of(data, "id"),
        first_urgent,
        "urgent first, then oldest"
    );
    assert_eq!(data["status"], "in_progress");
    assert_eq!(str_of(data, "assigneeId"), worker.uuid.to_string());
    let left = seconds_until(&str_of(data, "leaseExpiresAt"));
    assert!((890..=900).contains(&left), "15 minutes by default: {left}");
    // The lease shows on the task wherever it is read; an unclaimed task has none.
    let read = app.get(&worker, &format!("/tasks/{first_urgent}")).await;
    assert_eq!(read.data()["leaseExpiresAt"], data["leaseExpiresAt"]);
    let unclaimed = app.get(&worker, &format!("/tasks/{low}")).await;
    assert!(
        unclaimed.data().get("leaseExpiresAt").is_none(),
        "{}",
        unclaimed.text
    );
    let events = app.events_of(&app.org.hr, &first_urgent).await;
    let types: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(
        types,
        [
            "task.transitioned",
            "task.claimed",
            "task.assigned",
            "task.created"
        ],
        "newest first"
    );
    assert_eq!(events[1]["payload"]["agentId"], worker.uuid.to_string());
    assert_eq!(events[1]["actorId"], worker.uuid.to_string());
    assert_eq!(events[0]["payload"]["reason"], "claimed");

    let order: Vec<String> = [
        claim(app, &worker, "{}").await,
        claim(app, &worker, r#"{"leaseSeconds": 60}"#).await,
        claim(app, &worker, "").await,
    ]
    .iter()
    .map(|r| str_of(r.data(), "id"))
    .collect();
    assert_eq!(order, [second_urgent, normal, low]);
    let none = claim(app, &worker, "").await;
    assert_eq!(none.status, 204, "{}", none.text);
    assert!(none.text.is_empty());
    let untouched = app.get(&app.org.hr, &format!("/tasks/{taken}")).await;
    assert_eq!(
        untouched.data()["status"],
        "todo",
        "an assigned task is not claimable"
    );
    // The other organization's work is not this agent's to claim.
    let theirs = app.add_agent(&app.other, "worker", "active").await;
    assert_eq!(claim(app, &theirs, "").await.status, 204);
}

async fn claims_honour_capabilities_and_dependencies(app: &TestApp) {
    let worker = app.add_agent(&app.org, "worker", "active").await;
    let needs_rust = create(
        app,
        &json!({"title": "needs rust", "priority": "urgent",
                "metadata": {"requiredCapabilities": [{"capability": "Rust", "minProficiency": "expert"}]}}),
    )
    .await;
    let blocker = create(app, &json!({"title": "blocker", "priority": "low"})).await;
    let waiting = create(app, &json!({"title": "blocked", "priority": "high"})).await;
    let reply = app
        .post(
            &app.org.hr,
            &format!("/tasks/{waiting}/dependencies"),
            &json!({"dependsOnId": blocker, "blocking": true}).to_string(),
        )
        .await;
    assert_eq!(reply.status, 200, "{}", reply.text);

    // No capability: only the blocker is claimable (the blocked one waits for it).
    let first = claim(app, &worker, "").await;
    assert_eq!(str_of(first.data(), "id"), blocker);
    assert_eq!(claim(app, &worker, "").await.status, 204);
    let added = app
        .post(
            &app.org.hr,
            &format!("/agents/{}/capabilities", worker.uuid),
            &json!({"capability": "rust", "proficiency": "standard"}).to_string(),
        )
        .await;
    assert_eq!(added.status, 200, "{}", added.text);
    assert_eq!(
        claim(app, &worker, "").await.status,
        204,
        "standard is below expert"
    );
    let capability = app
        .get(
            &app.org.hr,
            &format!("/agents/{}/capabilities", worker.uuid),
        )
        .await;
    let cap_id = str_of(&capability.list()[0], "id");
    let reply = send(app.signed(
        &app.org.hr,
        Method::PATCH,
        &format!("/agents/capabilities/{cap_id}"),
        Some(r#"{"proficiency": "expert"}"#),
    ))
    .await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    let narrowed = claim(app, &worker, r#"{"capabilities": ["python"]}"#).await;
    assert_eq!(narrowed.status, 204, "claiming with python only");
    let with_rust = claim(app, &worker, r#"{"capabilities": ["RUST"]}"#).await;
    assert_eq!(str_of(with_rust.data(), "id"), needs_rust);

    // Once the blocker is done, the blocked task is claimable.
    let done = app
        .transition(&app.org.hr, &blocker, r#"{"status": "done"}"#)
        .await;
    assert_eq!(done.status, 200, "{}", done.text);
    assert_eq!(str_of(claim(app, &worker, "").await.data(), "id"), waiting);
}

async fn bad_claims_are_refused_and_change_nothing(app: &TestApp) {
    let task = create(app, &json!({"title": "only one"})).await;
    let worker = app.add_agent(&app.org, "worker", "active").await;
    for (body, message) in [
        (
            r#"{"leaseSeconds": 0}"#,
            "leaseSeconds must be between 1 and 86400",
        ),
        (
            r#"{"leaseSeconds": 86401}"#,
            "leaseSeconds must be between 1 and 86400",
        ),
        (r#"{"leaseSeconds": "60"}"#, "leaseSeconds"),
        (r#"{"capabilities": "rust"}"#, "capabilities"),
        (
            r#"{"capabilities": [" "]}"#,
            "capability must be 1 to 100 characters",
        ),
        (r#"{"priority": "high"}"#, "priority"),
        (r#"{"leaseSeconds": 60"#, "malformed JSON"),
    ] {
        assert_error(&claim(app, &worker, body).await, 400, message);
    }
    for mode in ["orchestrator", "observer"] {
        let agent = app.add_agent(&app.org, mode, "active").await;
        let reply = claim(app, &agent, "").await;
        assert_eq!(reply.status, 403, "{mode}: {}", reply.text);
    }
    let suspended = app.add_agent(&app.org, "worker", "suspended").await;
    assert_eq!(claim(app, &suspended, "").await.status, 401);
    let admin = app.admin_token(&app.org).await;
    let user = send(app.bearer(&admin, Method::POST, "/tasks/claim", Some(&json!({})))).await;
    assert_error_exact(&user, 403, "only agents may do this");
    let after = app.get(&app.org.hr, &format!("/tasks/{task}")).await;
    assert_eq!(after.data()["status"], "todo");
    assert_eq!(after.data()["assigneeId"], Value::Null);
    assert_eq!(str_of(claim(app, &worker, "").await.data(), "id"), task);
}

async fn heartbeats_extend_only_the_holders_lease(app: &TestApp) {
    let worker = app.add_agent(&app.org, "worker", "active").await;
    let other = app.add_agent(&app.org, "worker", "active").await;
    let id = create(app, &json!({"title": "long job"})).await;
    let claimed = claim(app, &worker, r#"{"leaseSeconds": 30}"#).await;
    assert!(seconds_until(&str_of(claimed.data(), "leaseExpiresAt")) <= 30);
    let path = format!("/tasks/{id}/heartbeat");
    let beat = app.post(&worker, &path, r#"{"leaseSeconds": 3600}"#).await;
    assert_eq!(beat.status, 200, "{}", beat.text);
    let left = seconds_until(&str_of(beat.data(), "leaseExpiresAt"));
    assert!((3590..=3600).contains(&left), "{left}");
    let default = app.post(&worker, &path, "").await;
    assert!(seconds_until(&str_of(default.data(), "leaseExpiresAt")) <= 900);
    let stranger = app.post(&other, &path, "").await;
    assert_error_exact(&stranger, 409, "Task is not claimed by you");
    assert_error(
        &app.post(&worker, &path, r#"{"leaseSeconds": -1}"#).await,
        400,
        "leaseSeconds",
    );
    let missing = uuid::Uuid::now_v7();
    let gone = app
        .post(&worker, &format!("/tasks/{missing}/heartbeat"), "")
        .await;
    assert_error_exact(&gone, 404, &format!("Task {missing} not found"));
    let outsider = app.add_agent(&app.other, "worker", "active").await;
    assert_eq!(app.post(&outsider, &path, "").await.status, 404);

    // Leaving in_progress ends the claim.
    let review = app
        .transition(&worker, &id, r#"{"status": "review"}"#)
        .await;
    assert_eq!(review.status, 200, "{}", review.text);
    let after = app.post(&worker, &path, "").await;
    assert_error_exact(&after, 409, "Task is not claimed by you");
    // A task assigned the ordinary way has no claim to beat for.
    let assigned = create(
        app,
        &json!({"title": "assigned", "assigneeId": worker.uuid}),
    )
    .await;
    let reply = app
        .post(&worker, &format!("/tasks/{assigned}/heartbeat"), "")
        .await;
    assert_error_exact(&reply, 409, "Task is not claimed by you");
}

async fn a_silent_claimer_loses_its_task(app: &TestApp) {
    let silent = app.add_agent(&app.org, "worker", "active").await;
    let next = app.add_agent(&app.org, "worker", "active").await;
    let id = create(app, &json!({"title": "fragile"})).await;
    let claimed = claim(app, &silent, r#"{"leaseSeconds": 1}"#).await;
    assert_eq!(str_of(claimed.data(), "id"), id);
    tokio::time::sleep(Duration::from_millis(1_300)).await;
    let late = app
        .post(&silent, &format!("/tasks/{id}/heartbeat"), "")
        .await;
    assert_error_exact(
        &late,
        409,
        "Your lease on this task has expired; claim work again",
    );
    // The next claim hands the run-out lease back first, then takes the task.
    let reclaimed = claim(app, &next, "").await;
    assert_eq!(reclaimed.status, 200, "{}", reclaimed.text);
    assert_eq!(str_of(reclaimed.data(), "id"), id);
    assert_eq!(
        str_of(reclaimed.data(), "assigneeId"),
        next.uuid.to_string()
    );
    let events = app.events_of(&app.org.hr, &id).await;
    let expired = events
        .iter()
        .find(|e| e["type"] == "task.lease_expired")
        .expect("a lease_expired event");
    assert_eq!(expired["severity"], "warning");
    assert_eq!(expired["actorId"], Value::Null);
    assert_eq!(expired["payload"]["agentId"], silent.uuid.to_string());
    let moves: Vec<(String, String)> = events
        .iter()
        .rev()
        .filter(|e| e["type"] == "task.transitioned")
        .map(|e| (str_of(&e["payload"], "from"), str_of(&e["payload"], "to")))
        .collect();
    let expected: Vec<(String, String)> = [
        ("todo", "in_progress"),
        ("in_progress", "todo"),
        ("todo", "in_progress"),
    ]
    .iter()
    .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
    .collect();
    assert_eq!(moves, expected);
    let old = app
        .post(&silent, &format!("/tasks/{id}/heartbeat"), "")
        .await;
    assert_error_exact(&old, 409, "Task is not claimed by you");
}

async fn the_expiry_job_hands_back_run_out_leases(app: &TestApp) {
    let worker = app.add_agent(&app.org, "worker", "active").await;
    let held = create(app, &json!({"title": "held"})).await;
    let kept = create(app, &json!({"title": "kept"})).await;
    claim(app, &worker, r#"{"leaseSeconds": 60}"#).await;
    claim(app, &worker, r#"{"leaseSeconds": 7200}"#).await;
    let clock = TestClock::at(time::OffsetDateTime::now_utc() + time::Duration::minutes(5));
    let tasks = task_service(&app.db().db, clock.clone());
    // A claim sweeps its own organization's leases: another organization's sweep
    // hands back none of these.
    let elsewhere = muster_domain::model::OrgId::from_uuid(uuid::Uuid::now_v7());
    assert!(
        tasks
            .expire_leases(Some(elsewhere), 100)
            .await
            .unwrap()
            .is_empty()
    );
    let org = muster_domain::model::OrgId::from_uuid(app.org.id);
    let expired = tasks.expire_leases(Some(org), 100).await.unwrap();
    let expired: Vec<String> = expired.iter().map(|t| t.as_uuid().to_string()).collect();
    assert_eq!(
        expired,
        std::slice::from_ref(&held),
        "only the run-out lease"
    );
    let back = app.get(&app.org.hr, &format!("/tasks/{held}")).await;
    assert_eq!(back.data()["status"], "todo");
    assert_eq!(back.data()["assigneeId"], Value::Null);
    let still = app.get(&app.org.hr, &format!("/tasks/{kept}")).await;
    assert_eq!(still.data()["status"], "in_progress");
    // Running again (or on another instance, or for every organization) hands nothing
    // back twice.
    assert!(tasks.expire_leases(None, 100).await.unwrap().is_empty());
    let lease_events = app
        .events_of(&app.org.hr, &held)
        .await
        .iter()
        .filter(|e| e["type"] == "task.lease_expired")
        .count();
    assert_eq!(lease_events, 1);
}

/// Creates `count` tasks for the race tests.
async fn many_tasks(app: &TestApp, count: usize) -> BTreeSet<String> {
    let mut ids = BTreeSet::new();
    for n in 0..count {
        ids.insert(create(app, &json!({"title": format!("job {n}")})).await);
    }
    ids
}

/// `claimers` loops, each claiming as `agents[i % len]` at `bases[i % len]` until
/// nothing is left: every claimed task id with its claimer.
async fn race(
    app: &TestApp,
    agents: &[Agent],
    bases: &[String],
    claimers: usize,
) -> Vec<(String, String)> {
    let loops = (0..claimers).map(|i| {
        let agent = agents[i % agents.len()].clone();
        let base = bases[i % bases.len()].clone();
        async move {
            let mut got = Vec::new();
            loop {
                let request = app.signed_on(&base, &agent, Method::POST, "/tasks/claim", None);
                let reply = send(request).await;
                match reply.status.as_u16() {
                    200 => got.push((str_of(reply.data(), "id"), agent.uuid.to_string())),
                    204 => return got,
                    other => panic!("claim answered {other}: {}", reply.text),
                }
            }
        }
    });
    futures_util::future::join_all(loops)
        .await
        .into_iter()
        .flatten()
        .collect()
}

async fn assert_each_claimed_once(
    app: &TestApp,
    tasks: &BTreeSet<String>,
    got: &[(String, String)],
) {
    let mut seen = BTreeMap::new();
    for (task, agent) in got {
        assert!(
            seen.insert(task.clone(), agent.clone()).is_none(),
            "{task} claimed twice"
        );
    }
    let claimed: BTreeSet<String> = seen.keys().cloned().collect();
    assert_eq!(&claimed, tasks, "every task claimed exactly once");
    let listed = app
        .get(&app.org.hr, "/tasks?status=in_progress&limit=100")
        .await;
    for task in listed.list() {
        let id = str_of(task, "id");
        assert_eq!(
            Some(&str_of(task, "assigneeId")),
            seen.get(&id),
            "{id} is assigned to the claimer that was told it won"
        );
    }
}

async fn racing_claimers_claim_each_task_once(app: &TestApp) {
    let tasks = many_tasks(app, 200).await;
    let mut agents = Vec::new();
    for _ in 0..8 {
        agents.push(app.add_agent(&app.org, "worker", "active").await);
    }
    let got = race(app, &agents, std::slice::from_ref(&app.base), 64).await;
    assert_each_claimed_once(app, &tasks, &got).await;
}

async fn claimers_on_two_instances_claim_each_task_once(app: &TestApp) {
    let tasks = many_tasks(app, 100).await;
    let mut agents = Vec::new();
    for _ in 0..4 {
        agents.push(app.add_agent(&app.org, "worker", "active").await);
    }
    let sibling = app.sibling().await;
    let got = race(app, &agents, &[app.base.clone(), sibling.base.clone()], 32).await;
    assert_each_claimed_once(app, &tasks, &got).await;
    TestApp::stop_sibling(sibling).await;
}
