//! Project automation.
//!
//! - `cargo xtask ci`: everything CI runs (see `ci.rs`).
//! - `cargo xtask client-deps`: `muster-client`'s dependency tree holds none of the
//!   server's machinery (see `client_deps.rs`).
//! - `cargo xtask bench`: throughput and latency on both engines (see `bench/mod.rs`).
//! - `cargo xtask openapi`: regenerates `docs/openapi.json` (see `openapi.rs`).
//! - `cargo xtask fuzz-api`: schemathesis against a live server (see `fuzz_api/`).
//! - `cargo xtask mcp-clients`, `cargo xtask a2a-clients`: the official MCP and A2A SDKs
//!   against a live server (see `mcp_clients.rs`, `a2a_clients.rs`).
//! - `cargo xtask mcp-conformance`: the MCP conformance suite against a live server's
//!   `/mcp` (see `mcp_conformance.rs`).
//! - `cargo xtask dashboard-e2e`: the dashboard in headless Chromium against a live
//!   server (see `dashboard_e2e.rs`).
//! - `cargo xtask generated-client`: a Python client generated from the document against
//!   a live server (see `generated_client.rs`).
//! - `cargo xtask promtool`: promtool and the `OpenMetrics` parser on a live server's
//!   scrape (see `promtool.rs`).
//! - `cargo xtask domain`: docs, examples and the API check of `muster-domain` (see `domain.rs`).
//! - `cargo xtask mutants`: mutation testing of the domain, auth and signing crates
//!   (see `mutants.rs`).

mod a2a_clients;
mod bench;
mod ci;
mod client_deps;
mod command;
mod dashboard_e2e;
mod domain;
mod fuzz_api;
mod generated_client;
mod mcp_clients;
mod mcp_conformance;
mod mutants;
mod openapi;
mod promtool;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(
    name = "cargo xtask",
    bin_name = "cargo xtask",
    about = "Muster project automation"
)]
struct Cli {
    #[command(subcommand)]
    task: Task,
}

#[derive(Debug, Subcommand)]
enum Task {
    /// Formatting check, clippy with -D warnings, and every test on both engines.
    Ci,
    /// Check muster-client's tree (no argon2, jsonwebtoken, diesel, actix) and its build alone.
    ClientDeps,
    /// Benchmark a release build of `muster serve` on SQLite and/or PostgreSQL.
    Bench(bench::BenchArgs),
    /// Regenerate docs/openapi.json from the code.
    Openapi,
    /// Run schemathesis against a live release server on SQLite and/or PostgreSQL.
    FuzzApi(fuzz_api::FuzzArgs),
    /// Drive a live server with the official MCP Python SDK, over stdio and HTTP.
    McpClients(mcp_clients::McpArgs),
    /// Run the MCP conformance suite's scenarios for a tools-only server against /mcp.
    McpConformance(mcp_conformance::ConformanceArgs),
    /// Drive a live server with the official A2A Python SDK, over both bindings.
    A2aClients(a2a_clients::A2aArgs),
    /// Drive the dashboard in Debian's Chromium against a live server on each engine.
    DashboardE2e(dashboard_e2e::E2eArgs),
    /// Generate a Python client from docs/openapi.json; check its operations, live.
    GeneratedClient(generated_client::GeneratedClientArgs),
    /// Lint a live server's /metrics scrape with promtool, in both formats it answers in.
    Promtool(promtool::PromtoolArgs),
    /// Mutation-test muster-domain, muster-auth and muster-signing with their own tests.
    Mutants(mutants::MutantsArgs),
    /// Check muster-domain as a library: docs, examples, API against the last release.
    Domain,
}

fn main() -> ExitCode {
    let result = match Cli::parse().task {
        Task::Ci => ci::ci().map(|()| true),
        Task::ClientDeps => client_deps::check().map(|()| true),
        Task::Bench(args) => bench::run(&args).map_err(|e| format!("{e:#}")),
        Task::Openapi => openapi::openapi().map(|()| true),
        Task::FuzzApi(args) => fuzz_api::run(&args).map_err(|e| format!("{e:#}")),
        Task::Mutants(args) => mutants::run(&args).map_err(|e| format!("{e:#}")),
        Task::McpClients(args) => mcp_clients::run(&args).map_err(|e| format!("{e:#}")),
        Task::McpConformance(args) => mcp_conformance::run(&args).map_err(|e| format!("{e:#}")),
        Task::A2aClients(args) => a2a_clients::run(&args).map_err(|e| format!("{e:#}")),
        Task::DashboardE2e(args) => dashboard_e2e::run(&args).map_err(|e| format!("{e:#}")),
        Task::GeneratedClient(args) => generated_client::run(&args).map_err(|e| format!("{e:#}")),
        Task::Promtool(args) => promtool::run(&args).map_err(|e| format!("{e:#}")),
        Task::Domain => domain::check().map(|()| true),
    };
    match result {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(err) => {
            eprintln!("xtask: {err}");
            ExitCode::FAILURE
        }
    }
}
