//! `cargo xtask a2a-clients`: the official A2A Python SDK (`a2a-sdk`, pinned in
//! `xtask/a2a/requirements.txt`) against a live release server on each engine, over
//! both bindings (JSON-RPC and HTTP+JSON) with an API key; the Agent Card is validated
//! against the A2A 1.0 schema (`xtask/a2a/agent-card.schema.json`) first.

use std::path::Path;
use std::process::Command;

use anyhow::{Context, bail};
use clap::Args;
use muster_client::types::model::ApiKeyScope;

use crate::bench::EngineChoice;
use crate::bench::admin::{admin, api_key};
use crate::bench::database::{BenchDatabase, Engine};
use crate::bench::server::{Server, ServerBinary, bootstrap, generate_secret_key};

/// `cargo xtask a2a-clients` options.
#[derive(Debug, Args)]
pub struct A2aArgs {
    /// Which engine(s) to run against.
    #[arg(long, value_enum, default_value = "both")]
    engine: EngineChoice,
    #[command(flatten)]
    server: ServerBinary,
}

pub fn run(args: &A2aArgs) -> anyhow::Result<bool> {
    let root = crate::bench::workspace_root();
    let venv = crate::fuzz_api::python_venv(&root, "a2a")?;
    let binary = args.server.resolve(&root)?;
    let engines = args.engine.engines();
    if engines.contains(&Engine::Postgres) {
        crate::ci::ensure_postgres().map_err(anyhow::Error::msg)?;
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let python = venv.join("bin").join("python");
    let script = root.join("xtask/a2a/client_check.py");
    for engine in engines {
        eprintln!("xtask: a2a-clients on {engine}");
        runtime.block_on(check(engine, &python, &script, &binary))?;
    }
    Ok(true)
}

async fn check(engine: Engine, python: &Path, script: &Path, binary: &Path) -> anyhow::Result<()> {
    let db = BenchDatabase::create(engine)?;
    let key = generate_secret_key()?;
    bootstrap(binary, &db.url, &key)?;
    let mut server = Server::start(binary, &db.url, &key, db.work_dir())?;
    server.wait_ready().await?;
    let admin = admin(server.addr).await?;
    let scopes = [ApiKeyScope::Read, ApiKeyScope::Write];
    let key = api_key(&admin, "a2a-clients", &scopes).await?;
    let status = Command::new(python)
        .arg(script)
        .env("MUSTER_SERVER", format!("http://{}", server.addr))
        .env("MUSTER_API_KEY", &key)
        .status()
        .context("cannot run the A2A Python SDK check")?;
    if !status.success() {
        bail!("the A2A Python SDK check on {engine} failed");
    }
    server.ensure_running()?;
    Ok(())
}
