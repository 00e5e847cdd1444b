//! Agents making agents (decisions D-51, D-52, D-53, D-56): spawning pending children
//! within the parent's capacity (also under concurrent requests), the capacity report,
//! the pending list, activation, rejection, and the hierarchy.

use futures_util::future::join_all;
use muster_domain::model::AgentId;
use reqwest::Method;
use serde_json::{Value, json};
use uuid::Uuid;

use crate::agent_support::{active_child, agent_with, register, try_spawn};
use crate::agents_lifecycle::{
    RECORD_FIELDS, agent_of, agents_in, assert_no_secret, assert_secret_shape,
    assert_status_answer, can_sign, sorted_keys, status_call, status_of, with_handle,
};
use crate::helpers::{
    Agent, PAGE_REFUSALS, TestApp, assert_bad_queries, assert_error, assert_error_exact,
    assert_timestamp, keys_of, send, str_of, unique_handle,
};
use crate::stored::{all_agents, all_capabilities_of, find_agent};
use crate::task_tools::{Caller, delete, event_total, types};

api_tests!(
    spawn_makes_a_pending_child_below_the_parent,
    spawn_refuses_bad_requests_and_callers_and_stores_nothing,
    concurrent_spawns_never_exceed_the_capacity,
    capacity_reports_the_callers_room,
    pending_lists_what_the_caller_may_activate,
    activate_needs_the_parent_a_level_10_agent_or_an_admin,
    reject_deletes_the_pending_agent_and_frees_its_agent_id,
    hierarchy_nests_children_by_level_then_name,
    hierarchy_refuses_bad_depths_and_other_organizations,
);

/// The capacity message of decision D-51.
fn full(current: u32, max: u32) -> String {
    format!("Spawn capacity reached ({current}/{max})")
}

/// Spawns a child of `parent` with `extra` fields (asserting 200), answering it.
async fn spawned(app: &TestApp, parent: &Agent, extra: &Value) -> Agent {
    let reply = try_spawn(app, parent, extra).await;
    assert_eq!(reply.status.as_u16(), 200, "spawn: {}", reply.text);
    agent_of(&reply)
}

/// How many children (any status) `parent` has in storage.
async fn children_of(app: &TestApp, parent: &Agent) -> usize {
    let parent = Some(AgentId::from_uuid(parent.uuid));
    all_agents(app)
        .await
        .iter()
        .filter(|a| a.parent_id == parent)
        .count()
}

/// `GET /agents/capacity` as `caller`, answering `data`.
async fn capacity(app: &TestApp, caller: &Caller) -> Value {
    let reply = caller
        .call(app, Method::GET, "/agents/capacity", None)
        .await;
    assert_eq!(sorted_keys(&reply.body), ["data"]);
    let data = reply.data().clone();
    assert_eq!(sorted_keys(&data), ["canSpawn", "current", "max", "reason"]);
    data
}

/// `GET /agents/pending` as `caller`, answering the ids in order.
async fn pending_ids(app: &TestApp, caller: &Caller) -> Vec<String> {
    caller
        .call(app, Method::GET, "/agents/pending", None)
        .await
        .ids()
}

/// `DELETE /agents/:id/reject` by `caller` with an optional JSON body, answered.
async fn reject(
    app: &TestApp,
    caller: &Caller,
    agent: &Agent,
    body: Option<&Value>,
) -> crate::helpers::Reply {
    caller
        .call(
            app,
            Method::DELETE,
            &format!("/agents/{}/reject", agent.uuid),
            body,
        )
        .await
}

/// An agent registered by the admin user holding `admin` with `extra` fields.
async fn registered_by_admin(app: &TestApp, admin: &str, extra: &Value) -> Agent {
    let handle = unique_handle("by-admin");
    let mut body = json!({"agentId": handle, "name": format!("Agent {handle}")});
    crate::agent_support::merge(&mut body, extra);
    let reply = Caller::Bearer(admin.to_owned())
        .call(app, Method::POST, "/agents/register", Some(&body))
        .await;
    agent_of(&reply)
}

async fn spawn_makes_a_pending_child_below_the_parent(app: &TestApp) {
    let org = &app.org;
    let (parent, _) = register(app, org, &json!({"level": 5, "model": "parent-model"})).await;
    let handle = unique_handle("kid");
    let body = json!({"agentId": handle, "name": "  Kid  "});
    let reply = app.post(&parent, "/agents/spawn", &body.to_string()).await;
    assert_eq!(reply.status.as_u16(), 200, "{}", reply.text);
    assert_eq!(sorted_keys(&reply.body), ["data", "message", "secret"]);
    assert_eq!(
        reply.body["message"],
        "Agent spawned and pending activation. Store the secret now: it is shown only once."
    );
    assert_secret_shape(&str_of(&reply.body, "secret"));
    let child = agent_of(&reply);
    let data = reply.data().clone();
    assert_eq!(sorted_keys(&data), RECORD_FIELDS);
    let expected = json!({
        "orgId": org.id.to_string(), "agentId": handle, "name": "Kid", "level": 4,
        "model": "parent-model", "role": "worker", "mode": "worker", "status": "pending",
        "parentId": parent.uuid.to_string(), "currentBalance": 0, "budgetPeriodLimit": null,
        "budgetPeriodSpent": 0, "managementFeePct": 0, "reputationScore": 50,
        "metadata": {}, "capabilities": [],
    });
    for (key, value) in expected.as_object().unwrap() {
        assert_eq!(&data[key], value, "{key}: {data}");
    }
    assert_timestamp(&data, "createdAt");
    assert_eq!(
        app.get(&parent, &format!("/agents/{}", child.uuid))
            .await
            .data(),
        &data,
        "stored as answered"
    );
    // A pending child cannot sign until it is activated.
    assert_error_exact(
        &app.get(&child, "/agents?limit=1").await,
        401,
        "agent is not active",
    );
    let events = app.events_of(&org.hr, &child.uuid.to_string()).await;
    assert_eq!(types(&events), ["agent.spawned"]);
    assert_eq!(events[0]["actorId"], parent.uuid.to_string());
    assert_eq!(events[0]["entityType"], "agent");
    assert_eq!(
        events[0]["payload"],
        json!({"agentId": handle, "parentId": parent.uuid.to_string(), "level": 4,
               "mode": "worker"})
    );

    // Every field given: the lowest level, its own model, mode, limit, capabilities.
    let reply = try_spawn(
        app,
        &parent,
        &json!({
            "level": 1, "model": "own-model", "mode": "orchestrator", "budgetPeriodLimit": 5,
            "capabilities": [{"capability": " Go ", "proficiency": "basic"}],
            "metadata": {"task": "x"},
        }),
    )
    .await;
    let data = reply.data();
    assert_eq!(data["level"], 1);
    assert_eq!(data["model"], "own-model");
    assert_eq!(data["mode"], "orchestrator");
    assert_eq!(data["budgetPeriodLimit"], 5);
    assert_eq!(data["metadata"], json!({"task": "x"}));
    assert_eq!(data["capabilities"][0]["capability"], "go");
    assert_eq!(data["capabilities"][0]["proficiency"], "basic");
    assert_eq!(data["status"], "pending");
    let explicit = agent_of(&reply);
    let events = app.events_of(&org.hr, &explicit.uuid.to_string()).await;
    assert_eq!(events[0]["payload"]["level"], 1);
    assert_eq!(events[0]["payload"]["mode"], "orchestrator");

    // The level just below the parent's is allowed explicitly; a parent without a model
    // gives none; an active child spawns in turn.
    let (plain, _) = register(app, org, &json!({"level": 4})).await;
    let reply = try_spawn(app, &plain, &json!({"level": 3})).await;
    assert_eq!(reply.data()["level"], 3);
    assert_eq!(reply.data()["model"], Value::Null);
    let middle = active_child(app, &parent, &json!({})).await;
    let grandchild = spawned(app, &middle, &json!({})).await;
    let record = app
        .get(&org.hr, &format!("/agents/{}", grandchild.uuid))
        .await;
    assert_eq!(record.data()["parentId"], middle.uuid.to_string());
    assert_eq!(record.data()["level"], 3);
    assert_eq!(
        record.data()["model"],
        "parent-model",
        "inherited down the line"
    );
    assert_eq!(children_of(app, &parent).await, 3);
}

/// Spawn fields refused with 400 for a level-5 parent, with the message (`true`: exactly
/// that message).
fn invalid_spawn_fields() -> Vec<(Value, &'static str, bool)> {
    let below = "level must be below the parent's level (5)";
    let range = "level must be between 1 and 10";
    vec![
        (json!({"level": 5}), below, true),
        (json!({"level": 6}), below, true),
        (json!({"level": 10}), below, true),
        (json!({"level": 0}), range, true),
        (json!({"level": -1}), range, true),
        (json!({"level": 11}), range, true),
        (json!({"level": "4"}), "level", false),
        (
            json!({"role": "hr"}),
            "property role should not exist",
            true,
        ),
        (
            json!({"managementFeePct": 5}),
            "property managementFeePct should not exist",
            true,
        ),
        (
            json!({"parentId": Uuid::now_v7()}),
            "property parentId should not exist",
            true,
        ),
        (json!({"mode": "boss"}), "mode", false),
        (json!({"name": ""}), "name must not be empty", true),
        (
            json!({"name": "n".repeat(256)}),
            "name must be at most 255 characters",
            true,
        ),
        (
            json!({"agentId": "a b"}),
            "agentId may only contain visible ASCII characters",
            true,
        ),
        (
            json!({"agentId": "a".repeat(101)}),
            "agentId must be 1 to 100 characters",
            true,
        ),
        (
            json!({"model": "m".repeat(101)}),
            "model must be at most 100 characters",
            true,
        ),
        (
            json!({"budgetPeriodLimit": -1}),
            "budgetPeriodLimit must be at least 0",
            true,
        ),
        (
            json!({"capabilities": [{"capability": "GO"}, {"capability": "go"}]}),
            "capabilities must not repeat \"go\"",
            true,
        ),
        (
            json!({"metadata": 3}),
            "metadata must be a JSON object",
            true,
        ),
    ]
}

async fn spawn_refuses_bad_requests_and_callers_and_stores_nothing(app: &TestApp) {
    let org = &app.org;
    let parent = agent_with(app, org, 5, "worker", "worker").await;
    let observer = agent_with(app, org, 5, "worker", "observer").await;
    let level_one = agent_with(app, org, 1, "worker", "worker").await;
    let level_two = agent_with(app, org, 2, "hr", "worker").await;
    let admin = app.admin_token(org).await;
    let admin_key = app.api_key(&admin, &["admin"]).await;
    let (_, operator) = app.user_token(org, "operator").await;
    let (_, viewer) = app.user_token(org, "viewer").await;
    let agents_before = agents_in(app, org).await;
    let events_before = event_total(app, &org.hr).await;

    let bad = invalid_spawn_fields();
    for (extra, message, exact) in &bad {
        let reply = try_spawn(app, &parent, extra).await;
        if *exact {
            assert_error_exact(&reply, 400, message);
        } else {
            assert_error(&reply, 400, message);
        }
    }
    for (body, message) in [
        ("", "request body must be a JSON object"),
        ("{\"agentId\": ", "malformed JSON"),
        ("{\"name\": \"x\"}", "agentId is required"),
        ("{\"agentId\": \"x-1\"}", "name is required"),
    ] {
        assert_error(
            &app.post(&parent, "/agents/spawn", body).await,
            400,
            message,
        );
    }

    // Only agents spawn, and not observers; level 1 and 2 agents have no room.
    let users = "only agents may do this";
    let refused: Vec<(Caller, u16, String)> = vec![
        (Caller::Bearer(admin), 403, users.to_owned()),
        (Caller::Bearer(admin_key), 403, users.to_owned()),
        (Caller::Bearer(operator), 403, users.to_owned()),
        (Caller::Bearer(viewer), 403, users.to_owned()),
        (
            Caller::Agent(observer.clone()),
            403,
            "observer agents are read-only".to_owned(),
        ),
        (Caller::Agent(level_one.clone()), 409, full(0, 0)),
        (Caller::Agent(level_two.clone()), 409, full(0, 0)),
    ];
    for (caller, status, message) in &refused {
        let handle = unique_handle("nope");
        let body = json!({"agentId": handle, "name": "nope"});
        let reply = caller
            .call(app, Method::POST, "/agents/spawn", Some(&body))
            .await;
        assert_eq!(reply.status.as_u16(), *status, "{caller:?}: {}", reply.text);
        assert_error_exact(&reply, *status, message);
        assert_eq!(with_handle(app, &handle).await, 0);
    }
    let anonymous = send(
        app.anonymous(Method::POST, "/agents/spawn")
            .json(&json!({"agentId": unique_handle("anon"), "name": "anon"})),
    )
    .await;
    assert_error(&anonymous, 401, "missing credentials");

    // A taken agentId, here or in the other organization, is 409.
    for taken in [&org.hr.handle, &app.other.hr.handle, &observer.handle] {
        let reply = try_spawn(app, &parent, &json!({"agentId": taken})).await;
        assert_error_exact(&reply, 409, &format!("agentId {taken} is taken"));
        assert_eq!(with_handle(app, taken).await, 1);
    }

    for agent in [&parent, &observer, &level_one, &level_two] {
        assert_eq!(children_of(app, agent).await, 0);
    }
    assert_eq!(agents_in(app, org).await, agents_before);
    assert_eq!(event_total(app, &org.hr).await, events_before);
    let room = capacity(app, &Caller::Agent(parent.clone())).await;
    assert_eq!(room["current"], 0);
}

async fn concurrent_spawns_never_exceed_the_capacity(app: &TestApp) {
    let org = &app.org;
    let parent = agent_with(app, org, 3, "worker", "worker").await;

    // 30 requests at once, each signed and sent on its own connection.
    let round = |n: usize| {
        let parent = parent.clone();
        async move {
            let requests = (0..n).map(|i| {
                let handle = unique_handle(&format!("race{i}"));
                let body = json!({"agentId": handle, "name": format!("racer {i}")});
                send(app.signed(
                    &parent,
                    Method::POST,
                    "/agents/spawn",
                    Some(&body.to_string()),
                ))
            });
            join_all(requests).await
        }
    };
    let replies = round(30).await;
    let won: Vec<Agent> = replies
        .iter()
        .filter(|r| r.status.as_u16() == 200)
        .map(agent_of)
        .collect();
    for reply in &replies {
        assert!(
            reply.status.as_u16() < 500,
            "no server error under contention: {}",
            reply.text
        );
        if reply.status.as_u16() != 200 {
            assert_error_exact(reply, 409, &full(2, 2));
        }
    }
    assert_eq!(won.len(), 2, "exactly the capacity is spawned");
    assert_eq!(children_of(app, &parent).await, 2);
    let spawned_events = app
        .get(
            &org.hr,
            &format!("/events?type=agent.spawned&actorId={}", parent.uuid),
        )
        .await;
    assert_eq!(spawned_events.body["meta"]["total"], 2);
    let room = capacity(app, &Caller::Agent(parent.clone())).await;
    assert_eq!(room["current"], 2);
    assert_eq!(room["canSpawn"], false);

    // One place freed: again exactly one of many wins.
    let freed = reject(app, &Caller::Agent(parent.clone()), &won[0], None).await;
    assert_eq!(freed.status.as_u16(), 200, "{}", freed.text);
    let replies = round(30).await;
    let winners = replies.iter().filter(|r| r.status.as_u16() == 200).count();
    for reply in replies.iter().filter(|r| r.status.as_u16() != 200) {
        assert_error_exact(reply, 409, &full(2, 2));
    }
    assert_eq!(winners, 1);
    assert_eq!(children_of(app, &parent).await, 2);
}

async fn capacity_reports_the_callers_room(app: &TestApp) {
    let org = &app.org;
    let parent = agent_with(app, org, 3, "worker", "worker").await;
    let me = Caller::Agent(parent.clone());
    assert_eq!(
        capacity(app, &me).await,
        json!({"canSpawn": true, "current": 0, "max": 2, "reason": null})
    );
    let first = spawned(app, &parent, &json!({})).await;
    assert_eq!(
        capacity(app, &me).await,
        json!({"canSpawn": true, "current": 1, "max": 2, "reason": null})
    );
    let second = spawned(app, &parent, &json!({})).await;
    let at_capacity = json!({
        "canSpawn": false, "current": 2, "max": 2, "reason": "Spawn capacity reached (2/2)",
    });
    assert_eq!(capacity(app, &me).await, at_capacity);
    assert_error_exact(&try_spawn(app, &parent, &json!({})).await, 409, &full(2, 2));
    assert_eq!(
        capacity(app, &me).await,
        at_capacity,
        "a refused spawn counts nothing"
    );

    // Active and pending children count; suspended, revoked and rejected ones do not.
    let activated = app
        .post(&parent, &format!("/agents/{}/activate", first.uuid), "")
        .await;
    assert_eq!(activated.status.as_u16(), 200, "{}", activated.text);
    assert_eq!(capacity(app, &me).await, at_capacity);
    let hr = Caller::Agent(org.hr.clone());
    status_call(app, &hr, &first, "suspend").await.data();
    assert_eq!(capacity(app, &me).await["current"], 1);
    status_call(app, &hr, &first, "revoke").await.data();
    assert_eq!(capacity(app, &me).await["current"], 1);
    assert_eq!(reject(app, &me, &second, None).await.status.as_u16(), 200);
    assert_eq!(
        capacity(app, &me).await,
        json!({"canSpawn": true, "current": 0, "max": 2, "reason": null})
    );

    // Every level's room (D-51) and the HR agent's.
    for (level, max) in [
        (1, 0),
        (2, 0),
        (4, 3),
        (5, 5),
        (6, 8),
        (7, 12),
        (8, 20),
        (9, 50),
    ] {
        let agent = agent_with(app, org, level, "worker", "worker").await;
        let room = capacity(app, &Caller::Agent(agent)).await;
        assert_eq!(room["max"], max, "level {level}");
        assert_eq!(room["current"], 0);
        let can = max > 0;
        assert_eq!(room["canSpawn"], can, "level {level}");
        if can {
            assert_eq!(room["reason"], Value::Null);
        } else {
            assert_eq!(room["reason"], full(0, 0));
        }
    }
    assert_eq!(
        capacity(app, &Caller::Agent(org.hr.clone())).await,
        json!({"canSpawn": true, "current": 0, "max": 100, "reason": null})
    );

    // Observers and users cannot spawn, whatever their room.
    let observer = agent_with(app, org, 5, "worker", "observer").await;
    assert_eq!(
        capacity(app, &Caller::Agent(observer)).await,
        json!({"canSpawn": false, "current": 0, "max": 5,
               "reason": "observer agents are read-only"})
    );
    let admin = app.admin_token(org).await;
    let (_, viewer) = app.user_token(org, "viewer").await;
    let admin_key = app.api_key(&admin, &["admin"]).await;
    for user in [admin, viewer, admin_key] {
        assert_eq!(
            capacity(app, &Caller::Bearer(user)).await,
            json!({"canSpawn": false, "current": 0, "max": 0,
                   "reason": "only agents may do this"})
        );
    }
}

async fn pending_lists_what_the_caller_may_activate(app: &TestApp) {
    let org = &app.org;
    let a = agent_with(app, org, 5, "worker", "worker").await;
    let b = agent_with(app, org, 4, "hr", "worker").await;
    let a1 = spawned(app, &a, &json!({"name": "a one", "level": 2})).await;
    let _active = active_child(app, &a, &json!({})).await;
    let b1 = spawned(app, &b, &json!({})).await;
    let a2 = spawned(app, &a, &json!({"name": "a two"})).await;
    let their_parent = agent_with(app, &app.other, 5, "worker", "worker").await;
    let theirs = spawned(app, &their_parent, &json!({})).await;

    let reply = app.get(&a, "/agents/pending").await;
    assert_eq!(sorted_keys(&reply.body), ["data"]);
    let list = reply.list();
    assert_eq!(list.len(), 2);
    assert_eq!(
        sorted_keys(&list[0]),
        ["agentId", "createdAt", "id", "level", "name", "parentId"]
    );
    let record = app
        .get(&org.hr, &format!("/agents/{}", a1.uuid))
        .await
        .data()
        .clone();
    assert_eq!(
        list[1],
        json!({
            "id": a1.uuid.to_string(), "agentId": a1.handle, "name": "a one", "level": 2,
            "parentId": a.uuid.to_string(), "createdAt": record["createdAt"],
        })
    );
    assert_eq!(list[0]["id"], a2.uuid.to_string(), "newest first");
    assert_eq!(list[0]["level"], 4);
    assert_no_secret(&reply.body);

    let uuid = |agent: &Agent| agent.uuid.to_string();
    let whole_org = vec![uuid(&a2), uuid(&b1), uuid(&a1)];
    let admin = app.admin_token(org).await;
    let admin_key = app.api_key(&admin, &["admin"]).await;
    let write_key = app.api_key(&admin, &["write"]).await;
    let (_, operator) = app.user_token(org, "operator").await;
    let (_, viewer) = app.user_token(org, "viewer").await;
    let level_ten = agent_with(app, org, 10, "worker", "observer").await;
    let level_nine = agent_with(app, org, 9, "hr", "worker").await;
    let cases: Vec<(Caller, Vec<String>)> = vec![
        (Caller::Agent(b.clone()), vec![uuid(&b1)]),
        (Caller::Agent(org.hr.clone()), whole_org.clone()),
        (Caller::Agent(level_ten), whole_org.clone()),
        (Caller::Agent(level_nine), vec![]),
        (Caller::Agent(app.worker(org).await), vec![]),
        (Caller::Bearer(admin), whole_org.clone()),
        (Caller::Bearer(admin_key), whole_org.clone()),
        (Caller::Bearer(write_key), vec![]),
        (Caller::Bearer(operator), vec![]),
        (Caller::Bearer(viewer), vec![]),
        (Caller::Agent(app.other.hr.clone()), vec![uuid(&theirs)]),
        (Caller::Agent(their_parent.clone()), vec![uuid(&theirs)]),
    ];
    for (caller, expected) in &cases {
        assert_eq!(&pending_ids(app, caller).await, expected, "{caller:?}");
    }
    // Paged as every list (decision D-7).
    let hr = Caller::Agent(org.hr.clone());
    let first = hr
        .call(app, Method::GET, "/agents/pending?limit=2", None)
        .await;
    assert_eq!(first.ids(), &whole_org[..2]);
    let cursor = str_of(&first.body["meta"], "nextCursor");
    let path = format!("/agents/pending?limit=2&cursor={cursor}");
    let second = hr.call(app, Method::GET, &path, None).await;
    assert_eq!(second.ids(), &whole_org[2..]);
    assert_eq!(keys_of(&second.body), ["data"]);
    assert_bad_queries(app, &org.hr, "/agents/pending", &PAGE_REFUSALS).await;
    // A pending agent has left the list once activated or rejected.
    let hr = Caller::Agent(org.hr.clone());
    status_call(app, &hr, &a1, "activate").await.data();
    assert_eq!(reject(app, &hr, &b1, None).await.status.as_u16(), 200);
    assert_eq!(pending_ids(app, &hr).await, [uuid(&a2)]);
    assert_eq!(
        pending_ids(app, &Caller::Agent(b)).await,
        Vec::<String>::new()
    );
}

async fn activate_needs_the_parent_a_level_10_agent_or_an_admin(app: &TestApp) {
    let org = &app.org;
    let parent = agent_with(app, org, 6, "worker", "worker").await;
    let children: Vec<Agent> = {
        let mut made = Vec::new();
        for _ in 0..6 {
            made.push(spawned(app, &parent, &json!({})).await);
        }
        made
    };
    let admin = app.admin_token(org).await;
    let admin_key = app.api_key(&admin, &["admin"]).await;
    let write_key = app.api_key(&admin, &["write"]).await;
    let (_, operator) = app.user_token(org, "operator").await;
    let (_, viewer) = app.user_token(org, "viewer").await;
    let sibling = active_child(app, &parent, &json!({})).await;
    let admin_agent = registered_by_admin(app, &admin, &json!({"role": "admin", "level": 3})).await;
    let founder = registered_by_admin(app, &admin, &json!({"role": "founder", "level": 9})).await;

    let parent_only = "only the agent's parent, a level-10 agent or an admin may do this";
    let refused = [
        (Caller::Agent(app.worker(org).await), parent_only),
        (
            Caller::Agent(agent_with(app, org, 9, "hr", "worker").await),
            parent_only,
        ),
        (Caller::Agent(founder), parent_only),
        (Caller::Agent(admin_agent), parent_only),
        (Caller::Agent(sibling), parent_only),
        (
            Caller::Agent(agent_with(app, org, 10, "worker", "observer").await),
            "observer agents are read-only",
        ),
        (Caller::Bearer(operator), parent_only),
        (Caller::Bearer(viewer), "viewer users are read-only"),
        (Caller::Bearer(write_key), "API key lacks the admin scope"),
    ];
    let events_before = event_total(app, &org.hr).await;
    for (caller, message) in &refused {
        let reply = status_call(app, caller, &children[0], "activate").await;
        assert_eq!(reply.status.as_u16(), 403, "{caller:?}: {}", reply.text);
        assert_error_exact(&reply, 403, message);
    }
    assert_eq!(status_of(app, org, &children[0]).await, "pending");
    assert_eq!(event_total(app, &org.hr).await, events_before);
    activate_misses(app, &parent, &children[0]).await;
    let hr = Caller::Agent(org.hr.clone());

    // Allowed: the parent, a level-10 agent, an admin user and key (decision D-53; an
    // `admin` agent below level 10 is refused above).
    let allowed = [
        (Caller::Agent(parent.clone()), parent.uuid.to_string()),
        (Caller::Agent(org.hr.clone()), org.hr.uuid.to_string()),
        (Caller::Bearer(admin), String::new()),
        (Caller::Bearer(admin_key), String::new()),
    ];
    activated_by_each(app, &allowed, &children).await;
    // Only a pending agent is activated.
    let parent_caller = Caller::Agent(parent.clone());
    assert_error_exact(
        &status_call(app, &parent_caller, &children[0], "activate").await,
        409,
        "Agent is active and cannot be activated",
    );
    let last = &children[5];
    status_call(app, &hr, last, "revoke").await.data();
    assert_error_exact(
        &status_call(app, &parent_caller, last, "activate").await,
        409,
        "Agent is revoked; revocation is permanent",
    );
    status_call(app, &hr, &children[0], "suspend").await.data();
    assert_error_exact(
        &status_call(app, &parent_caller, &children[0], "activate").await,
        409,
        "Agent is suspended and cannot be activated",
    );
    assert_eq!(status_of(app, org, &children[0]).await, "suspended");
    assert!(!can_sign(app, &children[0]).await);
}

/// Activating an agent of the other organization (404), a non-UUID id (400) or with a
/// body (400) changes nothing.
async fn activate_misses(app: &TestApp, parent: &Agent, pending: &Agent) {
    let org = &app.org;
    let (theirs_parent, _) = register(app, &app.other, &json!({"level": 5})).await;
    let theirs = spawned(app, &theirs_parent, &json!({})).await;
    let hr = Caller::Agent(org.hr.clone());
    assert_error_exact(
        &status_call(app, &hr, &theirs, "activate").await,
        404,
        &format!("Agent {} not found", theirs.uuid),
    );
    assert_eq!(status_of(app, &app.other, &theirs).await, "pending");
    assert_error_exact(
        &app.post(&org.hr, "/agents/x/activate", "").await,
        400,
        "id must be a UUID",
    );
    assert_error_exact(
        &app.post(
            parent,
            &format!("/agents/{}/activate", pending.uuid),
            "{\"now\": true}",
        )
        .await,
        400,
        "property now should not exist",
    );
}

/// Each of `allowed` (caller, its id or empty for users) activates one of `children`.
async fn activated_by_each(app: &TestApp, allowed: &[(Caller, String)], children: &[Agent]) {
    let org = &app.org;
    for ((caller, actor), child) in allowed.iter().zip(children) {
        let reply = status_call(app, caller, child, "activate").await;
        assert_status_answer(&reply, child, "active", 5, "Agent activated");
        assert!(can_sign(app, child).await, "the child signs once active");
        let events = app.events_of(&org.hr, &child.uuid.to_string()).await;
        assert_eq!(types(&events), ["agent.activated", "agent.spawned"]);
        assert_eq!(
            events[0]["payload"],
            json!({"agentId": child.handle, "reason": null})
        );
        if !actor.is_empty() {
            assert_eq!(&events[0]["actorId"], actor.as_str());
        }
    }
}

async fn reject_deletes_the_pending_agent_and_frees_its_agent_id(app: &TestApp) {
    let org = &app.org;
    let parent = agent_with(app, org, 5, "worker", "worker").await;
    let me = Caller::Agent(parent.clone());
    let mut children = Vec::new();
    for _ in 0..5 {
        children.push(
            spawned(
                app,
                &parent,
                &json!({"capabilities": [{"capability": "x"}]}),
            )
            .await,
        );
    }
    let admin = app.admin_token(org).await;
    let (their_parent, _) = register(app, &app.other, &json!({"level": 5})).await;
    let theirs = spawned(app, &their_parent, &json!({})).await;
    reject_refusals(app, &parent, &children[0], &theirs).await;
    let agents_before = agents_in(app, org).await;
    let hr = Caller::Agent(org.hr.clone());

    // The parent rejects with a reason: the row is gone, its events stay.
    let first = &children[0];
    let reply = reject(app, &me, first, Some(&json!({"reason": "not needed"}))).await;
    assert_eq!(reply.status.as_u16(), 200, "{}", reply.text);
    assert_eq!(
        reply.body,
        json!({"message": format!("Agent {} rejected", first.handle)})
    );
    assert_gone(app, first).await;
    assert_eq!(agents_in(app, org).await, agents_before - 1);
    let events = app.events_of(&org.hr, &first.uuid.to_string()).await;
    assert_eq!(types(&events), ["agent.rejected", "agent.spawned"]);
    assert_eq!(events[0]["actorId"], parent.uuid.to_string());
    assert_eq!(
        events[0]["payload"],
        json!({"agentId": first.handle, "reason": "not needed"})
    );
    // Rejecting it again: it is no longer there.
    assert_error_exact(
        &reject(app, &me, first, None).await,
        404,
        &format!("Agent {} not found", first.uuid),
    );
    // Its agentId is free again, for a register or a spawn.
    let again = json!({"agentId": first.handle, "name": "second life"});
    let reply = app
        .post(&org.hr, "/agents/register", &again.to_string())
        .await;
    let reborn = agent_of(&reply);
    assert_ne!(reborn.uuid, first.uuid);
    assert_eq!(reply.data()["status"], "active");
    assert!(can_sign(app, &reborn).await);

    // A level-10 agent (no body) and an admin user (`{}`) may reject; an `admin` agent
    // below level 10 may not (decision D-53).
    let second = &children[1];
    let reply = reject(app, &hr, second, None).await;
    assert_eq!(
        reply.body,
        json!({"message": format!("Agent {} rejected", second.handle)})
    );
    let events = app.events_of(&org.hr, &second.uuid.to_string()).await;
    assert_eq!(events[0]["payload"]["reason"], Value::Null);
    assert_eq!(events[0]["actorId"], org.hr.uuid.to_string());
    let reply = reject(
        app,
        &Caller::Bearer(admin.clone()),
        &children[2],
        Some(&json!({})),
    )
    .await;
    assert_eq!(reply.status.as_u16(), 200, "{}", reply.text);
    let admin_agent = registered_by_admin(app, &admin, &json!({"role": "admin"})).await;
    let reply = reject(app, &Caller::Agent(admin_agent), &children[3], None).await;
    assert_error_exact(
        &reply,
        403,
        "only the agent's parent, a level-10 agent or an admin may do this",
    );
    assert_eq!(status_of(app, org, &children[3]).await, "pending");
    let reply = reject(app, &hr, &children[3], None).await;
    assert_eq!(reply.status.as_u16(), 200, "{}", reply.text);
    for rejected in &children[1..4] {
        assert_gone(app, rejected).await;
    }
    let spawn_again = try_spawn(app, &parent, &json!({"agentId": second.handle})).await;
    assert_eq!(spawn_again.data()["agentId"], second.handle);

    // Only a pending agent is rejected.
    let fourth = &children[4];
    status_call(app, &me, fourth, "activate").await.data();
    assert_error_exact(
        &reject(app, &me, fourth, None).await,
        409,
        "Agent is active and cannot be rejected",
    );
    status_call(app, &hr, fourth, "revoke").await.data();
    assert_error_exact(
        &reject(app, &me, fourth, None).await,
        409,
        "Agent is revoked and cannot be rejected",
    );
    assert_eq!(status_of(app, org, fourth).await, "revoked");
}

/// `agent` and its capabilities are gone from storage and from the API.
async fn assert_gone(app: &TestApp, agent: &Agent) {
    assert_error_exact(
        &app.get(&app.org.hr, &format!("/agents/{}", agent.uuid))
            .await,
        404,
        &format!("Agent {} not found", agent.uuid),
    );
    assert!(find_agent(app, agent).await.is_none(), "still stored");
    assert!(all_capabilities_of(app, agent).await.is_empty());
}

/// Refused rejections of the pending child `pending` of `parent` (403, 400) and of the
/// other organization's `theirs` (404) change nothing.
async fn reject_refusals(app: &TestApp, parent: &Agent, pending: &Agent, theirs: &Agent) {
    let org = &app.org;
    let me = Caller::Agent(parent.clone());
    let admin = app.admin_token(org).await;
    let write_key = app.api_key(&admin, &["write"]).await;
    let (_, viewer) = app.user_token(org, "viewer").await;
    let unrelated = agent_with(app, org, 9, "hr", "worker").await;
    let observer = agent_with(app, org, 10, "worker", "observer").await;
    let agents_before = agents_in(app, org).await;
    let events_before = event_total(app, &org.hr).await;
    // Refused: no change at all.
    let parent_only = "only the agent's parent, a level-10 agent or an admin may do this";
    let refused = [
        (Caller::Agent(unrelated), parent_only),
        (Caller::Agent(observer), "observer agents are read-only"),
        (Caller::Bearer(viewer), "viewer users are read-only"),
        (Caller::Bearer(write_key), "API key lacks the admin scope"),
    ];
    for (caller, message) in &refused {
        let reply = reject(app, caller, pending, Some(&json!({"reason": "no"}))).await;
        assert_eq!(reply.status.as_u16(), 403, "{caller:?}: {}", reply.text);
        assert_error_exact(&reply, 403, message);
    }
    let bad_bodies = [
        (json!({"why": "x"}), "property why should not exist"),
        (json!({"reason": 3}), "reason"),
        (
            json!({"reason": "r".repeat(2001)}),
            "reason must be at most 2000 characters",
        ),
    ];
    for (body, message) in &bad_bodies {
        assert_error(&reject(app, &me, pending, Some(body)).await, 400, message);
    }
    assert_error_exact(
        &delete(app, &org.hr, "/agents/nope/reject").await,
        400,
        "id must be a UUID",
    );
    let hr = Caller::Agent(org.hr.clone());
    assert_error_exact(
        &reject(app, &hr, theirs, None).await,
        404,
        &format!("Agent {} not found", theirs.uuid),
    );
    assert_eq!(status_of(app, &app.other, theirs).await, "pending");
    assert_eq!(status_of(app, org, pending).await, "pending");
    assert_eq!(agents_in(app, org).await, agents_before);
    assert_eq!(event_total(app, &org.hr).await, events_before);
}

/// The names of a hierarchy node's children, in order.
fn child_names(node: &Value) -> Vec<&str> {
    node["children"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect()
}

/// The child of `node` named `name`.
fn child<'a>(node: &'a Value, name: &str) -> &'a Value {
    node["children"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == name)
        .unwrap_or_else(|| panic!("no child {name} in {node}"))
}

async fn hierarchy_nests_children_by_level_then_name(app: &TestApp) {
    let org = &app.org;
    let (root, _) = register(app, org, &json!({"level": 8, "name": "root"})).await;
    let named = |name: &str, level: u8| json!({"name": name, "level": level});
    let beta = active_child(app, &root, &named("beta", 5)).await;
    let alpha = active_child(app, &root, &named("alpha", 5)).await;
    let zulu = spawned(app, &root, &named("zulu", 7)).await;
    let _mid = active_child(app, &root, &named("mid", 6)).await;
    let _pend = spawned(app, &root, &named("pend", 7)).await;
    let _kid2 = spawned(app, &alpha, &named("kid2", 4)).await;
    let kid1 = active_child(app, &alpha, &named("kid1", 4)).await;
    let _kid0 = spawned(app, &alpha, &named("kid0", 2)).await;
    let deep = active_child(app, &kid1, &named("deep", 3)).await;
    let _deepest = spawned(app, &deep, &named("deepest", 1)).await;
    let _beta_kid = spawned(app, &beta, &named("beta kid", 1)).await;
    status_call(app, &Caller::Agent(org.hr.clone()), &zulu, "revoke")
        .await
        .data();

    let path = format!("/agents/{}/hierarchy", root.uuid);
    let reply = app.get(&root, &path).await;
    assert_eq!(sorted_keys(&reply.body), ["data"]);
    let tree = reply.data().clone();
    assert_no_secret(&tree);
    assert_eq!(
        sorted_keys(&tree),
        [
            "agentId", "children", "id", "level", "mode", "name", "parentId", "role", "status"
        ]
    );
    assert_eq!(tree["id"], root.uuid.to_string());
    assert_eq!(tree["parentId"], Value::Null);
    assert_eq!(tree["name"], "root");
    assert_eq!(tree["level"], 8);
    assert_eq!(child_names(&tree), ["pend", "zulu", "mid", "alpha", "beta"]);
    let zulu_node = child(&tree, "zulu");
    assert_eq!(
        zulu_node,
        &json!({
            "id": zulu.uuid.to_string(), "agentId": zulu.handle, "name": "zulu", "level": 7,
            "role": "worker", "mode": "worker", "status": "revoked",
            "parentId": root.uuid.to_string(), "children": [],
        })
    );
    assert_eq!(child(&tree, "pend")["status"], "pending");
    let alpha_node = child(&tree, "alpha");
    assert_eq!(alpha_node["parentId"], root.uuid.to_string());
    assert_eq!(child_names(alpha_node), ["kid1", "kid2", "kid0"]);
    assert_eq!(child_names(child(&tree, "beta")), ["beta kid"]);
    let kid1_node = child(alpha_node, "kid1");
    assert_eq!(kid1_node["parentId"], alpha.uuid.to_string());
    assert_eq!(child_names(kid1_node), ["deep"]);
    // Default depth 3: the root and three levels below it.
    assert_eq!(child_names(child(kid1_node, "deep")), Vec::<&str>::new());

    let at = |depth: u8| format!("{path}?depth={depth}");
    let one = app.get(&root, &at(1)).await.data().clone();
    assert_eq!(child_names(&one), ["pend", "zulu", "mid", "alpha", "beta"]);
    for name in child_names(&one) {
        assert_eq!(child(&one, name)["children"], json!([]), "{name}");
    }
    assert_eq!(app.get(&root, &at(3)).await.data(), &tree);
    let four = app.get(&root, &at(4)).await.data().clone();
    let deep_node = child(child(child(&four, "alpha"), "kid1"), "deep");
    assert_eq!(child_names(deep_node), ["deepest"]);
    assert_eq!(child(deep_node, "deepest")["children"], json!([]));
    assert_eq!(app.get(&root, &at(10)).await.data(), &four);

    // Any agent is a root of its own subtree, read by anyone of the organization.
    let (_, viewer) = app.user_token(org, "viewer").await;
    let sub = send(app.bearer(
        &viewer,
        Method::GET,
        &format!("/agents/{}/hierarchy?depth=1", alpha.uuid),
        None,
    ))
    .await;
    let sub = sub.data();
    assert_eq!(sub["parentId"], root.uuid.to_string());
    assert_eq!(child_names(sub), ["kid1", "kid2", "kid0"]);
    assert_eq!(child(sub, "kid1")["children"], json!([]));
    let leaf = app
        .get(&org.hr, &format!("/agents/{}/hierarchy", zulu.uuid))
        .await;
    assert_eq!(leaf.data()["children"], json!([]));
}

async fn hierarchy_refuses_bad_depths_and_other_organizations(app: &TestApp) {
    let org = &app.org;
    let parent = agent_with(app, org, 5, "worker", "worker").await;
    spawned(app, &parent, &json!({})).await;
    let path = format!("/agents/{}/hierarchy", parent.uuid);
    let range = "depth must be between 1 and 10";
    for depth in ["0", "11", "-1", "1000"] {
        assert_error_exact(
            &app.get(&org.hr, &format!("{path}?depth={depth}")).await,
            400,
            range,
        );
    }
    assert_bad_queries(
        app,
        &org.hr,
        &path,
        &[
            ("depth=abc", "depth"),
            ("depth=1.5", "depth"),
            ("depth=", "depth"),
            ("levels=2", "property levels should not exist"),
        ],
    )
    .await;
    assert_error_exact(
        &app.get(&org.hr, "/agents/abc/hierarchy").await,
        400,
        "id must be a UUID",
    );
    let ghost = Uuid::now_v7();
    assert_error_exact(
        &app.get(&org.hr, &format!("/agents/{ghost}/hierarchy"))
            .await,
        404,
        &format!("Agent {ghost} not found"),
    );
    // The other organization sees neither the tree nor its root.
    for depth in ["", "?depth=10"] {
        assert_error_exact(
            &app.get(&app.other.hr, &format!("{path}{depth}")).await,
            404,
            &format!("Agent {} not found", parent.uuid),
        );
    }
    let their_root = agent_with(app, &app.other, 5, "worker", "worker").await;
    let reply = app
        .get(
            &app.other.hr,
            &format!("/agents/{}/hierarchy", their_root.uuid),
        )
        .await;
    assert_eq!(reply.data()["children"], json!([]));
    assert_eq!(
        app.get(&org.hr, &path).await.data()["children"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
}
