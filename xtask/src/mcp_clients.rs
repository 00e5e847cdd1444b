//! `cargo xtask mcp-clients`: the official MCP SDKs, Python (pinned in
//! `xtask/mcp/requirements.txt`) and TypeScript (pinned in `xtask/mcp/node/package.json`
//! and its lock file), against a live release server on each engine, over stdio
//! (`muster mcp`, as an agent: claim, comment, done) and over Streamable HTTP (`/mcp`
//! with an API key).

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail};
use clap::Args;
use muster_client::types::model::ApiKeyScope;

use crate::bench::EngineChoice;
use crate::bench::admin::{admin, api_key};
use crate::bench::database::{BenchDatabase, Engine};
use crate::bench::server::{Server, ServerBinary, bootstrap, generate_secret_key};

/// `cargo xtask mcp-clients` options.
#[derive(Debug, Args)]
pub struct McpArgs {
    /// Which engine(s) to run against.
    #[arg(long, value_enum, default_value = "both")]
    engine: EngineChoice,
    #[command(flatten)]
    server: ServerBinary,
}

pub fn run(args: &McpArgs) -> anyhow::Result<bool> {
    let root = crate::bench::workspace_root();
    let venv = crate::fuzz_api::python_venv(&root, "mcp")?;
    let node = node_packages(&root, "xtask/mcp/node", "the MCP TypeScript SDK")?;
    let binary = args.server.resolve(&root)?;
    let engines = args.engine.engines();
    if engines.contains(&Engine::Postgres) {
        crate::ci::ensure_postgres().map_err(anyhow::Error::msg)?;
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    for engine in engines {
        eprintln!("xtask: mcp-clients on {engine}");
        let sdks = Sdks {
            python: venv.join("bin").join("python"),
            python_script: root.join("xtask/mcp/client_check.py"),
            node_script: node.join("client_check.mjs"),
        };
        runtime.block_on(check(engine, &sdks, &binary))?;
    }
    Ok(true)
}

/// The two SDKs' check scripts and how to run them.
struct Sdks {
    python: PathBuf,
    python_script: PathBuf,
    node_script: PathBuf,
}

/// `dir` (under the workspace root) with its locked npm packages installed (`npm ci`,
/// once per lock file); `what` names them in the log.
pub(crate) fn node_packages(root: &Path, dir: &str, what: &str) -> anyhow::Result<PathBuf> {
    let dir = root.join(dir);
    let lock = dir.join("package-lock.json");
    let stamp = dir.join("node_modules/.muster-lock");
    let wanted = std::fs::read(&lock).with_context(|| format!("cannot read {}", lock.display()))?;
    if std::fs::read(&stamp).ok().as_deref() == Some(wanted.as_slice()) {
        return Ok(dir);
    }
    eprintln!("xtask: installing {what} (npm ci)");
    let status = Command::new("npm")
        // No install scripts: nothing of the packages runs but the SDK itself.
        .args([
            "ci",
            "--ignore-scripts",
            "--no-audit",
            "--no-fund",
            "--loglevel=error",
        ])
        .current_dir(&dir)
        .status()
        .context("cannot run npm: install Node.js 18 or newer with npm")?;
    if !status.success() {
        bail!("npm ci in {} failed", dir.display());
    }
    std::fs::write(&stamp, wanted)?;
    Ok(dir)
}

async fn check(engine: Engine, sdks: &Sdks, binary: &Path) -> anyhow::Result<()> {
    let db = BenchDatabase::create(engine)?;
    let key = generate_secret_key()?;
    let org = bootstrap(binary, &db.url, &key)?;
    let mut server = Server::start(binary, &db.url, &key, db.work_dir())?;
    server.wait_ready().await?;
    let base = format!("http://{}", server.addr);
    let admin = admin(server.addr).await?;
    let key = api_key(
        &admin,
        "mcp-clients",
        &[ApiKeyScope::Read, ApiKeyScope::Write],
    )
    .await?;
    let run = |sdk: &str, mode: &str, env: &[(&str, &str)]| -> anyhow::Result<()> {
        eprintln!("xtask: the MCP {sdk} SDK over {mode} on {engine}");
        let mut command = if sdk == "Python" {
            let mut command = Command::new(&sdks.python);
            command.arg(&sdks.python_script);
            command
        } else {
            let mut command = Command::new("node");
            command.arg(&sdks.node_script);
            command
        };
        let status = command
            .arg(mode)
            .env("MUSTER_SERVER", &base)
            .env("MCP_CHECK_BINARY", binary)
            .env("MUSTER_LOG", "warn")
            .envs(env.iter().copied())
            .status()
            .with_context(|| format!("cannot run the MCP {sdk} SDK check"))?;
        if !status.success() {
            bail!("the MCP {sdk} SDK check ({mode}, {engine}) failed");
        }
        Ok(())
    };
    let agent = [
        ("MUSTER_AGENT_ID", org.hr_agent.agent_id.as_str()),
        ("MUSTER_AGENT_SECRET", org.hr_agent.secret.as_str()),
    ];
    let user = [("MUSTER_API_KEY", key.as_str())];
    // The agent loops first: each claims the task it just created, which a task left
    // open by an HTTP check could otherwise get ahead of.
    for sdk in ["Python", "TypeScript"] {
        run(sdk, "stdio", &agent)?;
    }
    for sdk in ["Python", "TypeScript"] {
        run(sdk, "http", &user)?;
    }
    server.ensure_running()?;
    Ok(())
}
