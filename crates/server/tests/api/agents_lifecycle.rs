//! Registering and administering agents (decisions D-18, D-50, D-54): register with its
//! defaults and its one-time secret, who may register, edits, revoke, suspend and
//! unsuspend, and reading agents (list with filters and paging, one agent), each refused
//! request leaving everything as it was.

use reqwest::Method;
use serde_json::{Value, json};
use uuid::Uuid;

use crate::agent_support::{agent_with, register, try_spawn};
use crate::helpers::{
    Agent, Org, Reply, TestApp, assert_bad_queries, assert_error, assert_error_exact,
    assert_timestamp, keys_of, send, str_of, unique_handle,
};
use crate::stored::{agents_of, all_agents};
use crate::task_tools::{Caller, event_total, patch, types};

api_tests!(
    register_applies_the_d50_defaults_and_shows_the_secret_once,
    register_refuses_invalid_bodies_and_stores_nothing,
    register_refuses_a_taken_agent_id_in_any_organization,
    register_is_for_hr_founder_and_admin_agents_and_admin_users,
    patch_changes_the_given_fields_and_names_them_in_the_event,
    patch_refuses_bad_requests_and_callers_and_changes_nothing,
    revoke_is_permanent_and_locks_the_agent_out,
    suspend_and_unsuspend_switch_an_agent_off_and_on,
    list_filters_pages_and_keeps_to_the_organization,
    get_reads_one_agent_of_the_organization_and_never_a_secret,
);

/// Every field of a full agent record (single reads, register, spawn, patch), sorted.
pub const RECORD_FIELDS: [&str; 19] = [
    "agentId",
    "budgetPeriodLimit",
    "budgetPeriodSpent",
    "budgetPeriodStart",
    "capabilities",
    "createdAt",
    "currentBalance",
    "id",
    "level",
    "managementFeePct",
    "metadata",
    "mode",
    "model",
    "name",
    "orgId",
    "parentId",
    "reputationScore",
    "role",
    "status",
];

/// Sorted keys of a JSON object.
pub fn sorted_keys(value: &Value) -> Vec<&str> {
    let mut keys = keys_of(value);
    keys.sort_unstable();
    keys
}

/// Asserts `secret` is 64 lowercase hex characters (decision D-50).
#[track_caller]
pub fn assert_secret_shape(secret: &str) {
    assert_eq!(secret.len(), 64, "secret {secret:?}");
    assert!(
        secret
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)),
        "secret {secret:?} is not lowercase hex"
    );
}

/// Asserts no object anywhere in `value` has a `secret` key.
#[track_caller]
pub fn assert_no_secret(value: &Value) {
    match value {
        Value::Object(map) => {
            assert!(!map.contains_key("secret"), "a secret in {value}");
            map.values().for_each(assert_no_secret);
        }
        Value::Array(items) => items.iter().for_each(assert_no_secret),
        _ => {}
    }
}

/// The signing agent of a register or spawn answer (asserting 200).
#[track_caller]
pub fn agent_of(reply: &Reply) -> Agent {
    let data = reply.data();
    Agent {
        uuid: str_of(data, "id").parse().unwrap(),
        handle: str_of(data, "agentId"),
        secret: str_of(&reply.body, "secret"),
    }
}

/// `POST /agents/register` by `caller` with `body`, answered.
pub async fn register_by(app: &TestApp, caller: &Caller, body: &Value) -> Reply {
    caller
        .call(app, Method::POST, "/agents/register", Some(body))
        .await
}

/// A minimal register body with a fresh handle and `extra` fields.
pub fn register_body(extra: &Value) -> Value {
    let handle = unique_handle("reg");
    let mut body = json!({ "agentId": handle, "name": format!("Agent {handle}") });
    crate::agent_support::merge(&mut body, extra);
    body
}

/// How many agents `org` stores.
pub async fn agents_in(app: &TestApp, org: &Org) -> i64 {
    i64::try_from(agents_of(app, org).await.len()).unwrap()
}

/// How many stored agents, in any organization, carry `handle`.
pub async fn with_handle(app: &TestApp, handle: &str) -> i64 {
    let carrying = all_agents(app)
        .await
        .iter()
        .filter(|a| a.handle.as_str() == handle)
        .count();
    i64::try_from(carrying).unwrap()
}

/// `POST /agents/:id/<action>` by `caller` without a body, answered.
pub async fn status_call(app: &TestApp, caller: &Caller, agent: &Agent, action: &str) -> Reply {
    caller
        .call(
            app,
            Method::POST,
            &format!("/agents/{}/{action}", agent.uuid),
            None,
        )
        .await
}

/// The status of `agent` as its organization's HR agent reads it.
pub async fn status_of(app: &TestApp, org: &Org, agent: &Agent) -> String {
    let reply = app.get(&org.hr, &format!("/agents/{}", agent.uuid)).await;
    str_of(reply.data(), "status")
}

/// Asserts `reply` is the status answer `{data: {id, agentId, status, level}, message}`.
#[track_caller]
pub fn assert_status_answer(reply: &Reply, agent: &Agent, status: &str, level: u8, message: &str) {
    assert_eq!(reply.status.as_u16(), 200, "{}", reply.text);
    assert_eq!(
        reply.body,
        json!({
            "data": {
                "id": agent.uuid.to_string(), "agentId": agent.handle,
                "status": status, "level": level,
            },
            "message": message,
        })
    );
}

/// Whether `agent` can sign a request: 200, or the 401 of a switched-off agent.
pub async fn can_sign(app: &TestApp, agent: &Agent) -> bool {
    let reply = app.get(agent, "/agents?limit=1").await;
    if reply.status.as_u16() == 200 {
        return true;
    }
    assert_error_exact(&reply, 401, "agent is not active");
    false
}

async fn register_applies_the_d50_defaults_and_shows_the_secret_once(app: &TestApp) {
    let hr = &app.org.hr;
    let handle = unique_handle("fresh");
    let body = json!({
        "agentId": handle,
        "name": "  Fresh Agent  ",
        "capabilities": [
            {"capability": "  Rust  ", "proficiency": "expert"},
            {"capability": "SQL"},
        ],
    });
    let reply = app.post(hr, "/agents/register", &body.to_string()).await;
    assert_eq!(reply.status.as_u16(), 200, "{}", reply.text);
    assert_eq!(sorted_keys(&reply.body), ["data", "message", "secret"]);
    assert_eq!(
        reply.body["message"],
        "Agent registered. Store the secret now: it is shown only once."
    );
    let secret = str_of(&reply.body, "secret");
    assert_secret_shape(&secret);
    let data = reply.data().clone();
    assert_eq!(sorted_keys(&data), RECORD_FIELDS);
    let id = str_of(&data, "id");
    let expected = json!({
        "id": id, "orgId": app.org.id.to_string(), "agentId": handle, "name": "Fresh Agent",
        "level": 1, "model": null, "role": "worker", "mode": "worker", "status": "active",
        "parentId": null, "currentBalance": 0, "budgetPeriodLimit": null,
        "budgetPeriodSpent": 0, "managementFeePct": 0, "reputationScore": 50,
        "metadata": {},
    });
    for (key, value) in expected.as_object().unwrap() {
        assert_eq!(&data[key], value, "{key}: {data}");
    }
    assert_timestamp(&data, "createdAt");
    assert_timestamp(&data, "budgetPeriodStart");
    let capabilities = data["capabilities"].as_array().unwrap();
    let named: Vec<(&str, &str)> = capabilities
        .iter()
        .map(|c| {
            (
                c["capability"].as_str().unwrap(),
                c["proficiency"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(named, [("rust", "expert"), ("sql", "standard")]);
    for capability in capabilities {
        assert_eq!(
            sorted_keys(capability),
            ["agentId", "capability", "createdAt", "id", "proficiency"]
        );
        assert_eq!(capability["agentId"], id.as_str());
    }

    // The secret works, and is never shown again.
    let agent = agent_of(&reply);
    let own = app.get(&agent, &format!("/agents/{id}")).await;
    assert_eq!(
        own.data(),
        &data,
        "the stored record is what register answered"
    );
    assert!(!own.text.contains(&secret));
    let by_hr = app.get(hr, &format!("/agents/{id}")).await;
    assert_no_secret(&by_hr.body);
    assert!(!by_hr.text.contains(&secret));
    let impostor = Agent {
        secret: hr.secret.clone(),
        ..agent.clone()
    };
    assert_error_exact(
        &app.get(&impostor, "/agents?limit=1").await,
        401,
        "invalid signature",
    );

    let events = app.events_of(hr, &id).await;
    assert_eq!(types(&events), ["agent.registered"]);
    assert_eq!(events[0]["actorId"], hr.uuid.to_string());
    assert_eq!(events[0]["entityType"], "agent");
    assert_eq!(
        events[0]["payload"],
        json!({"agentId": handle, "role": "worker", "level": 1})
    );
    register_with_every_field(app).await;
}

/// Every field of a register body given, at the edges of its range, is stored.
async fn register_with_every_field(app: &TestApp) {
    let long_handle = format!("{:x<100}", unique_handle("edge"));
    let long_name = "n".repeat(255);
    let (_, full) = register(
        app,
        &app.org,
        &json!({
            "agentId": long_handle, "name": long_name, "level": 10, "model": "m".repeat(100),
            "role": "hr", "mode": "orchestrator", "managementFeePct": 50,
            "budgetPeriodLimit": 0, "metadata": {"team": {"name": "blue"}},
        }),
    )
    .await;
    assert_eq!(full["agentId"], long_handle);
    assert_eq!(full["name"], long_name);
    assert_eq!(full["level"], 10);
    assert_eq!(full["model"], "m".repeat(100));
    assert_eq!(full["role"], "hr");
    assert_eq!(full["mode"], "orchestrator");
    assert_eq!(full["managementFeePct"], 50);
    assert_eq!(full["budgetPeriodLimit"], 0);
    assert_eq!(full["metadata"], json!({"team": {"name": "blue"}}));
    assert_eq!(full["capabilities"], json!([]));
    assert_eq!(full["status"], "active");
    let full_id = str_of(&full, "id");
    let events = app.events_of(&app.org.hr, &full_id).await;
    assert_eq!(
        events[0]["payload"],
        json!({"agentId": long_handle, "role": "hr", "level": 10})
    );
}

/// Register fields that are refused, with the message (`true`: exactly that message).
fn invalid_register_fields() -> Vec<(Value, &'static str, bool)> {
    let too_long = "a".repeat(101);
    vec![
        (
            json!({"agentId": too_long}),
            "agentId must be 1 to 100 characters",
            true,
        ),
        (
            json!({"agentId": ""}),
            "agentId must be 1 to 100 characters",
            true,
        ),
        (
            json!({"agentId": "has spaces"}),
            "agentId may only contain visible ASCII characters",
            true,
        ),
        (json!({"name": ""}), "name must not be empty", true),
        (json!({"name": "   "}), "name must not be empty", true),
        (
            json!({"name": "n".repeat(256)}),
            "name must be at most 255 characters",
            true,
        ),
        (json!({"level": 0}), "level must be between 1 and 10", true),
        (json!({"level": 11}), "level must be between 1 and 10", true),
        (json!({"level": "high"}), "level", false),
        (
            json!({"managementFeePct": 51}),
            "managementFeePct must be between 0 and 50",
            true,
        ),
        (
            json!({"managementFeePct": -1}),
            "managementFeePct must be between 0 and 50",
            true,
        ),
        (
            json!({"budgetPeriodLimit": -1}),
            "budgetPeriodLimit must be at least 0",
            true,
        ),
        (
            json!({"model": "m".repeat(101)}),
            "model must be at most 100 characters",
            true,
        ),
        (json!({"role": "boss"}), "role", false),
        (json!({"mode": "sleepy"}), "mode", false),
        (
            json!({"color": "red"}),
            "property color should not exist",
            true,
        ),
        (
            json!({"status": "pending"}),
            "property status should not exist",
            true,
        ),
        (
            json!({"parentId": Uuid::now_v7()}),
            "property parentId should not exist",
            true,
        ),
        (
            json!({"capabilities": [{"capability": "Rust"}, {"capability": " rust "}]}),
            "capabilities must not repeat \"rust\"",
            true,
        ),
        (
            json!({"capabilities": [{"capability": "  "}]}),
            "capability must be 1 to",
            false,
        ),
        (
            json!({"capabilities": [{"capability": "go", "proficiency": "guru"}]}),
            "proficiency",
            false,
        ),
        (
            json!({"metadata": [1, 2]}),
            "metadata must be a JSON object",
            true,
        ),
    ]
}

async fn register_refuses_invalid_bodies_and_stores_nothing(app: &TestApp) {
    let hr = &app.org.hr;
    let cases = invalid_register_fields();
    let agents_before = agents_in(app, &app.org).await;
    let events_before = event_total(app, hr).await;
    for (extra, message, exact) in &cases {
        let body = register_body(extra);
        let reply = app.post(hr, "/agents/register", &body.to_string()).await;
        if *exact {
            assert_error_exact(&reply, 400, message);
        } else {
            assert_error(&reply, 400, message);
        }
    }
    // Bodies that are not an object with the required fields.
    let raw: [(&str, &str); 6] = [
        ("", "request body must be a JSON object"),
        ("[]", "request body must be a JSON object"),
        ("{\"agentId\": \"x\",", "malformed JSON"),
        ("not json", "malformed JSON"),
        ("{\"name\": \"no handle\"}", "agentId is required"),
        ("{\"agentId\": \"no-name\"}", "name is required"),
    ];
    for (body, message) in raw {
        let reply = app.post(hr, "/agents/register", body).await;
        assert_error(&reply, 400, message);
    }
    assert_eq!(agents_in(app, &app.org).await, agents_before);
    assert_eq!(event_total(app, hr).await, events_before);
}

async fn register_refuses_a_taken_agent_id_in_any_organization(app: &TestApp) {
    let (first, record) = register(app, &app.org, &json!({"name": "first"})).await;
    let taken = |handle: &str| format!("agentId {handle} is taken");
    let agents_before = agents_in(app, &app.org).await;
    let others_before = agents_in(app, &app.other).await;
    let events_before = event_total(app, &app.org.hr).await;
    let again = json!({"agentId": first.handle, "name": "second"});
    for org in [&app.org, &app.other] {
        let reply = app
            .post(&org.hr, "/agents/register", &again.to_string())
            .await;
        assert_error_exact(&reply, 409, &taken(&first.handle));
    }
    // The other organization's HR handle is taken here too.
    let theirs = json!({"agentId": app.other.hr.handle, "name": "copy"});
    let reply = app
        .post(&app.org.hr, "/agents/register", &theirs.to_string())
        .await;
    assert_error_exact(&reply, 409, &taken(&app.other.hr.handle));
    assert_eq!(with_handle(app, &first.handle).await, 1);
    assert_eq!(with_handle(app, &app.other.hr.handle).await, 1);
    assert_eq!(agents_in(app, &app.org).await, agents_before);
    assert_eq!(agents_in(app, &app.other).await, others_before);
    assert_eq!(event_total(app, &app.org.hr).await, events_before);
    let stored = app
        .get(&app.org.hr, &format!("/agents/{}", first.uuid))
        .await;
    assert_eq!(stored.data(), &record, "the first agent is untouched");
}

async fn register_is_for_hr_founder_and_admin_agents_and_admin_users(app: &TestApp) {
    let org = &app.org;
    let admin = app.admin_token(org).await;
    let (_, operator) = app.user_token(org, "operator").await;
    let (_, viewer) = app.user_token(org, "viewer").await;
    let write_key = app.api_key(&admin, &["write"]).await;
    let read_key = app.api_key(&admin, &["read"]).await;
    let admin_key = app.api_key(&admin, &["admin"]).await;
    let worker = agent_with(app, org, 9, "worker", "worker").await;
    let orchestrator = agent_with(app, org, 9, "worker", "orchestrator").await;
    let observer_hr = agent_with(app, org, 9, "hr", "observer").await;
    let hr_role = agent_with(app, org, 2, "hr", "worker").await;

    // Founder and admin agents come only from admin users (or founder/admin agents).
    let admin_user = Caller::Bearer(admin.clone());
    let founder_reply = register_by(
        app,
        &admin_user,
        &register_body(&json!({"role": "founder"})),
    )
    .await;
    let founder = agent_of(&founder_reply);
    assert_eq!(founder_reply.data()["role"], "founder");
    let admin_agent_reply = register_by(
        app,
        &Caller::Agent(founder.clone()),
        &register_body(&json!({"role": "admin"})),
    )
    .await;
    let admin_agent = agent_of(&admin_agent_reply);
    assert_eq!(admin_agent_reply.data()["role"], "admin");

    let agents_before = agents_in(app, org).await;
    let events_before = event_total(app, &org.hr).await;
    let hr_only = "this action needs the hr, founder or admin role";
    let privileged =
        "only founder or admin agents and admin users may create founder or admin agents";
    let refused: Vec<(Caller, Value, &str)> = vec![
        (Caller::Agent(worker), json!({}), hr_only),
        (Caller::Agent(orchestrator), json!({}), hr_only),
        (
            Caller::Agent(observer_hr),
            json!({}),
            "observer agents are read-only",
        ),
        (Caller::Bearer(operator), json!({}), hr_only),
        (
            Caller::Bearer(viewer),
            json!({}),
            "viewer users are read-only",
        ),
        (
            Caller::Bearer(write_key),
            json!({}),
            "API key lacks the admin scope",
        ),
        (
            Caller::Bearer(read_key),
            json!({}),
            "API key lacks the write scope",
        ),
        (
            Caller::Agent(org.hr.clone()),
            json!({"role": "founder"}),
            privileged,
        ),
        (
            Caller::Agent(org.hr.clone()),
            json!({"role": "admin"}),
            privileged,
        ),
        (
            Caller::Agent(hr_role.clone()),
            json!({"role": "admin"}),
            privileged,
        ),
    ];
    refused_registrations(app, &refused).await;
    assert_eq!(agents_in(app, org).await, agents_before);
    assert_eq!(event_total(app, &org.hr).await, events_before);
    let registrars = [
        Caller::Agent(org.hr.clone()),
        Caller::Agent(hr_role),
        Caller::Agent(founder),
        Caller::Agent(admin_agent),
        admin_user,
        Caller::Bearer(admin_key),
    ];
    registered_by_each(app, &registrars).await;
    assert_eq!(agents_in(app, org).await, agents_before + 6);
    assert_eq!(
        agents_in(app, &app.other).await,
        1,
        "nothing in the other org"
    );
}

/// Each of `refused` (caller, extra fields, message) is 403 and stores nothing; without
/// credentials it is 401.
async fn refused_registrations(app: &TestApp, refused: &[(Caller, Value, &str)]) {
    for (caller, extra, message) in refused {
        let body = register_body(extra);
        let reply = register_by(app, caller, &body).await;
        assert_eq!(reply.status.as_u16(), 403, "{caller:?}: {}", reply.text);
        assert_error_exact(&reply, 403, message);
        assert_eq!(with_handle(app, &str_of(&body, "agentId")).await, 0);
    }
    let anonymous = send(
        app.anonymous(Method::POST, "/agents/register")
            .json(&register_body(&json!({}))),
    )
    .await;
    assert_error_exact(
        &anonymous,
        401,
        "missing credentials: sign the request as an agent or send Authorization: Bearer <token>",
    );
}

/// Each of `registrars` (HR agent, HR-role agent, founder agent, admin agent, admin user,
/// admin key) registers an agent of the role it may give, and the event names it.
async fn registered_by_each(app: &TestApp, registrars: &[Caller; 6]) {
    let org = &app.org;
    let actor = |caller: &Caller| match caller {
        Caller::Agent(agent) => agent.uuid.to_string(),
        Caller::Bearer(_) => String::new(),
    };
    let [hr, hr_role, founder, admin_agent, admin_user, admin_key] = registrars;
    let allowed: Vec<(&Caller, Value)> = vec![
        (hr, json!({"role": "hr"})),
        (hr_role, json!({})),
        (founder, json!({"role": "founder"})),
        (admin_agent, json!({"role": "admin"})),
        (admin_user, json!({"role": "admin"})),
        (admin_key, json!({})),
    ];
    for (caller, extra) in &allowed {
        let reply = register_by(app, caller, &register_body(extra)).await;
        assert_eq!(reply.status.as_u16(), 200, "{caller:?}: {}", reply.text);
        let agent = agent_of(&reply);
        assert_eq!(reply.data()["orgId"], org.id.to_string());
        let role = extra
            .get("role")
            .cloned()
            .unwrap_or_else(|| json!("worker"));
        assert_eq!(reply.data()["role"], role);
        assert!(can_sign(app, &agent).await, "{caller:?}");
        let events = app.events_of(&org.hr, &agent.uuid.to_string()).await;
        assert_eq!(types(&events), ["agent.registered"]);
        let actor = actor(caller);
        if !actor.is_empty() {
            assert_eq!(events[0]["actorId"], actor.as_str());
        }
    }
}

async fn patch_changes_the_given_fields_and_names_them_in_the_event(app: &TestApp) {
    let hr = &app.org.hr;
    let (agent, _) = register(
        app,
        &app.org,
        &json!({
            "level": 3, "model": "m1", "budgetPeriodLimit": 100,
            "metadata": {"a": 1, "b": {"c": 2}},
            "capabilities": [{"capability": "rust"}],
        }),
    )
    .await;
    let path = format!("/agents/{}", agent.uuid);
    let body = json!({
        "name": "  Renamed  ", "level": 4, "model": null, "mode": "orchestrator",
        "managementFeePct": 20, "budgetPeriodLimit": null, "metadata": {"d": 3},
    });
    let reply = patch(app, hr, &path, &body.to_string()).await;
    let data = reply.data().clone();
    assert_eq!(sorted_keys(&reply.body), ["data"]);
    assert_eq!(sorted_keys(&data), RECORD_FIELDS);
    assert_eq!(data["name"], "Renamed");
    assert_eq!(data["level"], 4);
    assert_eq!(data["model"], Value::Null);
    assert_eq!(data["mode"], "orchestrator");
    assert_eq!(data["managementFeePct"], 20);
    assert_eq!(
        data["budgetPeriodLimit"],
        Value::Null,
        "null means no limit"
    );
    assert_eq!(data["metadata"], json!({"d": 3}), "replaced, not merged");
    assert_eq!(data["capabilities"][0]["capability"], "rust");
    assert_eq!(data["status"], "active");
    assert_eq!(data["role"], "worker");
    assert_no_secret(&reply.body);
    assert_eq!(app.get(hr, &path).await.data(), &data, "stored as answered");
    let events = app.events_of(hr, &agent.uuid.to_string()).await;
    assert_eq!(types(&events), ["agent.updated", "agent.registered"]);
    assert_eq!(events[0]["actorId"], hr.uuid.to_string());
    assert_eq!(
        events[0]["payload"],
        json!({"fields": [
            "name", "level", "model", "mode", "managementFeePct", "budgetPeriodLimit",
            "metadata",
        ]})
    );

    // A patch that changes nothing answers the record and writes no event.
    let same = json!({"name": "Renamed", "level": 4, "model": null, "metadata": {"d": 3}});
    let reply = patch(app, hr, &path, &same.to_string()).await;
    assert_eq!(reply.data(), &data);
    assert_eq!(app.events_of(hr, &agent.uuid.to_string()).await.len(), 2);

    // Some fields: only those change, and only they are named.
    let reply = patch(
        app,
        hr,
        &path,
        &json!({"model": "m2", "budgetPeriodLimit": 0, "name": "Renamed"}).to_string(),
    )
    .await;
    let after = reply.data().clone();
    assert_eq!(after["model"], "m2");
    assert_eq!(after["budgetPeriodLimit"], 0);
    for key in [
        "name",
        "level",
        "mode",
        "managementFeePct",
        "metadata",
        "role",
    ] {
        assert_eq!(after[key], data[key], "{key} unchanged");
    }
    let events = app.events_of(hr, &agent.uuid.to_string()).await;
    assert_eq!(events.len(), 3);
    assert_eq!(
        events[0]["payload"],
        json!({"fields": ["model", "budgetPeriodLimit"]})
    );

    others_may_patch(app, &path).await;
}

/// Admin users and admin-scoped keys may edit the agent at `path`; an HR agent may edit
/// itself apart from its level.
async fn others_may_patch(app: &TestApp, path: &str) {
    let hr = &app.org.hr;
    let admin = app.admin_token(&app.org).await;
    let admin_key = app.api_key(&admin, &["admin"]).await;
    for (caller, name) in [
        (Caller::Bearer(admin), "by admin"),
        (Caller::Bearer(admin_key), "by admin key"),
    ] {
        let reply = caller
            .call(
                app,
                Method::PATCH,
                path,
                Some(&json!({"name": name, "level": 2})),
            )
            .await;
        assert_eq!(reply.data()["name"], name);
        assert_eq!(reply.data()["level"], 2);
    }
    let me = format!("/agents/{}", hr.uuid);
    let reply = patch(
        app,
        hr,
        &me,
        &json!({"name": "HR renamed", "metadata": {"self": true}}).to_string(),
    )
    .await;
    assert_eq!(reply.data()["name"], "HR renamed");
    assert_eq!(reply.data()["level"], 10);
    let events = app.events_of(hr, &hr.uuid.to_string()).await;
    assert_eq!(
        events[0]["payload"],
        json!({"fields": ["name", "metadata"]})
    );
    assert_eq!(events[0]["actorId"], hr.uuid.to_string());
}

/// `PATCH /agents/:id` bodies that are refused with 400, with the message (`true`:
/// exactly that message).
fn invalid_patches() -> Vec<(&'static str, &'static str, bool)> {
    vec![
        ("{}", "at least one field must be given", true),
        ("{\"name\": null}", "name must not be null", true),
        ("{\"level\": null}", "level must not be null", true),
        ("{\"mode\": null}", "mode must not be null", true),
        ("{\"metadata\": null}", "metadata must not be null", true),
        (
            "{\"managementFeePct\": null}",
            "managementFeePct must not be null",
            true,
        ),
        ("{\"name\": \" \"}", "name must not be empty", true),
        ("{\"level\": 0}", "level must be between 1 and 10", true),
        ("{\"level\": 11}", "level must be between 1 and 10", true),
        (
            "{\"managementFeePct\": 51}",
            "managementFeePct must be between 0 and 50",
            true,
        ),
        (
            "{\"budgetPeriodLimit\": -1}",
            "budgetPeriodLimit must be at least 0",
            true,
        ),
        ("{\"mode\": \"boss\"}", "mode", false),
        ("{\"role\": \"hr\"}", "property role should not exist", true),
        (
            "{\"status\": \"revoked\"}",
            "property status should not exist",
            true,
        ),
        (
            "{\"metadata\": \"text\"}",
            "metadata must be a JSON object",
            true,
        ),
        ("{\"name\": ", "malformed JSON", false),
        ("", "request body must be a JSON object", true),
    ]
}

async fn patch_refuses_bad_requests_and_callers_and_changes_nothing(app: &TestApp) {
    let org = &app.org;
    let hr = &org.hr;
    let (target, _) = register(app, org, &json!({"level": 3, "model": "m1"})).await;
    let path = format!("/agents/{}", target.uuid);
    let snapshot = app.get(hr, &path).await.data().clone();
    let own_hr = agent_with(app, org, 8, "hr", "worker").await;
    let own_snapshot = app
        .get(hr, &format!("/agents/{}", own_hr.uuid))
        .await
        .data()
        .clone();
    let (theirs, their_record) = register(app, &app.other, &json!({})).await;
    // Who may not edit agents at all (made before the snapshot of the events).
    let admin = app.admin_token(org).await;
    let (_, operator) = app.user_token(org, "operator").await;
    let (_, viewer) = app.user_token(org, "viewer").await;
    let hr_only = "this action needs the hr, founder or admin role";
    let refused = [
        (Caller::Agent(app.worker(org).await), hr_only),
        (
            Caller::Agent(agent_with(app, org, 10, "worker", "orchestrator").await),
            hr_only,
        ),
        (
            Caller::Agent(agent_with(app, org, 10, "hr", "observer").await),
            "observer agents are read-only",
        ),
        (Caller::Agent(target.clone()), hr_only),
        (Caller::Bearer(operator), hr_only),
        (Caller::Bearer(viewer), "viewer users are read-only"),
        (
            Caller::Bearer(app.api_key(&admin, &["write"]).await),
            "API key lacks the admin scope",
        ),
    ];
    let events_before = event_total(app, hr).await;
    let their_events = event_total(app, &app.other.hr).await;

    let bad = invalid_patches();
    for (body, message, exact) in &bad {
        let reply = patch(app, hr, &path, body).await;
        if *exact {
            assert_error_exact(&reply, 400, message);
        } else {
            assert_error(&reply, 400, message);
        }
    }
    let long_model = json!({"model": "m".repeat(101)}).to_string();
    assert_error_exact(
        &patch(app, hr, &path, &long_model).await,
        400,
        "model must be at most 100 characters",
    );
    patch_misses(app, &theirs).await;

    // Nobody changes their own level, not even together with allowed fields.
    let own_path = format!("/agents/{}", own_hr.uuid);
    for body in [
        json!({"level": 9}),
        json!({"level": 8}),
        json!({"name": "x", "level": 7}),
    ] {
        assert_error_exact(
            &patch(app, &own_hr, &own_path, &body.to_string()).await,
            403,
            "you cannot change your own level or role",
        );
    }

    for (caller, message) in &refused {
        for body in [json!({"name": "hijacked"}), json!({"level": 9})] {
            let reply = caller.call(app, Method::PATCH, &path, Some(&body)).await;
            assert_eq!(reply.status.as_u16(), 403, "{caller:?}: {}", reply.text);
            assert_error_exact(&reply, 403, message);
        }
    }
    let anonymous = send(
        app.anonymous(Method::PATCH, &path)
            .json(&json!({"name": "anon"})),
    )
    .await;
    assert_error(&anonymous, 401, "missing credentials");

    assert_eq!(app.get(hr, &path).await.data(), &snapshot);
    assert_eq!(app.get(hr, &own_path).await.data(), &own_snapshot);
    let their_path = format!("/agents/{}", theirs.uuid);
    assert_eq!(
        app.get(&app.other.hr, &their_path).await.data(),
        &their_record
    );
    assert_eq!(event_total(app, hr).await, events_before);
    assert_eq!(event_total(app, &app.other.hr).await, their_events);
}

/// `PATCH` of an id that is no UUID (400), unknown or in the other organization (404).
async fn patch_misses(app: &TestApp, theirs: &Agent) {
    let hr = &app.org.hr;
    let rename = json!({"name": "nope"}).to_string();
    assert_error_exact(
        &patch(app, hr, "/agents/not-a-uuid", &rename).await,
        400,
        "id must be a UUID",
    );
    let ghost = Uuid::now_v7();
    assert_error_exact(
        &patch(app, hr, &format!("/agents/{ghost}"), &rename).await,
        404,
        &format!("Agent {ghost} not found"),
    );
    assert_error_exact(
        &patch(app, hr, &format!("/agents/{}", theirs.uuid), &rename).await,
        404,
        &format!("Agent {} not found", theirs.uuid),
    );
}

async fn revoke_is_permanent_and_locks_the_agent_out(app: &TestApp) {
    let org = &app.org;
    let hr = Caller::Agent(org.hr.clone());
    let (target, _) = register(app, org, &json!({"level": 4})).await;
    let colleague = agent_with(app, org, 9, "hr", "worker").await;
    assert!(can_sign(app, &target).await);
    let admin = app.admin_token(org).await;
    let (_, viewer) = app.user_token(org, "viewer").await;
    let refused = [
        (
            Caller::Agent(app.worker(org).await),
            "this action needs the hr, founder or admin role",
        ),
        (
            Caller::Agent(target.clone()),
            "this action needs the hr, founder or admin role",
        ),
        (Caller::Bearer(viewer), "viewer users are read-only"),
        (
            Caller::Bearer(app.api_key(&admin, &["write"]).await),
            "API key lacks the admin scope",
        ),
    ];
    let events_before = event_total(app, &org.hr).await;

    // Refused: oneself, non-HR callers, a write-scoped key, bodies with fields.
    assert_error_exact(
        &status_call(app, &hr, &org.hr, "revoke").await,
        403,
        "you cannot revoke or suspend yourself",
    );
    for (caller, message) in &refused {
        let reply = status_call(app, caller, &target, "revoke").await;
        assert_eq!(reply.status.as_u16(), 403, "{caller:?}: {}", reply.text);
        assert_error_exact(&reply, 403, message);
    }
    let with_body = app
        .post(
            &org.hr,
            &format!("/agents/{}/revoke", target.uuid),
            "{\"reason\": \"x\"}",
        )
        .await;
    assert_error_exact(&with_body, 400, "property reason should not exist");
    assert_error_exact(
        &app.post(&org.hr, "/agents/nope/revoke", "").await,
        400,
        "id must be a UUID",
    );
    let (theirs, _) = register(app, &app.other, &json!({})).await;
    assert_error_exact(
        &status_call(app, &hr, &theirs, "revoke").await,
        404,
        &format!("Agent {} not found", theirs.uuid),
    );
    assert_eq!(status_of(app, &app.other, &theirs).await, "active");
    assert_eq!(status_of(app, org, &target).await, "active");
    assert_eq!(status_of(app, org, &org.hr).await, "active");
    assert_eq!(event_total(app, &org.hr).await, events_before);

    // Revoked: the agent can no longer sign, from its very next request (it signed
    // just before, so the instance holds its credentials); revocation is final.
    assert!(can_sign(app, &target).await);
    let reply = status_call(app, &Caller::Agent(colleague.clone()), &target, "revoke").await;
    assert_status_answer(&reply, &target, "revoked", 4, "Agent revoked");
    assert!(!can_sign(app, &target).await);
    assert_eq!(status_of(app, org, &target).await, "revoked");
    let final_word = "Agent is revoked; revocation is permanent";
    for action in ["revoke", "suspend", "unsuspend", "activate"] {
        assert_error_exact(
            &status_call(app, &hr, &target, action).await,
            409,
            final_word,
        );
    }
    assert_eq!(status_of(app, org, &target).await, "revoked");
    let events = app.events_of(&org.hr, &target.uuid.to_string()).await;
    assert_eq!(types(&events), ["agent.revoked", "agent.registered"]);
    assert_eq!(events[0]["actorId"], colleague.uuid.to_string());
    assert_eq!(
        events[0]["payload"],
        json!({"agentId": target.handle, "reason": null})
    );

    // Suspended and pending agents may be revoked too, also by an admin user.
    let (suspended, _) = register(app, org, &json!({})).await;
    let reply = status_call(app, &hr, &suspended, "suspend").await;
    assert_eq!(reply.status.as_u16(), 200, "{}", reply.text);
    let admin_user = Caller::Bearer(admin);
    let reply = status_call(app, &admin_user, &suspended, "revoke").await;
    assert_status_answer(&reply, &suspended, "revoked", 1, "Agent revoked");
    let parent = agent_with(app, org, 5, "worker", "worker").await;
    let pending = agent_of(&try_spawn(app, &parent, &json!({})).await);
    let reply = status_call(app, &hr, &pending, "revoke").await;
    assert_status_answer(&reply, &pending, "revoked", 4, "Agent revoked");
    assert!(!can_sign(app, &pending).await);
}

async fn suspend_and_unsuspend_switch_an_agent_off_and_on(app: &TestApp) {
    let org = &app.org;
    let hr = Caller::Agent(org.hr.clone());
    let (target, _) = register(app, org, &json!({"level": 6})).await;

    // Refused while active: unsuspend (409), oneself, non-HR.
    assert_error_exact(
        &status_call(app, &hr, &target, "unsuspend").await,
        409,
        "Agent is active and cannot be unsuspended",
    );
    for action in ["suspend", "unsuspend"] {
        assert_error_exact(
            &status_call(app, &hr, &org.hr, action).await,
            403,
            "you cannot revoke or suspend yourself",
        );
        let reply = status_call(app, &Caller::Agent(app.worker(org).await), &target, action).await;
        assert_error_exact(
            &reply,
            403,
            "this action needs the hr, founder or admin role",
        );
    }
    assert_eq!(status_of(app, org, &target).await, "active");
    assert_eq!(
        app.events_of(&org.hr, &target.uuid.to_string()).await.len(),
        1
    );

    // At once: the agent signed just before, and its next request is refused.
    assert!(can_sign(app, &target).await);
    let reply = status_call(app, &hr, &target, "suspend").await;
    assert_status_answer(&reply, &target, "suspended", 6, "Agent suspended");
    assert!(!can_sign(app, &target).await);
    assert_eq!(status_of(app, org, &target).await, "suspended");
    assert_error_exact(
        &status_call(app, &hr, &target, "suspend").await,
        409,
        "Agent is suspended and cannot be suspended",
    );
    assert_error_exact(
        &status_call(app, &hr, &target, "activate").await,
        409,
        "Agent is suspended and cannot be activated",
    );
    // A suspended agent cannot unsuspend itself: it cannot even sign.
    assert_error_exact(
        &status_call(app, &Caller::Agent(target.clone()), &target, "unsuspend").await,
        401,
        "agent is not active",
    );

    let admin = app.admin_token(org).await;
    let reply = status_call(app, &Caller::Bearer(admin), &target, "unsuspend").await;
    assert_status_answer(&reply, &target, "active", 6, "Agent unsuspended");
    assert!(
        can_sign(app, &target).await,
        "works again at once after unsuspend"
    );
    assert_error_exact(
        &status_call(app, &hr, &target, "unsuspend").await,
        409,
        "Agent is active and cannot be unsuspended",
    );
    let events = app.events_of(&org.hr, &target.uuid.to_string()).await;
    assert_eq!(
        types(&events),
        ["agent.unsuspended", "agent.suspended", "agent.registered"]
    );
    assert_eq!(events[1]["actorId"], org.hr.uuid.to_string());
    assert_eq!(
        events[0]["payload"],
        json!({"agentId": target.handle, "reason": null})
    );
    assert_eq!(events[1]["payload"], events[0]["payload"]);

    // A pending agent is neither suspended nor unsuspended.
    let parent = agent_with(app, org, 5, "worker", "worker").await;
    let pending = agent_of(&try_spawn(app, &parent, &json!({})).await);
    for (action, word) in [("suspend", "suspended"), ("unsuspend", "unsuspended")] {
        assert_error_exact(
            &status_call(app, &hr, &pending, action).await,
            409,
            &format!("Agent is pending and cannot be {word}"),
        );
    }
    assert_eq!(status_of(app, org, &pending).await, "pending");
    let (theirs, _) = register(app, &app.other, &json!({})).await;
    assert_error_exact(
        &status_call(app, &hr, &theirs, "suspend").await,
        404,
        &format!("Agent {} not found", theirs.uuid),
    );
    assert!(can_sign(app, &theirs).await);
}

async fn list_filters_pages_and_keeps_to_the_organization(app: &TestApp) {
    let org = &app.org;
    let hr = &org.hr;
    let parent = agent_with(app, org, 5, "worker", "worker").await;
    let pending = agent_of(&try_spawn(app, &parent, &json!({})).await);
    let active_child = agent_of(&try_spawn(app, &parent, &json!({})).await);
    let activated = app
        .post(
            &parent,
            &format!("/agents/{}/activate", active_child.uuid),
            "",
        )
        .await;
    assert_eq!(activated.status.as_u16(), 200, "{}", activated.text);
    let hr_role = agent_with(app, org, 4, "hr", "worker").await;
    let observer = agent_with(app, org, 4, "worker", "observer").await;
    let orchestrator = agent_with(app, org, 4, "worker", "orchestrator").await;
    let (suspended, _) = register(app, org, &json!({})).await;
    status_call(app, &Caller::Agent(hr.clone()), &suspended, "suspend")
        .await
        .data();
    let (revoked, _) = register(app, org, &json!({})).await;
    status_call(app, &Caller::Agent(hr.clone()), &revoked, "revoke")
        .await
        .data();
    // The other organization has agents of every kind too.
    let their_parent = agent_with(app, &app.other, 5, "hr", "observer").await;
    let their_worker = agent_with(app, &app.other, 5, "worker", "worker").await;
    let their_child = agent_of(&try_spawn(app, &their_worker, &json!({})).await);

    let all = app.get(hr, "/agents?limit=500").await;
    assert_eq!(sorted_keys(&all.body), ["data"], "no meta on the last page");
    let ids = all.ids();
    assert_eq!(i64::try_from(ids.len()).unwrap(), agents_in(app, org).await);
    assert_eq!(ids.len(), 9);
    let mut newest_first = ids.clone();
    newest_first.sort_unstable_by(|a, b| b.cmp(a));
    assert_eq!(ids, newest_first, "newest first");
    for agent in all.list() {
        assert_eq!(agent["orgId"], org.id.to_string());
        let mut fields = RECORD_FIELDS.to_vec();
        fields.retain(|f| *f != "capabilities");
        assert_eq!(
            sorted_keys(agent),
            fields,
            "list entries leave out capabilities"
        );
    }
    for theirs in [&their_parent, &their_worker, &their_child, &app.other.hr] {
        assert!(!ids.contains(&theirs.uuid.to_string()));
    }
    assert_no_secret(&all.body);
    let their_ids = app.get(&app.other.hr, "/agents?limit=500").await.ids();
    assert_eq!(their_ids.len(), 4);
    assert!(their_ids.iter().all(|id| !ids.contains(id)));

    let uuid = |a: &Agent| a.uuid.to_string();
    let parent_is = format!("parentId={}", parent.uuid);
    let filtered: Vec<(String, Vec<String>)> = vec![
        ("status=pending".into(), vec![uuid(&pending)]),
        ("status=suspended".into(), vec![uuid(&suspended)]),
        ("status=revoked".into(), vec![uuid(&revoked)]),
        ("role=hr".into(), vec![uuid(&hr_role), uuid(hr)]),
        ("mode=observer".into(), vec![uuid(&observer)]),
        ("mode=orchestrator".into(), vec![uuid(&orchestrator)]),
        (parent_is.clone(), vec![uuid(&active_child), uuid(&pending)]),
        (
            format!("{parent_is}&status=active"),
            vec![uuid(&active_child)],
        ),
        (
            format!("{parent_is}&status=pending&mode=worker&role=worker"),
            vec![uuid(&pending)],
        ),
        ("status=active&role=hr&mode=observer".into(), vec![]),
        (format!("parentId={}", their_worker.uuid), vec![]),
        ("role=founder".into(), vec![]),
    ];
    for (query, expected) in &filtered {
        let reply = app.get(hr, &format!("/agents?{query}")).await;
        assert_eq!(&reply.ids(), expected, "{query}");
    }
    let their_pending = app.get(&app.other.hr, "/agents?status=pending").await.ids();
    assert_eq!(their_pending, [uuid(&their_child)]);

    walk_pages(app, &ids, &parent, &[uuid(&active_child), uuid(&pending)]).await;
    list_refuses_bad_queries(app).await;

    // Read-only callers list too.
    let (_, viewer) = app.user_token(org, "viewer").await;
    let reply = send(app.bearer(&viewer, Method::GET, "/agents?limit=500", None)).await;
    assert_eq!(reply.ids(), ids);
    assert_eq!(app.get(&observer, "/agents?limit=500").await.ids(), ids);
}

/// Pages of 4 walk `ids` (the whole list) in order, only a page with more after it having
/// `meta`; pages of 1 of `parent`'s `children` keep the filter.
async fn walk_pages(app: &TestApp, ids: &[String], parent: &Agent, children: &[String; 2]) {
    let hr = &app.org.hr;
    let mut walked = Vec::new();
    let mut query = "/agents?limit=4".to_owned();
    let mut pages = 0;
    loop {
        let reply = app.get(hr, &query).await;
        pages += 1;
        let page = reply.ids();
        walked.extend(page.clone());
        match reply.body.get("meta") {
            Some(meta) => {
                assert_eq!(page.len(), 4);
                let cursor = str_of(meta, "nextCursor");
                assert_eq!(&cursor, page.last().unwrap());
                query = format!("/agents?limit=4&cursor={cursor}");
            }
            None => break,
        }
    }
    assert_eq!(walked, ids);
    assert_eq!(pages, 3);
    let filtered_page = app
        .get(hr, &format!("/agents?parentId={}&limit=1", parent.uuid))
        .await;
    assert_eq!(filtered_page.ids(), [children[0].clone()]);
    let cursor = str_of(&filtered_page.body["meta"], "nextCursor");
    let next = app
        .get(
            hr,
            &format!("/agents?parentId={}&limit=1&cursor={cursor}", parent.uuid),
        )
        .await;
    assert_eq!(next.ids(), [children[1].clone()]);
    assert!(next.body.get("meta").is_none());
    assert_eq!(app.get(hr, "/agents").await.ids(), ids, "default limit 100");
}

/// Bad `GET /agents` queries are 400 naming the problem.
async fn list_refuses_bad_queries(app: &TestApp) {
    let hr = &app.org.hr;
    assert_bad_queries(
        app,
        hr,
        "/agents",
        &[
            ("limit=0", "limit must be between 1 and 500"),
            ("limit=501", "limit must be between 1 and 500"),
            ("limit=-1", "limit"),
            ("limit=many", "limit"),
            (
                "cursor=abc",
                "cursor is not valid; pass meta.nextCursor of the previous page",
            ),
            ("status=zombie", "status"),
            ("role=boss", "role"),
            ("mode=sleepy", "mode"),
            ("parentId=abc", "parentId"),
            ("name=x", "property name should not exist"),
        ],
    )
    .await;
    for query in ["limit=0", "limit=501", "cursor=abc"] {
        let reply = app.get(hr, &format!("/agents?{query}")).await;
        if query.starts_with("limit") {
            assert_error_exact(&reply, 400, "limit must be between 1 and 500");
        } else {
            assert_error_exact(
                &reply,
                400,
                "cursor is not valid; pass meta.nextCursor of the previous page",
            );
        }
    }
}

async fn get_reads_one_agent_of_the_organization_and_never_a_secret(app: &TestApp) {
    let org = &app.org;
    let hr = &org.hr;
    let register_reply = app
        .post(
            hr,
            "/agents/register",
            &register_body(&json!({"level": 5, "capabilities": [{"capability": "go"}]}))
                .to_string(),
        )
        .await;
    let agent = agent_of(&register_reply);
    let record = register_reply.data().clone();
    let child = agent_of(&try_spawn(app, &agent, &json!({})).await);
    let (theirs, _) = register(app, &app.other, &json!({})).await;

    // Every reader of the organization gets the same record.
    let (_, viewer) = app.user_token(org, "viewer").await;
    let admin = app.admin_token(org).await;
    let read_key = app.api_key(&admin, &["read"]).await;
    let observer = agent_with(app, org, 1, "worker", "observer").await;
    let path = format!("/agents/{}", agent.uuid);
    let readers = [
        Caller::Agent(hr.clone()),
        Caller::Agent(agent.clone()),
        Caller::Agent(observer),
        Caller::Bearer(viewer),
        Caller::Bearer(read_key),
    ];
    for reader in &readers {
        let reply = reader.call(app, Method::GET, &path, None).await;
        assert_eq!(sorted_keys(&reply.body), ["data"]);
        assert_eq!(reply.data(), &record, "{reader:?}");
    }

    let ghost = Uuid::now_v7();
    assert_error_exact(
        &app.get(hr, &format!("/agents/{ghost}")).await,
        404,
        &format!("Agent {ghost} not found"),
    );
    assert_error_exact(
        &app.get(hr, &format!("/agents/{}", theirs.uuid)).await,
        404,
        &format!("Agent {} not found", theirs.uuid),
    );
    assert_error_exact(
        &app.get(&theirs, &path).await,
        404,
        &format!("Agent {} not found", agent.uuid),
    );
    assert_error_exact(
        &app.get(hr, "/agents/12345").await,
        400,
        "id must be a UUID",
    );
    assert_error(
        &send(app.anonymous(Method::GET, &path)).await,
        401,
        "missing credentials",
    );

    // No answer about an agent ever carries a secret after the one that created it.
    let hr_caller = Caller::Agent(hr.clone());
    let answers = [
        app.get(hr, &path).await,
        app.get(hr, "/agents?limit=500").await,
        app.get(hr, &format!("/agents/{}", child.uuid)).await,
        patch(app, hr, &path, "{\"name\": \"renamed\"}").await,
        app.get(&agent, "/agents/pending").await,
        app.get(hr, &format!("/agents/{}/hierarchy", agent.uuid))
            .await,
        app.post(&agent, &format!("/agents/{}/activate", child.uuid), "")
            .await,
        status_call(app, &hr_caller, &child, "suspend").await,
        status_call(app, &hr_caller, &child, "unsuspend").await,
        status_call(app, &hr_caller, &child, "revoke").await,
        app.get(hr, &format!("/events?entityId={}", agent.uuid))
            .await,
        app.get(hr, &format!("/events?entityId={}", child.uuid))
            .await,
    ];
    for reply in &answers {
        assert_eq!(reply.status.as_u16(), 200, "{}", reply.text);
        assert_no_secret(&reply.body);
        assert!(!reply.text.contains(&agent.secret), "{}", reply.text);
        assert!(!reply.text.contains(&child.secret), "{}", reply.text);
    }
    assert_eq!(
        answers[5].data()["children"][0]["id"],
        child.uuid.to_string()
    );
}
