//! `muster`: serve, migrate, bootstrap, sign, openapi, and the client commands (task,
//! agent, events, run, usage).

use std::process::ExitCode;

use clap::Parser;
use muster_server::cli::{Cli, Command};
use muster_server::{commands, logging, memory, sign, telemetry_settings};

/// mimalloc rather than glibc's malloc: see docs/benchmarks.md (memory under load). Its
/// `override` feature makes it the process's `malloc` too, so the bundled SQLite's C code
/// allocates from it as well (docs/benchmarks.md, "SQLite's allocations").
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    // First, before the runtime's threads and buffers exist.
    let small_pages = memory::use_small_pages();
    actix_web::rt::System::new().block_on(run(small_pages))
}

async fn run(small_pages: Result<(), String>) -> ExitCode {
    let cli = Cli::parse();
    // reqwest's TLS in this build has no built-in crypto provider (muster-client turns
    // on `rustls-no-provider`), and every reqwest client (the OTLP exporter's too)
    // needs one: ring, as everywhere else here. A no-op if one is set.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let service = match cli.command {
        Command::Worker(_) => "muster-worker",
        _ => "muster",
    };
    let traces = telemetry_settings::read(cli.otlp_endpoint.as_deref(), service, |name| {
        std::env::var(name).ok()
    });
    let telemetry =
        match traces.and_then(|traces| logging::init(&cli.log, cli.log_format, traces.as_ref())) {
            Ok(telemetry) => telemetry,
            Err(err) => {
                eprintln!("error: {err:#}");
                return ExitCode::FAILURE;
            }
        };
    if let Err(reason) = small_pages {
        tracing::debug!(%reason, "transparent huge pages stay on");
    }
    let result = match cli.command {
        Command::Serve(args) => commands::serve(*args).await,
        Command::Migrate(args) => commands::migrate(args).await,
        Command::Bootstrap(args) => commands::bootstrap_command(args).await,
        Command::Sign(args) => {
            let now = time::OffsetDateTime::now_utc().unix_timestamp();
            print!("{}", sign::signature_headers(&args, now));
            Ok(())
        }
        Command::Openapi => {
            print!("{}", muster_http::openapi::json());
            Ok(())
        }
        Command::Task(args) => muster_cli::task(args).await,
        Command::Agent(args) => muster_cli::agent(args).await,
        Command::Events(args) => muster_cli::events(args).await,
        Command::Project(args) => muster_cli::project(args).await,
        Command::Routine(args) => muster_cli::routine(args).await,
        Command::Run(args) => muster_cli::runs(args).await,
        Command::Usage(args) => muster_cli::usage(args).await,
        Command::Mcp(connection) => muster_cli::mcp(connection).await,
        Command::Worker(args) => muster_cli::worker(args).await,
    };
    telemetry.shutdown();
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            // One line, the whole cause chain, no backtrace.
            eprintln!("error: {err:#}");
            ExitCode::FAILURE
        }
    }
}
