//! `cargo xtask generated-client`: a Python client generated from `docs/openapi.json`
//! by openapi-python-client (pinned in `xtask/generated-client/requirements.txt`) must
//! hold every operation of the document, with no warning from the generator, and must
//! create, update, move and read a task against a live server on each engine, with an
//! API key (`xtask/generated-client/client_check.py`).
//!
//! Generators drop, with only a warning, an operation whose schemas they cannot build
//! (openapi-python-client dropped seven when `metadata` was a recursive schema); this
//! keeps the document within what they read.

use std::path::Path;
use std::process::Command;

use anyhow::{Context, bail};
use clap::Args;
use muster_client::types::model::ApiKeyScope;

use crate::bench::EngineChoice;
use crate::bench::admin::{admin, api_key};
use crate::bench::database::{BenchDatabase, Engine};
use crate::bench::server::{Server, ServerBinary, bootstrap, generate_secret_key, target_dir};

/// `cargo xtask generated-client` options.
#[derive(Debug, Args)]
pub struct GeneratedClientArgs {
    /// Which engine(s) to run against.
    #[arg(long, value_enum, default_value = "both")]
    engine: EngineChoice,
    #[command(flatten)]
    server: ServerBinary,
}

/// The generated package's name (`muster_api`), under `target/generated-client/`.
const PACKAGE: &str = "muster_api";

pub fn run(args: &GeneratedClientArgs) -> anyhow::Result<bool> {
    let root = crate::bench::workspace_root();
    let venv = crate::fuzz_api::python_venv(&root, "generated-client")?;
    let document = root.join("docs/openapi.json");
    let generated = target_dir(&root)?.join("generated-client");
    let warnings = generate(&venv, &root, &document, &generated)?;
    let python = venv.join("bin").join("python");
    let script = root.join("xtask/generated-client/client_check.py");
    let check = |mode: &str| {
        let mut command = Command::new(&python);
        command
            .arg(&script)
            .arg(mode)
            .env("GENERATED_CLIENT", &generated)
            .env("OPENAPI_DOCUMENT", &document);
        command
    };
    let status = check("operations")
        .status()
        .context("cannot run the generated client's check")?;
    if !status.success() {
        bail!(
            "the generated client lacks operations of docs/openapi.json (listed above); the generator said:\n{}",
            warnings.as_deref().unwrap_or_default()
        );
    }
    if let Some(warnings) = warnings {
        bail!("openapi-python-client did not read all of the document:\n{warnings}");
    }
    let binary = args.server.resolve(&root)?;
    let engines = args.engine.engines();
    if engines.contains(&Engine::Postgres) {
        crate::ci::ensure_postgres().map_err(anyhow::Error::msg)?;
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    for engine in engines {
        eprintln!("xtask: generated-client on {engine}");
        runtime.block_on(live(engine, &binary, check("live")))?;
    }
    Ok(true)
}

/// Generates the client of `document` into `into/muster_api` afresh; answers what the
/// generator said when it warned (a warning is a part of the document it could not
/// read, which fails the check once the missing operations are listed).
fn generate(
    venv: &Path,
    root: &Path,
    document: &Path,
    into: &Path,
) -> anyhow::Result<Option<String>> {
    let package = into.join(PACKAGE);
    // A stale package must not pass for a fresh one.
    if package.exists() {
        std::fs::remove_dir_all(&package)
            .with_context(|| format!("cannot remove {}", package.display()))?;
    }
    std::fs::create_dir_all(into)?;
    eprintln!(
        "xtask: openapi-python-client generate {}",
        document.display()
    );
    let out = Command::new(venv.join("bin").join("openapi-python-client"))
        .arg("generate")
        .arg("--path")
        .arg(document)
        .arg("--output-path")
        .arg(&package)
        .args(["--meta", "none"])
        // No formatter run afterwards (ruff): the check reads modules, not their style.
        .arg("--config")
        .arg(root.join("xtask/generated-client/config.json"))
        .output()
        .context("cannot run openapi-python-client")?;
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    if !out.status.success() || !package.join("api").is_dir() {
        bail!("openapi-python-client failed ({}):\n{said}", out.status);
    }
    Ok(said
        .to_ascii_lowercase()
        .contains("warning")
        .then_some(said))
}

/// The generated client against a live server on `engine`, with a read and write key.
async fn live(engine: Engine, binary: &Path, mut check: Command) -> anyhow::Result<()> {
    let db = BenchDatabase::create(engine)?;
    let key = generate_secret_key()?;
    bootstrap(binary, &db.url, &key)?;
    let mut server = Server::start(binary, &db.url, &key, db.work_dir())?;
    server.wait_ready().await?;
    let admin = admin(server.addr).await?;
    let scopes = [ApiKeyScope::Read, ApiKeyScope::Write];
    let key = api_key(&admin, "generated-client", &scopes).await?;
    let status = check
        .env("MUSTER_SERVER", format!("http://{}", server.addr))
        .env("MUSTER_API_KEY", &key)
        .status()
        .context("cannot run the generated client's check")?;
    if !status.success() {
        bail!("the generated client's check on {engine} failed");
    }
    server.ensure_running()?;
    Ok(())
}
