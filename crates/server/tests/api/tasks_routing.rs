//! `GET /tasks/:id/candidates` and `POST /tasks/:id/auto-assign` (decisions D-35, D-36):
//! coverage of `metadata.requiredCapabilities`, an order where every tie-break decides
//! at least one pair, who is never a candidate, the query limits, and what auto-assign
//! picks or refuses.

use serde_json::{Value, json};
use uuid::Uuid;

use crate::helpers::{Agent, TestApp, assert_error, assert_error_exact, str_of};
use crate::stored::{add_capability, change_agent, insert_worker};
use crate::task_support::{assigned_task, events_typed, task_of, walk};

api_tests!(
    candidates_are_ranked_by_every_tie_break,
    candidates_are_filtered_and_limited,
    bad_candidate_queries_are_400,
    without_requirements_every_eligible_agent_scores_100,
    auto_assign_picks_the_best_candidate_not_excluded,
    auto_assign_below_the_threshold_is_409_and_changes_nothing,
    malformed_required_capabilities_are_400,
    auto_assign_refusals,
);

/// The required capabilities of the routed task: a name, an object with a least
/// proficiency, an object without one.
fn requirements() -> Value {
    json!([
        "rust",
        { "capability": "sql", "minProficiency": "standard" },
        { "capability": "go" },
    ])
}

/// The organization's eligible agents in their expected order for [`requirements`],
/// with the coverage each scores; ineligible agents with every capability at expert.
struct Roster {
    /// Expected order, with coverage.
    ranked: Vec<(Agent, u64)>,
    /// The ranked agents (HR aside) by the prefix of their `agentId`.
    by_name: std::collections::HashMap<&'static str, Agent>,
    /// Never listed.
    ineligible: Vec<Agent>,
}

impl Roster {
    fn get(&self, name: &str) -> &Agent {
        &self.by_name[name]
    }

    fn ids(&self) -> Vec<String> {
        self.ranked
            .iter()
            .map(|(a, _)| a.uuid.to_string())
            .collect()
    }
}

/// Adds a worker named `handle` (its `agentId`) with `capabilities` and `reputation`.
async fn agent_with(
    app: &TestApp,
    handle: &str,
    capabilities: &[(&str, &str)],
    reputation: i32,
) -> Agent {
    let handle = format!("{handle}-{}", Uuid::now_v7().simple());
    let agent = insert_worker(app, &app.org, &handle, |a| a.reputation_score = reputation).await;
    for (capability, proficiency) in capabilities {
        add_capability(app, &agent, capability, proficiency).await;
    }
    agent
}

/// Builds the roster. Pairs decided by each rule, in rule order:
/// coverage: c9 (67, sum 2) before d0 (33, sum 3);
/// proficiency sum: c1 (9) before c2 (8), and c9 behind h2/h3 (6 vs 2);
/// open tasks: h9 (none; reputation 10) before h0 (one; reputation 90);
/// reputation: h8 (80) before h1 (60);
/// agentId, the UUID (decision D-9): h3, made first, before h2 (all else equal).
async fn roster(app: &TestApp) -> Roster {
    let all_expert: &[(&str, &str)] = &[("rust", "expert"), ("sql", "expert"), ("go", "expert")];
    let c1 = agent_with(app, "c1", all_expert, 50).await;
    let c2 = agent_with(
        app,
        "c2",
        &[("rust", "expert"), ("sql", "expert"), ("go", "standard")],
        50,
    )
    .await;
    let standard: &[(&str, &str)] = &[
        ("rust", "standard"),
        ("sql", "standard"),
        ("go", "standard"),
    ];
    let h9 = agent_with(app, "h9", standard, 50).await;
    let h0 = agent_with(app, "h0", standard, 50).await;
    let basic_sql_standard: &[(&str, &str)] =
        &[("rust", "basic"), ("sql", "standard"), ("go", "basic")];
    let h8 = agent_with(app, "h8", basic_sql_standard, 80).await;
    let h1 = agent_with(app, "h1", basic_sql_standard, 60).await;
    let two_expert: &[(&str, &str)] = &[("rust", "expert"), ("go", "expert")];
    let h3 = agent_with(app, "h3", two_expert, 50).await;
    let h2 = agent_with(app, "h2", two_expert, 50).await;
    // sql at basic does not meet the standard asked for.
    let c9 = agent_with(
        app,
        "c9",
        &[("rust", "basic"), ("sql", "basic"), ("go", "basic")],
        50,
    )
    .await;
    // Capabilities the task does not ask for count for nothing.
    let d0 = agent_with(
        app,
        "d0",
        &[("rust", "expert"), ("python", "expert"), ("java", "expert")],
        50,
    )
    .await;

    // Open tasks: h0 holds one; h9's are done or cancelled, which do not count.
    assigned_task(app, &app.org.hr, &h0, json!({})).await;
    let done = assigned_task(app, &app.org.hr, &h9, json!({})).await;
    walk(app, &h9, &done, &["in_progress", "done"]).await;
    let cancelled = assigned_task(app, &app.org.hr, &h9, json!({})).await;
    walk(app, &h9, &cancelled, &["cancelled"]).await;
    // Finishing paid h9 reputation: set the scores the ranking needs last.
    change_agent(app, &h9, |a| a.reputation_score = 10).await;
    change_agent(app, &h0, |a| a.reputation_score = 90).await;

    // Everything, but never a candidate.
    let mut ineligible = Vec::new();
    for (mode, status) in [
        ("orchestrator", "active"),
        ("observer", "active"),
        ("worker", "suspended"),
        ("worker", "pending"),
        ("worker", "revoked"),
    ] {
        let agent = app.add_agent(&app.org, mode, status).await;
        for (capability, proficiency) in all_expert {
            add_capability(app, &agent, capability, proficiency).await;
        }
        ineligible.push(agent);
    }
    let foreign = app.worker(&app.other).await;
    for (capability, proficiency) in all_expert {
        add_capability(app, &foreign, capability, proficiency).await;
    }
    ineligible.push(foreign);
    ineligible.push(app.other.hr.clone());

    let hr = app.org.hr.clone();
    let ranked = vec![
        (c1.clone(), 100),
        (c2.clone(), 100),
        (h9.clone(), 100),
        (h0.clone(), 100),
        (h8.clone(), 100),
        (h1.clone(), 100),
        (h3.clone(), 67),
        (h2.clone(), 67),
        (c9.clone(), 67),
        (d0.clone(), 33),
        (hr, 0),
    ];
    let by_name = [
        ("c1", c1),
        ("c2", c2),
        ("h9", h9),
        ("h0", h0),
        ("h8", h8),
        ("h1", h1),
        ("h2", h2),
        ("h3", h3),
        ("c9", c9),
        ("d0", d0),
    ]
    .into_iter()
    .collect();
    Roster {
        ranked,
        by_name,
        ineligible,
    }
}

/// A task needing [`requirements`], unassigned.
async fn routed_task(app: &TestApp) -> String {
    let task = app
        .create_task(
            &app.org.hr,
            &json!({ "title": "route me", "metadata": { "requiredCapabilities": requirements() } }),
        )
        .await;
    str_of(&task, "id")
}

/// `GET /tasks/:id/candidates?{query}`, answered as the list.
async fn candidates(app: &TestApp, task: &str, query: &str) -> Vec<Value> {
    app.get(&app.org.hr, &format!("/tasks/{task}/candidates?{query}"))
        .await
        .list()
        .clone()
}

fn ids_of(list: &[Value]) -> Vec<String> {
    list.iter().map(|c| str_of(c, "agentId")).collect()
}

async fn auto_assign(app: &TestApp, task: &str, body: &Value) -> crate::helpers::Reply {
    app.post(
        &app.org.hr,
        &format!("/tasks/{task}/auto-assign"),
        &body.to_string(),
    )
    .await
}

async fn candidates_are_ranked_by_every_tie_break(app: &TestApp) {
    let roster = roster(app).await;
    let task = routed_task(app).await;
    let list = candidates(app, &task, "maxResults=100").await;
    assert_eq!(ids_of(&list), roster.ids(), "{list:#?}");
    for (candidate, (_, coverage)) in list.iter().zip(&roster.ranked) {
        assert_eq!(candidate["coverageScore"], *coverage, "{candidate}");
        assert!(candidate["name"].is_string(), "{candidate}");
    }
    // Only what met a requirement counts: c9's sql is below the asked standard.
    let c9 = list
        .iter()
        .find(|c| c["agentId"] == roster.get("c9").uuid.to_string())
        .unwrap();
    assert_eq!(
        c9["matchedCapabilities"],
        json!([
            { "capability": "rust", "proficiency": "basic" },
            { "capability": "go", "proficiency": "basic" },
        ])
    );
    for agent in &roster.ineligible {
        assert!(
            !ids_of(&list).contains(&agent.uuid.to_string()),
            "{} listed",
            agent.handle
        );
    }
    // Reading changes nothing.
    assert_eq!(
        task_of(app, &app.org.hr, &task).await["assigneeId"],
        Value::Null
    );
}

async fn candidates_are_filtered_and_limited(app: &TestApp) {
    let roster = roster(app).await;
    let task = routed_task(app).await;
    let all = roster.ids();
    assert_eq!(all.len(), 11);
    let cases: [(&str, &[String]); 9] = [
        ("", &all[..10]),
        ("maxResults=3", &all[..3]),
        ("maxResults=1", &all[..1]),
        ("maxResults=100", &all[..]),
        ("minCoverage=0&maxResults=100", &all[..]),
        ("minCoverage=67", &all[..9]),
        ("minCoverage=68", &all[..6]),
        ("minCoverage=100&maxResults=100", &all[..6]),
        ("minCoverage=34&maxResults=7", &all[..7]),
    ];
    for (query, expected) in cases {
        assert_eq!(
            ids_of(&candidates(app, &task, query).await),
            expected,
            "?{query}"
        );
    }
    assert_eq!(
        ids_of(&candidates(app, &task, "minCoverage=33&maxResults=100").await),
        all[..10]
    );
}

async fn bad_candidate_queries_are_400(app: &TestApp) {
    let task = routed_task(app).await;
    let path = format!("/tasks/{task}/candidates");
    crate::helpers::assert_bad_queries(
        app,
        &app.org.hr,
        &path,
        &[
            ("maxResults=101", "maxResults"),
            ("maxResults=0", "maxResults"),
            ("maxResults=-1", "maxResults"),
            ("maxResults=ten", "maxResults"),
            ("minCoverage=101", "minCoverage"),
            ("minCoverage=-1", "minCoverage"),
            ("minCoverage=half", "minCoverage"),
            ("limit=5", "limit"),
        ],
    )
    .await;
    // Another organization's task, or none, is not found.
    let reply = app
        .get(&app.other.hr, &format!("{path}?maxResults=5"))
        .await;
    assert_error(&reply, 404, "not found");
    let reply = app
        .get(
            &app.org.hr,
            &format!("/tasks/{}/candidates", Uuid::now_v7()),
        )
        .await;
    assert_error(&reply, 404, "not found");
}

async fn without_requirements_every_eligible_agent_scores_100(app: &TestApp) {
    let roster = roster(app).await;
    let name = |n: &str| roster.get(n).uuid.to_string();
    // Everyone covers 100 and sums 0: open tasks, then reputation, then agentId (the
    // UUID, time-ordered: HR was made first, then the roster in its order) decide.
    let expected = vec![
        name("h8"),
        name("h1"),
        app.org.hr.uuid.to_string(),
        name("c1"),
        name("c2"),
        name("h3"),
        name("h2"),
        name("c9"),
        name("d0"),
        name("h9"),
        name("h0"),
    ];
    let mut tasks = Vec::new();
    for metadata in [
        json!({}),
        json!({ "requiredCapabilities": [] }),
        json!({ "other": 1 }),
    ] {
        let task = str_of(
            &app.create_task(
                &app.org.hr,
                &json!({ "title": "anyone", "metadata": metadata }),
            )
            .await,
            "id",
        );
        let list = candidates(app, &task, "maxResults=100").await;
        assert_eq!(ids_of(&list), expected, "{metadata}");
        assert!(list.iter().all(|c| c["coverageScore"] == 100), "{list:?}");
        tasks.push(task);
    }
    // Auto-assign takes the first.
    let reply = auto_assign(app, &tasks[0], &json!({})).await;
    assert_eq!(reply.data()["assigneeId"], expected[0]);
}

async fn auto_assign_picks_the_best_candidate_not_excluded(app: &TestApp) {
    let roster = roster(app).await;
    let id = |n: &str| roster.get(n).uuid.to_string();
    let task = routed_task(app).await;

    // No body at all: the best candidate.
    let reply = crate::helpers::send(app.signed(
        &app.org.hr,
        reqwest::Method::POST,
        &format!("/tasks/{task}/auto-assign"),
        None,
    ))
    .await;
    let updated = reply.data().clone();
    assert_eq!(updated["id"], task);
    assert_eq!(updated["assigneeId"], id("c1"));
    assert_eq!(task_of(app, &app.org.hr, &task).await, updated);
    let events = events_typed(app, &app.org.hr, &task, "task.assigned").await;
    assert_eq!(events.len(), 1);
    assert_eq!(events[0]["payload"]["assigneeId"], id("c1"));
    assert_eq!(events[0]["payload"]["previousAssigneeId"], Value::Null);
    assert_eq!(events[0]["actorId"], app.org.hr.uuid.to_string());

    let cases = [
        (json!({ "excludeAgentIds": [id("c1")] }), "c2"),
        (
            json!({ "excludeAgentIds": [id("c1"), id("c2"), id("h9"), id("h0"), id("h8"), id("h1")], "minCoverage": 67 }),
            "h3",
        ),
        (
            json!({ "excludeAgentIds": [id("c1"), id("c2"), id("h9"), id("h0"), id("h8"), id("h1"), id("h2"), id("h3"), id("c9")] }),
            "d0",
        ),
    ];
    let mut previous = id("c1");
    for (body, expected) in cases {
        let reply = auto_assign(app, &task, &body).await;
        assert_eq!(reply.data()["assigneeId"], id(expected), "{body}");
        let events = events_typed(app, &app.org.hr, &task, "task.assigned").await;
        assert_eq!(events[0]["payload"]["assigneeId"], id(expected));
        assert_eq!(events[0]["payload"]["previousAssigneeId"], previous);
        previous = id(expected);
    }
    // Coverage 0 qualifies only when asked for.
    let everyone_but_hr: Vec<String> = roster.ids()[..10].to_vec();
    let reply = auto_assign(
        app,
        &task,
        &json!({ "excludeAgentIds": everyone_but_hr, "minCoverage": 0 }),
    )
    .await;
    assert_eq!(reply.data()["assigneeId"], app.org.hr.uuid.to_string());
    assert_eq!(
        events_typed(app, &app.org.hr, &task, "task.assigned")
            .await
            .len(),
        5
    );
}

async fn auto_assign_below_the_threshold_is_409_and_changes_nothing(app: &TestApp) {
    let roster = roster(app).await;
    let id = |n: &str| roster.get(n).uuid.to_string();
    let task = routed_task(app).await;
    let holder = roster.get("h3").clone();
    let reply = app
        .post(
            &app.org.hr,
            &format!("/tasks/{task}/assign"),
            &json!({ "assigneeId": holder.uuid }).to_string(),
        )
        .await;
    assert_eq!(reply.status.as_u16(), 200, "{}", reply.text);
    let before = task_of(app, &app.org.hr, &task).await;
    let events_before = app.events_of(&app.org.hr, &task).await;

    let above_d0: Vec<String> = ["c1", "c2", "h9", "h0", "h8", "h1", "h2", "h3", "c9"]
        .iter()
        .map(|n| id(n))
        .collect();
    let everyone_but_hr: Vec<String> = roster.ids()[..10].to_vec();
    for body in [
        json!({ "excludeAgentIds": above_d0, "minCoverage": 34 }),
        json!({ "excludeAgentIds": everyone_but_hr }),
        json!({ "excludeAgentIds": everyone_but_hr, "minCoverage": 1 }),
        json!({ "minCoverage": 100, "excludeAgentIds": above_d0 }),
    ] {
        let reply = auto_assign(app, &task, &body).await;
        assert_error_exact(&reply, 409, "No agent meets the coverage threshold");
        assert_eq!(task_of(app, &app.org.hr, &task).await, before, "{body}");
        assert_eq!(app.events_of(&app.org.hr, &task).await, events_before);
    }

    // A task nobody can do: every candidate covers 0, below the default threshold 1.
    let cobol = str_of(
        &app.create_task(
            &app.org.hr,
            &json!({ "title": "legacy", "metadata": { "requiredCapabilities": ["cobol"] } }),
        )
        .await,
        "id",
    );
    let before = task_of(app, &app.org.hr, &cobol).await;
    for body in [json!({}), json!({ "minCoverage": 1 })] {
        let reply = auto_assign(app, &cobol, &body).await;
        assert_error_exact(&reply, 409, "No agent meets the coverage threshold");
    }
    assert_eq!(task_of(app, &app.org.hr, &cobol).await, before);
    assert!(
        events_typed(app, &app.org.hr, &cobol, "task.assigned")
            .await
            .is_empty()
    );
    // With threshold 0, the first candidate listed.
    let first = str_of(
        &candidates(app, &cobol, "minCoverage=0").await[0],
        "agentId",
    );
    let reply = auto_assign(app, &cobol, &json!({ "minCoverage": 0 })).await;
    assert_eq!(reply.data()["assigneeId"], first);
}

async fn malformed_required_capabilities_are_400(app: &TestApp) {
    let worker = app.worker(&app.org).await;
    add_capability(app, &worker, "rust", "expert").await;
    let malformed = [
        json!("rust"),
        json!({ "rust": "expert" }),
        json!(7),
        json!(true),
        json!([1]),
        json!([null]),
        json!([["rust"]]),
        json!([""]),
        json!(["   "]),
        json!(["x".repeat(101)]),
        json!([{ "capability": 5 }]),
        json!([{ "minProficiency": "basic" }]),
        json!([{ "capability": "rust", "minProficiency": "guru" }]),
        json!([{ "capability": "rust", "minProficiency": 3 }]),
        json!(["rust", { "capability": "" }]),
    ];
    for required in malformed {
        let reply = app
            .post(
                &app.org.hr,
                "/tasks",
                &json!({ "title": "odd", "metadata": { "requiredCapabilities": required } })
                    .to_string(),
            )
            .await;
        if reply.status.as_u16() == 400 {
            // Refused up front: as good as refusing to route it.
            assert_error(&reply, 400, "apabilit");
            continue;
        }
        let task = str_of(reply.data(), "id");
        let before = task_of(app, &app.org.hr, &task).await;
        let reply = app
            .get(&app.org.hr, &format!("/tasks/{task}/candidates"))
            .await;
        assert_error(&reply, 400, "apabilit");
        for body in [json!({}), json!({ "minCoverage": 0 })] {
            let reply = auto_assign(app, &task, &body).await;
            assert_error(&reply, 400, "apabilit");
        }
        assert_eq!(task_of(app, &app.org.hr, &task).await, before, "{required}");
        assert!(
            events_typed(app, &app.org.hr, &task, "task.assigned")
                .await
                .is_empty()
        );
    }
}

async fn auto_assign_refusals(app: &TestApp) {
    let worker = app.worker(&app.org).await;
    add_capability(app, &worker, "rust", "expert").await;
    let task = routed_task(app).await;
    let before = task_of(app, &app.org.hr, &task).await;
    let cases = [
        (json!({ "minCoverage": 101 }), "minCoverage"),
        (json!({ "minCoverage": -1 }), "minCoverage"),
        (json!({ "minCoverage": "high" }), "minCoverage"),
        (json!({ "excludeAgentIds": ["nope"] }), "excludeAgentIds"),
        (json!({ "excludeAgentIds": worker.uuid }), "excludeAgentIds"),
        (json!({ "assigneeId": worker.uuid }), "assigneeId"),
    ];
    for (body, field) in cases {
        let reply = auto_assign(app, &task, &body).await;
        assert_error(&reply, 400, field);
    }
    assert_eq!(task_of(app, &app.org.hr, &task).await, before);

    // Not in the caller's organization, or missing.
    let reply = app
        .post(&app.other.hr, &format!("/tasks/{task}/auto-assign"), "{}")
        .await;
    assert_error(&reply, 404, "not found");
    // Observers only read.
    let observer = app.add_agent(&app.org, "observer", "active").await;
    let reply = app
        .post(&observer, &format!("/tasks/{task}/auto-assign"), "{}")
        .await;
    assert_eq!(reply.status.as_u16(), 403, "{}", reply.text);
    assert_eq!(task_of(app, &app.org.hr, &task).await, before);

    // Closed tasks stay as they are.
    for path in [&["in_progress", "done"][..], &["cancelled"][..]] {
        let closed = assigned_task(
            app,
            &app.org.hr,
            &worker,
            json!({ "metadata": { "requiredCapabilities": ["rust"] } }),
        )
        .await;
        walk(app, &worker, &closed, path).await;
        let before = task_of(app, &app.org.hr, &closed).await;
        let reply = auto_assign(app, &closed, &json!({})).await;
        assert_error(&reply, 409, path[path.len() - 1]);
        assert_eq!(task_of(app, &app.org.hr, &closed).await, before);
    }
}
