//! `cargo xtask promtool`: a real scrape of `GET /metrics` from a live server that has
//! done some work (tasks created, read and moved, a run with its usage and its end, a
//! webhook delivered, an agent's request signed and another's refused, an unknown path,
//! background jobs run), on each engine, in both formats:
//!
//! - the Prometheus text format 0.0.4 goes through `promtool check metrics` (Debian's
//!   `prometheus` package, installed with apt-get when missing), and any complaint of
//!   its linter fails the check;
//! - `OpenMetrics`, which `promtool check metrics` cannot read (it lints the text format
//!   only), goes through the reference `OpenMetrics` parser of the Prometheus Python
//!   client (pinned in `xtask/promtool/requirements.txt`), which refuses any exposition
//!   the standard does not allow.

use std::io::Write;
use std::net::SocketAddr;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use clap::Args;
use hyper::Method;

use crate::bench::EngineChoice;
use crate::bench::client::{Call, Client};
use crate::bench::database::{BenchDatabase, Engine};
use crate::bench::hooks::{Receiver, admin_token, register};
use crate::bench::server::{Server, ServerBinary, bootstrap, generate_secret_key};
use crate::bench::sign::Credentials;

/// `cargo xtask promtool` options.
#[derive(Debug, Args)]
pub struct PromtoolArgs {
    /// Which engine(s) to run against.
    #[arg(long, value_enum, default_value = "both")]
    engine: EngineChoice,
    #[command(flatten)]
    server: ServerBinary,
}

/// The metrics token the server under check is started with.
const METRICS_TOKEN: &str = "promtool-metrics-token-0123456789";

/// What Prometheus sends by default: `OpenMetrics` first.
const PROMETHEUS_ACCEPT: &str = "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1";

/// What a scraper that knows only the text format sends.
const TEXT_ACCEPT: &str = "text/plain;version=0.0.4";

pub fn run(args: &PromtoolArgs) -> anyhow::Result<bool> {
    let root = crate::bench::workspace_root();
    crate::ci::ensure_apt_package("promtool", "prometheus").map_err(anyhow::Error::msg)?;
    let venv = crate::fuzz_api::python_venv(&root, "promtool")?;
    let parser = Parser {
        python: venv.join("bin").join("python"),
        script: root.join("xtask/promtool/openmetrics_check.py"),
    };
    let binary = args.server.resolve(&root)?;
    let engines = args.engine.engines();
    if engines.contains(&Engine::Postgres) {
        crate::ci::ensure_postgres().map_err(anyhow::Error::msg)?;
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    for engine in engines {
        eprintln!("xtask: promtool on {engine}");
        runtime.block_on(check(engine, &binary, &parser))?;
    }
    Ok(true)
}

/// The `OpenMetrics` parser: a Python script of the venv.
struct Parser {
    python: std::path::PathBuf,
    script: std::path::PathBuf,
}

async fn check(engine: Engine, binary: &Path, parser: &Parser) -> anyhow::Result<()> {
    let db = BenchDatabase::create(engine)?;
    let key = generate_secret_key()?;
    let org = bootstrap(binary, &db.url, &key)?;
    let env = [
        ("MUSTER_METRICS_TOKEN", METRICS_TOKEN),
        // The background jobs run (and are counted) within the check.
        ("MUSTER_LEASE_SWEEP_SECS", "1"),
        ("MUSTER_ESCALATION_SWEEP_SECS", "1"),
        ("MUSTER_BUDGET_ROLLOVER_SECS", "1"),
    ];
    let mut server = Server::start_with(binary, &db.url, &key, db.work_dir(), &env)?;
    server.wait_ready().await?;
    let receiver = Receiver::start().await?;
    register(server.addr, &receiver).await?;
    work(server.addr, &org.hr_agent).await?;
    let mut client = Client::new(server.addr);
    let text = scrape_when_busy(&mut client).await?;
    promtool(&text)?;
    let open_metrics = scrape(&mut client, PROMETHEUS_ACCEPT).await?;
    anyhow::ensure!(
        open_metrics.ends_with("# EOF\n"),
        "the OpenMetrics scrape does not end with # EOF"
    );
    parse_open_metrics(parser, &open_metrics)?;
    server.ensure_running()?;
    eprintln!("xtask: promtool on {engine}: both formats are clean");
    Ok(())
}

/// Requests of every kind the metrics count, as the organization's admin and its HR
/// agent.
async fn work(server: SocketAddr, agent: &Credentials) -> anyhow::Result<()> {
    let mut client = Client::new(server);
    let token = admin_token(&mut client).await?;
    let mut ids = Vec::new();
    for n in 1..=3 {
        let body = serde_json::json!({"title": format!("Scraped {n}")}).to_string();
        let created = expect(
            &mut client,
            Call::bearer(Method::POST, "/tasks", body, &token),
            200,
        )
        .await?;
        let created: serde_json::Value = serde_json::from_slice(&created)?;
        ids.push(
            created["data"]["id"]
                .as_str()
                .context("a created task without an id")?
                .to_owned(),
        );
    }
    let moved = serde_json::json!({"status": "backlog"}).to_string();
    let target = format!("/tasks/{}/transition", ids[0]);
    expect(
        &mut client,
        Call::bearer(Method::POST, &target, moved, &token),
        200,
    )
    .await?;
    let target = format!("/tasks/{}", ids[1]);
    expect(
        &mut client,
        Call::bearer(Method::GET, &target, String::new(), &token),
        200,
    )
    .await?;
    let signed = Call::get("/tasks".to_owned());
    let answer = client.send(&signed, agent).await?;
    anyhow::ensure!(answer.status == 200, "{}", answer.describe(&signed));
    let forged = Credentials {
        agent_id: agent.agent_id.clone(),
        secret: "0".repeat(64),
    };
    let answer = client.send(&signed, &forged).await?;
    anyhow::ensure!(answer.status == 401, "{}", answer.describe(&signed));
    let nowhere = Call::public_get("/nowhere");
    let answer = client.send(&nowhere, &Credentials::none()).await?;
    anyhow::ensure!(answer.status == 404, "{}", answer.describe(&nowhere));
    run_a_task(&mut client, agent).await
}

/// The agent claims a task and runs it: started, one usage report with its cost,
/// finished (the run families' samples).
async fn run_a_task(client: &mut Client, agent: &Credentials) -> anyhow::Result<()> {
    let mut signed = async |target: String, body: serde_json::Value, status: u16| {
        let call = Call::post(target, body.to_string());
        let answer = client.send(&call, agent).await?;
        anyhow::ensure!(answer.status == status, "{}", answer.describe(&call));
        let answer: serde_json::Value = serde_json::from_slice(&answer.body)?;
        answer["data"]["id"]
            .as_str()
            .map(str::to_owned)
            .context("an answer without data.id")
    };
    let claim = serde_json::json!({"leaseSeconds": 600});
    let task = signed("/tasks/claim".to_owned(), claim, 200).await?;
    let run = signed(format!("/tasks/{task}/runs"), serde_json::json!({}), 201).await?;
    let usage = serde_json::json!({"model": "claude-sonnet-4-5", "inputTokens": 1_000,
        "outputTokens": 100, "cacheReadTokens": 5_000, "costMicrousd": 1_234});
    signed(format!("/runs/{run}/usage"), usage, 201).await?;
    let finish = serde_json::json!({"status": "succeeded", "exitCode": 0});
    signed(format!("/runs/{run}/finish"), finish, 200).await?;
    Ok(())
}

async fn expect(client: &mut Client, call: Call, status: u16) -> anyhow::Result<bytes::Bytes> {
    let answer = client.send(&call, &Credentials::none()).await?;
    anyhow::ensure!(answer.status == status, "{}", answer.describe(&call));
    Ok(answer.body)
}

/// Samples every family must show before the scrape is checked: one of each counter
/// and of the request histogram (the gauges have theirs from the start).
const BUSY: &[&str] = &[
    "muster_http_requests_total{",
    "muster_http_request_duration_seconds_bucket{",
    "muster_auth_failures_total{",
    "muster_job_runs_total{",
    "muster_job_items_total{",
    "muster_webhook_deliveries_total{",
    "muster_tasks{",
    "muster_run_tokens_total{",
    "muster_run_cost_microusd_total{",
    "muster_runs_finished_total{status=\"succeeded\"} 1",
];

/// A text-format scrape once the webhook has been delivered and the jobs have run, so
/// that every family has samples; fails naming what is still missing after 30 s.
async fn scrape_when_busy(client: &mut Client) -> anyhow::Result<String> {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let text = scrape(client, TEXT_ACCEPT).await?;
        let missing: Vec<&str> = BUSY
            .iter()
            .copied()
            .filter(|sample| !text.contains(sample))
            .collect();
        if missing.is_empty() {
            return Ok(text);
        }
        if Instant::now() >= deadline {
            bail!("after 30 s the scrape still lacks {missing:?}:\n{text}");
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

async fn scrape(client: &mut Client, accept: &str) -> anyhow::Result<String> {
    let mut call = Call::bearer(Method::GET, "/metrics", String::new(), METRICS_TOKEN);
    call.headers.push(("Accept", accept.to_owned()));
    let body = expect(client, call, 200).await?;
    String::from_utf8(body.to_vec()).context("the scrape is not UTF-8")
}

/// `promtool check metrics` on `text`: it must exit 0 and say nothing.
fn promtool(text: &str) -> anyhow::Result<()> {
    let mut child = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .context("cannot run promtool")?;
    child
        .stdin
        .take()
        .context("no stdin for promtool")?
        .write_all(text.as_bytes())?;
    let out = child.wait_with_output()?;
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    if !out.status.success() || !said.trim().is_empty() {
        bail!(
            "promtool check metrics ({}) on the text-format scrape:\n{said}\nThe scrape:\n{text}",
            out.status
        );
    }
    Ok(())
}

/// The reference `OpenMetrics` parser on `text`: it must read every family.
fn parse_open_metrics(parser: &Parser, text: &str) -> anyhow::Result<()> {
    let mut child = Command::new(&parser.python)
        .arg(&parser.script)
        .stdin(Stdio::piped())
        .spawn()
        .context("cannot run the OpenMetrics parser")?;
    child
        .stdin
        .take()
        .context("no stdin for the OpenMetrics parser")?
        .write_all(text.as_bytes())?;
    let status = child.wait()?;
    if !status.success() {
        bail!("the OpenMetrics scrape is not valid OpenMetrics (above); the scrape:\n{text}");
    }
    Ok(())
}
