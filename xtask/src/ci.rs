//! `cargo xtask ci`: formatting check, a build that is also clippy's run with
//! `-D warnings` (see `linted_build`), the client's lean
//! dependency tree (`cargo xtask client-deps`), the whole test suite,
//! whose database tests run on BOTH engines (SQLite and PostgreSQL), and schemathesis
//! against a live server (the binary the tests built) on both (`cargo xtask fuzz-api`),
//! and the official MCP Python and TypeScript SDKs against one on both (`cargo xtask
//! mcp-clients`), and the MCP conformance suite against one's `/mcp` on both (`cargo
//! xtask mcp-conformance`), and the official A2A Python SDK likewise (`cargo xtask
//! a2a-clients`), and the dashboard in headless Chromium likewise (`cargo xtask
//! dashboard-e2e`), and a generated Python client likewise (`cargo xtask
//! generated-client`), and promtool on a real scrape of `/metrics` likewise (`cargo
//! xtask promtool`). `CI` is set for the test run so that an unreachable PostgreSQL
//! fails the run instead of skipping tests.

use std::net::{SocketAddr, TcpStream};
use std::process::Command;
use std::time::{Duration, Instant};

use crate::command::{run, run_cargo};

pub fn ci() -> Result<(), String> {
    let mut steps = Steps::default();
    let outcome = all_steps(&mut steps);
    steps.report(outcome.is_ok());
    outcome
}

fn all_steps(steps: &mut Steps) -> Result<(), String> {
    steps.time("fmt", || cargo(&["fmt", "--all", "--", "--check"]))?;
    // Clippy's lints run in the build itself, not in a `cargo clippy` of their own:
    // clippy-driver is a whole compiler, so as the workspace's compiler wrapper it lints
    // the workspace's crates and builds them too (see `linted_build`). `cargo clippy`
    // checked every dependency apart from the build, which cargo cannot share with it:
    // 172 s of a cold run, where the lints alone add 13 s to the build. After `.ci/run`'s
    // build, made the same way, this step finds everything fresh.
    let linted = linted_build()?;
    let linted: Vec<(&str, &str)> = linted.iter().map(|(k, v)| (*k, v.as_str())).collect();
    steps.time("build with clippy's lints (-D warnings)", || {
        run_cargo(
            &["build", "--workspace", "--all-targets", "--all-features"],
            &linted,
        )
    })?;
    // muster-client's tree: no argon2, jsonwebtoken, diesel, actix, utoipa or
    // muster-auth; and the client compiles without muster-wire's `openapi` feature,
    // which every workspace build turns on.
    steps.time("client-deps", crate::client_deps::check)?;
    // muster-domain as a library: its docs, its examples, its API against the last
    // tagged release.
    steps.time("domain library", crate::domain::check)?;
    steps.time("tools (PostgreSQL, Chromium)", || {
        ensure_postgres()?;
        ensure_chromium()
    })?;
    // Plain `cargo test`: cargo-nextest ran the same suite 7 % slower here (one process
    // per test: 1,136 API tests took 433 s instead of 375 s), see docs/testing.md.
    steps.time("tests, both engines", || {
        // The same compiler wrapper and flags as the build, or cargo would build the
        // workspace again without them.
        let mut env = linted.clone();
        env.push(("CI", "true"));
        run_cargo(&["test", "--workspace", "--all-features"], &env)
    })?;
    // The live-server checks below run the `muster` the test run has just built (the
    // server's integration tests need it) rather than a release build of their own: that
    // build took a fifth of the whole run, and none of these checks is about speed.
    let binary = test_binary()?;
    let binary = binary.as_str();
    // The live-server checks other than schemathesis run beside it: schemathesis left
    // a third of the two cores idle (184 s, 63 % busy here), and none of these checks
    // is about speed. Their output goes to a log, printed whole when they are done, so
    // that it does not interleave with schemathesis's.
    let log = live_checks_log()?;
    std::thread::scope(|scope| {
        let others = scope.spawn(|| {
            let started = Instant::now();
            let outcome = other_live_checks(binary, &log);
            (outcome, started.elapsed())
        });
        let fuzzed = steps.time("schemathesis, both engines", || fuzz(binary));
        let (checked, took) = others.join().unwrap_or_else(|_| {
            (
                Err("the live-server checks panicked".to_owned()),
                Duration::ZERO,
            )
        });
        steps.record(
            "MCP, A2A, generated client, promtool, dashboard (beside schemathesis)",
            took,
        );
        match std::fs::read_to_string(&log) {
            Ok(text) => eprintln!("xtask: the checks beside schemathesis said:\n{text}"),
            Err(e) => eprintln!("xtask: cannot read {}: {e}", log.display()),
        }
        fuzzed.and(checked)
    })
}

/// schemathesis against a live server, on both engines at once. A fixed seed keeps
/// the gate deterministic for a given document; `cargo xtask fuzz-api` without one
/// explores new cases locally, and what it finds becomes a regression test. One
/// worker: with two, Hypothesis describes filter lambdas by parsing source in both
/// threads at once, and Python 3.11's `ast` is not safe for that ("AST constructor
/// recursion depth mismatch"), which failed a run with every operation passing.
fn fuzz(binary: &str) -> Result<(), String> {
    xtask(
        &[
            "fuzz-api",
            "--engine",
            "both",
            "--seed",
            "1",
            // Every operation, its coverage cases and the stateful links still run;
            // fewer random examples each (the command's default, 25, stays the
            // exploration).
            "--max-examples",
            "10",
            "--workers",
            "1",
            "--concurrent",
            "--binary",
            binary,
        ],
        None,
    )
}

/// The official SDKs, the conformance suite, a generated client, promtool and the
/// dashboard against live servers, each on both engines, their output to `log`.
fn other_live_checks(binary: &str, log: &std::path::Path) -> Result<(), String> {
    let log =
        std::fs::File::create(log).map_err(|e| format!("cannot create {}: {e}", log.display()))?;
    let log = Some(&log);
    // The official MCP Python and TypeScript SDKs over stdio and Streamable HTTP.
    xtask(
        &["mcp-clients", "--engine", "both", "--binary", binary],
        log,
    )?;
    // The MCP conformance suite's scenarios for a server of tools, DNS rebinding
    // included, against /mcp.
    xtask(
        &["mcp-conformance", "--engine", "both", "--binary", binary],
        log,
    )?;
    // The official A2A Python SDK over JSON-RPC and HTTP+JSON.
    xtask(
        &["a2a-clients", "--engine", "both", "--binary", binary],
        log,
    )?;
    // A Python client generated from the document (openapi-python-client) holds every
    // operation and creates, updates, moves and reads a task.
    xtask(
        &["generated-client", "--engine", "both", "--binary", binary],
        log,
    )?;
    // A real scrape of /metrics in both formats: promtool lints the text format, the
    // reference parser reads OpenMetrics.
    xtask(&["promtool", "--engine", "both", "--binary", binary], log)?;
    // The dashboard end to end in Debian's Chromium (playwright-core).
    xtask(
        &["dashboard-e2e", "--engine", "both", "--binary", binary],
        log,
    )
}

/// Where the checks beside schemathesis write: `target/ci/live-checks.log`.
fn live_checks_log() -> Result<std::path::PathBuf, String> {
    let folder = target_dir()?.join("ci");
    std::fs::create_dir_all(&folder)
        .map_err(|e| format!("cannot create {}: {e}", folder.display()))?;
    Ok(folder.join("live-checks.log"))
}

/// The environment of a build that is also clippy's run with `-D warnings`:
/// `RUSTC_WORKSPACE_WRAPPER` set to clippy-driver (cargo runs the workspace's own crates
/// through it, dependencies through plain rustc, as `cargo clippy` does) and `-D warnings`
/// in `RUSTFLAGS` (dependencies cap their lints, so only the workspace's warnings, clippy's
/// among them, fail the build). Values already set that way, as `.ci/run` exports them,
/// are kept as they are: any change in either would make cargo build everything again.
fn linted_build() -> Result<Vec<(&'static str, String)>, String> {
    const WRAPPER: &str = "RUSTC_WORKSPACE_WRAPPER";
    let wrapper = match std::env::var(WRAPPER) {
        Ok(path) if path.ends_with("clippy-driver") => path,
        _ => clippy_driver()?,
    };
    let flags = std::env::var("RUSTFLAGS").unwrap_or_default();
    let flags = if denies_warnings(&flags) {
        flags
    } else {
        format!("{flags} -D warnings").trim_start().to_owned()
    };
    Ok(vec![(WRAPPER, wrapper), ("RUSTFLAGS", flags)])
}

/// Whether `flags` (a `RUSTFLAGS` value) already hold `-D warnings`.
fn denies_warnings(flags: &str) -> bool {
    flags
        .split_whitespace()
        .collect::<Vec<_>>()
        .windows(2)
        .any(|pair| pair == ["-D", "warnings"])
        || flags.split_whitespace().any(|flag| flag == "-Dwarnings")
}

/// The toolchain's clippy-driver (`rustc --print sysroot`/bin), which the clippy
/// component installs.
fn clippy_driver() -> Result<String, String> {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".to_owned());
    let output = Command::new(&rustc)
        .args(["--print", "sysroot"])
        .output()
        .map_err(|e| format!("cannot run `{rustc} --print sysroot`: {e}"))?;
    let sysroot = String::from_utf8_lossy(&output.stdout).trim().to_owned();
    let driver = std::path::Path::new(&sysroot)
        .join("bin")
        .join("clippy-driver");
    if !output.status.success() || !driver.is_file() {
        return Err(format!(
            "no clippy-driver at {}: `rustup component add clippy` installs it",
            driver.display()
        ));
    }
    driver
        .into_os_string()
        .into_string()
        .map_err(|path| format!("clippy-driver's path is not UTF-8: {}", path.display()))
}

/// The steps' times, printed at the end (docs/testing.md records them).
#[derive(Default)]
struct Steps {
    started: Option<Instant>,
    times: Vec<(&'static str, Duration)>,
}

impl Steps {
    fn time(
        &mut self,
        name: &'static str,
        step: impl FnOnce() -> Result<(), String>,
    ) -> Result<(), String> {
        self.started.get_or_insert_with(Instant::now);
        let started = Instant::now();
        let outcome = step();
        self.times.push((name, started.elapsed()));
        outcome
    }

    /// A step timed elsewhere (on another thread).
    fn record(&mut self, name: &'static str, took: Duration) {
        self.times.push((name, took));
    }

    fn report(&self, passed: bool) {
        for (name, took) in &self.times {
            eprintln!("xtask: {:>6.1} s  {name}", took.as_secs_f64());
        }
        let total = self.started.map_or(0, |at| at.elapsed().as_secs());
        if passed {
            eprintln!("xtask: ci passed in {total} s");
        } else {
            eprintln!("xtask: ci FAILED after {total} s");
        }
    }
}

/// `target/debug/muster`, as `cargo test` left it: cargo builds a package's binaries
/// for its integration tests, in the test run's profile and features.
fn test_binary() -> Result<String, String> {
    let binary = target_dir()?.join("debug").join("muster");
    if !binary.is_file() {
        return Err(format!("the test run left no {}", binary.display()));
    }
    binary
        .into_os_string()
        .into_string()
        .map_err(|path| format!("the binary's path is not UTF-8: {}", path.display()))
}

/// The workspace's target folder (`CARGO_TARGET_DIR`, a config's, or `target/`).
fn target_dir() -> Result<std::path::PathBuf, String> {
    let root = crate::bench::workspace_root();
    crate::bench::server::target_dir(&root).map_err(|e| format!("{e:#}"))
}

/// Runs another task of this xtask: this very binary, not `cargo xtask`, which would
/// build the xtask again when it was built with the workspace (as `.ci/run` does).
/// With `log`, its output (and its children's) goes there.
fn xtask(args: &[&str], log: Option<&std::fs::File>) -> Result<(), String> {
    let program = std::env::current_exe().map_err(|e| format!("cannot find the xtask: {e}"))?;
    let shown = format!("cargo xtask {}", args.join(" "));
    let mut command = Command::new(program);
    command.args(args);
    if let Some(log) = log {
        let copy = || {
            log.try_clone()
                .map_err(|e| format!("cannot write the log: {e}"))
        };
        command.stdout(copy()?).stderr(copy()?);
        eprintln!("xtask: {shown} (beside schemathesis)");
    }
    run(&mut command, &shown)
}

fn cargo(args: &[&str]) -> Result<(), String> {
    run_cargo(args, &[])
}

/// The PostgreSQL tests need a server on 127.0.0.1:5432 (or `MUSTER_TEST_DATABASE_URL`).
/// When the default one is down and this machine has Debian's cluster tools, start it.
pub fn ensure_postgres() -> Result<(), String> {
    if std::env::var_os("MUSTER_TEST_DATABASE_URL").is_some() || postgres_answers() {
        return Ok(());
    }
    eprintln!("xtask: PostgreSQL is not answering on 127.0.0.1:5432; trying to start it");
    let versions = std::fs::read_dir("/etc/postgresql").map_err(|_| {
        "PostgreSQL is down and no cluster is installed under /etc/postgresql".to_owned()
    })?;
    for version in versions.flatten() {
        let version = version.file_name().to_string_lossy().into_owned();
        let _ = Command::new("pg_ctlcluster")
            .args(["--skip-systemctl-redirect", &version, "main", "start"])
            .status();
    }
    let deadline = Instant::now() + Duration::from_secs(30);
    while Instant::now() < deadline {
        if postgres_answers() {
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(500));
    }
    Err("PostgreSQL did not come up on 127.0.0.1:5432".to_owned())
}

/// The `/docs` page and the dashboard are tested in Debian's Chromium; installs it (apt-get, as root or
/// through sudo) when it is missing.
pub fn ensure_chromium() -> Result<(), String> {
    let path = std::env::var("MUSTER_CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".to_owned());
    if std::path::Path::new(&path).exists() {
        return Ok(());
    }
    eprintln!("xtask: no Chromium at {path}; installing Debian's chromium package");
    apt_install("chromium")
}

/// `program` on `PATH`, or else Debian's `package` installed (apt-get, as root or
/// through sudo): promtool comes with `prometheus`.
pub fn ensure_apt_package(program: &str, package: &str) -> Result<(), String> {
    let found = Command::new("sh")
        .args(["-c", &format!("command -v {program}")])
        .output()
        .is_ok_and(|out| out.status.success());
    if found {
        return Ok(());
    }
    eprintln!("xtask: no {program}; installing Debian's {package} package");
    apt_install(package)
}

/// Installs Debian's `package` with apt-get, as root or through sudo.
fn apt_install(package: &str) -> Result<(), String> {
    let root = Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|out| out.stdout.starts_with(b"0"));
    let apt = |args: &[&str]| -> Result<(), String> {
        let mut command = if root {
            Command::new("apt-get")
        } else {
            let mut sudo = Command::new("sudo");
            sudo.arg("apt-get");
            sudo
        };
        let status = command
            .args(args)
            .env("DEBIAN_FRONTEND", "noninteractive")
            .status()
            .map_err(|e| format!("cannot run apt-get: {e}"))?;
        if status.success() {
            Ok(())
        } else {
            Err(format!("apt-get {} failed ({status})", args.join(" ")))
        }
    };
    apt(&["update", "-q"])?;
    apt(&["install", "-y", "-q", package])
}

fn postgres_answers() -> bool {
    let addr = SocketAddr::from(([127, 0, 0, 1], 5432));
    TcpStream::connect_timeout(&addr, Duration::from_secs(2)).is_ok()
}

#[cfg(test)]
mod tests {
    use super::denies_warnings;

    #[test]
    fn warnings_are_denied_once_whichever_way_they_are_written() {
        assert!(denies_warnings("-D warnings"));
        assert!(denies_warnings("-C debuginfo=1 -D  warnings"));
        assert!(denies_warnings("-Dwarnings"));
        assert!(!denies_warnings(""));
        assert!(!denies_warnings("-D unused -W warnings"));
        assert!(!denies_warnings("-D"));
    }
}
