//! `POST /mcp`: the Model Context Protocol, spoken as a JSON-RPC client would, signed
//! like any request: the handshake, the tools each credential sees, an agent's whole loop
//! through tools, refusals as tool errors with the API's message, and what is not MCP.

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::helpers::{Agent, Reply, TestApp, send};

api_tests!(
    the_handshake_names_the_server_and_echoes_the_version,
    each_credential_sees_the_tools_it_may_use,
    an_agent_claims_comments_and_finishes_through_tools,
    refusals_are_tool_errors_with_the_apis_message,
    an_agent_reads_its_standing_and_spawns_a_child,
    list_tasks_filters_and_refuses_as_the_api_does,
    what_is_not_an_mcp_request_is_refused_plainly,
    messages_the_document_refuses_get_the_json_rpc_code
);

fn rpc(method: &str, params: &Value) -> String {
    json!({"jsonrpc": "2.0", "id": 7, "method": method, "params": params}).to_string()
}

pub(crate) async fn call(app: &TestApp, agent: &Agent, method: &str, params: &Value) -> Value {
    let reply = app.post(agent, "/mcp", &rpc(method, params)).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);
    assert_eq!(reply.body["jsonrpc"], "2.0", "{}", reply.text);
    assert_eq!(reply.body["id"], 7, "{}", reply.text);
    reply.body
}

/// One message sent with a bearer token (a user's or an API key), answered.
pub(crate) async fn bearer_call(app: &TestApp, token: &str, method: &str, params: &Value) -> Reply {
    send(
        app.bearer(token, Method::POST, "/mcp", None)
            .header("content-type", "application/json")
            .body(rpc(method, params)),
    )
    .await
}

pub(crate) async fn tool(app: &TestApp, agent: &Agent, name: &str, arguments: Value) -> Value {
    let answer = call(
        app,
        agent,
        "tools/call",
        &json!({"name": name, "arguments": arguments}),
    )
    .await;
    answer["result"].clone()
}

pub(crate) fn names(list: &Value) -> Vec<String> {
    list["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect()
}

async fn the_handshake_names_the_server_and_echoes_the_version(app: &TestApp) {
    let worker = app.worker(&app.org).await;
    let init = json!({
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"}
    });
    let answer = call(app, &worker, "initialize", &init).await;
    let result = &answer["result"];
    assert_eq!(result["protocolVersion"], "2025-06-18", "{answer}");
    assert_eq!(result["serverInfo"]["name"], "muster");
    assert!(result["capabilities"]["tools"].is_object(), "{answer}");
    assert!(result.get("resultType").is_none(), "{answer}");
    // A version it does not know is answered with the newest it speaks.
    let newer = json!({"protocolVersion": "2099-01-01", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}});
    let answer = call(app, &worker, "initialize", &newer).await;
    assert_eq!(answer["result"]["protocolVersion"], "2025-11-25");
    assert_eq!(
        call(app, &worker, "ping", &json!({})).await["result"],
        json!({})
    );
    // The notification that follows the handshake needs no answer.
    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string();
    let reply = app.post(&worker, "/mcp", &note).await;
    assert_eq!(reply.status, StatusCode::ACCEPTED, "{}", reply.text);
    assert!(reply.text.is_empty());
}

async fn each_credential_sees_the_tools_it_may_use(app: &TestApp) {
    let worker = app.worker(&app.org).await;
    let listed = call(app, &worker, "tools/list", &json!({})).await;
    let seen = names(&listed);
    for expected in [
        "claim_task",
        "heartbeat_task",
        "create_task",
        "transition_task",
        "list_events",
    ] {
        assert!(seen.iter().any(|n| n == expected), "{expected} in {seen:?}");
    }
    // Input schemas are objects built from the API's own: transition_task takes the
    // task's id and the transition body, statuses spelled as on the wire.
    let transition = listed["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "transition_task")
        .unwrap()
        .clone();
    let schema = &transition["inputSchema"];
    assert_eq!(schema["type"], "object");
    assert_eq!(schema["required"], json!(["id", "status"]), "{schema}");
    let statuses = schema["properties"]["status"]["enum"].as_array().unwrap();
    assert!(statuses.contains(&json!("in_progress")), "{schema}");

    // An orchestrator never starts work: no claim or heartbeat for it.
    let orchestrator = app.add_agent(&app.org, "orchestrator", "active").await;
    let seen = names(&call(app, &orchestrator, "tools/list", &json!({})).await);
    assert!(!seen.iter().any(|n| n == "claim_task"), "{seen:?}");
    assert!(seen.iter().any(|n| n == "create_task"), "{seen:?}");

    // A user, even an admin, and a write key change tasks but spawn nothing: a child's
    // parent is the agent that spawns it.
    let admin = app.admin_token(&app.org).await;
    let writer = app.api_key(&admin, &["read", "write"]).await;
    for token in [&admin, &writer] {
        let reply = bearer_call(app, token, "tools/list", &json!({})).await;
        let seen = names(&reply.body);
        assert!(seen.iter().any(|n| n == "create_task"), "{seen:?}");
        assert!(!seen.iter().any(|n| n == "spawn_agent"), "{seen:?}");
        assert!(!seen.iter().any(|n| n == "claim_task"), "{seen:?}");
    }

    // A read-only API key sees the reading tools only.
    let key = app.api_key(&admin, &["read"]).await;
    let reply = bearer_call(app, &key, "tools/list", &json!({})).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);
    let mut seen = names(&reply.body);
    seen.sort();
    assert_eq!(
        seen,
        [
            "find_candidates",
            "get_balance",
            "get_budget",
            "get_project",
            "get_reputation",
            "get_routine",
            "get_run",
            "get_task",
            "list_events",
            "list_projects",
            "list_routines",
            "list_tasks"
        ]
    );
}

async fn an_agent_claims_comments_and_finishes_through_tools(app: &TestApp) {
    let worker = app.worker(&app.org).await;
    let created = tool(
        app,
        &worker,
        "create_task",
        json!({"title": "Through MCP", "priority": "high"}),
    )
    .await;
    assert_eq!(created["isError"], false, "{created}");
    let task = &created["structuredContent"]["data"];
    let id = task["id"].as_str().unwrap().to_owned();
    assert_eq!(task["title"], "Through MCP");
    // The text content is the same JSON, for clients that read text only.
    let text: Value =
        serde_json::from_str(created["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(text, created["structuredContent"]);

    let claimed = tool(app, &worker, "claim_task", json!({})).await;
    assert_eq!(
        claimed["structuredContent"]["data"]["id"],
        id.as_str(),
        "{claimed}"
    );
    assert_eq!(
        claimed["structuredContent"]["data"]["status"],
        "in_progress"
    );
    let kept = tool(app, &worker, "heartbeat_task", json!({"id": id})).await;
    assert!(
        kept["structuredContent"]["data"]["leaseExpiresAt"].is_string(),
        "{kept}"
    );
    let nothing = tool(app, &worker, "claim_task", json!({})).await;
    assert_eq!(
        nothing["structuredContent"],
        json!({"data": null}),
        "{nothing}"
    );

    let comment = tool(
        app,
        &worker,
        "comment_on_task",
        json!({"id": id, "body": "done, see PR 12"}),
    )
    .await;
    assert_eq!(
        comment["structuredContent"]["data"]["body"], "done, see PR 12",
        "{comment}"
    );
    let done = tool(
        app,
        &worker,
        "transition_task",
        json!({"id": id, "status": "done"}),
    )
    .await;
    assert_eq!(
        done["structuredContent"]["data"]["status"], "done",
        "{done}"
    );

    // The same task as the HTTP API shows it, and its events.
    let reply = app.get(&worker, &format!("/tasks/{id}")).await;
    assert_eq!(
        reply.body,
        tool(app, &worker, "get_task", json!({"id": id})).await["structuredContent"]
    );
    let events = tool(app, &worker, "list_events", json!({"entityId": id})).await;
    let types: Vec<&str> = events["structuredContent"]["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["type"].as_str().unwrap())
        .collect();
    assert!(types.contains(&"task.created"), "{types:?}");
}

async fn refusals_are_tool_errors_with_the_apis_message(app: &TestApp) {
    let worker = app.worker(&app.org).await;
    let long = tool(
        app,
        &worker,
        "create_task",
        json!({"title": "x".repeat(256)}),
    )
    .await;
    assert_eq!(long["isError"], true, "{long}");
    assert_eq!(long["structuredContent"]["statusCode"], 400);
    assert_eq!(long["structuredContent"]["code"], "validation_failed");
    assert_eq!(
        long["structuredContent"]["message"],
        "title must be at most 255 characters"
    );
    let unknown_field = tool(
        app,
        &worker,
        "create_task",
        json!({"title": "t", "colour": "red"}),
    )
    .await;
    assert_eq!(unknown_field["isError"], true, "{unknown_field}");
    let missing = tool(
        app,
        &worker,
        "get_task",
        json!({"id": uuid::Uuid::now_v7()}),
    )
    .await;
    assert_eq!(missing["structuredContent"]["statusCode"], 404, "{missing}");
    assert_eq!(
        missing["structuredContent"]["code"], "task_not_found",
        "{missing}"
    );
    let no_id = tool(app, &worker, "get_task", json!({})).await;
    assert_eq!(
        no_id["structuredContent"]["message"], "id is required",
        "{no_id}"
    );

    // A tool the caller was not shown is refused as the API refuses it.
    let orchestrator = app.add_agent(&app.org, "orchestrator", "active").await;
    let claim = tool(app, &orchestrator, "claim_task", json!({})).await;
    assert_eq!(claim["isError"], true, "{claim}");
    assert_eq!(claim["structuredContent"]["statusCode"], 403, "{claim}");
    assert_eq!(
        claim["structuredContent"]["code"], "orchestrator_does_not_execute",
        "{claim}"
    );

    // A tool that does not exist is a protocol error.
    let answer = call(
        app,
        &worker,
        "tools/call",
        &json!({"name": "drop_tables", "arguments": {}}),
    )
    .await;
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
    // Nothing above created a task.
    let page = tool(app, &worker, "list_tasks", json!({})).await;
    assert_eq!(page["structuredContent"]["data"], json!([]), "{page}");
}

async fn list_tasks_filters_and_refuses_as_the_api_does(app: &TestApp) {
    let worker = app.worker(&app.org).await;
    for body in [
        json!({"title": "Ship the release", "priority": "high", "tags": ["ops"]}),
        json!({"title": r"Clean C:\temp", "tags": ["home"]}),
    ] {
        let created = tool(app, &worker, "create_task", body).await;
        assert_eq!(created["isError"], false, "{created}");
    }
    // The same filters as `GET /tasks`, with the same answers.
    for (arguments, query, count) in [
        (json!({"priority": "high"}), "priority=high", 1),
        (json!({"tag": "HOME"}), "tag=HOME", 1),
        (json!({"q": "release"}), "q=release", 1),
        (json!({"q": r"\"}), "q=%5C", 1),
        (
            json!({"q": "e", "priority": "normal"}),
            "q=e&priority=normal",
            1,
        ),
        (json!({"tag": "ops", "q": "clean"}), "tag=ops&q=clean", 0),
    ] {
        let page = tool(app, &worker, "list_tasks", arguments.clone()).await;
        assert_eq!(page["isError"], false, "{arguments}: {page}");
        let api = app.get(&worker, &format!("/tasks?{query}")).await;
        assert_eq!(api.list().len(), count, "GET /tasks?{query}");
        assert_eq!(page["structuredContent"], api.body, "{arguments}");
    }
    // Refused terms are tool errors with the API's message.
    for (arguments, message) in [
        (json!({"priority": "extreme"}), "priority"),
        (
            json!({"q": "a\u{0}b"}),
            "q must not contain the NUL character",
        ),
        (
            json!({"tag": "x".repeat(101)}),
            "tag must be at most 100 characters",
        ),
    ] {
        let refused = tool(app, &worker, "list_tasks", arguments.clone()).await;
        assert_eq!(refused["isError"], true, "{arguments}: {refused}");
        assert_eq!(refused["structuredContent"]["statusCode"], 400, "{refused}");
        let said = refused["structuredContent"]["message"].as_str().unwrap();
        assert!(said.contains(message), "{arguments}: {said}");
    }
}

async fn an_agent_reads_its_standing_and_spawns_a_child(app: &TestApp) {
    let worker = app.worker(&app.org).await;
    // Left out, `id` is the caller; the answers are the API's.
    for (name, path) in [
        ("get_balance", "credits/balance"),
        ("get_budget", "budget"),
        ("get_reputation", "reputation"),
    ] {
        let own = tool(app, &worker, name, json!({})).await;
        assert_eq!(own["isError"], false, "{name}: {own}");
        let api = app
            .get(&worker, &format!("/agents/{}/{path}", worker.uuid))
            .await;
        assert_eq!(own["structuredContent"], api.body, "{name}");
        // Another agent's, by id (the HR agent's balance).
        let hr = tool(app, &worker, name, json!({"id": app.org.hr.uuid})).await;
        assert_eq!(hr["isError"], false, "{name}: {hr}");
        assert_ne!(hr["structuredContent"], own["structuredContent"], "{name}");
    }
    let balance = tool(app, &worker, "get_balance", json!({})).await;
    assert_eq!(
        balance["structuredContent"]["data"]["agentId"],
        worker.uuid.to_string()
    );
    // Another organization's agent is not found, as on the API.
    let foreign = tool(
        app,
        &worker,
        "get_balance",
        json!({"id": app.other.hr.uuid}),
    )
    .await;
    assert_eq!(foreign["structuredContent"]["statusCode"], 404, "{foreign}");
    // A user must name the agent.
    let admin = app.admin_token(&app.org).await;
    let reply = bearer_call(
        app,
        &admin,
        "tools/call",
        &json!({"name": "get_budget", "arguments": {}}),
    )
    .await;
    assert_eq!(
        reply.body["result"]["structuredContent"]["message"],
        "id is required (only an agent may leave it out)",
        "{}",
        reply.text
    );

    // The level-5 worker spawns a level-2 child: pending, secret shown once.
    let seen = names(&call(app, &worker, "tools/list", &json!({})).await);
    assert!(seen.iter().any(|n| n == "spawn_agent"), "{seen:?}");
    let spawned = tool(
        app,
        &worker,
        "spawn_agent",
        json!({"agentId": "mcp-child", "name": "MCP child", "level": 2}),
    )
    .await;
    assert_eq!(spawned["isError"], false, "{spawned}");
    let child = &spawned["structuredContent"];
    assert_eq!(child["data"]["status"], "pending", "{child}");
    assert_eq!(
        child["data"]["parentId"],
        worker.uuid.to_string(),
        "{child}"
    );
    assert_eq!(child["secret"].as_str().map(str::len), Some(64), "{child}");
    // A child may not be at its parent's level; nothing is made.
    let refused = tool(
        app,
        &worker,
        "spawn_agent",
        json!({"agentId": "mcp-peer", "name": "Peer", "level": 5}),
    )
    .await;
    assert_eq!(refused["structuredContent"]["statusCode"], 400, "{refused}");
    let pending = app.get(&worker, "/agents/pending").await;
    let handles: Vec<&str> = pending.body["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["agentId"].as_str().unwrap())
        .collect();
    assert_eq!(handles, ["mcp-child"], "{}", pending.text);
    // An observer reads but spawns nothing: the tool is neither listed nor allowed.
    let observer = app.add_agent(&app.org, "observer", "active").await;
    let seen = names(&call(app, &observer, "tools/list", &json!({})).await);
    assert!(!seen.iter().any(|n| n == "spawn_agent"), "{seen:?}");
    assert!(seen.iter().any(|n| n == "get_balance"), "{seen:?}");
    let refused = tool(
        app,
        &observer,
        "spawn_agent",
        json!({"agentId": "obs-child", "name": "No", "level": 1}),
    )
    .await;
    assert_eq!(refused["structuredContent"]["statusCode"], 403, "{refused}");
}

async fn messages_the_document_refuses_get_the_json_rpc_code(app: &TestApp) {
    let worker = app.worker(&app.org).await;
    // A method name the document does not allow is refused, as request or notification.
    let long = "m".repeat(101);
    for body in [
        json!({"jsonrpc": "2.0", "id": 0, "method": "", "params": {}}),
        json!({"jsonrpc": "2.0", "method": ""}),
        json!({"jsonrpc": "2.0", "id": "s-1", "method": long}),
        // Ids JSON-RPC allows but not as a 64-bit integer: not a notification either.
        json!({"jsonrpc": "2.0", "id": 9_223_372_036_854_775_808_u64, "method": "ping"}),
        json!({"jsonrpc": "2.0", "id": 1.5, "method": "x"}),
    ] {
        let reply = app.post(&worker, "/mcp", &body.to_string()).await;
        assert_eq!(
            reply.status,
            StatusCode::BAD_REQUEST,
            "{body}: {}",
            reply.text
        );
        assert_eq!(reply.body["error"]["code"], -32600, "{}", reply.text);
    }
    // The id of a refused request is echoed when it could be read.
    let body = json!({"jsonrpc": "2.0", "id": "s-2", "method": "m".repeat(101)});
    let reply = app.post(&worker, "/mcp", &body.to_string()).await;
    assert_eq!(reply.body["id"], "s-2", "{}", reply.text);
    // Ids are integers or strings, as JSON-RPC has them.
    for id in [json!(-1), json!("req-1"), json!(9_007_199_254_740_993_i64)] {
        let body = json!({"jsonrpc": "2.0", "id": id, "method": "ping"});
        let reply = app.post(&worker, "/mcp", &body.to_string()).await;
        assert_eq!(reply.status, StatusCode::OK, "{body}: {}", reply.text);
        assert_eq!(reply.body["id"], id, "{}", reply.text);
    }
    // Just below the 64-bit range (schemathesis found it answered as i64::MIN).
    let below = r#"{"jsonrpc": "2.0", "id": -9223372036854775809, "method": "ping"}"#;
    let reply = app.post(&worker, "/mcp", below).await;
    assert_eq!(reply.status, StatusCode::BAD_REQUEST, "{}", reply.text);
    assert_eq!(reply.body["error"]["code"], -32600, "{}", reply.text);
    // An integer written with a zero fraction is an integer (schemathesis found it
    // refused): answered with the integer.
    let body = r#"{"jsonrpc": "2.0", "id": 517846.0, "method": "ping"}"#;
    let reply = app.post(&worker, "/mcp", body).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);
    assert_eq!(reply.body["id"], 517_846, "{}", reply.text);

    // A method answered here, with params that do not fit it.
    let answer = call(app, &worker, "tools/call", &json!({"name": 5})).await;
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
    assert_eq!(
        answer["error"]["message"], "the params do not fit tools/call",
        "{answer}"
    );
}

async fn what_is_not_an_mcp_request_is_refused_plainly(app: &TestApp) {
    let worker = app.worker(&app.org).await;
    let reply: Reply = app.post(&worker, "/mcp", "{\"hello\": 1}").await;
    assert_eq!(reply.status, StatusCode::BAD_REQUEST, "{}", reply.text);
    assert_eq!(reply.body["error"]["code"], -32700, "{}", reply.text);
    let answer = call(app, &worker, "resources/list", &json!({})).await;
    assert_eq!(answer["error"]["code"], -32601, "{answer}");

    // Any message the document allows is answered, never refused as malformed.
    for (body, status) in [
        (
            json!({"jsonrpc": "2.0", "id": 1, "method": "x", "params": null}),
            StatusCode::OK,
        ),
        (
            json!({"jsonrpc": "2.0", "id": null, "method": "x"}),
            StatusCode::ACCEPTED,
        ),
        (
            json!({"jsonrpc": "2.0", "method": "x", "params": {"a": 1}}),
            StatusCode::ACCEPTED,
        ),
        (
            json!({"jsonrpc": "2.0", "id": 2, "method": "ping", "params": {"a": 1}}),
            StatusCode::OK,
        ),
        (
            json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {}}),
            StatusCode::OK,
        ),
        (
            json!({"jsonrpc": "2.0", "id": 4, "method": "initialize", "params": {}}),
            StatusCode::OK,
        ),
    ] {
        let reply = app.post(&worker, "/mcp", &body.to_string()).await;
        assert_eq!(reply.status, status, "{body}: {}", reply.text);
    }

    // Unsigned: 401 as on every route.
    let reply = send(
        app.anonymous(Method::POST, "/mcp")
            .header("content-type", "application/json")
            .body(rpc("ping", &json!({}))),
    )
    .await;
    assert_eq!(reply.status, StatusCode::UNAUTHORIZED, "{}", reply.text);
    // GET: nothing is pushed.
    let reply = app.get(&worker, "/mcp").await;
    assert_eq!(
        reply.status,
        StatusCode::METHOD_NOT_ALLOWED,
        "{}",
        reply.text
    );
    // A page of another origin may not drive it.
    let body = rpc("ping", &json!({}));
    let headers = TestApp::headers_for(&worker, &Method::POST, "/mcp", body.as_bytes());
    let reply = send(
        app.with_headers(Method::POST, "/mcp", &headers, Some(body.into_bytes()))
            .header("origin", "https://evil.example"),
    )
    .await;
    assert_eq!(reply.status, StatusCode::FORBIDDEN, "{}", reply.text);
    // Its own origin may.
    let body = rpc("ping", &json!({}));
    let headers = TestApp::headers_for(&worker, &Method::POST, "/mcp", body.as_bytes());
    let reply = send(
        app.with_headers(Method::POST, "/mcp", &headers, Some(body.into_bytes()))
            .header("origin", app.base.as_str()),
    )
    .await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);
    // An unknown protocol revision is refused.
    let body = rpc("ping", &json!({}));
    let headers = TestApp::headers_for(&worker, &Method::POST, "/mcp", body.as_bytes());
    let reply = send(
        app.with_headers(Method::POST, "/mcp", &headers, Some(body.into_bytes()))
            .header("mcp-protocol-version", "1999-01-01"),
    )
    .await;
    assert_eq!(reply.status, StatusCode::BAD_REQUEST, "{}", reply.text);
}
