//! `muster worker` doing the work (issue #65): the real binary against a live server on
//! each engine, with fake agent CLIs. Two workers share twenty tasks and run each
//! exactly once; a failing CLI is retried, then its task blocked; the CLI does not
//! inherit the agent's secret.

use std::time::Duration;

use serde_json::Value;

use crate::helpers::TestApp;
use crate::runs_support::funded_worker;
use crate::worker_support::{
    Scratch, Worker, comments_of, eventually, log_of, runs_of, task_of, task_reaches,
};

api_tests!(
    two_workers_finish_twenty_tasks_each_exactly_once,
    a_failing_cli_is_retried_then_its_task_blocked,
    the_cli_sees_no_secret_unless_told_to,
    once_fails_when_the_claim_is_refused,
);

/// A `command` CLI that reads its prompt, takes a little while, reports usage and
/// names its task.
const QUICK_WORK: &str = r#"read -r first_line
sleep 0.$(( $(od -An -N1 -tu1 /dev/urandom) % 3 ))
echo "working on $MUSTER_TASK_TITLE in $MUSTER_WORKSPACE"
echo '::muster-usage {"model":"fake-model","inputTokens":100,"outputTokens":20,"costMicrousd":1000}'
echo "finished $MUSTER_TASK_ID""#;

async fn two_workers_finish_twenty_tasks_each_exactly_once(app: &TestApp) {
    let agent = funded_worker(app, 1_000).await;
    let scratch = Scratch::new();
    let cli = scratch.script("quick", QUICK_WORK);
    let mut tasks = Vec::new();
    for n in 0..20 {
        tasks.push(app.task_titled(&app.org.hr, &format!("job {n}")).await);
    }
    let args = [
        "--adapter",
        "command",
        "--command",
        cli.to_str().unwrap(),
        "--concurrency",
        "3",
        "--on-success",
        "done",
    ];
    // Two machines working as the same agent.
    let mut first = Worker::start(app, &agent, &scratch, &args);
    let mut second = Worker::start(app, &agent, &scratch, &args);
    let workers = [&first, &second];
    eventually(
        "every task done",
        Duration::from_secs(90),
        &workers,
        || async {
            let mut open = 0;
            for task in &tasks {
                if task_of(app, &app.org.hr, task).await["status"] != "done" {
                    open += 1;
                }
            }
            (open == 0).then_some(())
        },
    )
    .await;
    for task in &tasks {
        let runs = runs_of(app, &app.org.hr, task).await;
        assert_eq!(
            runs.len(),
            1,
            "task {task} ran {} times: {runs:?}",
            runs.len()
        );
        let run = &runs[0];
        assert_eq!(run["status"], "succeeded", "{run}");
        assert_eq!(run["exitCode"], 0);
        assert_eq!(run["adapter"], "command");
        assert_eq!(run["usage"]["reports"], 1, "{run}");
        assert_eq!(run["usage"]["credits"], 1, "{run}");
        let done = task_of(app, &app.org.hr, task).await;
        assert_eq!(done["result"], format!("finished {task}"));
        let comments = comments_of(app, &app.org.hr, task).await;
        assert_eq!(comments.len(), 1, "{comments:?}");
        assert!(
            comments[0].contains(&format!("finished {task}")),
            "{comments:?}"
        );
        let log = log_of(app, &app.org.hr, run["id"].as_str().unwrap()).await;
        assert!(
            log.iter().any(|l| l.starts_with("stdout: working on job")),
            "{log:?}"
        );
        assert!(!log.iter().any(|l| l.contains("::muster-usage")), "{log:?}");
    }
    // Each run's workspace was removed with its success.
    let left = std::fs::read_dir(scratch.path("workspaces")).map_or(0, |dir| {
        dir.flatten()
            .filter(|e| std::fs::read_dir(e.path()).is_ok_and(|mut d| d.next().is_some()))
            .count()
    });
    assert_eq!(left, 0, "workspaces left behind");
    for worker in [&first, &second] {
        worker.signal("TERM");
    }
    assert!(
        first.exited(Duration::from_secs(20)).await.success(),
        "{}",
        first.output()
    );
    assert!(
        second.exited(Duration::from_secs(20)).await.success(),
        "{}",
        second.output()
    );
}

async fn a_failing_cli_is_retried_then_its_task_blocked(app: &TestApp) {
    let agent = funded_worker(app, 0).await;
    let scratch = Scratch::new();
    let cli = scratch.script(
        "fails",
        "echo 'compiling'\necho 'error: it broke' >&2\nexit 2",
    );
    let task = app.task_titled(&app.org.hr, "doomed").await;
    let worker = Worker::command(app, &agent, &scratch, &cli, &["--max-attempts", "2"]);
    let blocked = task_reaches(app, &task, "blocked", &[&worker]).await;
    assert_eq!(blocked["assigneeId"], agent.uuid.to_string());
    let runs = runs_of(app, &app.org.hr, &task).await;
    let statuses: Vec<&Value> = runs.iter().map(|r| &r["status"]).collect();
    assert_eq!(statuses, ["failed", "failed"], "{runs:?}");
    assert_eq!(runs[0]["exitCode"], 2);
    // The workspace of a failed run is kept, and its log says where.
    let log = log_of(app, &app.org.hr, runs[0]["id"].as_str().unwrap()).await;
    assert!(
        log.contains(&"stderr: error: it broke".to_owned()),
        "{log:?}"
    );
    let kept = log
        .iter()
        .find_map(|l| l.strip_prefix("system: [muster worker] workspace kept at "))
        .unwrap_or_else(|| panic!("no workspace line in {log:?}"));
    assert!(std::path::Path::new(kept).is_dir(), "{kept}");
    let comments = comments_of(app, &app.org.hr, &task).await;
    assert_eq!(comments.len(), 2, "{comments:?}");
    assert!(comments[0].contains("attempt 1 of 2"), "{comments:?}");
    assert!(comments[1].contains("attempt 2 of 2"), "{comments:?}");
    let moves = app
        .events_of_type(&app.org.hr, &task, "task.transitioned")
        .await;
    let reasons: Vec<String> = moves
        .iter()
        .map(|e| {
            e["payload"]["reason"]
                .as_str()
                .unwrap_or_default()
                .to_owned()
        })
        .collect();
    assert!(
        reasons
            .iter()
            .any(|r| r.starts_with("failed 2 times; last:")),
        "{reasons:?}"
    );
}

/// The agent's secret stays out of the CLI's environment (and so out of the run log
/// anything it prints lands in), unless `--pass-credentials` says otherwise.
async fn the_cli_sees_no_secret_unless_told_to(app: &TestApp) {
    let agent = funded_worker(app, 0).await;
    let scratch = Scratch::new();
    let cli = scratch.script(
        "env",
        r#"echo "agent=${MUSTER_AGENT_ID:-none} secret=${MUSTER_AGENT_SECRET:-none}""#,
    );
    for (flag, expected) in [
        (None, "secret=none".to_owned()),
        (
            Some("--pass-credentials"),
            format!("secret={}", agent.secret),
        ),
    ] {
        let task = app.task_titled(&app.org.hr, "print env").await;
        let mut extra = vec!["--once"];
        extra.extend(flag);
        let mut worker = Worker::command(app, &agent, &scratch, &cli, &extra);
        assert!(
            worker.exited(Duration::from_secs(30)).await.success(),
            "{}",
            worker.output()
        );
        assert_eq!(task_of(app, &app.org.hr, &task).await["status"], "review");
        let runs = runs_of(app, &app.org.hr, &task).await;
        let log = log_of(app, &app.org.hr, runs[0]["id"].as_str().unwrap()).await;
        let line = format!("stdout: agent={} {expected}", agent.handle);
        assert!(log.contains(&line), "{flag:?}: {log:?}");
    }
}

/// `--once` exits 0 when there is nothing to claim, and fails when the claim itself is
/// refused (here: an observer may not claim).
async fn once_fails_when_the_claim_is_refused(app: &TestApp) {
    let scratch = Scratch::new();
    let cli = scratch.script("never", "echo 'should not run'; exit 1");
    let idle = funded_worker(app, 0).await;
    let mut worker = Worker::command(app, &idle, &scratch, &cli, &["--once"]);
    let status = worker.exited(Duration::from_secs(30)).await;
    assert!(status.success(), "{}", worker.output());
    assert!(
        worker.output().contains("no task to claim"),
        "{}",
        worker.output()
    );

    let observer = app.add_agent(&app.org, "observer", "active").await;
    let task = app.task_titled(&app.org.hr, "not for observers").await;
    let mut worker = Worker::command(app, &observer, &scratch, &cli, &["--once"]);
    let status = worker.exited(Duration::from_secs(30)).await;
    assert!(!status.success(), "{}", worker.output());
    assert!(
        worker.output().contains("could not claim"),
        "{}",
        worker.output()
    );
    assert_eq!(task_of(app, &app.org.hr, &task).await["status"], "todo");
}
