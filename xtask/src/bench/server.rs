//! The `muster` binary under test: building it, bootstrapping an organization, running
//! `serve`, stopping it, and reading its CPU and memory from /proc.

use std::fs::File;
use std::net::{SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};

use super::client::{Call, Client};
use super::sign::Credentials;

/// How long `serve` may take to answer `GET /ready` (migrations included).
const READY_WITHIN: Duration = Duration::from_secs(90);

/// How long a stopped server may take to finish in-flight requests before SIGKILL.
const STOP_WITHIN: Duration = Duration::from_secs(10);

/// Builds `muster` in release mode and returns the binary's path.
pub fn build_release(root: &Path) -> anyhow::Result<PathBuf> {
    // The load generator (this xtask) is built optimized too, in the same invocation so
    // both share one feature resolution and one set of compiled dependencies.
    cargo(
        root,
        &["build", "--release", "-p", "muster-server", "-p", "xtask"],
    )?;
    release_binary(root)
}

/// `--binary` of the tasks that drive a live server (fuzz-api, the MCP and A2A clients,
/// dashboard-e2e): which `muster` they run.
#[derive(Debug, Clone, clap::Args)]
pub struct ServerBinary {
    /// Run this `muster` binary instead of building the release one (CI passes the one
    /// its test run has just built).
    #[arg(long = "binary", value_name = "PATH")]
    path: Option<PathBuf>,
}

impl ServerBinary {
    /// The binary given, or the release one built now.
    pub fn resolve(&self, root: &Path) -> anyhow::Result<PathBuf> {
        match &self.path {
            Some(path) if path.is_file() => Ok(path.clone()),
            Some(path) => bail!("no `muster` binary at {}", path.display()),
            None => build_server_release(root),
        }
    }
}

/// Builds `muster` alone in release mode (no optimized xtask) and returns its path.
fn build_server_release(root: &Path) -> anyhow::Result<PathBuf> {
    cargo(root, &["build", "--release", "-p", "muster-server"])?;
    release_binary(root)
}

fn release_binary(root: &Path) -> anyhow::Result<PathBuf> {
    let binary = target_dir(root)?.join("release").join("muster");
    anyhow::ensure!(binary.is_file(), "{} was not built", binary.display());
    Ok(binary)
}

/// The cargo target folder of the workspace at `root`.
pub fn target_dir(root: &Path) -> anyhow::Result<PathBuf> {
    // Ask cargo where the target folder is: it knows CARGO_TARGET_DIR, relative paths
    // and `build.target-dir` in config files.
    let output = Command::new(cargo_program())
        .args(["metadata", "--format-version", "1", "--no-deps"])
        .current_dir(root)
        .output()
        .context("cannot run cargo metadata")?;
    if !output.status.success() {
        bail!(
            "cargo metadata failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    let metadata: serde_json::Value = serde_json::from_slice(&output.stdout)?;
    let target = metadata["target_directory"]
        .as_str()
        .context("cargo metadata has no target_directory")?;
    Ok(PathBuf::from(target))
}

fn cargo_program() -> String {
    std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned())
}

fn cargo(root: &Path, args: &[&str]) -> anyhow::Result<()> {
    eprintln!("xtask: cargo {}", args.join(" "));
    let status = Command::new(cargo_program())
        .args(args)
        .current_dir(root)
        .status()
        .context("cannot run cargo")?;
    anyhow::ensure!(
        status.success(),
        "`cargo {}` failed ({status})",
        args.join(" ")
    );
    Ok(())
}

/// A new server key: 32 random bytes as 64 hex characters (`MUSTER_SECRET_KEY`).
pub fn generate_secret_key() -> anyhow::Result<String> {
    let key = muster_auth::keys::ServerKey::generate().map_err(|e| anyhow::anyhow!("{e}"))?;
    Ok(key.to_hex())
}

/// What `muster bootstrap` made.
#[derive(Debug, Clone)]
pub struct Bootstrapped {
    /// The organization.
    pub org_id: String,
    /// Its HR agent.
    pub hr_agent: Credentials,
    /// The HR agent's UUID.
    pub hr_agent_id: String,
}

/// The bench organization's admin, who logs in in the `login` scenario.
pub const ADMIN_EMAIL: &str = "admin@bench.test";
/// Their password.
pub const ADMIN_PASSWORD: &str = "benchpassword";

/// Runs `muster bootstrap` on a fresh database.
pub fn bootstrap(binary: &Path, database_url: &str, key: &str) -> anyhow::Result<Bootstrapped> {
    let output = Command::new(binary)
        .args([
            "bootstrap",
            "--org-name",
            "Bench",
            "--admin-email",
            ADMIN_EMAIL,
        ])
        .env("MUSTER_DATABASE_URL", database_url)
        .env("MUSTER_ADMIN_PASSWORD", ADMIN_PASSWORD)
        .env("MUSTER_SECRET_KEY", key)
        .env("MUSTER_LOG", "warn")
        .output()
        .context("cannot run muster bootstrap")?;
    if !output.status.success() {
        bail!(
            "muster bootstrap failed ({}): {}",
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        );
    }
    let json: serde_json::Value = serde_json::from_slice(&output.stdout)
        .context("muster bootstrap did not print one JSON object")?;
    let text = |pointer: &str| {
        json.pointer(pointer)
            .and_then(serde_json::Value::as_str)
            .map(str::to_owned)
            .with_context(|| format!("bootstrap output has no {pointer}"))
    };
    Ok(Bootstrapped {
        org_id: text("/orgId")?,
        hr_agent: Credentials {
            agent_id: text("/hrAgent/agentId")?,
            secret: text("/hrAgent/secret")?,
        },
        hr_agent_id: text("/hrAgent/id")?,
    })
}

/// A running `muster serve`, stopped with SIGTERM when dropped.
#[derive(Debug)]
pub struct Server {
    child: Child,
    spawned: Instant,
    /// Where it listens.
    pub addr: SocketAddr,
    log: PathBuf,
}

impl Server {
    /// Starts `muster serve` on a free port; its output goes to `server.log` in `work_dir`.
    pub fn start(
        binary: &Path,
        database_url: &str,
        key: &str,
        work_dir: &Path,
    ) -> anyhow::Result<Self> {
        Self::start_with(binary, database_url, key, work_dir, &[])
    }

    /// [`Server::start`] exporting traces as `traced` says (`--traces`; empty: off).
    pub fn start_traced(
        binary: &Path,
        database_url: &str,
        key: &str,
        work_dir: &Path,
        traced: &[(String, String)],
    ) -> anyhow::Result<Self> {
        let env = super::collector::as_env(traced);
        Self::start_with(binary, database_url, key, work_dir, &env)
    }

    /// [`Server::start`] with more settings in its environment.
    pub fn start_with(
        binary: &Path,
        database_url: &str,
        key: &str,
        work_dir: &Path,
        env: &[(&str, &str)],
    ) -> anyhow::Result<Self> {
        let addr = free_port()?;
        let log = work_dir.join("server.log");
        let out = File::create(&log).context("cannot create the server log")?;
        let err = out.try_clone()?;
        let spawned = Instant::now();
        let child = Command::new(binary)
            .args(["serve", "--bind", &addr.to_string()])
            .env("MUSTER_DATABASE_URL", database_url)
            .env("MUSTER_SECRET_KEY", key)
            .env("MUSTER_LOG", "warn")
            // The create-task-hooked scenario's receiver is on loopback, over http.
            .env("MUSTER_WEBHOOK_ALLOW_PRIVATE", "true")
            .env("MUSTER_WEBHOOK_ALLOW_HTTP", "true")
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .spawn()
            .context("cannot start muster serve")?;
        Ok(Self {
            child,
            spawned,
            addr,
            log,
        })
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Waits until `GET /ready` answers 200; returns the time from spawn to ready.
    pub async fn wait_ready(&mut self) -> anyhow::Result<Duration> {
        let nobody = Credentials {
            agent_id: String::new(),
            secret: String::new(),
        };
        let ready = Call::public_get("/ready");
        loop {
            self.ensure_running()?;
            // A new client each time: a refused connection must not be remembered.
            let mut client = Client::new(self.addr);
            if let Ok(answer) = client.send(&ready, &nobody).await
                && answer.status.is_success()
            {
                return Ok(self.spawned.elapsed());
            }
            if self.spawned.elapsed() > READY_WITHIN {
                bail!(
                    "muster serve was not ready within {READY_WITHIN:?}:\n{}",
                    self.log_tail(20)
                );
            }
            // Often enough that the time to ready is read to a few milliseconds.
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
    }

    /// Fails, with the end of its log, when the server has exited: the numbers of a dead
    /// server would only be connection errors.
    pub fn ensure_running(&mut self) -> anyhow::Result<()> {
        match self.child.try_wait()? {
            None => Ok(()),
            Some(status) => bail!("muster serve exited ({status}):\n{}", self.log_tail(20)),
        }
    }

    /// The last `lines` lines the server logged.
    pub fn log_tail(&self, lines: usize) -> String {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let all: Vec<&str> = text.lines().collect();
        all[all.len().saturating_sub(lines)..].join("\n")
    }

    /// Copies the server's log, as it stands, to `to` (its folder made if need be).
    pub fn keep_log(&self, to: &Path) -> anyhow::Result<()> {
        if let Some(folder) = to.parent() {
            std::fs::create_dir_all(folder)
                .with_context(|| format!("cannot create {}", folder.display()))?;
        }
        std::fs::copy(&self.log, to)
            .with_context(|| format!("cannot copy the log to {}", to.display()))?;
        Ok(())
    }

    /// SIGTERM, then SIGKILL if it has not stopped in time.
    fn stop(&mut self) {
        if matches!(self.child.try_wait(), Ok(Some(_))) {
            return;
        }
        // std can only SIGKILL; `kill` lets the server shut down as in production.
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let deadline = Instant::now() + STOP_WITHIN;
        while Instant::now() < deadline {
            if matches!(self.child.try_wait(), Ok(Some(_))) {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        eprintln!("xtask: muster serve did not stop after SIGTERM; killing it");
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop();
    }
}

/// A port nobody listens on now (a tiny race with other programs is acceptable here).
fn free_port() -> anyhow::Result<SocketAddr> {
    let listener = TcpListener::bind("127.0.0.1:0").context("cannot find a free port")?;
    Ok(listener.local_addr()?)
}

/// User plus system CPU time of `pid`, in clock ticks (fields 14 and 15 of
/// /proc/PID/stat, counted after the parenthesized command name, which may hold spaces).
pub fn cpu_ticks(pid: u32) -> anyhow::Result<u64> {
    // `after_name` starts at field 3 (state), so fields 14 and 15 are at 11 and 12.
    stat_ticks(pid, 11)
}

/// User plus system CPU time of the children `pid` has waited for, in clock ticks
/// (fields 16 and 17 of /proc/PID/stat: `cutime` and `cstime`).
pub fn children_cpu_ticks(pid: u32) -> anyhow::Result<u64> {
    stat_ticks(pid, 13)
}

/// The sum of two adjacent /proc/PID/stat fields, `first` counted from the state field.
fn stat_ticks(pid: u32, first: usize) -> anyhow::Result<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .with_context(|| format!("cannot read /proc/{pid}/stat"))?;
    let after_name = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    let field = |i: usize| -> anyhow::Result<u64> {
        fields
            .get(i)
            .and_then(|v| v.parse().ok())
            .context("unexpected /proc/PID/stat format")
    };
    Ok(field(first)? + field(first + 1)?)
}

/// Clock ticks per second (`getconf CLK_TCK`; 100 on Linux), for [`cpu_ticks`].
pub fn clock_ticks_per_second() -> u64 {
    Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|s| s.trim().parse().ok())
        .filter(|&n| n > 0)
        .unwrap_or(100)
}

/// Current resident set of `pid`, KiB.
pub fn rss_kib(pid: u32) -> anyhow::Result<u64> {
    status_field(pid, "VmRSS:")
}

/// Peak resident set of `pid` since it started or since [`reset_peak_rss`], KiB.
pub fn peak_rss_kib(pid: u32) -> anyhow::Result<u64> {
    status_field(pid, "VmHWM:")
}

/// Resets the kernel's peak resident set of `pid` (`VmHWM`) to its current one; whether
/// it could (writing `/proc/<pid>/clear_refs` needs the process's owner, Linux >= 4.0).
pub fn reset_peak_rss(pid: u32) -> bool {
    std::fs::write(format!("/proc/{pid}/clear_refs"), "5").is_ok()
}

fn status_field(pid: u32, name: &str) -> anyhow::Result<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))
        .with_context(|| format!("cannot read /proc/{pid}/status"))?;
    status
        .lines()
        .find_map(|line| line.strip_prefix(name))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|kib| kib.parse().ok())
        .with_context(|| format!("/proc/{pid}/status has no {name}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_this_process() {
        let pid = std::process::id();
        assert!(rss_kib(pid).unwrap() > 0);
        // Both are read, not compared: the kernel updates VmHWM lazily (per-thread RSS
        // counters are folded in now and then), so VmRSS may briefly exceed it.
        assert!(peak_rss_kib(pid).unwrap() > 0);
        // Where the kernel lets the owner reset its peak, the peak is still readable after.
        if reset_peak_rss(pid) {
            assert!(peak_rss_kib(pid).unwrap() > 0);
        }
        cpu_ticks(pid).unwrap();
        children_cpu_ticks(pid).unwrap();
        assert!(clock_ticks_per_second() > 0);
    }

    #[test]
    fn secret_keys_are_64_hex_characters() {
        let key = generate_secret_key().unwrap();
        assert_eq!(key.len(), 64);
        assert!(key.bytes().all(|b| b.is_ascii_hexdigit()));
    }
}
