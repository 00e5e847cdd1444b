//! Recorded runs of the Gemini CLI (`tests/fixtures/worker/`), replayed through its reader.

use super::super::AdapterKind;
use super::super::tests::{assert_reports, fixture, logged, replay, report};

const LEX: &str = "/home/dev/.cache/muster/worker/8f3c1d2e-4b5a-4c6d-9e7f-0a1b2c3d4e5f/crates/parser/src/lexer.rs";

fn run(name: &str, exit_code: Option<i32>) -> (Vec<super::Output>, super::Outcome) {
    replay(
        AdapterKind::Gemini,
        None,
        &fixture("gemini", name),
        exit_code,
    )
}

fn success_log() -> Vec<String> {
    [
        "sys: Gemini CLI: model gemini-2.5-pro, session c8f2a7d1-3e9b-4b6a-8d45-2f1e0c9b7a63"
            .to_owned(),
        "out: I'll run the parser tests first.".to_owned(),
        "out: tool: run_shell_command (cargo test -p parser)".to_owned(),
        "out: The test fails because the loop in `Lexer::tokens` stops one byte short.".to_owned(),
        format!("out: tool: read_file ({LEX})"),
        format!("out: tool: replace ({LEX})"),
        "out: tool: run_shell_command (cargo test -p parser)".to_owned(),
        "out: Fixed the off-by-one in `Lexer::tokens`: the loop now reads to the end of the \
         input."
            .to_owned(),
        "out: ".to_owned(),
        "out: All 12 parser tests pass.".to_owned(),
        "sys: finished: success".to_owned(),
    ]
    .into()
}

#[test]
fn deltas_become_lines_and_each_model_of_the_stats_one_report() {
    let (outputs, outcome) = run("success.jsonl", Some(0));
    assert_eq!(logged(&outputs), success_log());
    // `input` is the uncached part of `input_tokens`.
    assert_reports(
        &outputs,
        &[
            report(
                "gemini-2.5-flash-lite",
                "google",
                [5270, 177, 0, 0],
                None,
                "result:gemini-2.5-flash-lite",
            ),
            report(
                "gemini-2.5-pro",
                "google",
                [13_928, 1312, 38_912, 0],
                None,
                "result:gemini-2.5-pro",
            ),
        ],
    );
    assert!(outcome.succeeded);
    assert_eq!(
        outcome.summary.as_deref(),
        Some(
            "Fixed the off-by-one in `Lexer::tokens`: the loop now reads to the end of the \
             input.\n\nAll 12 parser tests pass."
        )
    );
}

#[test]
fn an_error_result_fails_with_its_message_and_reports_what_was_used() {
    let (outputs, outcome) = run("error.jsonl", Some(1));
    let quota = "[API Error: Quota exceeded for quota metric 'Gemini 2.5 Pro Requests' and \
                 limit 'Gemini 2.5 Pro Requests per day per user per tier' of service \
                 'cloudcode-pa.googleapis.com' for consumer 'project_number:681255809395'.]";
    assert_eq!(logged(&outputs).last().unwrap(), "sys: finished: error");
    assert_reports(
        &outputs,
        &[report(
            "gemini-2.5-pro",
            "google",
            [9012, 96, 0, 0],
            None,
            "result:gemini-2.5-pro",
        )],
    );
    assert!(!outcome.succeeded);
    assert_eq!(outcome.failure, Some(format!("Gemini CLI: {quota}")));
    assert_eq!(
        outcome.summary.as_deref(),
        Some("I'll read the lexer first.")
    );
}

#[test]
fn malformed_lines_are_logged_as_text_and_the_run_goes_on() {
    let (outputs, outcome) = run("malformed.jsonl", Some(0));
    let mut expected = success_log();
    expected.insert(0, "out: Loaded cached credentials.".to_owned());
    expected.insert(
        4,
        r#"out: {"type":"message","timestamp":"2025-11-25T03:27:26.822Z","role":"assis"#.to_owned(),
    );
    assert_eq!(logged(&outputs), expected);
    assert!(outcome.succeeded);
}

#[test]
fn output_without_a_result_event_is_a_failure_that_says_so() {
    let (outputs, outcome) = run("truncated.jsonl", None);
    assert_eq!(logged(&outputs), success_log()[..3]);
    assert_reports(&outputs, &[]);
    assert!(!outcome.succeeded);
    assert_eq!(
        outcome.failure.as_deref(),
        Some("Gemini CLI's output ended early, without its result event (killed by a signal)")
    );
    assert_eq!(
        outcome.summary.as_deref(),
        Some("I'll run the parser tests first.")
    );
}

#[test]
fn an_error_event_explains_a_cut_run_and_an_error_result_without_a_message() {
    let error = r#"{"type":"error","severity":"error","message":"Invalid stream: The model returned an empty response or malformed tool call."}"#;
    let (outputs, outcome) = replay(AdapterKind::Gemini, None, error, Some(1));
    assert_eq!(
        logged(&outputs),
        [
            "out: error: Invalid stream: The model returned an empty response or malformed tool call."
        ]
    );
    let why = "Gemini CLI: Invalid stream: The model returned an empty response or malformed \
               tool call.";
    assert_eq!(outcome.failure.as_deref(), Some(why));

    let stdout = format!("{error}\n{{\"type\":\"result\",\"status\":\"error\"}}");
    let (_, outcome) = replay(AdapterKind::Gemini, None, &stdout, Some(0));
    assert_eq!(outcome.failure.as_deref(), Some(why));
}

#[test]
fn without_per_model_stats_the_totals_go_under_the_runs_model() {
    let old = r#"{"type":"result","status":"success","stats":{"total_tokens":1300,"input_tokens":1200,"output_tokens":100,"cached":200,"input":1000,"duration_ms":900,"tool_calls":0}}"#;
    let init = r#"{"type":"init","session_id":"s","model":"gemini-2.5-flash"}"#;
    let cases = [
        (format!("{init}\n{old}"), None, "gemini-2.5-flash"),
        (old.to_owned(), Some("gemini-2.5-pro"), "gemini-2.5-pro"),
        (old.to_owned(), None, "gemini"),
    ];
    for (stdout, model_arg, model) in cases {
        let (outputs, outcome) = replay(AdapterKind::Gemini, model_arg, &stdout, Some(0));
        assert_reports(
            &outputs,
            &[report(
                model,
                "google",
                [1000, 100, 200, 0],
                None,
                &format!("result:{model}"),
            )],
        );
        assert!(outcome.succeeded);
    }
    // The session metrics' shape: counts under `tokens`, thoughts billed as output.
    let nested = r#"{"type":"result","status":"success","stats":{"models":{"gemini-2.5-pro":{"tokens":{"prompt":500,"candidates":40,"cached":100,"thoughts":60}}}}}"#;
    let (outputs, _) = replay(AdapterKind::Gemini, None, nested, Some(0));
    assert_reports(
        &outputs,
        &[report(
            "gemini-2.5-pro",
            "google",
            [400, 100, 100, 0],
            None,
            "result:gemini-2.5-pro",
        )],
    );
}
