//! Recorded runs of a plain program (`tests/fixtures/worker/`), replayed through its reader.

use muster_client::types::runs::UsageBody;

use super::super::AdapterKind;
use super::super::tests::{assert_reports, fixture, logged, replay};

fn run(
    name: &str,
    model: Option<&str>,
    exit_code: Option<i32>,
) -> (Vec<super::Output>, super::Outcome) {
    replay(
        AdapterKind::Command,
        model,
        &fixture("command", name),
        exit_code,
    )
}

fn usage(model: &str, provider: Option<&str>, tokens: [i64; 2]) -> UsageBody {
    UsageBody {
        model: model.to_owned(),
        provider: provider.map(str::to_owned),
        input_tokens: tokens[0],
        output_tokens: tokens[1],
        cache_read_tokens: None,
        cache_write_tokens: None,
        cost_microusd: None,
        report_id: None,
    }
}

#[test]
fn lines_go_to_the_log_and_usage_lines_become_reports() {
    let (outputs, outcome) = run("success.txt", None, Some(0));
    assert_eq!(
        logged(&outputs),
        [
            "out: Task 8f3c1d2e: Fix the lexer's last token",
            "out: Running: cargo test -p parser",
            "out: test result: FAILED. 11 passed; 1 failed; 0 ignored; 0 measured; 0 filtered \
             out; finished in 0.00s",
            "out: ",
            "out: Patching crates/parser/src/lexer.rs",
            "out: Running: cargo test -p parser",
            "out: test result: ok. 12 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; \
             finished in 0.00s",
            "out: Fixed the off-by-one in Lexer::tokens; all 12 parser tests pass.",
        ]
    );
    let model = "llama-3.1-70b-instruct";
    assert_reports(
        &outputs,
        &[
            UsageBody {
                report_id: Some("call-1".to_owned()),
                ..usage(model, Some("local"), [18_234, 1022])
            },
            UsageBody {
                cache_read_tokens: Some(16_384),
                cost_microusd: Some(0),
                report_id: Some("call-2".to_owned()),
                ..usage(model, Some("local"), [20_110, 388])
            },
        ],
    );
    assert!(outcome.succeeded);
    assert_eq!(
        outcome.summary.as_deref(),
        Some("Fixed the off-by-one in Lexer::tokens; all 12 parser tests pass.")
    );
}

#[test]
fn a_non_zero_exit_fails_and_the_last_line_is_the_summary() {
    let (outputs, outcome) = run("failed.txt", None, Some(2));
    // No id in the line: the worker gives the report one.
    assert_reports(
        &outputs,
        &[usage("gpt-4o-mini", Some("openai"), [5120, 211])],
    );
    assert!(!outcome.succeeded);
    assert_eq!(
        outcome.failure.as_deref(),
        Some("the program exited with code 2")
    );
    assert_eq!(
        outcome.summary.as_deref(),
        Some("giving up: the parser does not build")
    );
}

#[test]
fn a_malformed_usage_line_is_a_system_line_saying_why() {
    let (outputs, outcome) = run("malformed_usage.txt", None, Some(0));
    assert_eq!(
        logged(&outputs),
        [
            "out: Task 8f3c1d2e: Fix the lexer's last token",
            "sys: usage line ignored: unknown field `inputToken`, expected one of `model`, \
             `provider`, `inputTokens`, `outputTokens`, `cacheReadTokens`, \
             `cacheWriteTokens`, `costMicrousd`, `reportId` at line 1 column 35",
            "sys: usage line ignored: inputTokens must be from 0 to 1000000000000",
            "sys: usage line ignored: not JSON (expected ident at line 1 column 2)",
            "sys: usage line ignored: model is missing",
            "out: Done: the lexer reads its last token.",
        ]
    );
    assert_reports(
        &outputs,
        &[UsageBody {
            report_id: Some("r-1".to_owned()),
            ..usage("gpt-4o-mini", None, [1200, 80])
        }],
    );
    assert!(outcome.succeeded);
    assert_eq!(
        outcome.summary.as_deref(),
        Some("Done: the lexer reads its last token.")
    );

    // With `--model` in the worker's arguments, a line without a model uses it.
    let (outputs, _) = run("malformed_usage.txt", Some("qwen3-coder"), Some(0));
    assert_eq!(super::super::tests::reports(&outputs).len(), 2);
    assert_eq!(
        super::super::tests::reports(&outputs)[0].model,
        "qwen3-coder"
    );
}

#[test]
fn a_killed_program_fails_whatever_it_printed() {
    let (outputs, outcome) = run("truncated.txt", None, None);
    assert_eq!(
        logged(&outputs).last().map(String::as_str),
        Some("out:    Compiling par")
    );
    assert!(!outcome.succeeded);
    assert_eq!(
        outcome.failure.as_deref(),
        Some("the program was killed by a signal")
    );
}

#[test]
fn only_the_exact_prefix_marks_a_usage_line() {
    let stdout = "::muster-usagex {}\n::muster-usage{\"model\":\"m\",\"inputTokens\":1,\"outputTokens\":2}\n::muster-usage\n";
    let (outputs, _) = replay(AdapterKind::Command, None, stdout, Some(0));
    assert_eq!(
        logged(&outputs),
        [
            "out: ::muster-usagex {}",
            "sys: usage line ignored: not JSON (EOF while parsing a value at line 1 column 0)",
        ]
    );
    assert_reports(&outputs, &[usage("m", None, [1, 2])]);
}
