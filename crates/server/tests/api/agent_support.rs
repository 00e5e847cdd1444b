//! Tools shared by the agent tests: agents registered and spawned through the API (so
//! they sign with their own secrets), credits granted, and agent records read back.

use reqwest::Method;
use serde_json::{Value, json};

use crate::helpers::{Agent, Org, Reply, TestApp, send, str_of, unique_handle};

/// Registers an agent as `org`'s HR agent with `extra` fields merged into a minimal
/// body, asserting 200; answers the signing agent and the record.
pub async fn register(app: &TestApp, org: &Org, extra: &Value) -> (Agent, Value) {
    let handle = unique_handle("agent");
    let mut body = json!({ "agentId": handle, "name": format!("Agent {handle}") });
    merge(&mut body, extra);
    let reply = app
        .post(&org.hr, "/agents/register", &body.to_string())
        .await;
    assert_eq!(reply.status.as_u16(), 200, "register: {}", reply.text);
    let data = reply.body["data"].clone();
    let agent = Agent {
        uuid: str_of(&data, "id").parse().unwrap(),
        handle: str_of(&data, "agentId"),
        secret: str_of(&reply.body, "secret"),
    };
    (agent, data)
}

/// An active agent registered by `org`'s HR agent at `level` with `role` and `mode`.
pub async fn agent_with(app: &TestApp, org: &Org, level: u8, role: &str, mode: &str) -> Agent {
    register(
        app,
        org,
        &json!({ "level": level, "role": role, "mode": mode }),
    )
    .await
    .0
}

/// Spawns a child of `parent` with `extra` fields, answering the raw reply.
pub async fn try_spawn(app: &TestApp, parent: &Agent, extra: &Value) -> Reply {
    let handle = unique_handle("child");
    let mut body = json!({ "agentId": handle, "name": format!("Child {handle}") });
    merge(&mut body, extra);
    app.post(parent, "/agents/spawn", &body.to_string()).await
}

/// Spawns and activates a child of `parent` (activated by the parent), asserting 200s.
pub async fn active_child(app: &TestApp, parent: &Agent, extra: &Value) -> Agent {
    let reply = try_spawn(app, parent, extra).await;
    assert_eq!(reply.status.as_u16(), 200, "spawn: {}", reply.text);
    let data = &reply.body["data"];
    let child = Agent {
        uuid: str_of(data, "id").parse().unwrap(),
        handle: str_of(data, "agentId"),
        secret: str_of(&reply.body, "secret"),
    };
    let activated = app
        .post(parent, &format!("/agents/{}/activate", child.uuid), "")
        .await;
    assert_eq!(
        activated.status.as_u16(),
        200,
        "activate: {}",
        activated.text
    );
    child
}

/// Grants `amount` credits to `agent` as `org`'s admin user, asserting 200.
pub async fn grant(app: &TestApp, org: &Org, agent: &Agent, amount: i64) {
    let token = app.admin_token(org).await;
    let body = json!({ "amount": amount, "reason": "test funds" });
    let reply = send(app.bearer(
        &token,
        Method::POST,
        &format!("/agents/{}/credits/grant", agent.uuid),
        Some(&body),
    ))
    .await;
    assert_eq!(reply.status.as_u16(), 200, "grant: {}", reply.text);
}

/// The agent record `id` as `reader` sees it (asserting 200).
pub async fn agent_record(app: &TestApp, reader: &Agent, id: &Agent) -> Value {
    app.get(reader, &format!("/agents/{}", id.uuid))
        .await
        .data()
        .clone()
}

/// Merges the fields of `extra` (an object) into `body`.
pub fn merge(body: &mut Value, extra: &Value) {
    if let (Some(body), Some(extra)) = (body.as_object_mut(), extra.as_object()) {
        for (k, v) in extra {
            body.insert(k.clone(), v.clone());
        }
    }
}
