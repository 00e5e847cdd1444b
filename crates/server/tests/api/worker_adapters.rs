//! `muster worker` with each adapter, end to end (issue #65): a fake CLI replays a
//! recorded transcript of the real tool's output (crates/cli/tests/fixtures/worker/),
//! and the run, its usage, its log, the task's result and its next status show what
//! the transcript said.

use serde_json::Value;

use crate::helpers::TestApp;
use crate::runs_support::funded_worker;
use crate::worker_support::{Scratch, Worker, comments_of, log_of, runs_of, task_reaches};

api_tests!(
    claude_code_transcripts_become_runs,
    codex_and_gemini_transcripts_become_runs,
);

/// Runs one task through `muster worker --once` with `adapter`, its CLI replaying
/// `fixture` and exiting with `exit`: the task as it ends in `expected`, and its run.
async fn replay(
    app: &TestApp,
    adapter: &str,
    fixture: &str,
    exit: i32,
    expected: &str,
) -> (Value, Value, Vec<String>) {
    let agent = funded_worker(app, 1_000).await;
    let scratch = Scratch::new();
    let cli = scratch.replayer(fixture, exit);
    let task = app
        .task_titled(&app.org.hr, &format!("{adapter} {fixture}"))
        .await;
    let args = [
        "--adapter",
        adapter,
        "--command",
        cli.to_str().unwrap(),
        "--once",
        "--max-attempts",
        "1",
        "--",
        "--model",
        "fake-model",
    ];
    let mut worker = Worker::start(app, &agent, &scratch, &args);
    let status = worker.exited(std::time::Duration::from_secs(30)).await;
    assert!(status.success(), "{status:?}: {}", worker.output());
    let ended = task_reaches(app, &task, expected, &[&worker]).await;
    let runs = runs_of(app, &app.org.hr, &task).await;
    assert_eq!(runs.len(), 1, "{runs:?}");
    let passed = std::fs::read_to_string(scratch.path("args.txt")).unwrap();
    let passed: Vec<String> = passed.split_terminator('\0').map(str::to_owned).collect();
    assert!(
        passed.ends_with(&["--model".to_owned(), "fake-model".to_owned()]),
        "{passed:?}"
    );
    (ended, runs[0].clone(), passed)
}

async fn claude_code_transcripts_become_runs(app: &TestApp) {
    let (task, run, args) =
        replay(app, "claude-code", "claude-code/success.jsonl", 0, "review").await;
    assert_eq!(args[0], "-p");
    assert!(
        args[1].contains("claude-code claude-code/success.jsonl"),
        "the prompt names the task: {}",
        args[1]
    );
    assert_eq!(args[2..5], ["--output-format", "stream-json", "--verbose"]);
    assert_eq!(run["status"], "succeeded", "{run}");
    assert_eq!(run["adapter"], "claude-code");
    // The cost Claude Code reported, in millionths of a dollar; one credit per 1,000.
    assert_eq!(run["usage"]["costMicrousd"], 79_966, "{run}");
    assert_eq!(run["usage"]["credits"], 80, "{run}");
    assert_eq!(run["usage"]["reports"], 1);
    let result = task["result"].as_str().unwrap();
    assert!(result.starts_with("Fixed the off-by-one"), "{result}");
    assert!(
        run["summary"]
            .as_str()
            .unwrap()
            .starts_with("Fixed the off-by-one")
    );
    let log = log_of(app, &app.org.hr, run["id"].as_str().unwrap()).await;
    assert!(
        log.iter().all(|l| !l.contains("\"type\":\"result\"")),
        "no raw JSON: {log:?}"
    );
    let comments = comments_of(app, &app.org.hr, task["id"].as_str().unwrap()).await;
    assert!(comments[0].contains("Fixed the off-by-one"), "{comments:?}");

    let (_, two, _) = replay(
        app,
        "claude-code",
        "claude-code/two_models.jsonl",
        0,
        "review",
    )
    .await;
    assert_eq!(two["usage"]["reports"], 2, "{two}");

    let (blocked, failed, _) = replay(
        app,
        "claude-code",
        "claude-code/api_error.jsonl",
        1,
        "blocked",
    )
    .await;
    assert_eq!(failed["status"], "failed", "{failed}");
    assert_eq!(failed["exitCode"], 1);
    assert!(
        failed["summary"].as_str().unwrap().contains("529"),
        "{failed}"
    );
    assert_eq!(blocked["result"], Value::Null);

    let (_, cut, _) = replay(
        app,
        "claude-code",
        "claude-code/truncated.jsonl",
        0,
        "blocked",
    )
    .await;
    assert_eq!(cut["status"], "failed", "{cut}");
    assert!(
        cut["summary"].as_str().unwrap().contains("ended early"),
        "{cut}"
    );
}

async fn codex_and_gemini_transcripts_become_runs(app: &TestApp) {
    let (task, run, args) = replay(app, "codex", "codex/success.jsonl", 0, "review").await;
    assert_eq!(args[..2], ["exec", "--json"]);
    assert_eq!(run["status"], "succeeded", "{run}");
    assert_eq!(run["model"], "fake-model");
    assert_eq!(run["usage"]["inputTokens"], 6_997, "{run}");
    assert_eq!(run["usage"]["cacheReadTokens"], 41_216, "{run}");
    assert_eq!(run["usage"]["outputTokens"], 1_874, "{run}");
    assert!(task["result"].is_string(), "{task}");

    let (_, failed, _) = replay(app, "codex", "codex/failed.jsonl", 1, "blocked").await;
    assert_eq!(failed["status"], "failed", "{failed}");

    let (task, run, args) = replay(app, "gemini", "gemini/success.jsonl", 0, "review").await;
    assert_eq!(args[0], "-p");
    assert_eq!(args[2..4], ["--output-format", "stream-json"]);
    assert_eq!(run["status"], "succeeded", "{run}");
    assert_eq!(run["usage"]["reports"], 2, "{run}");
    assert!(task["result"].is_string(), "{task}");

    let (_, failed, _) = replay(app, "gemini", "gemini/error.jsonl", 1, "blocked").await;
    assert_eq!(failed["status"], "failed", "{failed}");
}
