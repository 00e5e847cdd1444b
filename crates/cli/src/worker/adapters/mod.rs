//! The agent CLIs the worker runs: how each is started, and how its machine-readable
//! output becomes log lines, usage reports and an outcome.
//!
//! An adapter never talks to the server: it turns the program's lines into
//! [`Output`]s, and the worker sends them (log batches, usage reports) and finishes the
//! run with the [`Outcome`].

mod claude_code;
mod codex;
mod command;
mod gemini;
mod json;
mod log;
#[cfg(test)]
mod tests;

use muster_client::types::runs::UsageBody;

/// Which CLI a worker runs (`--adapter`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum AdapterKind {
    /// Claude Code: `claude -p PROMPT --output-format stream-json --verbose`.
    ClaudeCode,
    /// Codex CLI: `codex exec --json PROMPT`.
    Codex,
    /// Gemini CLI: `gemini -p PROMPT --output-format stream-json`.
    Gemini,
    /// Any program: the prompt on stdin, `::muster-usage {json}` lines report usage.
    Command,
}

impl AdapterKind {
    /// The name a run records as its `adapter`.
    pub fn name(self) -> &'static str {
        match self {
            Self::ClaudeCode => "claude-code",
            Self::Codex => "codex",
            Self::Gemini => "gemini",
            Self::Command => "command",
        }
    }

    /// The program run when `--command` is not given (`None`: `--command` is required).
    pub fn default_program(self) -> Option<&'static str> {
        match self {
            Self::ClaudeCode => Some("claude"),
            Self::Codex => Some("codex"),
            Self::Gemini => Some("gemini"),
            Self::Command => None,
        }
    }

    /// How to start the program for one task: `program` from `--command` (or the
    /// default), `prompt` the rendered prompt, `extra` the worker's trailing arguments.
    pub fn invocation(self, program: &str, prompt: &str, extra: &[String]) -> Invocation {
        let argument = as_argument(prompt);
        match self {
            Self::ClaudeCode => claude_code::invocation(program, &argument, extra),
            Self::Codex => codex::invocation(program, &argument, extra),
            Self::Gemini => gemini::invocation(program, &argument, extra),
            Self::Command => command::invocation(program, prompt, extra),
        }
    }

    /// A fresh reader of one run's output. `model` is the model named in the trailing
    /// arguments (`--model X` / `-m X`), if any: the name usage is reported under when
    /// the output does not say.
    pub fn reader(self, model: Option<&str>) -> Box<dyn Reader> {
        match self {
            Self::ClaudeCode => Box::new(claude_code::Reader::new(model)),
            Self::Codex => Box::new(codex::Reader::new(model)),
            Self::Gemini => Box::new(gemini::Reader::new(model)),
            Self::Command => Box::new(command::Reader::new(model)),
        }
    }
}

/// How to start the program.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invocation {
    /// The program (a name looked up on `PATH`, or a path).
    pub program: String,
    /// Its arguments, the worker's trailing ones included.
    pub args: Vec<String>,
    /// What to write to its stdin before closing it (`None`: stdin is empty).
    pub stdin: Option<String>,
}

/// The prompt as a command-line argument: one that starts with `-` (a template opening
/// with `---` front matter, a title like "-v flag broken") would be read by the CLI as
/// an option, so it gets a leading newline, which no model minds.
fn as_argument(prompt: &str) -> std::borrow::Cow<'_, str> {
    if prompt.starts_with('-') {
        std::borrow::Cow::Owned(format!("\n{prompt}"))
    } else {
        std::borrow::Cow::Borrowed(prompt)
    }
}

impl Invocation {
    /// `program` with the adapter's own arguments, then the worker's trailing `extra`
    /// ones, and nothing on stdin.
    fn with_args(program: &str, own: &[&str], extra: &[String]) -> Self {
        let args = own
            .iter()
            .map(|a| (*a).to_owned())
            .chain(extra.iter().cloned())
            .collect();
        Self {
            program: program.to_owned(),
            args,
            stdin: None,
        }
    }
}

/// The stream a log line came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    Stdout,
    Stderr,
    /// Written by the worker (or an adapter's reading of the output), not the program.
    System,
}

impl Stream {
    /// The name the log route takes.
    pub fn name(self) -> &'static str {
        match self {
            Self::Stdout => "stdout",
            Self::Stderr => "stderr",
            Self::System => "system",
        }
    }
}

/// What one line of the program's output means.
#[derive(Debug, PartialEq)]
pub enum Output {
    /// A line for the run's log.
    Log { stream: Stream, text: String },
    /// Tokens used (and their cost when the program says). `report_id` is set by the
    /// adapter when the output gives a stable id; the worker adds one otherwise.
    Usage(UsageBody),
}

/// How the program ended, as its output and exit status tell.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// Whether the task's work succeeded.
    pub succeeded: bool,
    /// What to post as the result: the program's final answer or last message.
    pub summary: Option<String>,
    /// Why it failed, when it did (the program's error, or what was missing).
    pub failure: Option<String>,
}

/// Reads one run's output, line by line.
pub trait Reader: Send {
    /// One line of stdout (without its line ending).
    fn stdout_line(&mut self, line: &str) -> Vec<Output>;

    /// One line of stderr: logged as it is (a very long one cut, with a marker).
    fn stderr_line(&mut self, line: &str) -> Vec<Output> {
        vec![log::line(Stream::Stderr, line)]
    }

    /// The program exited with `exit_code` (`None`: killed by a signal): the outcome.
    /// Output that never said how the work ended (a truncated stream) is a failure
    /// saying so, whatever the exit code.
    fn finish(&mut self, exit_code: Option<i32>) -> Outcome;
}
