//! Argument parsing and output formatting of `muster run …` and `muster usage`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use clap::{Parser, Subcommand};
use muster_client::types::model::RunStatus;
use muster_client::types::runs::{LogLineResponse, RunResponse, UsageGroupResponse, UsageGrouping};
use uuid::Uuid;

use crate::args::{RunArgs, RunCommand, UsageArgs};
use crate::output::usd;
use crate::{runs, usage};

/// The two commands as the `muster` binary mounts them.
#[derive(Debug, Parser)]
struct Cli {
    #[command(subcommand)]
    command: Top,
}

#[derive(Debug, Subcommand)]
enum Top {
    Run(RunArgs),
    Usage(UsageArgs),
}

const RUN: &str = "019a0000-0000-7000-8000-000000000001";
const TASK: &str = "019a0000-0000-7000-8000-000000000002";
const AGENT: &str = "019a0000-0000-7000-8000-000000000003";

fn parse(args: &[&str]) -> Result<Top, clap::Error> {
    let mut command_line = vec!["muster"];
    command_line.extend_from_slice(args);
    Cli::try_parse_from(command_line).map(|cli| cli.command)
}

fn run_command(args: &[&str]) -> RunCommand {
    match parse(args).unwrap() {
        Top::Run(run) => run.command,
        Top::Usage(_) => panic!("not a run command"),
    }
}

fn uuid(s: &str) -> Uuid {
    Uuid::parse_str(s).unwrap()
}

#[test]
fn run_start_takes_the_task_and_its_options() {
    let command = run_command(&[
        "run",
        "start",
        TASK,
        "--adapter",
        "claude-code",
        "--model",
        "opus",
        "--reserve",
        "50",
    ]);
    let RunCommand::Start {
        task,
        adapter,
        model,
        reserve,
    } = command
    else {
        panic!("{command:?}");
    };
    assert_eq!(task, uuid(TASK));
    assert_eq!(adapter.as_deref(), Some("claude-code"));
    assert_eq!(model.as_deref(), Some("opus"));
    assert_eq!(reserve, Some(50));

    let RunCommand::Start { reserve, .. } = run_command(&["run", "start", TASK]) else {
        panic!("not start");
    };
    assert_eq!(reserve, None);
}

#[test]
fn run_start_refuses_a_reserve_out_of_range_and_a_task_that_is_no_uuid() {
    assert!(parse(&["run", "start", TASK, "--reserve", "-1"]).is_err());
    assert!(parse(&["run", "start", TASK, "--reserve", "1000000001"]).is_err());
    assert!(parse(&["run", "start", "nope"]).is_err());
    assert!(parse(&["run", "start"]).is_err());
}

#[test]
fn run_list_takes_its_filters() {
    let command = run_command(&[
        "run", "list", "--task", TASK, "--agent", AGENT, "--status", "running", "--limit", "5",
    ]);
    let RunCommand::List {
        task,
        agent,
        status,
        limit,
        cursor,
    } = command
    else {
        panic!("{command:?}");
    };
    assert_eq!(task, Some(uuid(TASK)));
    assert_eq!(agent, Some(uuid(AGENT)));
    assert_eq!(status, Some(RunStatus::Running));
    assert_eq!(limit, Some(5));
    assert_eq!(cursor, None);
    assert!(parse(&["run", "list", "--status", "done"]).is_err());
}

#[test]
fn run_get_stop_and_log() {
    assert!(matches!(run_command(&["run", "get", RUN]), RunCommand::Get { id } if id == uuid(RUN)));
    assert!(matches!(
        run_command(&["run", "stop", RUN, "--reason", "over budget"]),
        RunCommand::Stop { id, reason: Some(r) } if id == uuid(RUN) && r == "over budget"
    ));
    assert!(matches!(
        run_command(&["run", "log", RUN]),
        RunCommand::Log { follow: false, .. }
    ));
    assert!(matches!(
        run_command(&["run", "log", RUN, "--follow"]),
        RunCommand::Log { follow: true, .. }
    ));
    assert!(matches!(
        run_command(&["run", "log", "-f", RUN]),
        RunCommand::Log { follow: true, .. }
    ));
}

#[test]
fn run_finish_takes_a_final_status_only() {
    let command = run_command(&[
        "run",
        "finish",
        RUN,
        "--status",
        "failed",
        "--exit-code",
        "-2",
        "--summary",
        "tests fail",
    ]);
    let RunCommand::Finish {
        id,
        status,
        exit_code,
        summary,
    } = command
    else {
        panic!("{command:?}");
    };
    assert_eq!(id, uuid(RUN));
    assert_eq!(status, RunStatus::Failed);
    assert_eq!(exit_code, Some(-2));
    assert_eq!(summary.as_deref(), Some("tests fail"));

    for status in ["succeeded", "failed", "cancelled", "stopped"] {
        assert!(
            parse(&["run", "finish", RUN, "--status", status]).is_ok(),
            "{status}"
        );
    }
    for status in ["running", "lost", "done", ""] {
        assert!(
            parse(&["run", "finish", RUN, "--status", status]).is_err(),
            "{status}"
        );
    }
    // The status is required.
    assert!(parse(&["run", "finish", RUN]).is_err());
}

#[test]
fn usage_takes_a_grouping_and_filters() {
    let Top::Usage(args) = parse(&[
        "usage",
        "--group-by",
        "day",
        "--from",
        "2026-12-01",
        "--to",
        "2026-12-07",
        "--agent",
        AGENT,
        "--task",
        TASK,
        "--json",
    ])
    .unwrap() else {
        panic!("not usage");
    };
    assert_eq!(args.group_by, Some(UsageGrouping::Day));
    assert_eq!(args.from.as_deref(), Some("2026-12-01"));
    assert_eq!(args.to.as_deref(), Some("2026-12-07"));
    assert_eq!(args.agent, Some(uuid(AGENT)));
    assert_eq!(args.task, Some(uuid(TASK)));
    assert!(args.connection.json);

    for (value, grouping) in [
        ("agent", UsageGrouping::Agent),
        ("model", UsageGrouping::Model),
        ("task", UsageGrouping::Task),
    ] {
        let Top::Usage(args) = parse(&["usage", "--group-by", value]).unwrap() else {
            panic!("not usage");
        };
        assert_eq!(args.group_by, Some(grouping));
    }
    let Top::Usage(args) = parse(&["usage"]).unwrap() else {
        panic!("not usage");
    };
    assert_eq!(args.group_by, None);
    assert!(parse(&["usage", "--group-by", "week"]).is_err());
}

/// A run as the API answers it.
fn run_json(status: &str, cost: &serde_json::Value, unpriced: i64) -> RunResponse {
    serde_json::from_value(serde_json::json!({
        "id": RUN, "taskId": TASK, "agentId": AGENT, "status": status,
        "adapter": "claude-code", "model": "claude-opus",
        "startedAt": "2026-12-07T10:00:00.000Z", "endedAt": null,
        "exitCode": null, "summary": null,
        "stopRequested": true, "stopReason": "budget",
        "usage": {
            "inputTokens": 1200, "outputTokens": 300, "cacheReadTokens": 40,
            "cacheWriteTokens": 5, "costMicrousd": cost, "unpricedTokens": unpriced,
            "credits": 12, "unfundedCredits": 3, "reports": 2,
            "byModel": [{
                "model": "claude-opus", "inputTokens": 1200, "outputTokens": 300,
                "cacheReadTokens": 40, "cacheWriteTokens": 5, "costMicrousd": cost,
                "unpricedTokens": unpriced, "credits": 12, "unfundedCredits": 3,
                "reports": 2
            }]
        },
        "logBytes": 2048, "logLines": 17, "logTruncated": false, "reservedCredits": 40
    }))
    .unwrap()
}

#[test]
fn dollars_are_printed_to_the_millionth() {
    assert_eq!(usd(None), "-");
    assert_eq!(usd(Some(0)), "$0.000000");
    assert_eq!(usd(Some(12_345)), "$0.012345");
    assert_eq!(usd(Some(3_000_000)), "$3.000000");
    assert_eq!(usd(Some(1_234_567_890)), "$1234.567890");
    assert_eq!(usd(Some(-5)), "-$0.000005");
}

#[test]
fn a_run_shows_its_usage_stop_and_log() {
    let run = run_json("running", &serde_json::json!(12_345), 0);
    let fields = runs::fields(&run);
    let get = |key: &str| -> String {
        fields
            .iter()
            .find(|(k, _)| *k == key)
            .map_or_else(|| panic!("no {key} in {fields:?}"), |(_, v)| v.clone())
    };
    assert_eq!(get("status"), "running");
    assert_eq!(get("adapter"), "claude-code");
    assert_eq!(get("ended"), "-");
    assert_eq!(get("stop requested"), "budget");
    assert_eq!(
        get("tokens"),
        "1200 in, 300 out, 40 cache read, 5 cache write"
    );
    assert_eq!(get("cost"), "$0.012345");
    assert_eq!(get("credits"), "12 (3 unfunded)");
    assert_eq!(get("reserved"), "40");
    assert_eq!(get("log"), "17 lines, 2048 bytes");
    assert_eq!(
        get("by model"),
        "claude-opus: 1200 in, 300 out, $0.012345, 12 credits"
    );
    assert!(fields.iter().all(|(k, _)| *k != "summary"));
}

#[test]
fn an_unpriced_run_says_so() {
    let run = run_json("succeeded", &serde_json::Value::Null, 1500);
    let fields = runs::fields(&run);
    assert!(fields.contains(&("cost", "- (1500 tokens unpriced)".to_owned())));
    assert_eq!(runs::cost(Some(7), 0), "$0.000007");
}

#[test]
fn run_rows_hold_one_line_per_run() {
    let rows = runs::rows(&[run_json("failed", &serde_json::json!(2_000_000), 0)]);
    assert_eq!(
        rows,
        [[
            RUN,
            TASK,
            AGENT,
            "failed",
            "claude-opus",
            "2026-12-07T10:00:00.000Z",
            "$2.000000",
            "12"
        ]
        .map(str::to_owned)
        .to_vec()]
    );
}

#[test]
fn log_lines_are_stream_then_text() {
    let line: LogLineResponse = serde_json::from_value(serde_json::json!({
        "seq": 3, "stream": "stderr", "text": "warning: unused", "at": "2026-12-07T10:00:01.000Z"
    }))
    .unwrap();
    assert_eq!(runs::log_line(&line), "stderr warning: unused");
}

#[test]
fn usage_rows_hold_every_total() {
    let group: UsageGroupResponse = serde_json::from_value(serde_json::json!({
        "key": "2026-12-07", "inputTokens": 10, "outputTokens": 20, "cacheReadTokens": 30,
        "cacheWriteTokens": 40, "costMicrousd": null, "unpricedTokens": 100, "credits": 0,
        "unfundedCredits": 0, "reports": 1, "runs": 1
    }))
    .unwrap();
    assert_eq!(
        usage::rows(&[group]),
        [[
            "2026-12-07",
            "1",
            "1",
            "10",
            "20",
            "30",
            "40",
            "100",
            "-",
            "0",
            "0"
        ]
        .map(str::to_owned)
        .to_vec()]
    );
}
