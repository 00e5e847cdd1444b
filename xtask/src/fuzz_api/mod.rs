//! `cargo xtask fuzz-api`: schemathesis against a live release `muster serve`, on each
//! engine, with every credential scheme supplied (see `proxy.rs` for how), all
//! operations, and a bounded number of examples. It passes when schemathesis finds no
//! server error, no answer the OpenAPI document does not allow, no request the server
//! accepts that the document forbids (or the reverse), and no hang.
//!
//! schemathesis is installed, at the version pinned in `xtask/schemathesis/
//! requirements.txt`, into a virtual environment in the target folder. Rules that span
//! two fields or depend on the server's state, which a schema cannot state, are applied
//! by the proxy (`adjust.rs`).

mod adjust;
mod proxy;
mod seed;

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail};
use clap::Args;
use muster_client::types::model::ApiKeyScope;

use crate::bench::EngineChoice;
use crate::bench::admin::{admin, api_key};
use crate::bench::client::Client;
use crate::bench::database::{BenchDatabase, Engine};
use crate::bench::hooks::admin_token;
use crate::bench::server::{Server, ServerBinary, bootstrap, generate_secret_key, target_dir};
use proxy::{AGENT_PLACEHOLDER, KEY_PLACEHOLDER, RealCredentials, USER_PLACEHOLDER};

/// `cargo xtask fuzz-api` options.
#[derive(Debug, Args)]
pub struct FuzzArgs {
    /// Which engine(s) to run against.
    #[arg(long, value_enum, default_value = "both")]
    engine: EngineChoice,
    /// Examples per operation and phase (schemathesis `--max-examples`).
    #[arg(long, default_value_t = 25)]
    max_examples: u32,
    /// The random seed, to replay a run.
    #[arg(long)]
    seed: Option<u128>,
    /// Concurrent schemathesis workers. More than one can crash schemathesis itself on
    /// `CPython` 3.11 (its `ast` is not thread-safe: "AST constructor recursion depth
    /// mismatch"), reported as an error though every operation passed.
    #[arg(long, default_value_t = 1)]
    workers: u8,
    /// Fuzz both engines at the same time (each engine's output is printed when it
    /// ends): schemathesis keeps one core busy, so two runs take little longer than one.
    #[arg(long)]
    concurrent: bool,
    #[command(flatten)]
    server: ServerBinary,
}

/// The metrics token the server under test is started with.
const METRICS_TOKEN: &str = "fuzz-metrics-token-0123456789";

/// The chat token the server under test is started with: without one the chat route is
/// off (404) and would not be exercised.
const CHAT_TOKEN: &str = "fuzz-chat-token-0123456789";

pub fn run(args: &FuzzArgs) -> anyhow::Result<bool> {
    let root = crate::bench::workspace_root();
    let engines = args.engine.engines();
    if engines.contains(&Engine::Postgres) {
        crate::ci::ensure_postgres().map_err(anyhow::Error::msg)?;
    }
    let schemathesis = ensure_schemathesis(&root)?;
    let binary = args.server.resolve(&root)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let runs = engines.iter().map(|&engine| {
        let (binary, schemathesis) = (&binary, &schemathesis);
        async move {
            eprintln!("xtask: fuzz-api on {engine}");
            let passed = fuzz_engine(engine, args, binary, schemathesis).await?;
            eprintln!(
                "xtask: fuzz-api on {engine}: {}",
                if passed { "clean" } else { "FAILURES (above)" }
            );
            Ok::<_, anyhow::Error>(passed)
        }
    });
    let mut clean = true;
    if args.concurrent {
        for passed in runtime.block_on(futures_util::future::join_all(runs)) {
            clean &= passed?;
        }
    } else {
        // One after the other, stopping at the first run that could not be made.
        for run in runs {
            clean &= runtime.block_on(run)?;
        }
    }
    Ok(clean)
}

async fn fuzz_engine(
    engine: Engine,
    args: &FuzzArgs,
    binary: &Path,
    schemathesis: &Path,
) -> anyhow::Result<bool> {
    let db = BenchDatabase::create(engine)?;
    let key = generate_secret_key()?;
    let bootstrapped = bootstrap(binary, &db.url, &key)?;
    let env = [
        ("MUSTER_METRICS_TOKEN", METRICS_TOKEN),
        ("MUSTER_CHAT_TOKEN", CHAT_TOKEN),
        // A stream ends by itself after a second, so a client that reads it to the end
        // (as schemathesis does) gets an answer.
        ("MUSTER_STREAM_MAX_SECS", "1"),
    ];
    let mut server = Server::start_with(binary, &db.url, &key, db.work_dir(), &env)?;
    server.wait_ready().await?;
    // The proxy sends the admin's own access token for the user scheme.
    let user_token = admin_token(&mut Client::new(server.addr)).await?;
    let admin = admin(server.addr).await?;
    let scopes = [ApiKeyScope::Read, ApiKeyScope::Write, ApiKeyScope::Admin];
    let api_key = api_key(&admin, "fuzz-api", &scopes).await?;
    let seeded = seed::seed(&admin).await?;
    let proxy = proxy::start(
        server.addr,
        RealCredentials {
            agent: bootstrapped.hr_agent.clone(),
            user_token,
            api_key,
        },
    )
    .await?;
    let config = db.work_dir().join("schemathesis.toml");
    std::fs::write(&config, config_text() + &seeded.config())?;
    let mut command = tokio::process::Command::new(schemathesis);
    command
        .arg("--config-file")
        .arg(&config)
        .arg("run")
        .arg(format!("http://{proxy}/openapi.json"))
        .args(["--phases", "examples,coverage,fuzzing,stateful"])
        // Every check is on by default; naming them on the command line (`--checks all`)
        // would also override the per-operation settings of the configuration file.
        .args(["--max-examples", &args.max_examples.to_string()])
        .args(["--workers", &args.workers.to_string()])
        .args(["--request-timeout", "10"])
        .args(["--report", "junit"])
        .arg("--report-dir")
        .arg(db.work_dir().join("report"))
        .current_dir(db.work_dir());
    if let Some(seed) = args.seed {
        command.args(["--seed", &seed.to_string()]);
    }
    // Concurrent runs hold their reports and print each whole when it ends, so that
    // they do not interleave.
    let status = if args.concurrent {
        let out = command.output().await.context("cannot run schemathesis")?;
        eprintln!(
            "xtask: schemathesis on {engine}:\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        out.status
    } else {
        command.status().await.context("cannot run schemathesis")?
    };
    server.ensure_running()?;
    if !status.success() {
        // The causes of any 5xx are in the server's log, never in its answers.
        let log = std::fs::read_to_string(db.work_dir().join("server.log")).unwrap_or_default();
        let errors: Vec<&str> = log
            .lines()
            .filter(|line| line.contains(" ERROR "))
            .take(20)
            .collect();
        eprintln!(
            "xtask: the server logged {} errors:\n{}",
            errors.len(),
            errors.join("\n")
        );
    }
    Ok(status.success())
}

/// The schemathesis configuration: a placeholder for every credential scheme, which the
/// proxy swaps for the real one.
fn config_text() -> String {
    format!(
        r#"# Written by `cargo xtask fuzz-api`: placeholders the signing proxy replaces.
[auth.openapi.agentId]
api_key = "{AGENT_PLACEHOLDER}"
[auth.openapi.agentTimestamp]
api_key = "0"
[auth.openapi.agentNonce]
api_key = "0"
[auth.openapi.agentSignature]
api_key = "0"
[auth.openapi.userToken]
bearer = "{USER_PLACEHOLDER}"
[auth.openapi.apiKey]
bearer = "{KEY_PLACEHOLDER}"
[auth.openapi.metricsToken]
bearer = "{METRICS_TOKEN}"
[auth.openapi.chatToken]
api_key = "{CHAT_TOKEN}"
[auth.openapi.hostSignature]
api_key = "sha256=0000000000000000000000000000000000000000000000000000000000000000"

# A2A answers a cancel of a closed task, or a subscription to one, 400 (the protocol's
# TaskNotCancelable and UnsupportedOperation): the seeded tasks are soon closed by the
# run itself, so a valid body may meet a closed task. Invalid bodies must still be
# refused, and no other 4xx is taken for a valid one.
[[operations]]
include-operation-id = "a2aCancelOrSubscribe"
checks.positive_data_acceptance.expected-statuses = ["2xx", "400", "401", "403", "404", "409", "429"]

# Whether a valid body is taken depends on another server: registering a remote agent
# reads its card from `cardUrl`, and a remote agent's push carries the token it was
# given with the task. Invalid bodies must still be refused.
[[operations]]
include-path-regex = "^/(agents/remote|a2a/remote/)"
checks.positive_data_acceptance.enabled = false

# JSON-RPC over HTTP answers every request it can read with HTTP 200, an invalid one
# with the JSON-RPC error object (D-104): a schema-violating body is refused in the
# body, not by the status, so the status check for refusals does not apply. Valid
# bodies must still be taken, and 401, 413 and 415 are tested in the API suite.
[[operations]]
include-path-regex = "^/a2a/jsonrpc$"
checks.negative_data_rejection.enabled = false
"#
    )
}

/// The `schemathesis` program of a virtual environment in the target folder, with the
/// pinned version installed (once).
fn ensure_schemathesis(root: &Path) -> anyhow::Result<PathBuf> {
    let venv = python_venv(root, "schemathesis")?;
    Ok(venv.join("bin").join("schemathesis"))
}

/// A virtual environment in the target folder, `target/<name>-venv`, with the packages
/// pinned in `xtask/<name>/requirements.txt` installed (again only when they change).
pub fn python_venv(root: &Path, name: &str) -> anyhow::Result<PathBuf> {
    let requirements = root.join("xtask").join(name).join("requirements.txt");
    let pinned = std::fs::read_to_string(&requirements)
        .with_context(|| format!("cannot read {}", requirements.display()))?;
    let venv = target_dir(root)?.join(format!("{name}-venv"));
    let stamp = venv.join("requirements.txt");
    if venv.join("bin").join("python").is_file()
        && std::fs::read_to_string(&stamp).ok().as_deref() == Some(&pinned)
    {
        return Ok(venv);
    }
    eprintln!("xtask: installing {name} into {}", venv.display());
    run_checked(Command::new("python3").args(["-m", "venv"]).arg(&venv))?;
    run_checked(
        Command::new(venv.join("bin").join("pip"))
            .args(["install", "--quiet", "--disable-pip-version-check", "-r"])
            .arg(&requirements),
    )?;
    std::fs::write(&stamp, pinned)?;
    Ok(venv)
}

fn run_checked(command: &mut Command) -> anyhow::Result<()> {
    let status = command
        .status()
        .with_context(|| format!("cannot run {command:?}"))?;
    if !status.success() {
        bail!("{command:?} failed ({status})");
    }
    Ok(())
}
