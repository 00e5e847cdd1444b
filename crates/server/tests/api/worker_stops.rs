//! `muster worker` stopping what it runs (issue #65): a cancelled task stops the CLI's
//! whole process group, a budget spent mid-run stops it, SIGTERM hands the work back,
//! and a worker killed with -9 loses its run to another worker that finishes the task.

use std::time::Duration;

use crate::helpers::TestApp;
use crate::runs_support::{funded_worker, money_of};
use crate::worker_support::{
    Scratch, Worker, dead, eventually, running_with, runs_of, task_reaches,
};

api_tests!(
    cancelling_a_task_stops_its_cli_and_everything_it_started,
    a_budget_spent_mid_run_stops_the_cli,
    a_budget_spent_by_the_last_report_keeps_the_finished_work,
    sigterm_hands_running_work_back,
    a_worker_killed_mid_run_loses_it_to_another_that_finishes_it,
);

/// A CLI that starts a child (its pid in `child.pid` of the scratch folder), says
/// `started`, and waits for ever.
fn long_cli(scratch: &Scratch) -> std::path::PathBuf {
    let pid = scratch.path("child.pid");
    scratch.script(
        "long",
        &format!(
            "sleep 300 &\necho $! > '{}'\necho started\nwait",
            pid.display()
        ),
    )
}

fn child_pid(scratch: &Scratch) -> String {
    std::fs::read_to_string(scratch.path("child.pid")).unwrap()
}

async fn run_status_becomes(
    app: &TestApp,
    run: &str,
    status: &str,
    worker: &Worker,
) -> serde_json::Value {
    eventually(
        &format!("run {run} {status}"),
        Duration::from_secs(20),
        &[worker],
        || async {
            let found = app
                .get(&app.org.hr, &format!("/runs/{run}"))
                .await
                .data()
                .clone();
            (found["status"] == status).then_some(found)
        },
    )
    .await
}

async fn cancelling_a_task_stops_its_cli_and_everything_it_started(app: &TestApp) {
    let agent = funded_worker(app, 0).await;
    let scratch = Scratch::new();
    let cli = long_cli(&scratch);
    let task = app.task_titled(&app.org.hr, "to be cancelled").await;
    let worker = Worker::command(app, &agent, &scratch, &cli, &[]);
    let run = running_with(app, &task, "started", &[&worker]).await;
    let child = child_pid(&scratch);
    assert!(!dead(&child));
    let reply = app
        .transition(&app.org.hr, &task, r#"{"status":"cancelled"}"#)
        .await;
    assert_eq!(reply.status.as_u16(), 200, "{}", reply.text);
    let finished = run_status_becomes(app, &run, "cancelled", &worker).await;
    assert_eq!(finished["stopReason"], "cancelled");
    assert_eq!(finished["summary"], "stopped: the task was cancelled");
    eventually(
        "the CLI's child gone",
        Duration::from_secs(10),
        &[&worker],
        || async { dead(&child).then_some(()) },
    )
    .await;
    // The worker carries on with other work.
    let next = app.task_titled(&app.org.hr, "next").await;
    running_with(app, &next, "started", &[&worker]).await;
}

async fn a_budget_spent_mid_run_stops_the_cli(app: &TestApp) {
    // 100 credits; each report costs 20 (20,000 millionths of a dollar at 1,000/USD).
    let agent = funded_worker(app, 100).await;
    let scratch = Scratch::new();
    let cli = scratch.script(
        "spender",
        "i=0\nwhile [ $i -lt 200 ]; do\n  i=$((i+1))\n  echo \"step $i\"\n  echo '::muster-usage {\"model\":\"m\",\"inputTokens\":10,\"outputTokens\":10,\"costMicrousd\":20000}'\n  sleep 0.1\ndone\necho 'all steps done'",
    );
    let task = app.task_titled(&app.org.hr, "expensive").await;
    let worker = Worker::command(app, &agent, &scratch, &cli, &[]);
    let runs = eventually(
        "a stopped run",
        Duration::from_secs(30),
        &[&worker],
        || async {
            let runs = runs_of(app, &app.org.hr, &task).await;
            runs.iter()
                .any(|r| r["status"] == "stopped")
                .then_some(runs)
        },
    )
    .await;
    assert_eq!(runs.len(), 1, "{runs:?}");
    let run = &runs[0];
    assert_eq!(run["status"], "stopped", "{run}");
    assert_eq!(run["stopReason"], "budget");
    // Stopped within a few reports of the one that ran out, not after 200 steps.
    let reports = run["usage"]["reports"].as_i64().unwrap();
    assert!((5..=40).contains(&reports), "{run}");
    assert_eq!(run["usage"]["credits"], 100, "{run}");
    // Handed back for someone with money: unassigned and claimable.
    let back = eventually(
        "the task handed back",
        Duration::from_secs(10),
        &[&worker],
        || async {
            let task = crate::worker_support::task_of(app, &app.org.hr, &task).await;
            (task["assigneeId"].is_null()).then_some(task)
        },
    )
    .await;
    assert_eq!(back["status"], "todo", "{back}");
    let (balance, reserved, exhausted) = money_of(app, &agent).await;
    assert_eq!((balance, reserved), (0, 0));
    assert!(exhausted);
}

async fn sigterm_hands_running_work_back(app: &TestApp) {
    let agent = funded_worker(app, 0).await;
    let scratch = Scratch::new();
    let cli = long_cli(&scratch);
    let task = app.task_titled(&app.org.hr, "interrupted").await;
    let mut worker = Worker::command(app, &agent, &scratch, &cli, &["--grace", "1"]);
    let run = running_with(app, &task, "started", &[&worker]).await;
    let child = child_pid(&scratch);
    worker.signal("TERM");
    let status = worker.exited(Duration::from_secs(20)).await;
    assert!(status.success(), "{status:?}: {}", worker.output());
    let stopped = app
        .get(&app.org.hr, &format!("/runs/{run}"))
        .await
        .data()
        .clone();
    assert_eq!(stopped["status"], "stopped", "{stopped}");
    assert_eq!(stopped["summary"], "stopped: the worker was shut down");
    let back = task_reaches(app, &task, "todo", &[&worker]).await;
    assert_eq!(back["assigneeId"], serde_json::Value::Null, "{back}");
    assert!(dead(&child), "the CLI's child outlived the worker");
}

async fn a_worker_killed_mid_run_loses_it_to_another_that_finishes_it(app: &TestApp) {
    let agent = funded_worker(app, 0).await;
    let scratch = Scratch::new();
    // The first attempt hangs (its pid saved); the next one succeeds.
    let marker = scratch.path("attempted");
    let pid = scratch.path("first.pid");
    let cli = scratch.script(
        "once-hangs",
        &format!(
            "if [ -e '{m}' ]; then echo 'second attempt succeeded'; exit 0; fi\n\
             touch '{m}'\necho $$ > '{p}'\necho started\nexec sleep 300",
            m = marker.display(),
            p = pid.display()
        ),
    );
    let task = app.task_titled(&app.org.hr, "survives a crash").await;
    let args = [
        "--adapter",
        "command",
        "--command",
        cli.to_str().unwrap(),
        "--lease",
        "2",
    ];
    let mut first = Worker::start(app, &agent, &scratch, &args);
    let lost = running_with(app, &task, "started", &[&first]).await;
    first.signal("KILL");
    first.exited(Duration::from_secs(10)).await;
    // Nothing stops the CLI of a worker killed with -9; the test does.
    let orphan = std::fs::read_to_string(&pid).unwrap();
    let _ = std::process::Command::new("kill")
        .args(["-KILL", orphan.trim()])
        .status();
    let second = Worker::start(app, &agent, &scratch, &args);
    let done = task_reaches(app, &task, "review", &[&second]).await;
    assert_eq!(done["result"], "second attempt succeeded");
    let runs = runs_of(app, &app.org.hr, &task).await;
    let statuses: Vec<(&str, &str)> = runs
        .iter()
        .map(|r| (r["id"].as_str().unwrap(), r["status"].as_str().unwrap()))
        .collect();
    assert_eq!(statuses.len(), 2, "{runs:?}");
    assert!(statuses.contains(&(lost.as_str(), "lost")), "{runs:?}");
    assert_eq!(
        statuses.iter().filter(|(_, s)| *s == "succeeded").count(),
        1,
        "{runs:?}"
    );
}

/// Claude Code and Gemini CLI report their usage in their last line: when that report
/// spends the budget, the CLI has already finished, and its work stands.
async fn a_budget_spent_by_the_last_report_keeps_the_finished_work(app: &TestApp) {
    // 10 credits; the one report costs 20.
    let agent = funded_worker(app, 10).await;
    let scratch = Scratch::new();
    let cli = scratch.script(
        "last_report",
        "echo 'the answer'\necho '::muster-usage {\"model\":\"m\",\"inputTokens\":10,\"outputTokens\":10,\"costMicrousd\":20000}'",
    );
    let task = app.task_titled(&app.org.hr, "cheap until the end").await;
    let mut worker = Worker::command(app, &agent, &scratch, &cli, &["--once"]);
    assert!(
        worker.exited(Duration::from_secs(30)).await.success(),
        "{}",
        worker.output()
    );
    let runs = runs_of(app, &app.org.hr, &task).await;
    assert_eq!(runs.len(), 1, "{runs:?}");
    let run = &runs[0];
    assert_eq!(run["status"], "succeeded", "{run}");
    assert_eq!(run["summary"], "the answer", "{run}");
    assert_eq!(run["stopRequested"], true, "{run}");
    assert_eq!(run["stopReason"], "budget", "{run}");
    assert_eq!(run["usage"]["credits"], 10, "{run}");
    let done = crate::worker_support::task_of(app, &app.org.hr, &task).await;
    assert_eq!(done["status"], "review", "{done}");
}
