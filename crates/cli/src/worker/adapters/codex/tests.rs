//! Recorded runs of Codex (`tests/fixtures/worker/`), replayed through its reader.

use super::super::AdapterKind;
use super::super::tests::{assert_reports, fixture, logged, replay, report};

const FIXED: &str = "Fixed the off-by-one in `Lexer::tokens` (crates/parser/src/lexer.rs): \
                     the loop now reads up to the end of the input, so the last token is no \
                     longer dropped.\n\nAll 12 parser tests pass.";
const LIMIT: &str = "You've hit your usage limit. Upgrade to Pro \
                     (https://openai.com/chatgpt/pricing), or try again in 2 days 4 hours 12 \
                     minutes.";

fn run(
    name: &str,
    model: Option<&str>,
    exit_code: Option<i32>,
) -> (Vec<super::Output>, super::Outcome) {
    replay(
        AdapterKind::Codex,
        model,
        &fixture("codex", name),
        exit_code,
    )
}

fn success_log() -> Vec<String> {
    [
        "sys: Codex: thread 0199e2a7-4c1d-7a30-b6f2-9d8e1c5a3f47",
        "out: $ bash -lc 'cargo test -p parser'",
        "out: exit code 101",
        "out: $ bash -lc \"sed -n '40,49p' crates/parser/src/lexer.rs\"",
        "out: The loop in `Lexer::tokens` stops one byte short; I'll let it run to the end of \
         the input.",
        "out: file update: /home/dev/.cache/muster/worker/8f3c1d2e-4b5a-4c6d-9e7f-0a1b2c3d4e5f\
         /crates/parser/src/lexer.rs",
        "out: $ bash -lc 'cargo test -p parser'",
        "out: Fixed the off-by-one in `Lexer::tokens` (crates/parser/src/lexer.rs): the loop \
         now reads up to the end of the input, so the last token is no longer dropped.",
        "out: ",
        "out: All 12 parser tests pass.",
        "sys: turn 1 completed",
    ]
    .map(str::to_owned)
    .into()
}

#[test]
fn a_completed_turn_is_one_report_of_its_uncached_and_cached_input() {
    let (outputs, outcome) = run("success.jsonl", Some("gpt-5-codex"), Some(0));
    assert_eq!(logged(&outputs), success_log());
    // 48,213 input tokens of which 41,216 cached.
    assert_reports(
        &outputs,
        &[report(
            "gpt-5-codex",
            "openai",
            [6997, 1874, 41_216, 0],
            None,
            "turn:1",
        )],
    );
    assert!(outcome.succeeded);
    assert_eq!(outcome.summary.as_deref(), Some(FIXED));
    assert_eq!(outcome.failure, None);

    let (outputs, _) = run("success.jsonl", None, Some(0));
    assert_reports(
        &outputs,
        &[report(
            "codex",
            "openai",
            [6997, 1874, 41_216, 0],
            None,
            "turn:1",
        )],
    );
}

#[test]
fn a_failed_turn_fails_the_run_with_its_message() {
    let (outputs, outcome) = run("failed.jsonl", None, Some(1));
    assert_eq!(
        logged(&outputs)[3..],
        [
            format!("out: error: {LIMIT}"),
            format!("out: turn failed: {LIMIT}")
        ]
    );
    assert_reports(&outputs, &[]);
    assert!(!outcome.succeeded);
    assert_eq!(outcome.failure, Some(format!("Codex: {LIMIT}")));
    assert_eq!(outcome.summary, None);
}

#[test]
fn a_stream_error_followed_by_a_completed_turn_was_a_retry() {
    let (outputs, outcome) = run("retry.jsonl", None, Some(0));
    assert_eq!(
        logged(&outputs),
        [
            "sys: Codex: thread 0199e2a7-4c1d-7a30-b6f2-9d8e1c5a3f47",
            "out: error: Reconnecting... 1/5 (stream disconnected before completion: error \
             sending request for url (https://api.openai.com/v1/responses))",
            "out: $ bash -lc ls",
            "out: The workspace has two top-level folders, `crates` and `docs`.",
            "sys: turn 1 completed",
        ]
    );
    assert_reports(
        &outputs,
        &[report(
            "codex",
            "openai",
            [6048, 311, 3072, 0],
            None,
            "turn:1",
        )],
    );
    assert!(outcome.succeeded);
}

#[test]
fn a_stream_error_no_turn_follows_fails_the_run() {
    let stdout = "{\"type\":\"thread.started\",\"thread_id\":\"t1\"}\n{\"type\":\"turn.started\"}\n\
                  {\"type\":\"error\",\"message\":\"stream disconnected before completion\"}";
    let (_, outcome) = replay(AdapterKind::Codex, None, stdout, Some(1));
    assert_eq!(
        outcome.failure.as_deref(),
        Some("Codex: stream disconnected before completion")
    );
}

#[test]
fn malformed_lines_are_logged_as_text_and_the_run_goes_on() {
    let (outputs, outcome) = run("malformed.jsonl", None, Some(0));
    let mut expected = success_log();
    expected.insert(
        1,
        "out: warning: ignoring unknown config key \"model_reasoning_effortt\" in \
         ~/.codex/config.toml"
            .to_owned(),
    );
    expected.insert(
        3,
        r#"out: {"type":"item.completed","item":{"id":"item_1","type":"command_execu"#.to_owned(),
    );
    assert_eq!(logged(&outputs), expected);
    assert!(outcome.succeeded);
}

#[test]
fn output_cut_short_is_a_failure_that_says_so() {
    let (outputs, outcome) = run("truncated.jsonl", None, None);
    assert_eq!(
        logged(&outputs),
        [
            "sys: Codex: thread 0199e2a7-4c1d-7a30-b6f2-9d8e1c5a3f47",
            "out: $ bash -lc 'cargo test -p parser'",
            r#"out: {"type":"item.completed","item":{"id":"item_1","type":"command_execution","command":"bash -lc 'cargo te"#,
        ]
    );
    assert_reports(&outputs, &[]);
    assert!(!outcome.succeeded);
    assert_eq!(
        outcome.failure.as_deref(),
        Some(
            "Codex's output ended early, without a turn.completed or turn.failed event \
             (killed by a signal)"
        )
    );
}

#[test]
fn a_non_zero_exit_fails_a_completed_turn() {
    let (_, outcome) = run("success.jsonl", None, Some(1));
    assert_eq!(
        outcome.failure.as_deref(),
        Some("Codex reported success but exited with code 1")
    );
}

#[test]
fn running_totals_are_reported_as_what_each_turn_added() {
    let stdout = "\
{\"type\":\"turn.completed\",\"usage\":{\"input_tokens\":100,\"cached_input_tokens\":40,\"output_tokens\":10}}
{\"type\":\"turn.completed\",\"usage\":{\"input_tokens\":250,\"cached_input_tokens\":90,\"output_tokens\":30}}
{\"type\":\"turn.completed\",\"usage\":{\"input_tokens\":250,\"cached_input_tokens\":90,\"output_tokens\":30}}";
    let (outputs, outcome) = replay(AdapterKind::Codex, Some("o4-mini"), stdout, Some(0));
    assert_reports(
        &outputs,
        &[
            report("o4-mini", "openai", [60, 10, 40, 0], None, "turn:1"),
            report("o4-mini", "openai", [100, 20, 50, 0], None, "turn:2"),
        ],
    );
    assert!(outcome.succeeded);
}
