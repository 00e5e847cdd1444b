//! What the `muster worker` tests share: the real `muster` binary started as a worker
//! against the test server, fake agent CLIs (shell scripts replaying recorded
//! transcripts, or doing what a test needs), and waiting for what the worker does.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::helpers::{Agent, TestApp};

/// A folder of one test (fake CLIs, workspaces, workers' output), removed on drop.
pub struct Scratch(pub PathBuf);

impl Scratch {
    pub fn new() -> Self {
        let dir = std::env::temp_dir().join(format!("muster-worker-{}", uuid::Uuid::now_v7()));
        std::fs::create_dir_all(&dir).unwrap();
        // An empty config file: no profile of the machine's user gets in the way.
        std::fs::write(dir.join("no-config.toml"), "").unwrap();
        Self(dir)
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }

    /// An executable shell script `name` with `body`: a fake agent CLI.
    pub fn script(&self, name: &str, body: &str) -> PathBuf {
        use std::os::unix::fs::PermissionsExt;
        let path = self.0.join(name);
        std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path
    }

    /// A fake CLI that prints the recorded transcript `fixture` (a path under
    /// crates/cli/tests/fixtures/worker/) a line at a time, saves its arguments in
    /// `args.txt` (each ended by a NUL byte), and exits with `exit`.
    pub fn replayer(&self, fixture: &str, exit: i32) -> PathBuf {
        let transcript = fixture_path(fixture);
        assert!(transcript.exists(), "no fixture {}", transcript.display());
        let args = self.path("args.txt");
        self.script(
            "replay",
            &format!(
                "printf '%s\\0' \"$@\" > '{}'\n\
                 while IFS= read -r line || [ -n \"$line\" ]; do printf '%s\\n' \"$line\"; done < '{}'\n\
                 exit {exit}",
                args.display(),
                transcript.display()
            ),
        )
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A recorded transcript of an agent CLI's output.
pub fn fixture_path(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../cli/tests/fixtures/worker")
        .join(name)
}

/// A `muster worker` process.
pub struct Worker {
    child: Child,
    output: PathBuf,
}

impl Worker {
    /// Starts `muster worker ARGS` as `agent` against `app`, its workspaces and output
    /// in `scratch`.
    /// Starts `muster worker --adapter command --command CLI EXTRA…`.
    pub fn command(
        app: &TestApp,
        agent: &Agent,
        scratch: &Scratch,
        cli: &std::path::Path,
        extra: &[&str],
    ) -> Self {
        let mut args = vec!["--adapter", "command", "--command", cli.to_str().unwrap()];
        args.extend_from_slice(extra);
        Self::start(app, agent, scratch, &args)
    }

    pub fn start(app: &TestApp, agent: &Agent, scratch: &Scratch, args: &[&str]) -> Self {
        let output = scratch.path(&format!("worker-{}.txt", uuid::Uuid::now_v7()));
        let child = Command::new(env!("CARGO_BIN_EXE_muster"))
            .arg("worker")
            .arg("--workspace-root")
            .arg(scratch.path("workspaces"))
            .args(["--poll", "1"])
            .args(args)
            .env("MUSTER_SERVER", &app.base)
            .env("MUSTER_AGENT_ID", &agent.handle)
            .env("MUSTER_AGENT_SECRET", &agent.secret)
            .env("MUSTER_CONFIG", scratch.path("no-config.toml"))
            .env_remove("MUSTER_PROFILE")
            .env("MUSTER_LOG", "warn")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&output).unwrap())
            .spawn()
            .unwrap();
        Self { child, output }
    }

    /// What the worker printed so far.
    pub fn output(&self) -> String {
        std::fs::read_to_string(&self.output).unwrap_or_default()
    }

    /// Sends `signal` (`TERM`, `INT`, `KILL`) to the worker.
    pub fn signal(&self, signal: &str) {
        let status = Command::new("kill")
            .arg(format!("-{signal}"))
            .arg(self.child.id().to_string())
            .status()
            .unwrap();
        assert!(status.success());
    }

    /// Waits (at most `within`) for the worker to exit.
    pub async fn exited(&mut self, within: Duration) -> ExitStatus {
        let deadline = Instant::now() + within;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(
                Instant::now() < deadline,
                "the worker did not exit within {within:?}:\n{}",
                self.output()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Polls `probe` until it answers `Some`, at most `within`; `what` names it in the
/// failure, with `worker`'s output.
pub async fn eventually<T, F, Fut>(
    what: &str,
    within: Duration,
    workers: &[&Worker],
    mut probe: F,
) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let deadline = Instant::now() + within;
    loop {
        if let Some(found) = probe().await {
            return found;
        }
        if Instant::now() >= deadline {
            let outputs: Vec<String> = workers.iter().map(|w| w.output()).collect();
            panic!(
                "{what}: not within {within:?}; the workers said:\n{}",
                outputs.join("\n---\n")
            );
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The task as `reader` reads it.
pub async fn task_of(app: &TestApp, reader: &Agent, task: &str) -> Value {
    app.get(reader, &format!("/tasks/{task}"))
        .await
        .data()
        .clone()
}

/// The task's runs, newest first.
pub async fn runs_of(app: &TestApp, reader: &Agent, task: &str) -> Vec<Value> {
    app.get(reader, &format!("/tasks/{task}/runs?limit=100"))
        .await
        .list()
        .clone()
}

/// The run's whole log text, line by line (`stream: text`).
pub async fn log_of(app: &TestApp, reader: &Agent, run: &str) -> Vec<String> {
    let page = app
        .get(reader, &format!("/runs/{run}/log?limit=1000"))
        .await;
    page.list()
        .iter()
        .map(|line| {
            format!(
                "{}: {}",
                line["stream"].as_str().unwrap(),
                line["text"].as_str().unwrap()
            )
        })
        .collect()
}

/// The task's comments' bodies, oldest first.
pub async fn comments_of(app: &TestApp, reader: &Agent, task: &str) -> Vec<String> {
    app.get(reader, &format!("/tasks/{task}/comments"))
        .await
        .list()
        .iter()
        .map(|c| c["body"].as_str().unwrap().to_owned())
        .collect()
}

/// Waits until `task` is in `status`; the task.
pub async fn task_reaches(app: &TestApp, task: &str, status: &str, workers: &[&Worker]) -> Value {
    eventually(
        &format!("task {task} in {status}"),
        Duration::from_secs(30),
        workers,
        || async {
            let found = task_of(app, &app.org.hr, task).await;
            (found["status"] == status).then_some(found)
        },
    )
    .await
}

/// Waits until `task` has a run that is `running` and whose log has a line containing
/// `marker`; the run's id.
pub async fn running_with(app: &TestApp, task: &str, marker: &str, workers: &[&Worker]) -> String {
    eventually(
        &format!("a run of {task} printing {marker:?}"),
        Duration::from_secs(30),
        workers,
        || async {
            let runs = runs_of(app, &app.org.hr, task).await;
            let run = runs.iter().find(|r| r["status"] == "running")?;
            let id = run["id"].as_str()?.to_owned();
            let log = log_of(app, &app.org.hr, &id).await;
            log.iter().any(|l| l.contains(marker)).then_some(id)
        },
    )
    .await
}

/// Whether process `pid` is gone (or a zombie nobody reaped yet).
pub fn dead(pid: &str) -> bool {
    match std::fs::read_to_string(format!("/proc/{}/stat", pid.trim())) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z')),
    }
}
