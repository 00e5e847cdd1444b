//! What the adapters write to a run's log and result: lines a person reads (bounded,
//! paragraphs kept), and the outcome the output and the exit status tell together.

use super::{Outcome, Output, Stream};

/// The longest log line kept whole, in bytes; a longer one is cut, with a marker.
pub const MAX_LINE_BYTES: usize = 8 * 1024;

/// The longest summary or failure the API takes, in characters.
const MAX_SUMMARY_CHARS: usize = 10_000;

/// A log line of `stream`: without NULs (the API refuses them), cut at
/// [`MAX_LINE_BYTES`] with a marker saying how much was left out.
pub fn line(stream: Stream, text: &str) -> Output {
    let mut text = text.replace('\0', "\u{fffd}");
    if text.len() > MAX_LINE_BYTES {
        let mut end = MAX_LINE_BYTES;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        let marker = format!(" …[{} more bytes]", text.len() - end);
        text.truncate(end);
        text.push_str(&marker);
    }
    Output::Log { stream, text }
}

/// A line of the program's own output.
pub fn stdout(text: &str) -> Output {
    line(Stream::Stdout, text)
}

/// A line the adapter writes about the output.
pub fn system(text: &str) -> Output {
    line(Stream::System, text)
}

/// The line a run starts with: `TOOL: model M, session S` (what the output names).
pub fn session(tool: &str, model: Option<&str>, session: Option<&str>) -> Option<Output> {
    let about: Vec<String> = [("model", model), ("session", session)]
        .into_iter()
        .filter_map(|(what, name)| name.map(|name| format!("{what} {name}")))
        .collect();
    (!about.is_empty()).then(|| system(&format!("{tool}: {}", about.join(", "))))
}

/// A summary or failure the API takes: trimmed, without NULs, at most 10,000
/// characters (cut with `…`); `None` when nothing is left.
pub fn summary(text: &str) -> Option<String> {
    let text = text.trim().replace('\0', "\u{fffd}");
    if text.is_empty() {
        return None;
    }
    if text.chars().nth(MAX_SUMMARY_CHARS).is_none() {
        return Some(text);
    }
    let mut short: String = text.chars().take(MAX_SUMMARY_CHARS - 1).collect();
    short.push('…');
    Some(short)
}

/// A message's text, whole or in pieces, as stdout lines: one per line of text, without
/// the blank lines it starts or ends with, and a run of blank lines kept as one (so
/// paragraphs stay apart).
#[derive(Debug, Default)]
pub struct Paragraphs {
    partial: String,
    started: bool,
    blank: bool,
}

impl Paragraphs {
    /// More text of the current message; complete lines go to `out`.
    pub fn push(&mut self, text: &str, out: &mut Vec<Output>) {
        self.partial.push_str(text);
        while let Some(end) = self.partial.find('\n') {
            let rest = self.partial.split_off(end + 1);
            let done = std::mem::replace(&mut self.partial, rest);
            self.line(done.trim_end_matches(['\n', '\r']), out);
        }
        // Text that never ends its line is logged in pieces rather than held forever.
        if self.partial.len() > MAX_LINE_BYTES {
            let done = std::mem::take(&mut self.partial);
            self.line(&done, out);
        }
    }

    /// The message is over: its last line goes to `out`, and the next text starts a new
    /// message.
    pub fn end(&mut self, out: &mut Vec<Output>) {
        let done = std::mem::take(&mut self.partial);
        self.line(&done, out);
        *self = Self::default();
    }

    /// A whole message.
    pub fn message(&mut self, text: &str, out: &mut Vec<Output>) {
        self.end(out);
        self.push(text, out);
        self.end(out);
    }

    fn line(&mut self, text: &str, out: &mut Vec<Output>) {
        if text.trim().is_empty() {
            self.blank = self.started;
            return;
        }
        if std::mem::take(&mut self.blank) {
            out.push(stdout(""));
        }
        self.started = true;
        out.push(stdout(text));
    }
}

/// What the output said about how the work ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ending {
    /// It said the work succeeded.
    Succeeded,
    /// It said the work failed, and why.
    Failed(String),
}

/// "exit code N", or how the program ended without one.
pub fn exit_status(exit_code: Option<i32>) -> String {
    match exit_code {
        Some(code) => format!("exit code {code}"),
        None => "killed by a signal".to_owned(),
    }
}

/// The outcome of a run of `tool` whose output told `ending` (`None`: it ended before
/// saying, and `awaited` names what never came), given how the program exited. A
/// non-zero exit or a kill fails the run whatever the output said.
pub fn outcome(
    tool: &str,
    awaited: &str,
    ending: Option<Ending>,
    summary_text: Option<&str>,
    exit_code: Option<i32>,
) -> Outcome {
    let failure = match (ending, exit_code) {
        (Some(Ending::Succeeded), Some(0)) => None,
        (Some(Ending::Succeeded), Some(code)) => Some(format!(
            "{tool} reported success but exited with code {code}"
        )),
        (Some(Ending::Succeeded), None) => Some(format!(
            "{tool} reported success but was killed by a signal"
        )),
        (Some(Ending::Failed(why)), _) => Some(why),
        (None, exit_code) => Some(format!(
            "{tool}'s output ended early, without {awaited} ({})",
            exit_status(exit_code)
        )),
    };
    Outcome {
        succeeded: failure.is_none(),
        summary: summary_text.and_then(summary),
        failure: failure.as_deref().and_then(summary),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(out: &[Output]) -> Vec<&str> {
        out.iter()
            .map(|output| match output {
                Output::Log { text, .. } => text.as_str(),
                Output::Usage(_) => "<usage>",
            })
            .collect()
    }

    #[test]
    fn long_lines_are_cut_with_a_marker_and_nuls_replaced() {
        let Output::Log { text, .. } = stdout(&"é".repeat(5000)) else {
            panic!("a log line");
        };
        assert!(text.starts_with(&"é".repeat(4096)));
        assert!(text.ends_with(" …[1808 more bytes]"), "{text}");
        assert_eq!(stdout("a\0b"), stdout("a\u{fffd}b"));
    }

    #[test]
    fn paragraphs_keep_one_blank_line_between_them() {
        let (mut text, mut out) = (Paragraphs::default(), Vec::new());
        text.push("\n\nFirst li", &mut out);
        text.push("ne.\n\n\n\nSecond", &mut out);
        text.push(" paragraph.\n", &mut out);
        text.end(&mut out);
        text.message("Another message.\n\n", &mut out);
        assert_eq!(
            texts(&out),
            ["First line.", "", "Second paragraph.", "Another message."]
        );
    }

    #[test]
    fn summaries_are_trimmed_and_bounded() {
        assert_eq!(summary("  done \n"), Some("done".to_owned()));
        assert_eq!(summary(" \n "), None);
        let long = summary(&"x".repeat(20_000)).unwrap();
        assert_eq!(long.chars().count(), 10_000);
        assert!(long.ends_with('…'));
    }

    #[test]
    fn the_exit_status_has_the_last_word_over_a_success() {
        let ok = outcome(
            "X",
            "its result",
            Some(Ending::Succeeded),
            Some("hi"),
            Some(0),
        );
        assert!(ok.succeeded && ok.failure.is_none());
        let bad = outcome("X", "its result", Some(Ending::Succeeded), None, Some(2));
        assert_eq!(
            bad.failure.as_deref(),
            Some("X reported success but exited with code 2")
        );
        let cut = outcome("X", "its result", None, None, None);
        assert_eq!(
            cut.failure.as_deref(),
            Some("X's output ended early, without its result (killed by a signal)")
        );
    }
}
