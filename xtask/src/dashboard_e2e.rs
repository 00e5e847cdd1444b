//! `cargo xtask dashboard-e2e`: the dashboard end to end in Debian's Chromium, driven by
//! playwright-core (pinned in `xtask/dashboard/package.json` and its lock file; it
//! downloads no browser), against a live release server on each engine. The script
//! (`xtask/dashboard/e2e.mjs`) signs in with two-factor, moves cards, comments,
//! approves, watches an agent's change arrive, follows a run's log live and stops the
//! run, reads the task's runs and the spend page, registers and suspends an agent, and
//! saves a screenshot of every page under `target/dashboard-e2e/<engine>/`.

use std::path::Path;
use std::process::Command;

use anyhow::{Context, bail};
use clap::Args;

use crate::bench::EngineChoice;
use crate::bench::database::{BenchDatabase, Engine};
use crate::bench::server::{
    ADMIN_EMAIL, ADMIN_PASSWORD, Server, ServerBinary, bootstrap, generate_secret_key,
};

/// `cargo xtask dashboard-e2e` options.
#[derive(Debug, Args)]
pub struct E2eArgs {
    /// Which engine(s) to run against.
    #[arg(long, value_enum, default_value = "both")]
    engine: EngineChoice,
    #[command(flatten)]
    server: ServerBinary,
}

pub fn run(args: &E2eArgs) -> anyhow::Result<bool> {
    let root = crate::bench::workspace_root();
    crate::ci::ensure_chromium().map_err(anyhow::Error::msg)?;
    let node = crate::mcp_clients::node_packages(&root, "xtask/dashboard", "playwright-core")?;
    let binary = args.server.resolve(&root)?;
    let engines = args.engine.engines();
    if engines.contains(&Engine::Postgres) {
        crate::ci::ensure_postgres().map_err(anyhow::Error::msg)?;
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    for engine in engines {
        eprintln!("xtask: dashboard-e2e on {engine}");
        let shots = root.join("target/dashboard-e2e").join(engine.to_string());
        // A failed run's picture must not outlive it.
        let _ = std::fs::remove_dir_all(&shots);
        runtime.block_on(check(engine, &node.join("e2e.mjs"), &binary, &shots))?;
    }
    Ok(true)
}

async fn check(engine: Engine, script: &Path, binary: &Path, shots: &Path) -> anyhow::Result<()> {
    let db = BenchDatabase::create(engine)?;
    let key = generate_secret_key()?;
    let org = bootstrap(binary, &db.url, &key)?;
    let mut server = Server::start(binary, &db.url, &key, db.work_dir())?;
    server.wait_ready().await?;
    let status = Command::new("node")
        .arg(script)
        .env("E2E_SERVER", format!("http://{}", server.addr))
        .env("E2E_ADMIN_EMAIL", ADMIN_EMAIL)
        .env("E2E_ADMIN_PASSWORD", ADMIN_PASSWORD)
        .env("E2E_AGENT_ID", &org.hr_agent.agent_id)
        .env("E2E_AGENT_SECRET", &org.hr_agent.secret)
        .env("E2E_AGENT_UUID", &org.hr_agent_id)
        .env("E2E_BINARY", binary)
        .env("E2E_SCREENSHOTS", shots)
        .status()
        .context("cannot run node: install Node.js 18 or newer")?;
    if !status.success() {
        bail!("the dashboard end-to-end check on {engine} failed");
    }
    server.ensure_running()?;
    eprintln!("xtask: dashboard screenshots in {}", shots.display());
    Ok(())
}
