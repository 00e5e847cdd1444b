//! Turning measurements into Markdown: the tables printed per engine, and
//! docs/benchmarks.md with `--record`.

use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use anyhow::Context;

use super::database::Engine;
use super::load::LoadOutcome;
use super::scenario::{PLANNED, Scenario};
use super::worker::WorkerFigures;

/// Everything in docs/benchmarks.md after this line is kept when the file is rewritten.
const ANALYSIS_MARKER: &str = "<!-- analysis -->";

/// One line of a table.
#[derive(Debug, Clone)]
pub struct ScenarioRow {
    /// Which scenario.
    pub scenario: Scenario,
    /// Requests per second.
    pub rps: f64,
    /// Latency percentiles 50, 90, 99 and the maximum, ms.
    pub latency_ms: [f64; 4],
    /// Failed answers and transport errors.
    pub errors: u64,
    /// Largest server resident set during the run, MiB.
    pub peak_rss_mib: f64,
    /// Server CPU seconds per 1,000 requests.
    pub cpu_per_1k: f64,
}

impl ScenarioRow {
    /// Summarizes one run of `scenario`; `ticks_per_second` is `CLK_TCK`.
    pub fn new(scenario: Scenario, outcome: &LoadOutcome, ticks_per_second: u64) -> Self {
        let requests = outcome.latencies_us.len() as u64;
        let cpu_seconds = as_f64(outcome.cpu_ticks) / as_f64(ticks_per_second.max(1));
        let at = |p: f64| percentile_ms(&outcome.latencies_us, p);
        Self {
            scenario,
            rps: as_f64(requests) / outcome.measured.as_secs_f64().max(f64::EPSILON),
            latency_ms: [at(50.0), at(90.0), at(99.0), at(100.0)],
            errors: outcome.errors,
            peak_rss_mib: as_f64(outcome.peak_rss_kib) / 1024.0,
            cpu_per_1k: if requests == 0 {
                0.0
            } else {
                cpu_seconds * 1000.0 / as_f64(requests)
            },
        }
    }
}

/// Everything measured on one engine.
#[derive(Debug, Clone)]
pub struct EngineReport {
    /// Which engine.
    pub engine: Engine,
    /// From spawning `muster serve` to its first 200 on `GET /ready`.
    pub ready: Duration,
    /// Tasks seeded, and how long that took.
    pub seeded: (usize, Duration),
    /// Agents the load was signed with.
    pub agents: usize,
    /// Virtual clients.
    pub connections: usize,
    /// Server `VmHWM` at the end, KiB.
    pub peak_rss_kib: u64,
    /// One per scenario, `health` first.
    pub rows: Vec<ScenarioRow>,
    /// What the post-hook of `create-task-hooked` received, when it ran.
    pub deliveries: Option<DeliveryFigures>,
    /// The server started again on the database the run left (`None` when that failed).
    pub restarts: Option<Restarts>,
    /// What `muster worker` cost per task, when the `worker` scenario ran.
    pub worker: Option<WorkerFigures>,
}

/// Start to ready on an existing database: the one the scenarios filled.
#[derive(Debug, Clone)]
pub struct Restarts {
    /// Tasks in the database when it restarted.
    pub tasks: u64,
    /// From spawning `muster serve` to its first 200 on `GET /ready`, per restart.
    pub ready: Vec<Duration>,
}

impl Restarts {
    /// One sentence for the report.
    pub fn line(&self) -> String {
        let mut millis: Vec<f64> = self.ready.iter().map(|d| d.as_secs_f64() * 1e3).collect();
        millis.sort_by(f64::total_cmp);
        let at = |i: usize| millis.get(i).copied().unwrap_or(0.0);
        format!(
            "Restarted {} times on the database the run left ({} tasks): ready in \
             {:.0} / {:.0} / {:.0} ms (min / median / max).",
            millis.len(),
            self.tasks,
            at(0),
            at(millis.len() / 2),
            at(millis.len().saturating_sub(1)),
        )
    }
}

/// Post-hook deliveries during and after the `create-task-hooked` load.
#[derive(Debug, Clone)]
pub struct DeliveryFigures {
    /// Received while the load ran (warm-up included).
    pub during: u64,
    /// How long the load ran (warm-up included).
    pub load_time: Duration,
    /// Received in all, once the backlog was drained.
    pub total: u64,
    /// From the start of the load to the last delivery.
    pub drain: Duration,
}

impl DeliveryFigures {
    /// One sentence for the report.
    pub fn line(&self) -> String {
        let rate = |n: u64, d: Duration| as_f64(n) / d.as_secs_f64().max(f64::EPSILON);
        format!(
            "webhook deliveries (create-task-hooked, one post-hook on a loopback receiver): \
             {:.0}/s while the load ran ({} in {:.1} s); {} in all, the last {:.1} s after \
             the load started ({:.0}/s overall).",
            rate(self.during, self.load_time),
            self.during,
            self.load_time.as_secs_f64(),
            self.total,
            self.drain.as_secs_f64(),
            rate(self.total, self.drain),
        )
    }
}

impl EngineReport {
    /// Whether any scenario had errors.
    pub fn has_errors(&self) -> bool {
        self.rows.iter().any(|r| r.errors > 0)
            || self.worker.as_ref().is_some_and(|w| w.failed() > 0)
    }

    /// The engine's section: a summary line and the table.
    pub fn markdown(&self) -> String {
        let (tasks, seed_time) = self.seeded;
        let mut out = format!(
            "Ready in {} ms; seeded {tasks} tasks in {:.1} s ({:.0} tasks/s); \
             {} connection(s) signing as {} agent(s); server peak RSS {:.1} MiB.\n\n",
            self.ready.as_millis(),
            seed_time.as_secs_f64(),
            as_f64(tasks as u64) / seed_time.as_secs_f64().max(f64::EPSILON),
            self.connections,
            self.agents,
            as_f64(self.peak_rss_kib) / 1024.0,
        );
        out.push_str(
            "| scenario | req/s | vs health | p50 ms | p90 ms | p99 ms | max ms | errors | peak RSS MiB | CPU s / 1k req |\n\
             |---|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n",
        );
        let health = self
            .rows
            .iter()
            .find(|r| r.scenario == Scenario::Health)
            .map(|r| r.rps);
        for row in &self.rows {
            let ratio = health
                .filter(|h| *h > 0.0)
                .map_or_else(|| "–".to_owned(), |h| format!("{:.2}×", row.rps / h));
            let [p50, p90, p99, max] = row.latency_ms;
            let _ = writeln!(
                out,
                "| {} | {:.0} | {ratio} | {p50:.2} | {p90:.2} | {p99:.2} | {max:.2} | {} | {:.1} | {:.3} |",
                row.scenario, row.rps, row.errors, row.peak_rss_mib, row.cpu_per_1k
            );
        }
        if let Some(deliveries) = &self.deliveries {
            let _ = write!(out, "\n{}\n", deliveries.line());
        }
        match &self.restarts {
            Some(restarts) => {
                let _ = write!(out, "\n{}\n", restarts.line());
            }
            None => out.push_str("\nRestarting on the run's database failed (see the log).\n"),
        }
        out
    }
}

/// What the `worker` scenario measures, for the recorded section.
const WORKER_METHOD: &str = "Unassigned `todo` tasks are created on the engine's fresh \
     database (before the load scenarios' tasks are seeded, so the worker claims exactly \
     these), then `muster worker --adapter command --command true --concurrency 4 --poll 1` \
     works through them as a seeded worker-mode agent: for each task a claim, a run \
     started, the task's comments and dependencies read for the prompt, a fresh \
     workspace, `true` run with the prompt on its stdin, the run finished, a result \
     comment and the move to `review`. The bench asks `GET /tasks?status=todo&limit=1` \
     every 50 ms until none is left in `todo` or `in_progress`, then stops the worker \
     (SIGTERM). Wall time is from starting the worker to that moment; server CPU is the \
     `muster serve` process's user + system time over it (the bench's status checks \
     included, PostgreSQL's processes not); worker CPU is the `muster worker` process's \
     own, start-up included; `true` is the CPU of the programs it ran (its children), \
     shown apart: an agent CLI's own work is not the worker's overhead. The goal (#65) \
     is at most 5 ms of server plus worker CPU per task.";

/// The `worker` scenario's table, one row per engine that ran it (`None`: none did).
pub fn worker_markdown(reports: &[EngineReport]) -> Option<String> {
    let rows: Vec<(Engine, &WorkerFigures)> = reports
        .iter()
        .filter_map(|r| r.worker.as_ref().map(|w| (r.engine, w)))
        .collect();
    if rows.is_empty() {
        return None;
    }
    let mut out = String::from(
        "| engine | tasks | failed | wall s | tasks/s | server ms/task | worker ms/task | \
         server + worker ms/task | `true` ms/task | worker peak RSS MiB |\n\
         |---|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n",
    );
    for (engine, w) in rows {
        let _ = writeln!(
            out,
            "| {engine} | {} | {} | {:.1} | {:.0} | {:.2} | {:.2} | {:.2} | {:.2} | {:.1} |",
            w.tasks,
            w.failed(),
            w.wall.as_secs_f64(),
            w.tasks_per_second(),
            w.ms_per_task(w.server_ticks),
            w.ms_per_task(w.worker_ticks),
            w.overhead_ms_per_task(),
            w.ms_per_task(w.children_ticks),
            as_f64(w.worker_peak_rss_kib) / 1024.0,
        );
    }
    Some(out)
}

/// The line naming the scenarios that cannot run yet.
pub fn planned_note() -> String {
    let planned: Vec<String> = PLANNED
        .iter()
        .map(|(name, why)| format!("`{name}` ({why})"))
        .collect();
    if planned.is_empty() {
        return String::new();
    }
    format!("Not yet available: {}.\n", planned.join(", "))
}

/// Nearest-rank percentile of sorted microseconds, in milliseconds.
fn percentile_ms(sorted_us: &[u32], p: f64) -> f64 {
    if sorted_us.is_empty() {
        return 0.0;
    }
    let rank = (p / 100.0 * as_f64(sorted_us.len() as u64)).ceil();
    // `rank` is in 0..=len, so the conversion back cannot lose anything.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let index = (rank as usize).clamp(1, sorted_us.len()) - 1;
    f64::from(sorted_us[index]) / 1000.0
}

/// Counts become floats only for display and rates, where 52 bits are plenty.
#[allow(clippy::cast_precision_loss)]
fn as_f64(n: u64) -> f64 {
    n as f64
}

/// Where, when and from what the numbers came.
#[derive(Debug, Clone)]
pub struct RunInfo {
    /// Cores and CPU model.
    pub machine: String,
    /// UTC date and time.
    pub date: String,
    /// Short commit, `+dirty` when the tree has changes.
    pub commit: String,
    /// The command line as typed.
    pub command: String,
}

impl RunInfo {
    /// Gathers the facts about this machine and checkout.
    pub fn gather(root: &Path, command: String) -> Self {
        let cores = std::thread::available_parallelism().map_or(0, std::num::NonZero::get);
        let model = std::fs::read_to_string("/proc/cpuinfo")
            .ok()
            .and_then(|text| {
                text.lines()
                    .find_map(|l| l.strip_prefix("model name"))
                    .and_then(|rest| rest.split_once(':'))
                    .map(|(_, model)| model.trim().to_owned())
            })
            .unwrap_or_else(|| "unknown CPU".to_owned());
        let format = time::macros::format_description!("[year]-[month]-[day] [hour]:[minute] UTC");
        let date = time::OffsetDateTime::now_utc()
            .format(format)
            .unwrap_or_default();
        let git = |args: &[&str]| {
            Command::new("git")
                .args(args)
                .current_dir(root)
                .output()
                .ok()
                .filter(|o| o.status.success())
                .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        };
        let mut commit = git(&["rev-parse", "--short", "HEAD"]).unwrap_or_else(|| "unknown".into());
        if git(&["status", "--porcelain"]).is_some_and(|s| !s.is_empty()) {
            commit.push_str("+dirty");
        }
        Self {
            machine: format!("{cores} cores, {model}"),
            date,
            commit,
            command,
        }
    }
}

/// Rewrites `path` with this run's numbers, keeping the analysis below the marker.
pub fn record(path: &Path, info: &RunInfo, reports: &[EngineReport]) -> anyhow::Result<()> {
    let previous = std::fs::read_to_string(path).unwrap_or_default();
    let analysis = previous
        .split_once(ANALYSIS_MARKER)
        .map_or("\n\n## Analysis\n\n_To be written._\n", |(_, after)| after);
    let mut out = String::from(
        "# Benchmarks\n\n\
         Written by `cargo xtask bench --record`: everything above the analysis marker is \
         replaced on every recorded run; the analysis below it is kept.\n\n",
    );
    let _ = write!(
        out,
        "- Machine: {}\n- Date: {}\n- Commit: `{}`\n- Command: `{}`\n\n",
        info.machine, info.date, info.commit, info.command
    );
    out.push_str(
        "How it measures: a release build of `muster serve` on a fresh database; one keep-alive \
         HTTP/1.1 connection per virtual client, each sending its next request when the \
         previous answer is read, every agent request signed with a fresh nonce. Each scenario \
         has an unmeasured warm-up; latencies are from sending a request to reading its whole \
         answer. The load generator runs on the same machine and competes for its cores. \
         `vs health` compares throughput with unsigned `GET /health` of the same run; CPU is \
         the `muster` process's user + system time (PostgreSQL's own processes are not \
         counted); peak RSS is the larger of the kernel's peak resident set (`VmHWM`, reset \
         when each scenario's measured time starts; left out where `/proc/<pid>/clear_refs` \
         cannot be written) and the largest `VmRSS` sampled every 100 ms; errors count \
         non-2xx answers and transport errors, warm-up included. After the last scenario \
         the server is stopped (SIGTERM) and started again on the database the run filled, \
         timing each start from spawning the process to the first 200 on `GET /ready`.\n\n",
    );
    for report in reports {
        let _ = write!(out, "## {}\n\n{}\n", report.engine, report.markdown());
    }
    if let Some(table) = worker_markdown(reports) {
        let _ = write!(out, "## Worker overhead\n\n{WORKER_METHOD}\n\n{table}\n");
    }
    out.push_str(&planned_note());
    out.push('\n');
    out.push_str(ANALYSIS_MARKER);
    out.push_str(analysis);
    if let Some(folder) = path.parent() {
        std::fs::create_dir_all(folder)?;
    }
    std::fs::write(path, out).with_context(|| format!("cannot write {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles() {
        let us: Vec<u32> = (1..=100).map(|n| n * 1000).collect();
        assert!((percentile_ms(&us, 50.0) - 50.0).abs() < 1e-9);
        assert!((percentile_ms(&us, 99.0) - 99.0).abs() < 1e-9);
        assert!((percentile_ms(&us, 100.0) - 100.0).abs() < 1e-9);
        assert!((percentile_ms(&[7000], 90.0) - 7.0).abs() < 1e-9);
        assert!(percentile_ms(&[], 50.0).abs() < 1e-9);
    }

    #[test]
    fn restarts_report_min_median_and_max() {
        let restarts = Restarts {
            tasks: 1234,
            ready: [31, 12, 25, 90, 18].map(Duration::from_millis).to_vec(),
        };
        assert_eq!(
            restarts.line(),
            "Restarted 5 times on the database the run left (1234 tasks): \
             ready in 12 / 25 / 90 ms (min / median / max)."
        );
    }

    #[test]
    fn recording_keeps_the_analysis() {
        let dir = std::env::temp_dir().join(format!("xtask-report-{}", uuid::Uuid::now_v7()));
        let path = dir.join("benchmarks.md");
        let info = RunInfo {
            machine: "2 cores, Test CPU".into(),
            date: "2030-01-01 00:00 UTC".into(),
            commit: "abc1234".into(),
            command: "cargo xtask bench --record".into(),
        };
        record(&path, &info, &[]).unwrap();
        let first = std::fs::read_to_string(&path).unwrap();
        assert!(first.contains("_To be written._"));
        let edited = first.replace("_To be written._", "SQLite wins.");
        std::fs::write(&path, edited).unwrap();
        record(&path, &info, &[]).unwrap();
        let second = std::fs::read_to_string(&path).unwrap();
        assert!(second.contains("SQLite wins.") && !second.contains("_To be written._"));
        assert_eq!(second.matches(ANALYSIS_MARKER).count(), 1);
        std::fs::remove_dir_all(dir).unwrap();
    }
}
