//! Agent capabilities (decision D-62): per-agent list, add, change and remove with their
//! events and who may do it; the organization's distinct names; match and best-match,
//! with an order where every tie-break decides at least one pair, the filters and the
//! query errors.

use muster_domain::model::AgentRole;
use reqwest::Method;
use serde_json::{Value, json};
use uuid::Uuid;

use crate::agent_support::{active_child, agent_with, register};
use crate::helpers::{
    Agent, Org, Reply, TestApp, assert_bad_queries, assert_error, assert_error_exact,
    assert_timestamp, keys_of, str_of,
};
use crate::stored::{add_capability, change_agent, insert_worker};
use crate::task_support::{assigned_task, events_typed, walk};
use crate::task_tools::{Caller, event_total};

api_tests!(
    adding_normalizes_the_name_and_defaults_to_standard,
    bad_additions_are_refused_and_change_nothing,
    capabilities_are_changed_and_removed_with_their_events,
    bad_changes_and_removals_are_refused_and_change_nothing,
    the_agent_its_parent_level_10_hr_and_admins_may_manage_capabilities,
    everyone_else_gets_403_and_changes_nothing,
    capability_names_are_distinct_sorted_and_per_organization,
    matches_are_ranked_by_every_tie_break,
    matches_are_filtered,
    bad_match_queries_are_400_and_no_match_is_404,
);

/// `GET /agents/:id/capabilities` as `reader` sees it, sorted by name.
async fn capabilities_of(app: &TestApp, reader: &Agent, agent: &Agent) -> Vec<Value> {
    let reply = app
        .get(reader, &format!("/agents/{}/capabilities", agent.uuid))
        .await;
    let mut list = reply.list().clone();
    list.sort_by_key(|c| str_of(c, "capability"));
    list
}

/// The `(capability, proficiency)` pairs of a capability list.
fn pairs(list: &[Value]) -> Vec<(String, String)> {
    list.iter()
        .map(|c| (str_of(c, "capability"), str_of(c, "proficiency")))
        .collect()
}

/// `POST /agents/:id/capabilities` by `caller` with `body`.
async fn add(app: &TestApp, caller: &Caller, agent: &Agent, body: &Value) -> Reply {
    let path = format!("/agents/{}/capabilities", agent.uuid);
    caller.call(app, Method::POST, &path, Some(body)).await
}

/// `PATCH /agents/capabilities/:id` by `caller` with `body`.
async fn change(app: &TestApp, caller: &Caller, capability: &str, body: &Value) -> Reply {
    let path = format!("/agents/capabilities/{capability}");
    caller.call(app, Method::PATCH, &path, Some(body)).await
}

/// `DELETE /agents/capabilities/:id` by `caller`.
async fn remove(app: &TestApp, caller: &Caller, capability: &str) -> Reply {
    let path = format!("/agents/capabilities/{capability}");
    caller.call(app, Method::DELETE, &path, None).await
}

/// Adds `name` at `proficiency` to `agent` as its organization's HR agent, answering the
/// capability id.
async fn added(app: &TestApp, org: &Org, agent: &Agent, name: &str, proficiency: &str) -> String {
    let body = json!({ "capability": name, "proficiency": proficiency });
    let reply = add(app, &Caller::Agent(org.hr.clone()), agent, &body).await;
    str_of(reply.data(), "id")
}

/// The events of `kind` on `agent` (newest first), as its organization's HR sees them.
async fn agent_events(app: &TestApp, agent: &Agent, kind: &str) -> Vec<Value> {
    events_typed(app, &app.org.hr, &agent.uuid.to_string(), kind).await
}

/// An active level-`level` agent with `role`, `mode` worker (the role set as stored: HR
/// may not register founder or admin agents).
async fn ranked(app: &TestApp, level: u8, role: &str) -> Agent {
    let agent = agent_with(app, &app.org, level, "worker", "worker").await;
    let role = AgentRole::parse(role).unwrap();
    change_agent(app, &agent, move |a| a.role = role).await;
    agent
}

async fn adding_normalizes_the_name_and_defaults_to_standard(app: &TestApp) {
    let agent = agent_with(app, &app.org, 3, "worker", "worker").await;
    let me = Caller::Agent(agent.clone());
    assert!(capabilities_of(app, &agent, &agent).await.is_empty());

    let reply = add(
        app,
        &me,
        &agent,
        &json!({ "capability": "  Data-Science " }),
    )
    .await;
    let first = reply.data().clone();
    assert_eq!(
        keys_of(&first),
        ["agentId", "capability", "createdAt", "id", "proficiency"]
    );
    assert_eq!(first["agentId"], agent.uuid.to_string());
    assert_eq!(first["capability"], "data-science");
    assert_eq!(first["proficiency"], "standard");
    assert_timestamp(&first, "createdAt");
    str_of(&first, "id").parse::<Uuid>().unwrap();

    // A name of exactly 100 characters, lower-cased; an explicit proficiency is kept.
    let long = "Q".repeat(100);
    let body = json!({ "capability": long, "proficiency": "expert" });
    let second = add(app, &me, &agent, &body).await.data().clone();
    assert_eq!(second["capability"], "q".repeat(100));
    assert_eq!(second["proficiency"], "expert");
    let basic = json!({ "capability": "ops", "proficiency": "basic" });
    let third = add(app, &me, &agent, &basic).await.data().clone();
    assert_eq!(third["proficiency"], "basic");

    // Read back exactly as answered, on the list and on the agent record.
    let mut expected = vec![first.clone(), third.clone(), second.clone()];
    expected.sort_by_key(|c| str_of(c, "capability"));
    assert_eq!(capabilities_of(app, &app.org.hr, &agent).await, expected);
    let record = app.get(&agent, &format!("/agents/{}", agent.uuid)).await;
    let mut on_record = record.data()["capabilities"].as_array().unwrap().clone();
    on_record.sort_by_key(|c| str_of(c, "capability"));
    assert_eq!(on_record, expected);

    // One agent.capability_added per addition, on the agent, by the agent.
    let events = agent_events(app, &agent, "agent.capability_added").await;
    let payloads: Vec<&Value> = events.iter().map(|e| &e["payload"]).collect();
    assert_eq!(
        payloads,
        [
            &json!({ "capability": "ops", "proficiency": "basic" }),
            &json!({ "capability": "q".repeat(100), "proficiency": "expert" }),
            &json!({ "capability": "data-science", "proficiency": "standard" }),
        ]
    );
    for event in &events {
        assert_eq!(event["entityId"], agent.uuid.to_string());
        assert_eq!(event["entityType"], "agent");
        assert_eq!(event["actorId"], agent.uuid.to_string());
    }
}

async fn bad_additions_are_refused_and_change_nothing(app: &TestApp) {
    let agent = agent_with(app, &app.org, 3, "worker", "worker").await;
    let hr = app.org.hr.clone();
    added(app, &app.org, &agent, "rust", "basic").await;
    let before = capabilities_of(app, &hr, &agent).await;
    let events_before = event_total(app, &hr).await;

    let path = format!("/agents/{}/capabilities", agent.uuid);
    // The same name, however written, is the same capability.
    let reply = app
        .post(
            &hr,
            &path,
            &json!({ "capability": " RUST ", "proficiency": "expert" }).to_string(),
        )
        .await;
    assert_error_exact(&reply, 409, "Agent already has that capability");

    let cases: [(String, &str); 11] = [
        (
            json!({ "capability": "y".repeat(101) }).to_string(),
            "capability must be 1 to 100 characters",
        ),
        (
            json!({ "capability": "   " }).to_string(),
            "capability must be 1 to 100 characters",
        ),
        (
            json!({ "capability": "go", "proficiency": "master" }).to_string(),
            "proficiency",
        ),
        (
            json!({ "capability": "go", "proficiency": null, "level": 3 }).to_string(),
            "property level should not exist",
        ),
        (json!({}).to_string(), "capability is required"),
        (
            json!({ "proficiency": "basic" }).to_string(),
            "capability is required",
        ),
        (json!({ "capability": 5 }).to_string(), "capability"),
        (r#"{"capability": "go""#.to_owned(), "malformed JSON"),
        (String::new(), "request body must be a JSON object"),
        (r#"["go"]"#.to_owned(), "request body must be a JSON object"),
        (
            json!({ "capability": "go", "proficiency": "EXPERT" }).to_string(),
            "proficiency",
        ),
    ];
    for (body, message) in &cases {
        let reply = app.post(&hr, &path, body).await;
        assert_error(&reply, 400, message);
    }

    // The path names an agent of this organization.
    let go = json!({ "capability": "go" }).to_string();
    let reply = app.post(&hr, "/agents/not-a-uuid/capabilities", &go).await;
    assert_error_exact(&reply, 400, "id must be a UUID");
    let unknown = Uuid::now_v7();
    let reply = app
        .post(&hr, &format!("/agents/{unknown}/capabilities"), &go)
        .await;
    assert_error_exact(&reply, 404, &format!("Agent {unknown} not found"));
    let foreign = app.other.hr.uuid;
    let reply = app
        .post(&hr, &format!("/agents/{foreign}/capabilities"), &go)
        .await;
    assert_error_exact(&reply, 404, &format!("Agent {foreign} not found"));
    let reply = app
        .get(&hr, &format!("/agents/{foreign}/capabilities"))
        .await;
    assert_error_exact(&reply, 404, &format!("Agent {foreign} not found"));
    let reply = app.get(&hr, "/agents/not-a-uuid/capabilities").await;
    assert_error_exact(&reply, 400, "id must be a UUID");

    assert_eq!(capabilities_of(app, &hr, &agent).await, before);
    assert!(
        capabilities_of(app, &app.other.hr, &app.other.hr)
            .await
            .is_empty()
    );
    assert_eq!(event_total(app, &hr).await, events_before);
}

async fn capabilities_are_changed_and_removed_with_their_events(app: &TestApp) {
    let agent = agent_with(app, &app.org, 3, "worker", "worker").await;
    let me = Caller::Agent(agent.clone());
    let rust = added(app, &app.org, &agent, "rust", "basic").await;
    let sql = added(app, &app.org, &agent, "sql", "standard").await;
    let original = capabilities_of(app, &agent, &agent).await;

    let reply = change(app, &me, &rust, &json!({ "proficiency": "expert" })).await;
    let changed = reply.data().clone();
    let mut expected = original[0].clone();
    expected["proficiency"] = json!("expert");
    assert_eq!(changed, expected, "only the proficiency changes");
    assert_eq!(
        pairs(&capabilities_of(app, &agent, &agent).await),
        [
            ("rust".into(), "expert".into()),
            ("sql".into(), "standard".into())
        ]
    );
    let updated = agent_events(app, &agent, "agent.capability_updated").await;
    assert_eq!(updated.len(), 1);
    assert_eq!(
        updated[0]["payload"],
        json!({ "capability": "rust", "proficiency": "expert" })
    );
    assert_eq!(updated[0]["entityId"], agent.uuid.to_string());
    assert_eq!(updated[0]["actorId"], agent.uuid.to_string());

    // Setting the same proficiency again is a change like any other.
    let again = change(app, &me, &rust, &json!({ "proficiency": "expert" })).await;
    assert_eq!(again.data()["proficiency"], "expert");

    let reply = remove(app, &me, &sql).await;
    assert_eq!(reply.status.as_u16(), 200, "{}", reply.text);
    assert_eq!(keys_of(&reply.body), ["message"]);
    assert!(!str_of(&reply.body, "message").is_empty());
    assert_eq!(
        pairs(&capabilities_of(app, &agent, &agent).await),
        [("rust".into(), "expert".into())]
    );
    let removed = agent_events(app, &agent, "agent.capability_removed").await;
    assert_eq!(removed.len(), 1);
    assert_eq!(removed[0]["payload"], json!({ "capability": "sql" }));
    assert_eq!(removed[0]["entityId"], agent.uuid.to_string());

    // Gone: a second removal and a change are 404; the name may be added again.
    assert_error_exact(
        &remove(app, &me, &sql).await,
        404,
        &format!("Capability {sql} not found"),
    );
    assert_error_exact(
        &change(app, &me, &sql, &json!({ "proficiency": "basic" })).await,
        404,
        &format!("Capability {sql} not found"),
    );
    let back = add(app, &me, &agent, &json!({ "capability": "sql" })).await;
    assert_ne!(str_of(back.data(), "id"), sql);
    assert_eq!(
        agent_events(app, &agent, "agent.capability_updated")
            .await
            .len(),
        2
    );
    assert_eq!(
        agent_events(app, &agent, "agent.capability_removed")
            .await
            .len(),
        1
    );
}

async fn bad_changes_and_removals_are_refused_and_change_nothing(app: &TestApp) {
    let hr = app.org.hr.clone();
    let caller = Caller::Agent(hr.clone());
    let agent = agent_with(app, &app.org, 3, "worker", "worker").await;
    let rust = added(app, &app.org, &agent, "rust", "basic").await;
    let foreign_agent = app.worker(&app.other).await;
    let foreign = added(app, &app.other, &foreign_agent, "rust", "basic").await;
    let before = capabilities_of(app, &hr, &agent).await;
    let foreign_before = capabilities_of(app, &app.other.hr, &foreign_agent).await;
    let events_before = event_total(app, &hr).await;
    let other_events_before = event_total(app, &app.other.hr).await;

    let path = format!("/agents/capabilities/{rust}");
    let cases: [(String, &str); 7] = [
        (json!({}).to_string(), "proficiency is required"),
        (
            json!({ "capability": "go" }).to_string(),
            "property capability should not exist",
        ),
        (
            json!({ "proficiency": "expert", "capability": "go" }).to_string(),
            "property capability should not exist",
        ),
        (
            json!({ "proficiency": "master" }).to_string(),
            "proficiency",
        ),
        (json!({ "proficiency": null }).to_string(), "proficiency"),
        (r#"{"proficiency": "expert""#.to_owned(), "malformed JSON"),
        (String::new(), "request body must be a JSON object"),
    ];
    for (body, message) in &cases {
        let reply = crate::task_tools::patch(app, &hr, &path, body).await;
        assert_error(&reply, 400, message);
    }

    let expert = json!({ "proficiency": "expert" });
    for bad in ["not-a-uuid", "123"] {
        assert_error_exact(
            &change(app, &caller, bad, &expert).await,
            400,
            "capabilityId must be a UUID",
        );
        assert_error_exact(
            &remove(app, &caller, bad).await,
            400,
            "capabilityId must be a UUID",
        );
    }
    let unknown = Uuid::now_v7().to_string();
    // Another organization's capability is as unknown as one that never was.
    for id in [&unknown, &foreign] {
        let message = format!("Capability {id} not found");
        assert_error_exact(&change(app, &caller, id, &expert).await, 404, &message);
        assert_error_exact(&remove(app, &caller, id).await, 404, &message);
    }

    assert_eq!(capabilities_of(app, &hr, &agent).await, before);
    assert_eq!(
        capabilities_of(app, &app.other.hr, &foreign_agent).await,
        foreign_before
    );
    assert_eq!(event_total(app, &hr).await, events_before);
    assert_eq!(event_total(app, &app.other.hr).await, other_events_before);
}

async fn the_agent_its_parent_level_10_hr_and_admins_may_manage_capabilities(app: &TestApp) {
    let parent = agent_with(app, &app.org, 5, "worker", "worker").await;
    let target = active_child(app, &parent, &json!({})).await;
    let admin = app.admin_token(&app.org).await;
    let write_key = app.api_key(&admin, &["write"]).await;
    let allowed = [
        ("itself", Caller::Agent(target.clone())),
        ("its parent", Caller::Agent(parent.clone())),
        (
            "a level-10 worker",
            Caller::Agent(agent_with(app, &app.org, 10, "worker", "worker").await),
        ),
        (
            "a level-2 hr agent",
            Caller::Agent(agent_with(app, &app.org, 2, "hr", "worker").await),
        ),
        (
            "a level-2 founder agent",
            Caller::Agent(ranked(app, 2, "founder").await),
        ),
        (
            "a level-2 admin agent",
            Caller::Agent(ranked(app, 2, "admin").await),
        ),
        ("an admin user", Caller::Bearer(admin.clone())),
        ("a write-scoped key", Caller::Bearer(write_key)),
    ];
    for (i, (who, caller)) in allowed.iter().enumerate() {
        let name = format!("skill-{i}");
        let body = json!({ "capability": name, "proficiency": "basic" });
        let reply = add(app, caller, &target, &body).await;
        assert_eq!(reply.status.as_u16(), 200, "{who} adds: {}", reply.text);
        let id = str_of(reply.data(), "id");
        assert_eq!(reply.data()["agentId"], target.uuid.to_string(), "{who}");
        let reply = change(app, caller, &id, &json!({ "proficiency": "expert" })).await;
        assert_eq!(reply.status.as_u16(), 200, "{who} changes: {}", reply.text);
        let list = capabilities_of(app, &parent, &target).await;
        assert_eq!(pairs(&list), [(name.clone(), "expert".to_owned())], "{who}");
        let reply = remove(app, caller, &id).await;
        assert_eq!(reply.status.as_u16(), 200, "{who} removes: {}", reply.text);
        assert!(
            capabilities_of(app, &parent, &target).await.is_empty(),
            "{who}"
        );
    }
    let n = allowed.len();
    for kind in [
        "agent.capability_added",
        "agent.capability_updated",
        "agent.capability_removed",
    ] {
        assert_eq!(agent_events(app, &target, kind).await.len(), n, "{kind}");
    }
}

/// `caller` (`who`) gets 403 with `message` adding a capability to `agent` and, unless
/// `capability` is empty, changing and removing that capability; reading is open to it.
async fn assert_refused(
    app: &TestApp,
    who: &str,
    caller: &Caller,
    agent: &Agent,
    capability: &str,
    message: &str,
) {
    let reply = add(app, caller, agent, &json!({ "capability": "go" })).await;
    assert_eq!(reply.status.as_u16(), 403, "{who} adds: {}", reply.text);
    assert_error_exact(&reply, 403, message);
    if !capability.is_empty() {
        let reply = change(app, caller, capability, &json!({ "proficiency": "expert" })).await;
        assert_eq!(reply.status.as_u16(), 403, "{who} changes: {}", reply.text);
        assert_error_exact(&reply, 403, message);
        let reply = remove(app, caller, capability).await;
        assert_eq!(reply.status.as_u16(), 403, "{who} removes: {}", reply.text);
        assert_error_exact(&reply, 403, message);
    }
    let path = format!("/agents/{}/capabilities", agent.uuid);
    let reply = caller.call(app, Method::GET, &path, None).await;
    assert_eq!(reply.status.as_u16(), 200, "{who} reads: {}", reply.text);
}

async fn everyone_else_gets_403_and_changes_nothing(app: &TestApp) {
    let hr = app.org.hr.clone();
    let target = agent_with(app, &app.org, 3, "worker", "worker").await;
    let target_cap = added(app, &app.org, &target, "rust", "basic").await;
    let observer = agent_with(app, &app.org, 10, "worker", "observer").await;
    let observer_cap = added(app, &app.org, &observer, "watching", "basic").await;
    let admin = app.admin_token(&app.org).await;
    let read_key = app.api_key(&admin, &["read"]).await;
    let (_, viewer) = app.user_token(&app.org, "viewer").await;
    let (_, operator) = app.user_token(&app.org, "operator").await;
    // The target's child may not manage its parent's capabilities.
    let parent = agent_with(app, &app.org, 5, "worker", "worker").await;
    let child = active_child(app, &parent, &json!({})).await;
    let sibling = active_child(app, &parent, &json!({})).await;
    let child_cap = added(app, &app.org, &child, "rust", "basic").await;

    let manager = "only the agent, its parent, a level-10 agent, HR or an admin may change its \
                   capabilities";
    let observer_msg = "observer agents are read-only";
    let cases: Vec<(&str, Caller, &Agent, &str, &str)> = vec![
        (
            "an unrelated level-9 worker",
            Caller::Agent(agent_with(app, &app.org, 9, "worker", "worker").await),
            &target,
            &target_cap,
            manager,
        ),
        (
            "a child on its parent",
            Caller::Agent(child.clone()),
            &parent,
            "",
            manager,
        ),
        (
            "a sibling",
            Caller::Agent(sibling),
            &child,
            &child_cap,
            manager,
        ),
        (
            "a level-10 observer",
            Caller::Agent(observer.clone()),
            &target,
            &target_cap,
            observer_msg,
        ),
        (
            "an observer on itself",
            Caller::Agent(observer.clone()),
            &observer,
            &observer_cap,
            observer_msg,
        ),
        (
            "a viewer user",
            Caller::Bearer(viewer),
            &target,
            &target_cap,
            "viewer users are read-only",
        ),
        (
            "an operator user",
            Caller::Bearer(operator),
            &target,
            &target_cap,
            manager,
        ),
        (
            "a read-scoped key",
            Caller::Bearer(read_key.clone()),
            &target,
            &target_cap,
            "API key lacks the write scope",
        ),
    ];

    let watched = [&target, &observer, &parent, &child];
    let mut before = Vec::new();
    for agent in watched {
        before.push(capabilities_of(app, &hr, agent).await);
    }
    let events_before = event_total(app, &hr).await;

    for (who, caller, agent, capability, message) in &cases {
        assert_refused(app, who, caller, agent, capability, message).await;
    }

    for (agent, was) in watched.iter().zip(&before) {
        assert_eq!(&capabilities_of(app, &hr, agent).await, was);
    }
    assert_eq!(event_total(app, &hr).await, events_before);
}

async fn capability_names_are_distinct_sorted_and_per_organization(app: &TestApp) {
    let hr = app.org.hr.clone();
    let names = |reply: Reply| -> Vec<String> {
        reply
            .list()
            .iter()
            .map(|v| v.as_str().unwrap().to_owned())
            .collect()
    };
    assert!(names(app.get(&hr, "/agents/capabilities").await).is_empty());

    let caps = |list: &[(&str, &str)]| -> Value {
        let list: Vec<Value> = list
            .iter()
            .map(|(c, p)| json!({ "capability": c, "proficiency": p }))
            .collect();
        json!({ "capabilities": list })
    };
    register(
        app,
        &app.org,
        &caps(&[("Rust", "expert"), ("sql", "basic")]),
    )
    .await;
    let (second, _) = register(
        app,
        &app.org,
        &caps(&[("rust", "basic"), (" zig ", "basic")]),
    )
    .await;
    register(app, &app.org, &caps(&[("ada", "standard")])).await;
    register(
        app,
        &app.other,
        &caps(&[("cobol", "expert"), ("rust", "basic")]),
    )
    .await;
    // A name held only by a suspended agent is still the organization's.
    let suspended = app.add_agent(&app.org, "worker", "suspended").await;
    add_capability(app, &suspended, "fortran", "basic").await;

    let ours = names(app.get(&hr, "/agents/capabilities").await);
    assert_eq!(ours, ["ada", "fortran", "rust", "sql", "zig"]);
    let theirs = names(app.get(&app.other.hr, "/agents/capabilities").await);
    assert_eq!(theirs, ["cobol", "rust"]);

    // Removing the last holder of a name removes the name.
    let zig = capabilities_of(app, &hr, &second)
        .await
        .into_iter()
        .find(|c| c["capability"] == "zig")
        .unwrap();
    let reply = remove(app, &Caller::Agent(hr.clone()), &str_of(&zig, "id")).await;
    assert_eq!(reply.status.as_u16(), 200, "{}", reply.text);
    let ours = names(app.get(&hr, "/agents/capabilities").await);
    assert_eq!(ours, ["ada", "fortran", "rust", "sql"]);
}

/// Adds a worker whose `agentId` starts with `prefix`, with `capabilities` and
/// `reputation` (all as stored).
async fn matcher(
    app: &TestApp,
    prefix: &str,
    capabilities: &[(&str, &str)],
    reputation: i32,
) -> Agent {
    let handle = format!("{prefix}-{}", Uuid::now_v7().simple());
    let agent = insert_worker(app, &app.org, &handle, |a| a.reputation_score = reputation).await;
    for (capability, proficiency) in capabilities {
        add_capability(app, &agent, capability, proficiency).await;
    }
    agent
}

/// The agents of [`matches_are_ranked_by_every_tie_break`] in their expected order for
/// `rust,sql,go`, with their coverage. Handles run against that order, so that agentId
/// decides no pair but the one it is there for. Pairs decided by each rule:
/// proficiency sum: 0 (9) before 1 (8), although 1 has the better reputation;
/// open tasks: 2 (none) before 3 (one), although 3 has the better reputation;
/// reputation: 4 (80) before 5 (60);
/// coverage: 6 (100, sum 3) before 7 and 8 (67, sum 6);
/// agentId: 7 before 8, all else equal (8 is created first);
/// 9 (67, sum 2) and 10 (33: capabilities not asked for count for nothing).
async fn match_roster(app: &TestApp) -> Vec<(Agent, u64)> {
    let hr = app.org.hr.clone();
    let expert3: &[(&str, &str)] = &[("rust", "expert"), ("sql", "expert"), ("go", "expert")];
    let standard3: &[(&str, &str)] = &[
        ("rust", "standard"),
        ("sql", "standard"),
        ("go", "standard"),
    ];
    let mixed: &[(&str, &str)] = &[("rust", "basic"), ("sql", "standard"), ("go", "basic")];
    let two_expert: &[(&str, &str)] = &[("rust", "expert"), ("go", "expert")];
    let sum9 = matcher(app, "m9", expert3, 50).await;
    let sum8 = matcher(
        app,
        "m8",
        &[("rust", "expert"), ("sql", "expert"), ("go", "standard")],
        90,
    )
    .await;
    let idle = matcher(app, "m7", standard3, 50).await;
    let busy = matcher(app, "m6", standard3, 50).await;
    let rep80 = matcher(app, "m5", mixed, 80).await;
    let rep60 = matcher(app, "m4", mixed, 60).await;
    let all_basic = matcher(
        app,
        "m3",
        &[("rust", "basic"), ("sql", "basic"), ("go", "basic")],
        10,
    )
    .await;
    let pair_second = matcher(app, "m1b", two_expert, 50).await;
    let pair_first = matcher(app, "m1a", two_expert, 50).await;
    let two_basic = matcher(app, "m0", &[("rust", "basic"), ("sql", "basic")], 90).await;
    let one_of_three = matcher(
        app,
        "m00",
        &[("rust", "expert"), ("python", "expert"), ("java", "expert")],
        100,
    )
    .await;
    // Open work: busy holds one; idle's are done or cancelled, which do not count.
    assigned_task(app, &hr, &busy, json!({})).await;
    let done = assigned_task(app, &hr, &idle, json!({})).await;
    walk(app, &idle, &done, &["in_progress", "done"]).await;
    let cancelled = assigned_task(app, &hr, &idle, json!({})).await;
    walk(app, &idle, &cancelled, &["cancelled"]).await;
    change_agent(app, &idle, |a| a.reputation_score = 10).await;
    change_agent(app, &busy, |a| a.reputation_score = 90).await;
    vec![
        (sum9, 100),
        (sum8, 100),
        (idle, 100),
        (busy, 100),
        (rep80, 100),
        (rep60, 100),
        (all_basic, 100),
        (pair_first, 67),
        (pair_second, 67),
        (two_basic, 67),
        (one_of_three, 33),
    ]
}

async fn matches_are_ranked_by_every_tie_break(app: &TestApp) {
    let hr = app.org.hr.clone();
    let expected = match_roster(app).await;
    let (pair_first, two_basic) = (&expected[7].0, &expected[9].0);
    let reply = app
        .get(&hr, "/agents/capabilities/match?capabilities=rust,sql,go")
        .await;
    let want: Vec<String> = expected
        .iter()
        .map(|(agent, _)| agent.uuid.to_string())
        .collect();
    assert_eq!(reply.ids(), want, "{}", reply.text);
    for (row, (agent, coverage)) in reply.list().iter().zip(&expected) {
        assert_eq!(row["coverageScore"], *coverage, "{row}");
        assert_eq!(row["agentId"], agent.handle.as_str());
        assert_eq!(row["status"], "active");
        assert_eq!(row["level"], 5);
    }
    let first = &reply.list()[0];
    assert_eq!(
        keys_of(first),
        [
            "agentId",
            "coverageScore",
            "id",
            "level",
            "matchedCapabilities",
            "name",
            "status"
        ]
    );
    assert!(!str_of(first, "name").is_empty());
    // Matched capabilities in the order asked; only those asked.
    assert_eq!(
        first["matchedCapabilities"],
        json!([
            { "capability": "rust", "proficiency": "expert" },
            { "capability": "sql", "proficiency": "expert" },
            { "capability": "go", "proficiency": "expert" },
        ])
    );
    let last = reply.list().last().unwrap();
    assert_eq!(
        last["matchedCapabilities"],
        json!([{ "capability": "rust", "proficiency": "expert" }])
    );
    let row_of = |reply: &Reply, agent: &Agent| {
        reply
            .list()
            .iter()
            .find(|r| r["id"] == agent.uuid.to_string())
            .unwrap()
            .clone()
    };
    assert_eq!(
        row_of(&reply, two_basic)["matchedCapabilities"],
        json!([
            { "capability": "rust", "proficiency": "basic" },
            { "capability": "sql", "proficiency": "basic" },
        ])
    );
    assert_eq!(
        row_of(&reply, pair_first)["matchedCapabilities"],
        json!([
            { "capability": "rust", "proficiency": "expert" },
            { "capability": "go", "proficiency": "expert" },
        ])
    );

    // The order of the names asked changes the matched list's order, not the ranking.
    let reordered = app
        .get(&hr, "/agents/capabilities/match?capabilities=go,sql,rust")
        .await;
    assert_eq!(reordered.ids(), want);
    assert_eq!(
        row_of(&reordered, pair_first)["matchedCapabilities"],
        json!([
            { "capability": "go", "proficiency": "expert" },
            { "capability": "rust", "proficiency": "expert" },
        ])
    );

    // best-match answers the first of the same list, whole.
    let best = app
        .get(
            &hr,
            "/agents/capabilities/best-match?capabilities=rust,sql,go",
        )
        .await;
    assert_eq!(keys_of(&best.body), ["data"]);
    assert_eq!(best.data(), first);
}

/// The agents of [`matches_are_filtered`]: three active workers holding rust at expert
/// (with sql at basic), standard and basic; a suspended one at expert with a better
/// reputation; the ids of agents holding rust and sql at expert but never listed; and
/// another organization's worker (among them).
async fn filter_roster(app: &TestApp) -> ([Agent; 4], Vec<String>, Agent) {
    let strong = matcher(app, "f3", &[("rust", "expert"), ("sql", "basic")], 50).await;
    let fair = matcher(app, "f2", &[("rust", "standard")], 50).await;
    let weak = matcher(app, "f1", &[("rust", "basic")], 50).await;
    // Holds rust at expert but is suspended; the better reputation puts it first when
    // listed.
    let suspended = app.add_agent(&app.org, "worker", "suspended").await;
    change_agent(app, &suspended, |a| a.reputation_score = 60).await;
    add_capability(app, &suspended, "rust", "expert").await;
    // Never listed: they do not execute, or they are another organization's.
    let mut never = Vec::new();
    for mode in ["orchestrator", "observer"] {
        for status in ["active", "suspended"] {
            let agent = app.add_agent(&app.org, mode, status).await;
            add_capability(app, &agent, "rust", "expert").await;
            add_capability(app, &agent, "sql", "expert").await;
            never.push(agent.uuid.to_string());
        }
    }
    let foreign = app.worker(&app.other).await;
    add_capability(app, &foreign, "rust", "expert").await;
    never.push(foreign.uuid.to_string());
    ([strong, fair, weak, suspended], never, foreign)
}

async fn matches_are_filtered(app: &TestApp) {
    let hr = app.org.hr.clone();
    let ([strong, fair, weak, suspended], never, foreign) = filter_roster(app).await;
    let ids = |agents: &[&Agent]| -> Vec<String> {
        agents.iter().map(|agent| agent.uuid.to_string()).collect()
    };
    let cases: [(&str, Vec<String>); 8] = [
        ("capabilities=rust", ids(&[&strong, &fair, &weak])),
        (
            "capabilities=rust&onlyActive=true",
            ids(&[&strong, &fair, &weak]),
        ),
        (
            "capabilities=rust&onlyActive=false",
            ids(&[&suspended, &strong, &fair, &weak]),
        ),
        (
            "capabilities=rust&minProficiency=basic",
            ids(&[&strong, &fair, &weak]),
        ),
        (
            "capabilities=rust&minProficiency=standard",
            ids(&[&strong, &fair]),
        ),
        ("capabilities=rust&minProficiency=expert", ids(&[&strong])),
        (
            "capabilities=rust&minProficiency=expert&onlyActive=false",
            ids(&[&suspended, &strong]),
        ),
        // Names are normalized; a repeated name counts once.
        (
            "capabilities=%20RUST%20,Rust,,",
            ids(&[&strong, &fair, &weak]),
        ),
    ];
    for (query, expected) in &cases {
        let reply = app
            .get(&hr, &format!("/agents/capabilities/match?{query}"))
            .await;
        assert_eq!(&reply.ids(), expected, "{query}: {}", reply.text);
        for row in reply.list() {
            assert!(!never.contains(&str_of(row, "id")), "{query}: {row}");
            assert_eq!(row["coverageScore"], 100, "{query}: {row}");
        }
        let best = app
            .get(&hr, &format!("/agents/capabilities/best-match?{query}"))
            .await;
        assert_eq!(best.data()["id"], expected[0].as_str(), "{query}");
    }

    // The suspended agent shows its status when listed.
    let reply = app
        .get(
            &hr,
            "/agents/capabilities/match?capabilities=rust&onlyActive=false",
        )
        .await;
    assert_eq!(reply.list()[0]["status"], "suspended");
    assert_eq!(reply.list()[1]["status"], "active");

    // A least proficiency below which a held capability does not count: strong keeps rust
    // only, half of what is asked.
    let reply = app
        .get(
            &hr,
            "/agents/capabilities/match?capabilities=rust,sql&minProficiency=standard",
        )
        .await;
    assert_eq!(reply.ids(), ids(&[&strong, &fair]));
    for row in reply.list() {
        assert_eq!(row["coverageScore"], 50, "{row}");
    }
    assert_eq!(
        reply.list()[0]["matchedCapabilities"],
        json!([{ "capability": "rust", "proficiency": "expert" }])
    );
    let reply = app
        .get(&hr, "/agents/capabilities/match?capabilities=sql,rust")
        .await;
    assert_eq!(reply.ids(), ids(&[&strong, &fair, &weak]));
    let coverages: Vec<&Value> = reply
        .list()
        .iter()
        .map(|row| &row["coverageScore"])
        .collect();
    assert_eq!(coverages, [&json!(100), &json!(50), &json!(50)]);

    // Another organization sees only its own agents.
    let reply = app
        .get(
            &app.other.hr,
            "/agents/capabilities/match?capabilities=rust,sql&onlyActive=false",
        )
        .await;
    assert_eq!(reply.ids(), ids(&[&foreign]));
}

async fn bad_match_queries_are_400_and_no_match_is_404(app: &TestApp) {
    let hr = app.org.hr.clone();
    // Only a non-executing agent holds "cobol".
    let orchestrator = app.add_agent(&app.org, "orchestrator", "active").await;
    add_capability(app, &orchestrator, "cobol", "expert").await;
    let long = "a".repeat(101);
    let too_long = format!("capabilities={long}");
    let cases = [
        ("", "capabilities is required"),
        ("minProficiency=basic", "capabilities is required"),
        (
            "capabilities=",
            "capabilities must name at least one capability",
        ),
        (
            "capabilities=,%20,",
            "capabilities must name at least one capability",
        ),
        ("capabilities=rust&minProficiency=master", "minProficiency"),
        ("capabilities=rust&minProficiency=", "minProficiency"),
        ("capabilities=rust&onlyActive=maybe", "onlyActive"),
        ("capabilities=rust&onlyActive=1", "onlyActive"),
        (
            "capabilities=rust&limit=5",
            "property limit should not exist",
        ),
        (too_long.as_str(), "capability must be 1 to 100 characters"),
    ];
    let events_before = event_total(app, &hr).await;
    for path in [
        "/agents/capabilities/match",
        "/agents/capabilities/best-match",
    ] {
        assert_bad_queries(app, &hr, path, &cases).await;
    }
    assert_eq!(event_total(app, &hr).await, events_before);

    for query in [
        "capabilities=haskell",
        "capabilities=cobol",
        "capabilities=cobol&onlyActive=false",
    ] {
        let reply = app
            .get(&hr, &format!("/agents/capabilities/match?{query}"))
            .await;
        assert!(reply.list().is_empty(), "{query}: {}", reply.text);
        let reply = app
            .get(&hr, &format!("/agents/capabilities/best-match?{query}"))
            .await;
        assert_error_exact(&reply, 404, "No agent matches the requested capabilities");
    }
    // A name of exactly 100 characters is a name like any other.
    let reply = app
        .get(
            &hr,
            &format!(
                "/agents/capabilities/match?capabilities={}",
                "a".repeat(100)
            ),
        )
        .await;
    assert!(reply.list().is_empty());
}
