//! The `muster` binary as an operator runs it: bootstrap output, configuration errors,
//! migrations, graceful shutdown.

// Helpers outside #[test] fns unwrap too: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod bootstrap;
mod client_commands;
mod config_errors;
mod crashes;
mod documented_settings;
mod logs;
mod memory;
mod metrics_jobs;
mod one_server;
mod secrets;
mod shutdown;
mod trace_flow;
mod traces;

use std::path::PathBuf;
use std::process::{Command, Output};

/// Sends `request` (whole, head and any body) to the server on `port` over a new
/// connection; the whole answer.
fn send_raw(port: u16, request: &str) -> String {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream
        .set_read_timeout(Some(std::time::Duration::from_secs(5)))
        .unwrap();
    stream.write_all(request.as_bytes()).unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    answer
}

/// The binary under test.
fn muster() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_muster"));
    cmd.env_remove("MUSTER_DATABASE_URL")
        .env_remove("MUSTER_SECRET_KEY")
        .env_remove("MUSTER_BIND")
        .env("MUSTER_LOG", "warn");
    cmd
}

/// A fresh folder for one test, removed on drop.
struct Scratch(PathBuf);

impl Scratch {
    fn new() -> Self {
        let dir = std::env::temp_dir().join(format!("muster-cli-{}", uuid::Uuid::now_v7()));
        std::fs::create_dir_all(&dir).unwrap();
        Self(dir)
    }

    fn sqlite_url(&self) -> String {
        format!("sqlite://{}", self.0.join("data/muster.db").display())
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A failed command printed exactly one `error: ...` line and no panic.
fn assert_one_clear_error(out: &Output, expected: &str) {
    assert!(
        !out.status.success(),
        "expected failure, got {:?}",
        out.status
    );
    let err = stderr(out);
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 1, "expected one line on stderr, got:\n{err}");
    assert!(lines[0].starts_with("error: "), "{err}");
    assert!(
        lines[0].contains(expected),
        "expected {expected:?} in {err}"
    );
    assert!(!err.contains("panicked"), "{err}");
}
