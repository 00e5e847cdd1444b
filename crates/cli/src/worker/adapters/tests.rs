//! Replaying recorded transcripts (`tests/fixtures/worker/<adapter>/`) through the
//! adapters, and what every adapter owes whatever it reads.

use muster_client::types::runs::UsageBody;

use super::{AdapterKind, Invocation, Outcome, Output, Stream};

/// The recorded stdout of one run.
pub fn fixture(adapter: &str, name: &str) -> String {
    let path = format!(
        "{}/tests/fixtures/worker/{adapter}/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&path).unwrap_or_else(|err| panic!("{path}: {err}"))
}

/// Feeds `stdout` to a fresh reader of `kind`, line by line, then ends the run with
/// `exit_code`.
pub fn replay(
    kind: AdapterKind,
    model: Option<&str>,
    stdout: &str,
    exit_code: Option<i32>,
) -> (Vec<Output>, Outcome) {
    let mut reader = kind.reader(model);
    let outputs = stdout
        .lines()
        .flat_map(|line| reader.stdout_line(line))
        .collect();
    let outcome = reader.finish(exit_code);
    (outputs, outcome)
}

/// The log lines among `outputs`, as `stream: text` (`out`, `err`, `sys`).
pub fn logged(outputs: &[Output]) -> Vec<String> {
    outputs
        .iter()
        .filter_map(|output| match output {
            Output::Log { stream, text } => Some(format!(
                "{}: {text}",
                match stream {
                    Stream::Stdout => "out",
                    Stream::Stderr => "err",
                    Stream::System => "sys",
                }
            )),
            Output::Usage(_) => None,
        })
        .collect()
}

/// The usage reports among `outputs`.
pub fn reports(outputs: &[Output]) -> Vec<&UsageBody> {
    outputs
        .iter()
        .filter_map(|output| match output {
            Output::Usage(usage) => Some(usage),
            Output::Log { .. } => None,
        })
        .collect()
}

/// A usage report as the tests spell it.
pub fn report(
    model: &str,
    provider: &str,
    tokens: [i64; 4],
    cost_microusd: Option<i64>,
    report_id: &str,
) -> UsageBody {
    let [input, output, cache_read, cache_write] = tokens;
    UsageBody {
        model: model.to_owned(),
        provider: Some(provider.to_owned()),
        input_tokens: input,
        output_tokens: output,
        cache_read_tokens: Some(cache_read),
        cache_write_tokens: Some(cache_write),
        cost_microusd,
        report_id: Some(report_id.to_owned()),
    }
}

/// The usage reports among `outputs` are `expected`, in order.
pub fn assert_reports(outputs: &[Output], expected: &[UsageBody]) {
    assert_eq!(reports(outputs), expected.iter().collect::<Vec<_>>());
}

fn strings(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| (*s).to_owned()).collect()
}

#[test]
fn each_cli_is_started_as_its_documentation_says() {
    let extra = strings(&["--model", "m1"]);
    let cases = [
        (
            AdapterKind::ClaudeCode,
            "claude",
            vec![
                "-p",
                "Fix it",
                "--output-format",
                "stream-json",
                "--verbose",
                "--model",
                "m1",
            ],
            None,
        ),
        (
            AdapterKind::Codex,
            "codex",
            vec!["exec", "--json", "Fix it", "--model", "m1"],
            None,
        ),
        (
            AdapterKind::Gemini,
            "gemini",
            vec![
                "-p",
                "Fix it",
                "--output-format",
                "stream-json",
                "--model",
                "m1",
            ],
            None,
        ),
        (
            AdapterKind::Command,
            "./agent.sh",
            vec!["--model", "m1"],
            Some("Fix it".to_owned()),
        ),
    ];
    for (kind, program, args, stdin) in cases {
        assert_eq!(
            kind.invocation(program, "Fix it", &extra),
            Invocation {
                program: program.to_owned(),
                args: strings(&args),
                stdin,
            },
            "{}",
            kind.name()
        );
    }
}

#[test]
fn garbage_never_panics_and_never_succeeds_without_an_ending() {
    let garbage = "\u{0}\n{\n[]\n\"x\"\n{\"type\":42}\n{\"type\":\"result\",\"usage\":[]}\n\
                   {\"type\":\"turn.completed\",\"usage\":{\"input_tokens\":-1}}\n\
                   {\"type\":\"assistant\",\"message\":{\"content\":\"text\"}}\n\
                   {\"type\":\"message\",\"role\":\"assistant\",\"content\":7}\n";
    for kind in [
        AdapterKind::ClaudeCode,
        AdapterKind::Codex,
        AdapterKind::Gemini,
        AdapterKind::Command,
    ] {
        for exit_code in [Some(0), Some(1), None] {
            let (outputs, outcome) = replay(kind, None, garbage, exit_code);
            for usage in reports(&outputs) {
                assert!((0..=1_000_000_000_000).contains(&usage.input_tokens));
                assert!(!usage.model.is_empty());
            }
            // Codex's garbage holds a completed turn; the others' holds no success.
            let may_succeed =
                exit_code == Some(0) && matches!(kind, AdapterKind::Codex | AdapterKind::Command);
            if !may_succeed {
                assert!(!outcome.succeeded, "{} {exit_code:?}", kind.name());
                assert!(outcome.failure.is_some());
            }
        }
    }
}

#[test]
fn stderr_is_logged_as_it_is_but_bounded() {
    for kind in [AdapterKind::ClaudeCode, AdapterKind::Command] {
        let mut reader = kind.reader(None);
        assert_eq!(
            logged(&reader.stderr_line("warning: x")),
            ["err: warning: x"]
        );
        let long = reader.stderr_line(&"y".repeat(100_000));
        assert!(logged(&long)[0].len() < 9_000);
    }
}

#[test]
fn a_prompt_is_never_read_as_an_option() {
    for kind in [
        AdapterKind::ClaudeCode,
        AdapterKind::Codex,
        AdapterKind::Gemini,
    ] {
        let invocation = kind.invocation("cli", "--- a template with front matter", &[]);
        assert!(
            invocation
                .args
                .contains(&"\n--- a template with front matter".to_owned()),
            "{}: {:?}",
            kind.name(),
            invocation.args
        );
        assert!(!invocation.args.iter().any(|a| a.starts_with("---")));
        let plain = kind.invocation("cli", "Fix it", &[]);
        assert!(plain.args.contains(&"Fix it".to_owned()), "{}", kind.name());
    }
    // On stdin a prompt is never an option: it goes as it is.
    let command = AdapterKind::Command.invocation("cli", "-v flag broken", &[]);
    assert_eq!(command.stdin.as_deref(), Some("-v flag broken"));
}
