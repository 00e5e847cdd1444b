//! Runs through MCP tools (decision D-106): the tools are listed with input schemas that
//! say what the server checks, an agent's whole run goes through them (start, log,
//! usage, finish, read) with the outcome the REST routes show, and every refusal is a
//! tool error carrying the very body the route answers.

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::helpers::{Agent, TestApp, str_of};
use crate::mcp::{bearer_call, call, names, tool};
use crate::runs_support::{funded_worker, money_of, task_in_progress};
use crate::task_support::assigned_task;

api_tests!(
    the_run_tools_are_listed_with_precise_schemas,
    an_agent_runs_a_task_through_tools,
    run_tools_refuse_as_the_routes_do,
    a_closed_or_foreign_run_refuses_through_tools,
);

const RUN_TOOLS: [&str; 5] = [
    "start_run",
    "append_run_log",
    "report_usage",
    "finish_run",
    "get_run",
];

/// The listed tool `name`'s input schema.
fn schema_of(listed: &Value, name: &str) -> Value {
    listed["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == name)
        .unwrap_or_else(|| panic!("{name} is not listed: {listed}"))["inputSchema"]
        .clone()
}

async fn the_run_tools_are_listed_with_precise_schemas(app: &TestApp) {
    let worker = app.worker(&app.org).await;
    let listed = call(app, &worker, "tools/list", &json!({})).await;
    let seen = names(&listed);
    for name in RUN_TOOLS {
        assert!(seen.iter().any(|n| n == name), "{name} in {seen:?}");
        let schema = schema_of(&listed, name);
        assert_eq!(schema["type"], "object", "{name}: {schema}");
        assert_eq!(schema["additionalProperties"], false, "{name}: {schema}");
        assert_eq!(
            schema["properties"]["id"]["format"], "uuid",
            "{name}: {schema}"
        );
    }

    let start = schema_of(&listed, "start_run");
    assert_eq!(start["required"], json!(["id"]), "{start}");
    assert_eq!(start["properties"]["id"]["description"], "Task id");
    let reserve = &start["properties"]["reserveCredits"];
    assert_eq!(
        (&reserve["minimum"], &reserve["maximum"]),
        (&json!(0), &json!(1_000_000_000)),
        "{start}"
    );
    assert_eq!(start["properties"]["adapter"]["maxLength"], 100, "{start}");

    let log = schema_of(&listed, "append_run_log");
    assert_eq!(log["required"], json!(["id", "lines"]), "{log}");
    assert_eq!(log["properties"]["id"]["description"], "Run id");
    let lines = &log["properties"]["lines"];
    assert_eq!(lines["maxItems"], 10_000, "{log}");
    assert_eq!(
        lines["items"]["required"],
        json!(["stream", "text"]),
        "{log}"
    );
    assert_eq!(
        lines["items"]["properties"]["stream"]["enum"],
        json!(["stdout", "stderr", "system"]),
        "{log}"
    );

    let usage = schema_of(&listed, "report_usage");
    assert_eq!(
        usage["required"],
        json!(["id", "model", "inputTokens", "outputTokens"]),
        "{usage}"
    );
    for field in [
        "inputTokens",
        "outputTokens",
        "cacheReadTokens",
        "cacheWriteTokens",
        "costMicrousd",
    ] {
        let bounds = &usage["properties"][field];
        assert_eq!(bounds["minimum"], 0, "{field}: {usage}");
        assert_eq!(bounds["maximum"], 1_000_000_000_000_i64, "{field}: {usage}");
    }
    let model = &usage["properties"]["model"];
    assert_eq!(
        (&model["minLength"], &model["maxLength"]),
        (&json!(1), &json!(100))
    );
    assert_eq!(usage["properties"]["reportId"]["maxLength"], 200, "{usage}");

    let finish = schema_of(&listed, "finish_run");
    assert_eq!(finish["required"], json!(["id", "status"]), "{finish}");
    assert_eq!(
        finish["properties"]["status"]["enum"],
        json!(["succeeded", "failed", "cancelled", "stopped"]),
        "{finish}"
    );
    let exit = &finish["properties"]["exitCode"];
    assert_eq!(exit["minimum"], i64::from(i32::MIN), "{finish}");
    assert_eq!(exit["maximum"], i64::from(i32::MAX), "{finish}");
    assert_eq!(finish["properties"]["summary"]["maxLength"], 10_000);

    let get = schema_of(&listed, "get_run");
    assert_eq!(get["required"], json!(["id"]), "{get}");
    assert_eq!(get["properties"].as_object().unwrap().len(), 1, "{get}");

    // An orchestrator starts no work: it reads runs but runs none.
    let orchestrator = app.add_agent(&app.org, "orchestrator", "active").await;
    let seen = names(&call(app, &orchestrator, "tools/list", &json!({})).await);
    assert!(seen.iter().any(|n| n == "get_run"), "{seen:?}");
    for name in ["start_run", "append_run_log", "report_usage", "finish_run"] {
        assert!(!seen.iter().any(|n| n == name), "{name} in {seen:?}");
    }
    // Nor does a user, who is no agent; a read-only key reads.
    let admin = app.admin_token(&app.org).await;
    let key = app.api_key(&admin, &["read"]).await;
    for token in [&admin, &key] {
        let reply = bearer_call(app, token, "tools/list", &json!({})).await;
        let seen = names(&reply.body);
        assert!(seen.iter().any(|n| n == "get_run"), "{seen:?}");
        assert!(!seen.iter().any(|n| n == "start_run"), "{seen:?}");
    }
}

/// Calls `name` as `agent`, asserting it succeeded; answers its structured content.
async fn ok(app: &TestApp, agent: &Agent, name: &str, arguments: Value) -> Value {
    let result = tool(app, agent, name, arguments).await;
    assert_eq!(result["isError"], false, "{name}: {result}");
    result["structuredContent"].clone()
}

async fn an_agent_runs_a_task_through_tools(app: &TestApp) {
    let worker = funded_worker(app, 100).await;
    let (balance, _, _) = money_of(app, &worker).await;
    let task = app.task_titled(&app.org.hr, "Run through MCP").await;
    let claimed = ok(app, &worker, "claim_task", json!({})).await;
    assert_eq!(claimed["data"]["id"], task.as_str(), "{claimed}");

    let started = ok(
        app,
        &worker,
        "start_run",
        json!({"id": task, "adapter": "claude-code", "model": "claude-sonnet-4-5",
               "reserveCredits": 10}),
    )
    .await;
    let run = &started["data"];
    assert_eq!(run["status"], "running", "{started}");
    assert_eq!(run["taskId"], task.as_str());
    assert_eq!(run["agentId"], worker.uuid.to_string());
    assert_eq!(run["reservedCredits"], 10);
    assert_eq!(run["stopRequested"], false);
    let id = str_of(run, "id");

    let logged = ok(
        app,
        &worker,
        "append_run_log",
        json!({"id": id, "lines": [
            {"stream": "stdout", "text": "reading the code"},
            {"stream": "stderr", "text": "warning: unused import"},
        ]}),
    )
    .await;
    assert_eq!(logged["data"]["logLines"], 2, "{logged}");

    let report = json!({"id": id, "model": "claude-sonnet-4-5", "inputTokens": 20_000,
        "outputTokens": 4_000, "cacheReadTokens": 100_000, "costMicrousd": 15_000,
        "reportId": "turn-1"});
    let paid = ok(app, &worker, "report_usage", report.clone()).await;
    assert_eq!(paid["report"]["credits"], 15, "{paid}");
    assert_eq!(paid["report"]["costMicrousd"], 15_000, "{paid}");
    assert_eq!(paid["data"]["usage"]["credits"], 15, "{paid}");
    assert_eq!(paid["data"]["reservedCredits"], 0, "drawn first: {paid}");
    // Sent again, the report counts once, as on the API.
    let resent = ok(app, &worker, "report_usage", report).await;
    assert_eq!(resent["report"], Value::Null, "{resent}");
    assert_eq!(resent["data"]["usage"]["reports"], 1, "{resent}");

    let finished = ok(
        app,
        &worker,
        "finish_run",
        json!({"id": id, "status": "succeeded", "exitCode": 0, "summary": "all green"}),
    )
    .await;
    let run = &finished["data"];
    assert_eq!(run["status"], "succeeded", "{finished}");
    assert_eq!(run["exitCode"], 0);
    assert_eq!(run["summary"], "all green");
    assert!(run["endedAt"].is_string(), "{finished}");

    // The run as the tool and the route show it: the same JSON.
    let read = ok(app, &worker, "get_run", json!({"id": id})).await;
    let api = app.get(&worker, &format!("/runs/{id}")).await;
    assert_eq!(read, api.body);
    let usage = &read["data"]["usage"];
    assert_eq!(
        (
            &usage["inputTokens"],
            &usage["outputTokens"],
            &usage["cacheReadTokens"],
            &usage["costMicrousd"],
            &usage["credits"],
            &usage["reports"],
        ),
        (
            &json!(20_000),
            &json!(4_000),
            &json!(100_000),
            &json!(15_000),
            &json!(15),
            &json!(1)
        ),
        "{read}"
    );
    assert_eq!(usage["byModel"][0]["model"], "claude-sonnet-4-5", "{read}");
    let log = app.get(&worker, &format!("/runs/{id}/log")).await;
    let texts: Vec<&str> = log.body["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["text"].as_str().unwrap())
        .collect();
    assert_eq!(texts, ["reading the code", "warning: unused import"]);
    let events = app.events_of_type(&app.org.hr, &id, "run.finished").await;
    assert_eq!(events.len(), 1);
    assert_eq!(events[0]["payload"]["status"], "succeeded");
    // Paid from the agent's credits, nothing held any more.
    assert_eq!(money_of(app, &worker).await, (balance - 15, 0, false));
}

/// Calls `name` as `agent`, asserting it was refused with `status` and `code`, and that
/// the route refuses `path` with `body` alike; answers the refusal.
async fn refused_alike(
    app: &TestApp,
    agent: &Agent,
    (name, arguments): (&str, Value),
    (path, body): (&str, Value),
    (status, code): (u16, &str),
) -> Value {
    let result = tool(app, agent, name, arguments).await;
    assert_eq!(result["isError"], true, "{name}: {result}");
    let refusal = result["structuredContent"].clone();
    assert_eq!(refusal["statusCode"], status, "{name}: {refusal}");
    assert_eq!(refusal["code"], code, "{name}: {refusal}");
    let api = app.post(agent, path, &body.to_string()).await;
    assert_eq!(api.status.as_u16(), status, "{path}: {}", api.text);
    assert_eq!(refusal, api.body, "{name} and POST {path}");
    refusal
}

async fn run_tools_refuse_as_the_routes_do(app: &TestApp) {
    let worker = funded_worker(app, 100).await;
    let other = funded_worker(app, 100).await;

    // Not the assignee, and a task not in progress.
    let task = task_in_progress(app, &worker).await;
    refused_alike(
        app,
        &other,
        ("start_run", json!({"id": task})),
        (&format!("/tasks/{task}/runs"), json!({})),
        (409, "not_task_assignee"),
    )
    .await;
    let waiting = assigned_task(app, &app.org.hr, &worker, json!({})).await;
    refused_alike(
        app,
        &worker,
        ("start_run", json!({"id": waiting})),
        (&format!("/tasks/{waiting}/runs"), json!({})),
        (409, "task_not_in_progress"),
    )
    .await;
    // Bad input: the API's sentence.
    refused_alike(
        app,
        &worker,
        ("start_run", json!({"id": task, "reserveCredits": -1})),
        (
            &format!("/tasks/{task}/runs"),
            json!({"reserveCredits": -1}),
        ),
        (400, "validation_failed"),
    )
    .await;

    let started = ok(app, &worker, "start_run", json!({"id": task})).await;
    let run = str_of(&started["data"], "id");
    // One open run per task.
    refused_alike(
        app,
        &worker,
        ("start_run", json!({"id": task})),
        (&format!("/tasks/{task}/runs"), json!({})),
        (409, "run_already_open"),
    )
    .await;
    // Only the run's agent feeds it.
    let lines = json!({"lines": [{"stream": "stdout", "text": "x"}]});
    let mut with_id = lines.clone();
    with_id["id"] = json!(run);
    refused_alike(
        app,
        &other,
        ("append_run_log", with_id.clone()),
        (&format!("/runs/{run}/log"), lines.clone()),
        (403, "run_agent_required"),
    )
    .await;
    // A stream or a status the server does not know.
    let bad_stream = json!({"lines": [{"stream": "stdin", "text": "x"}]});
    let mut bad_with_id = bad_stream.clone();
    bad_with_id["id"] = json!(run);
    refused_alike(
        app,
        &worker,
        ("append_run_log", bad_with_id),
        (&format!("/runs/{run}/log"), bad_stream),
        (400, "validation_failed"),
    )
    .await;
    refused_alike(
        app,
        &worker,
        ("finish_run", json!({"id": run, "status": "lost"})),
        (&format!("/runs/{run}/finish"), json!({"status": "lost"})),
        (400, "validation_failed"),
    )
    .await;
    let blank = json!({"model": " ", "inputTokens": 1, "outputTokens": 1});
    let mut blank_with_id = blank.clone();
    blank_with_id["id"] = json!(run);
    refused_alike(
        app,
        &worker,
        ("report_usage", blank_with_id),
        (&format!("/runs/{run}/usage"), blank),
        (400, "validation_failed"),
    )
    .await;
}

async fn a_closed_or_foreign_run_refuses_through_tools(app: &TestApp) {
    let worker = funded_worker(app, 100).await;
    let task = task_in_progress(app, &worker).await;
    let started = ok(app, &worker, "start_run", json!({"id": task})).await;
    let run = str_of(&started["data"], "id");
    let lines = json!({"lines": [{"stream": "stdout", "text": "x"}]});
    let mut with_id = lines.clone();
    with_id["id"] = json!(run);

    // Closed: a finished run takes no log, usage or finish.
    ok(
        app,
        &worker,
        "finish_run",
        json!({"id": run, "status": "failed"}),
    )
    .await;
    refused_alike(
        app,
        &worker,
        ("append_run_log", with_id),
        (&format!("/runs/{run}/log"), lines),
        (409, "run_closed"),
    )
    .await;
    let usage = json!({"model": "m", "inputTokens": 1, "outputTokens": 1});
    let mut usage_with_id = usage.clone();
    usage_with_id["id"] = json!(run);
    refused_alike(
        app,
        &worker,
        ("report_usage", usage_with_id),
        (&format!("/runs/{run}/usage"), usage),
        (409, "run_closed"),
    )
    .await;
    refused_alike(
        app,
        &worker,
        ("finish_run", json!({"id": run, "status": "succeeded"})),
        (
            &format!("/runs/{run}/finish"),
            json!({"status": "succeeded"}),
        ),
        (409, "run_closed"),
    )
    .await;

    // Another organization's run is not found; a missing or malformed id is refused.
    let stranger = app.worker(&app.other).await;
    let foreign = tool(app, &stranger, "get_run", json!({"id": run})).await;
    assert_eq!(foreign["isError"], true, "{foreign}");
    let api = app.get(&stranger, &format!("/runs/{run}")).await;
    assert_eq!(api.status, StatusCode::NOT_FOUND, "{}", api.text);
    assert_eq!(foreign["structuredContent"], api.body);
    assert_eq!(foreign["structuredContent"]["code"], "run_not_found");
    let no_id = tool(app, &worker, "finish_run", json!({"status": "failed"})).await;
    assert_eq!(
        no_id["structuredContent"]["message"], "id is required",
        "{no_id}"
    );
    let bad_id = tool(app, &worker, "get_run", json!({"id": "nope"})).await;
    assert_eq!(bad_id["structuredContent"]["statusCode"], 400, "{bad_id}");
    let extra = tool(app, &worker, "get_run", json!({"id": run, "verbose": true})).await;
    assert_eq!(
        extra["structuredContent"]["message"], "unknown field `verbose`",
        "{extra}"
    );
    // Nothing above changed the run.
    let read = ok(app, &worker, "get_run", json!({"id": run})).await;
    assert_eq!(read["data"]["status"], "failed", "{read}");
    assert_eq!(read["data"]["logLines"], 0, "{read}");
    assert_eq!(read["data"]["usage"]["reports"], 0, "{read}");
}
