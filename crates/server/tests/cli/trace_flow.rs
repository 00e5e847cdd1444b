//! One trace from end to end: a caller's `traceparent` is continued by the request that
//! moves a task, whose unit of work asks a pre-hook, and whose post-hook delivery (made
//! later, by the background worker) still belongs to the same trace; both hooks receive
//! the trace context of their own call's span. A run started in a trace keeps its id.
//! Nothing recorded on any span is a secret.

use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use muster_client::Client;
use muster_client::types::claims::ClaimBody;
use muster_client::types::runs::StartRunBody;
use muster_client::types::tasks::{CreateTaskRequest, TransitionRequest};
use muster_client::types::webhooks::CreateWebhookBody;
use muster_domain::model::{HookType, TaskStatus};
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::any_value::Value as AnyValue;
use opentelemetry_proto::tonic::common::v1::{AnyValue as Any, KeyValue};
use opentelemetry_proto::tonic::trace::v1::Span;
use prost::Message;
use serde_json::Value;

use muster_persistence::testing::TestDatabase;
use muster_persistence::{DatabaseUrl, Engine};

use crate::shutdown::{sigterm, start_on, start_with, wait_exit};
use crate::traces::{Received, names, receiver, receiver_answering};
use crate::{Scratch, muster, stderr};

/// The caller's trace: trace id, the caller's span id.
const TRACE_ID: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const CALLER_SPAN: &str = "00f067aa0ba902b7";
const PASSWORD: &str = "a good long password";
const PRE_SECRET: &str = "whsec-pre-hook-secret-value";
const POST_SECRET: &str = "whsec-post-hook-secret-value";

#[allow(clippy::unnecessary_wraps)] // the client's trace source answers an `Option`
fn caller_context() -> Option<(String, Option<String>)> {
    Some((
        format!("00-{TRACE_ID}-{CALLER_SPAN}-01"),
        Some("vendor=kept".to_owned()),
    ))
}

/// A hook receiver on loopback that allows everything (`{"allow": true}`).
fn hooks() -> (u16, Arc<Mutex<Vec<Received>>>) {
    receiver_answering("application/json", br#"{"allow":true}"#)
}

/// Bootstraps an organization on the database at `url`: its HR agent's id and secret.
fn bootstrap(url: &str, env: &[(&str, &str)]) -> (String, String) {
    let out = muster()
        .args([
            "bootstrap",
            "--org-name",
            "Acme",
            "--admin-email",
            "admin@example.com",
        ])
        .args(["--database-url", url])
        .envs(env.iter().copied())
        .env("MUSTER_ADMIN_PASSWORD", PASSWORD)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let org: Value = serde_json::from_slice(&out.stdout).unwrap();
    (
        org["hrAgent"]["agentId"].as_str().unwrap().to_owned(),
        org["hrAgent"]["secret"].as_str().unwrap().to_owned(),
    )
}

fn webhook(name: &str, url: String, secret: &str, hook_type: HookType) -> CreateWebhookBody {
    CreateWebhookBody {
        name: name.to_owned(),
        url,
        secret: Some(secret.to_owned()),
        events: vec!["task.transitioned".to_owned()],
        hook_type: Some(hook_type),
        can_block: Some(hook_type == HookType::Pre),
        timeout_ms: None,
    }
}

#[test]
fn sqlite_a_move_with_hooks_is_one_trace_from_the_caller_to_the_delivery() {
    let scratch = Scratch::new();
    a_move_with_hooks_is_one_trace(&scratch.sqlite_url(), "sqlite");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_a_move_with_hooks_is_one_trace_from_the_caller_to_the_delivery() {
    let Some(test_db) = TestDatabase::new(Engine::Postgres).await else {
        return;
    };
    let DatabaseUrl::Postgres(url) = &test_db.url else {
        unreachable!("a PostgreSQL test database");
    };
    let url = url.clone();
    tokio::task::spawn_blocking(move || a_move_with_hooks_is_one_trace(&url, "postgresql"))
        .await
        .unwrap();
}

#[allow(clippy::too_many_lines)]
fn a_move_with_hooks_is_one_trace(url: &str, engine: &str) {
    let (collector, exports) = receiver();
    let (hook_port, seen) = hooks();
    let key = "11".repeat(32);
    let (agent_id, agent_secret) = bootstrap(url, &[("MUSTER_SECRET_KEY", key.as_str())]);
    let endpoint = format!("http://127.0.0.1:{collector}");
    let mut server = start_on(
        url,
        &[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint.as_str()),
            ("OTEL_SERVICE_NAME", "muster-e2e"),
            ("OTEL_RESOURCE_ATTRIBUTES", "deployment.environment=test"),
            ("MUSTER_WEBHOOK_ALLOW_PRIVATE", "true"),
            ("MUSTER_WEBHOOK_ALLOW_HTTP", "true"),
            ("MUSTER_SECRET_KEY", key.as_str()),
        ],
        Stdio::null(),
    );
    let base = format!("http://127.0.0.1:{}", server.port);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let (moved, run_trace) = runtime.block_on(async {
        let admin = Client::login(
            &base,
            &muster_client::login_body("admin@example.com", PASSWORD),
        )
        .await
        .unwrap();
        let hooks_at = format!("http://127.0.0.1:{hook_port}");
        admin
            .create_webhook(&webhook(
                "pre",
                format!("{hooks_at}/pre"),
                PRE_SECRET,
                HookType::Pre,
            ))
            .await
            .unwrap();
        admin
            .create_webhook(&webhook(
                "post",
                format!("{hooks_at}/post"),
                POST_SECRET,
                HookType::Post,
            ))
            .await
            .unwrap();
        let agent = Client::agent(&base, &agent_id, &agent_secret).unwrap();
        let traced = agent.clone().traced(caller_context);
        let mut claimed = Vec::new();
        for title in ["moved in a trace", "run in a trace"] {
            agent
                .create_task(&CreateTaskRequest {
                    title: title.to_owned(),
                    ..CreateTaskRequest::default()
                })
                .await
                .unwrap();
            claimed.push(
                agent
                    .claim_task(&ClaimBody::default())
                    .await
                    .unwrap()
                    .unwrap(),
            );
        }
        let moved = traced
            .transition_task(
                claimed[0].id,
                &TransitionRequest {
                    status: TaskStatus::Review,
                    reason: None,
                    result: None,
                    outcome: None,
                },
            )
            .await
            .unwrap();
        let run = traced
            .start_run(claimed[1].id, &StartRunBody::default())
            .await
            .unwrap();
        (moved, run.trace_id)
    });
    assert_eq!(moved.status, TaskStatus::Review);
    // The run keeps the trace it was started in.
    assert_eq!(run_trace.as_deref(), Some(TRACE_ID));

    // The delivery goes out from the background worker, after the answer.
    let deadline = Instant::now() + Duration::from_secs(15);
    while !seen.lock().unwrap().iter().any(|c| c.path == "/post") {
        assert!(Instant::now() < deadline, "the post-hook was never called");
        std::thread::sleep(Duration::from_millis(50));
    }
    sigterm(&server);
    assert!(wait_exit(&mut server).success());

    let (spans, resource) = decoded(&exports.lock().unwrap());
    assert!(resource.contains(&("service.name".to_owned(), "muster-e2e".to_owned())));
    assert!(resource.contains(&("deployment.environment".to_owned(), "test".to_owned())));
    let trace_id = hex(TRACE_ID);
    let in_trace: Vec<&Span> = spans.iter().filter(|s| s.trace_id == trace_id).collect();
    let named = |name: &str| -> &Span {
        in_trace
            .iter()
            .find(|s| s.name == name)
            .copied()
            .unwrap_or_else(|| unreachable!("no span {name:?} in the trace: {:?}", names(&spans)))
    };
    let children = |parent: &Span, name: &str| -> Vec<&Span> {
        in_trace
            .iter()
            .filter(|s| s.name == name && s.parent_span_id == parent.span_id)
            .copied()
            .collect()
    };
    // The request continues the caller's span.
    let request = named("POST /tasks/{id}/transition");
    assert_eq!(request.parent_span_id, hex(CALLER_SPAN));
    assert_eq!(
        string(&request.attributes, "http.route").as_deref(),
        Some("/tasks/{id}/transition")
    );
    assert_eq!(
        int(&request.attributes, "http.response.status_code"),
        Some(200),
        "{:?}",
        request.attributes
    );
    // Its unit of work ran twice: once to learn the events, once to commit after the
    // pre-hook allowed them; the hook was asked in between, under the unit of work.
    let [unit] = children(request, "unit_of_work")[..] else {
        unreachable!("one unit of work under the request: {:?}", names(&spans))
    };
    assert_eq!(int(&unit.attributes, "muster.uow.runs"), Some(2));
    assert_eq!(int(&unit.attributes, "muster.uow.asks"), Some(1));
    assert_eq!(
        boolean(&unit.attributes, "muster.uow.committed"),
        Some(true)
    );
    // Three transactions: the run rolled back to ask, the run that committed, and the
    // log of the hook's call.
    let transactions = children(unit, "db.transaction");
    assert_eq!(transactions.len(), 3, "{:?}", names(&spans));
    let committed = transactions
        .iter()
        .filter(|t| boolean(&t.attributes, "muster.committed") == Some(true))
        .count();
    assert_eq!(committed, 2);
    assert!(
        transactions
            .iter()
            .all(|t| { string(&t.attributes, "db.system.name").as_deref() == Some(engine) })
    );
    let [pre] = children(unit, "hook.pre")[..] else {
        unreachable!(
            "one pre-hook call under the unit of work: {:?}",
            names(&spans)
        )
    };
    assert_eq!(int(&pre.attributes, "http.response.status_code"), Some(200));
    assert_eq!(
        string(&pre.attributes, "server.address").as_deref(),
        Some("127.0.0.1")
    );
    // The delivery, made later, descends from the request all the same.
    let delivery = named("webhook.delivery");
    assert!(
        descends_from(delivery, request, &in_trace),
        "the delivery is not under the request"
    );
    assert_eq!(
        int(&delivery.attributes, "muster.delivery.attempt"),
        Some(1)
    );
    assert_eq!(
        string(&delivery.attributes, "muster.event.type").as_deref(),
        Some("task.transitioned")
    );
    // Each hook got the trace context of its own call's span, and the caller's state.
    let calls = seen.lock().unwrap().clone();
    // (The claims before asked the pre-hook too, each in a trace of its own.)
    for (path, span) in [("/pre", pre), ("/post", delivery)] {
        let expected = format!("00-{TRACE_ID}-{}-01", to_hex(&span.span_id));
        let call = calls
            .iter()
            .find(|c| c.path == path && c.headers.get("traceparent") == Some(&expected))
            .unwrap_or_else(|| unreachable!("no {path} call with {expected}: {calls:?}"));
        assert_eq!(
            call.headers.get("tracestate").map(String::as_str),
            Some("vendor=kept"),
            "{path}"
        );
    }
    // The run's start is in the trace too.
    named("POST /tasks/{id}/runs");

    // No attribute of any span, nor of the resource, holds a secret.
    let secrets = [
        agent_secret.as_str(),
        PASSWORD,
        key.as_str(),
        PRE_SECRET,
        POST_SECRET,
        "/pre",
        "/post",
    ];
    for span in &spans {
        for kv in &span.attributes {
            let shown = shown(kv);
            for secret in secrets {
                assert!(
                    !shown.contains(secret),
                    "span {:?} attribute {} holds a secret: {shown}",
                    span.name,
                    kv.key
                );
            }
            for credential in ["whsec-", "Bearer", "msk_", "x-agent-signature"] {
                assert!(!shown.contains(credential), "{}: {shown}", kv.key);
            }
        }
    }
}

/// The spans and the resource attributes of everything exported.
fn decoded(exports: &[Received]) -> (Vec<Span>, Vec<(String, String)>) {
    let mut spans = Vec::new();
    let mut resource = Vec::new();
    for export in exports {
        let request = ExportTraceServiceRequest::decode(export.body.as_slice()).unwrap();
        for resource_spans in request.resource_spans {
            if let Some(r) = &resource_spans.resource {
                for kv in &r.attributes {
                    if let Some(value) = string(std::slice::from_ref(kv), &kv.key) {
                        resource.push((kv.key.clone(), value));
                    }
                }
            }
            for scope in resource_spans.scope_spans {
                spans.extend(scope.spans);
            }
        }
    }
    (spans, resource)
}

fn descends_from(span: &Span, ancestor: &Span, spans: &[&Span]) -> bool {
    let mut current = span;
    for _ in 0..64 {
        if current.parent_span_id == ancestor.span_id {
            return true;
        }
        match spans.iter().find(|s| s.span_id == current.parent_span_id) {
            Some(parent) => current = parent,
            None => return false,
        }
    }
    false
}

fn value<'a>(attributes: &'a [KeyValue], key: &str) -> Option<&'a AnyValue> {
    attributes
        .iter()
        .find(|a| a.key == key)
        .and_then(|a| a.value.as_ref())
        .and_then(|v: &Any| v.value.as_ref())
}

fn string(attributes: &[KeyValue], key: &str) -> Option<String> {
    match value(attributes, key)? {
        AnyValue::StringValue(text) => Some(text.clone()),
        _ => None,
    }
}

fn int(attributes: &[KeyValue], key: &str) -> Option<i64> {
    match value(attributes, key)? {
        AnyValue::IntValue(n) => Some(*n),
        _ => None,
    }
}

fn boolean(attributes: &[KeyValue], key: &str) -> Option<bool> {
    match value(attributes, key)? {
        AnyValue::BoolValue(b) => Some(*b),
        _ => None,
    }
}

/// An attribute's value as text, whatever its type.
fn shown(kv: &KeyValue) -> String {
    format!("{:?}", kv.value)
}

fn hex(text: &str) -> Vec<u8> {
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap())
        .collect()
}

fn to_hex(bytes: &[u8]) -> String {
    hex::encode(bytes)
}

/// A fake Claude Code that replays a recorded transcript of the real one.
fn replayer(scratch: &Scratch) -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let transcript = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../cli/tests/fixtures/worker/claude-code/success.jsonl");
    let path = scratch.0.join("claude");
    std::fs::write(
        &path,
        format!("#!/bin/sh\ncat '{}'\n", transcript.display()),
    )
    .unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

#[test]
fn a_workers_run_is_one_trace_from_its_claim_to_the_cli_and_the_server() {
    let (collector, exports) = receiver();
    let scratch = Scratch::new();
    let (agent_id, agent_secret) = bootstrap(&scratch.sqlite_url(), &[]);
    let endpoint = format!("http://127.0.0.1:{collector}");
    let mut server = start_with(
        &scratch,
        &[("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint.as_str())],
        Stdio::null(),
    );
    let base = format!("http://127.0.0.1:{}", server.port);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let agent = Client::agent(&base, &agent_id, &agent_secret).unwrap();
    let task = runtime
        .block_on(agent.create_task(&CreateTaskRequest {
            title: "fix the lexer".to_owned(),
            ..CreateTaskRequest::default()
        }))
        .unwrap();
    std::fs::write(scratch.0.join("no-config.toml"), "").unwrap();
    let out = muster()
        .args(["worker", "--adapter", "claude-code", "--once"])
        .arg("--command")
        .arg(replayer(&scratch))
        .arg("--workspace-root")
        .arg(scratch.0.join("workspaces"))
        .env("MUSTER_SERVER", &base)
        .env("MUSTER_AGENT_ID", &agent_id)
        .env("MUSTER_AGENT_SECRET", &agent_secret)
        .env("MUSTER_CONFIG", scratch.0.join("no-config.toml"))
        .env_remove("MUSTER_PROFILE")
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", &endpoint)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let runs = runtime
        .block_on(
            agent.list_task_runs(task.id, &muster_client::types::paging::PageQuery::default()),
        )
        .unwrap();
    let run = &runs.data[0];
    let trace_id = run.trace_id.clone().expect("the run keeps its trace id");
    sigterm(&server);
    assert!(wait_exit(&mut server).success());

    let (spans, resource) = decoded(&exports.lock().unwrap());
    assert!(resource.contains(&("service.name".to_owned(), "muster-worker".to_owned())));
    assert!(resource.contains(&("service.name".to_owned(), "muster".to_owned())));
    let trace = hex(&trace_id);
    let in_trace: Vec<&Span> = spans.iter().filter(|s| s.trace_id == trace).collect();
    let named = |name: &str| -> &Span {
        in_trace
            .iter()
            .find(|s| s.name == name)
            .copied()
            .unwrap_or_else(|| {
                unreachable!("no span {name:?} in the run's trace: {:?}", names(&spans))
            })
    };
    // The run is the root of its trace; the server's answer to its start is under it.
    let worker_run = named("worker.run");
    assert!(worker_run.parent_span_id.is_empty());
    let task_id = task.id.to_string();
    assert_eq!(
        string(&worker_run.attributes, "muster.task.id").as_deref(),
        Some(task_id.as_str())
    );
    let run_id = run.id.to_string();
    assert_eq!(
        string(&worker_run.attributes, "muster.run.id").as_deref(),
        Some(run_id.as_str())
    );
    let start = named("POST /tasks/{id}/runs");
    assert_eq!(start.parent_span_id, worker_run.span_id);
    assert!(descends_from(named("unit_of_work"), worker_run, &in_trace));
    // The CLI's process: its exit and the usage it reported.
    let process = named("worker.process");
    assert_eq!(process.parent_span_id, worker_run.span_id);
    assert_eq!(int(&process.attributes, "process.exit.code"), Some(0));
    assert!(int(&process.attributes, "muster.usage.reports").unwrap_or(0) >= 1);
    assert!(int(&process.attributes, "muster.usage.output_tokens").unwrap_or(0) > 0);
    assert!(int(&process.attributes, "muster.usage.cost_microusd").unwrap_or(0) > 0);
    // Its reports reached the server in the same trace, under the process.
    let report = named("POST /runs/{id}/usage");
    assert_eq!(report.parent_span_id, process.span_id);
    // The claim before it is a span of its own, naming the task it got.
    assert!(spans.iter().any(|s| {
        s.name == "worker.claim"
            && string(&s.attributes, "muster.task.id").as_deref() == Some(task_id.as_str())
    }));
    for span in &spans {
        for kv in &span.attributes {
            assert!(!shown(kv).contains(agent_secret.as_str()), "{}", kv.key);
        }
    }
}
