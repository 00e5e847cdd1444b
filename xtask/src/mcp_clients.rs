//! `cargo xtask mcp-clients`: the official MCP Python SDK (pinned in
//! `xtask/mcp/requirements.txt`) against a live release server on each engine, over
//! stdio (`muster mcp`, as an agent: claim, comment, done) and over Streamable HTTP
//! (`/mcp` with an API key).

use std::path::Path;
use std::process::Command;

use anyhow::{Context, bail};
use clap::Args;

use crate::bench::EngineChoice;
use crate::bench::client::{Call, Client};
use crate::bench::database::{BenchDatabase, Engine};
use crate::bench::hooks::admin_token;
use crate::bench::server::{Server, bootstrap, build_server_release, generate_secret_key};
use crate::bench::sign::Credentials;

/// `cargo xtask mcp-clients` options.
#[derive(Debug, Args)]
pub struct McpArgs {
    /// Which engine(s) to run against.
    #[arg(long, value_enum, default_value = "both")]
    engine: EngineChoice,
}

pub fn run(args: &McpArgs) -> anyhow::Result<bool> {
    let root = crate::bench::workspace_root();
    let venv = crate::fuzz_api::python_venv(&root, "mcp")?;
    let binary = build_server_release(&root)?;
    let engines = args.engine.engines();
    if engines.contains(&Engine::Postgres) {
        crate::ci::ensure_postgres().map_err(anyhow::Error::msg)?;
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    for engine in engines {
        eprintln!("xtask: mcp-clients on {engine}");
        runtime.block_on(check(engine, &root, &venv, &binary))?;
    }
    Ok(true)
}

async fn check(engine: Engine, root: &Path, venv: &Path, binary: &Path) -> anyhow::Result<()> {
    let db = BenchDatabase::create(engine)?;
    let key = generate_secret_key()?;
    let org = bootstrap(binary, &db.url, &key)?;
    let mut server = Server::start(binary, &db.url, &key, db.work_dir())?;
    server.wait_ready().await?;
    let base = format!("http://{}", server.addr);
    let mut client = Client::new(server.addr);
    let token = admin_token(&mut client).await?;
    let create_key = Call::bearer(
        hyper::Method::POST,
        "/api-keys",
        serde_json::json!({"name": "mcp-clients", "scopes": ["read", "write"]}).to_string(),
        &token,
    );
    let answer = client.send(&create_key, &Credentials::none()).await?;
    anyhow::ensure!(
        answer.status.is_success(),
        "{}",
        answer.describe(&create_key)
    );
    let body: serde_json::Value = serde_json::from_slice(&answer.body)?;
    let api_key = body["secret"].as_str().context("no API key secret")?;

    let script = root.join("xtask/mcp/client_check.py");
    let python = venv.join("bin").join("python");
    let run = |mode: &str, env: &[(&str, &str)]| -> anyhow::Result<()> {
        let status = Command::new(&python)
            .arg(&script)
            .arg(mode)
            .env("MUSTER_SERVER", &base)
            .env("MCP_CHECK_BINARY", binary)
            .env("MUSTER_LOG", "warn")
            .envs(env.iter().copied())
            .status()
            .with_context(|| format!("cannot run {}", script.display()))?;
        if !status.success() {
            bail!("the MCP Python SDK check ({mode}, {engine}) failed");
        }
        Ok(())
    };
    run(
        "stdio",
        &[
            ("MUSTER_AGENT_ID", &org.hr_agent.agent_id),
            ("MUSTER_AGENT_SECRET", &org.hr_agent.secret),
        ],
    )?;
    run("http", &[("MUSTER_API_KEY", api_key)])?;
    server.ensure_running()?;
    Ok(())
}
