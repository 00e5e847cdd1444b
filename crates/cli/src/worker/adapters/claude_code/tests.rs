//! Recorded runs of Claude Code (`tests/fixtures/worker/`), replayed through its reader.

use super::super::AdapterKind;
use super::super::tests::{assert_reports, fixture, logged, replay, report};

const SONNET: &str = "claude-sonnet-4-5-20250929";
const HAIKU: &str = "claude-haiku-4-5-20251001";
const WS: &str = "/home/dev/.cache/muster/worker/8f3c1d2e-4b5a-4c6d-9e7f-0a1b2c3d4e5f";
const FIXED: &str = "Fixed the off-by-one in `Lexer::tokens`: the loop now runs to the end \
                     of the input, so the last token is read. All 12 parser tests pass.";

fn run(name: &str, exit_code: Option<i32>) -> (Vec<super::Output>, super::Outcome) {
    let stdout = fixture("claude-code", name);
    replay(AdapterKind::ClaudeCode, None, &stdout, exit_code)
}

fn success_log() -> Vec<String> {
    [
        format!("sys: Claude Code: model {SONNET}, session 5a1e9c42-7d3b-4f0e-9a61-2c8d4b7e1f03"),
        "out: I'll start by running the parser tests to see what fails.".to_owned(),
        "out: tool: Bash (cargo test -p parser 2>&1 | tail -20)".to_owned(),
        "out: tool failed: Exit code 101".to_owned(),
        format!("out: tool: Read ({WS}/crates/parser/src/lexer.rs)"),
        "out: The loop in `Lexer::tokens` stops one byte short:".to_owned(),
        "out: ".to_owned(),
        "out: `while self.pos < self.input.len() - 1` never reads the last character, so a \
         one-letter final token is lost."
            .to_owned(),
        "out: ".to_owned(),
        "out: I'll make it run to the end of the input.".to_owned(),
        format!("out: tool: Edit ({WS}/crates/parser/src/lexer.rs)"),
        "out: tool: Bash (cargo test -p parser)".to_owned(),
        format!("out: {FIXED}"),
        "sys: finished: success, 7 turns, $0.0800".to_owned(),
    ]
    .into()
}

#[test]
fn a_successful_run_logs_its_text_and_tools_and_reports_the_result_usage_once() {
    let (outputs, outcome) = run("success.jsonl", Some(0));
    assert_eq!(logged(&outputs), success_log());
    // The assistant lines carry usage too: only the result's is reported.
    assert_reports(
        &outputs,
        &[report(
            SONNET,
            "anthropic",
            [27, 1432, 71_234, 9876],
            Some(79_966),
            &format!("result:{SONNET}"),
        )],
    );
    assert!(outcome.succeeded);
    assert_eq!(outcome.summary.as_deref(), Some(FIXED));
    assert_eq!(outcome.failure, None);
}

#[test]
fn each_model_of_model_usage_is_one_report_with_its_own_cost() {
    let (outputs, outcome) = run("two_models.jsonl", Some(0));
    assert_reports(
        &outputs,
        &[
            report(
                HAIKU,
                "anthropic",
                [2310, 412, 15_872, 4096],
                Some(11_077),
                &format!("result:{HAIKU}"),
            ),
            report(
                SONNET,
                "anthropic",
                [18, 988, 52_310, 7420],
                Some(58_392),
                &format!("result:{SONNET}"),
            ),
        ],
    );
    let log = logged(&outputs);
    assert!(log.contains(&"out: tool: Task (Find config loading)".to_owned()));
    assert!(log.contains(&"out: tool: Grep (fn load_config|toml::from_str)".to_owned()));
    assert_eq!(
        log.last().unwrap(),
        "sys: finished: success, 6 turns, $0.0695"
    );
    assert!(outcome.succeeded);
}

#[test]
fn a_run_out_of_turns_fails_and_still_reports_its_usage() {
    let (outputs, outcome) = run("error_max_turns.jsonl", Some(1));
    assert_eq!(
        logged(&outputs).last().unwrap(),
        "sys: finished: error_max_turns, 4 turns, $0.0412"
    );
    assert_reports(
        &outputs,
        &[report(
            SONNET,
            "anthropic",
            [13, 308, 46_248, 5721],
            Some(41_221),
            &format!("result:{SONNET}"),
        )],
    );
    assert!(!outcome.succeeded);
    assert_eq!(
        outcome.failure.as_deref(),
        Some("Claude Code reached its maximum number of turns (error_max_turns)")
    );
    assert_eq!(
        outcome.summary.as_deref(),
        Some("I'll look for the flaky test first.")
    );
}

#[test]
fn an_api_error_is_a_failure_even_as_a_success_subtype() {
    let (outputs, outcome) = run("api_error.jsonl", Some(1));
    let error = r#"API Error: 529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},"request_id":null}"#;
    assert_eq!(
        logged(&outputs),
        [
            format!(
                "sys: Claude Code: model {SONNET}, session 5a1e9c42-7d3b-4f0e-9a61-2c8d4b7e1f03"
            ),
            format!("out: {error}"),
            "sys: finished: success, 1 turn, $0.0000".to_owned(),
        ]
    );
    // Nothing was used: no report.
    assert_reports(&outputs, &[]);
    assert!(!outcome.succeeded);
    assert_eq!(
        outcome.failure,
        Some(format!("Claude Code failed: {error}"))
    );
    assert_eq!(outcome.summary.as_deref(), Some(error));
}

#[test]
fn malformed_lines_are_logged_as_text_and_the_run_goes_on() {
    let (outputs, outcome) = run("malformed.jsonl", Some(0));
    let mut expected = success_log();
    expected.insert(
        3,
        "out: Warning: the MCP server \"github\" failed to start; continuing without it".to_owned(),
    );
    expected.insert(
        6,
        r#"out: {"type":"assistant","message":{"model":"claude-sonnet-4-5-20250929","id":"msg_01Jw2xN8pQ4"#
            .to_owned(),
    );
    assert_eq!(logged(&outputs), expected);
    assert_eq!(super::super::tests::reports(&outputs).len(), 1);
    assert!(outcome.succeeded);
}

#[test]
fn output_without_a_result_line_is_a_failure_that_says_so() {
    for (exit_code, status) in [(Some(0), "exit code 0"), (None, "killed by a signal")] {
        let (outputs, outcome) = run("truncated.jsonl", exit_code);
        assert_eq!(logged(&outputs), success_log()[..5]);
        assert_reports(&outputs, &[]);
        assert!(!outcome.succeeded);
        assert_eq!(
            outcome.failure,
            Some(format!(
                "Claude Code's output ended early, without its result line ({status})"
            ))
        );
        assert_eq!(
            outcome.summary.as_deref(),
            Some("I'll start by running the parser tests to see what fails.")
        );
    }
}

#[test]
fn a_non_zero_exit_fails_a_run_whose_result_was_a_success() {
    let (_, outcome) = run("success.jsonl", Some(1));
    assert!(!outcome.succeeded);
    assert_eq!(
        outcome.failure.as_deref(),
        Some("Claude Code reported success but exited with code 1")
    );
    assert_eq!(outcome.summary.as_deref(), Some(FIXED));
}

#[test]
fn without_model_usage_the_totals_are_reported_under_the_runs_model() {
    let result = r#"{"type":"result","subtype":"success","is_error":false,"num_turns":2,"result":"ok","total_cost_usd":0.0123456,"usage":{"input_tokens":10,"cache_creation_input_tokens":200,"cache_read_input_tokens":3000,"output_tokens":40}}"#;
    let init = r#"{"type":"system","subtype":"init","model":"claude-opus-4-1-20250805"}"#;
    let cases = [
        (
            format!("{init}\n{result}"),
            Some("opus"),
            "claude-opus-4-1-20250805",
        ),
        (result.to_owned(), Some("opus"), "opus"),
        (result.to_owned(), None, "claude"),
    ];
    for (stdout, model_arg, model) in cases {
        let (outputs, outcome) = replay(AdapterKind::ClaudeCode, model_arg, &stdout, Some(0));
        assert_reports(
            &outputs,
            &[report(
                model,
                "anthropic",
                [10, 40, 3000, 200],
                Some(12_346),
                &format!("result:{model}"),
            )],
        );
        assert!(outcome.succeeded);
    }
}

#[test]
fn an_error_result_names_its_subtype_and_errors() {
    let result = r#"{"type":"result","subtype":"error_during_execution","is_error":true,"errors":["Tool crashed","  "],"usage":{}}"#;
    let (outputs, outcome) = replay(AdapterKind::ClaudeCode, None, result, Some(1));
    assert_eq!(logged(&outputs), ["sys: finished: error_during_execution"]);
    assert_eq!(
        outcome.failure.as_deref(),
        Some("Claude Code failed during execution (error_during_execution): Tool crashed")
    );
    assert_eq!(outcome.summary, None);
}
