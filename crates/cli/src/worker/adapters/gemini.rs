//! Gemini CLI: `gemini -p PROMPT --output-format stream-json`.
//!
//! Its stdout is one event a line (`JsonStreamEvent` of `packages/core/src/output`):
//! `init` (session, model), `message` (the user's prompt, then the assistant's text in
//! `delta` pieces), `tool_use`, `tool_result`, `error` (a warning or an error), and a
//! final `result` whose `stats` hold the token counts, per model in `models`. There,
//! `input_tokens` include the `cached` ones and `input` is the rest; no cost is given,
//! so the server prices the tokens by the model.

use muster_client::types::runs::UsageBody;
use serde_json::{Map, Value};

use super::json::{self, obj_at, str_at};
use super::log::{self, Ending, Paragraphs};
use super::{Invocation, Outcome, Output};

const TOOL: &str = "Gemini CLI";
const PROVIDER: &str = "google";

/// `gemini -p PROMPT --output-format stream-json [EXTRA…]`.
pub fn invocation(program: &str, prompt: &str, extra: &[String]) -> Invocation {
    Invocation::with_args(
        program,
        &["-p", prompt, "--output-format", "stream-json"],
        extra,
    )
}

/// Reads one run of the Gemini CLI.
#[derive(Debug)]
pub struct Reader {
    model_arg: Option<String>,
    init_model: Option<String>,
    text: Paragraphs,
    /// The assistant's text since the last tool call.
    segment: String,
    /// The last text before a tool call (the summary when none follows it).
    last_segment: String,
    last_error: Option<String>,
    ending: Option<Ending>,
}

impl Reader {
    pub fn new(model: Option<&str>) -> Self {
        Self {
            model_arg: model.and_then(json::name),
            init_model: None,
            text: Paragraphs::default(),
            segment: String::new(),
            last_segment: String::new(),
            last_error: None,
            ending: None,
        }
    }

    /// The assistant's text stops here (a tool call, an error, the end).
    fn end_text(&mut self, out: &mut Vec<Output>) {
        self.text.end(out);
        if !self.segment.trim().is_empty() {
            self.last_segment = std::mem::take(&mut self.segment);
        }
        self.segment.clear();
    }

    fn init(&mut self, event: &Map<String, Value>, out: &mut Vec<Output>) {
        self.init_model = str_at(event, "model").and_then(json::name);
        let session = str_at(event, "session_id");
        out.extend(log::session(TOOL, self.init_model.as_deref(), session));
    }

    fn message(&mut self, event: &Map<String, Value>, out: &mut Vec<Output>) {
        // The user's message is the prompt, already known.
        if str_at(event, "role") != Some("assistant") {
            return;
        }
        let content = str_at(event, "content").unwrap_or("");
        if event.get("delta").and_then(Value::as_bool) == Some(true) {
            self.text.push(content, out);
        } else {
            self.text.message(content, out);
        }
        self.segment.push_str(content);
    }

    fn result(&mut self, event: &Map<String, Value>, out: &mut Vec<Output>) {
        let status = str_at(event, "status").unwrap_or("?");
        out.push(log::system(&format!("finished: {status}")));
        self.ending = Some(if status == "success" {
            Ending::Succeeded
        } else {
            let error = obj_at(event, "error").and_then(|error| str_at(error, "message"));
            let why = error
                .or(self.last_error.as_deref())
                .unwrap_or("it reported an error without a message");
            Ending::Failed(format!("{TOOL}: {why}"))
        });
        if let Some(stats) = obj_at(event, "stats") {
            out.extend(self.usage(stats).into_iter().map(Output::Usage));
        }
    }

    /// One report per model of `stats.models`; without them, one of the totals under
    /// the run's model.
    fn usage(&self, stats: &Map<String, Value>) -> Vec<UsageBody> {
        let mut reports = Vec::new();
        if let Some(models) = obj_at(stats, "models").filter(|models| !models.is_empty()) {
            let mut models: Vec<(&String, &Value)> = models.iter().collect();
            models.sort_by_key(|(name, _)| *name);
            for (raw, counts) in models {
                if let (Some(model), Some(counts)) = (json::name(raw), counts.as_object()) {
                    reports.push(report(&model, counts));
                }
            }
        } else {
            let model = self
                .init_model
                .as_deref()
                .or(self.model_arg.as_deref())
                .unwrap_or("gemini");
            reports.push(report(model, stats));
        }
        reports.retain(|report| !json::is_empty(report));
        reports
    }
}

/// A report of `counts`: the stream's per-model stats, or the session metrics' shape
/// (counts under `tokens`, as `prompt` and `candidates`, with `thoughts` billed as
/// output).
fn report(model: &str, counts: &Map<String, Value>) -> UsageBody {
    let counts = obj_at(counts, "tokens").unwrap_or(counts);
    let prompt = json::tokens_of(counts, &["input_tokens", "prompt"]);
    let cached = json::tokens(counts.get("cached")).min(prompt);
    let input = match counts.get("input") {
        Some(input) => json::tokens(Some(input)),
        None => prompt - cached,
    };
    let output = json::tokens_of(counts, &["output_tokens", "candidates"])
        .saturating_add(json::tokens(counts.get("thoughts")))
        .min(json::MAX_TOKENS);
    let mut report = json::usage(model, PROVIDER, format!("result:{model}"));
    report.input_tokens = input;
    report.output_tokens = output;
    report.cache_read_tokens = Some(cached);
    report.cache_write_tokens = Some(0);
    report
}

impl super::Reader for Reader {
    fn stdout_line(&mut self, line: &str) -> Vec<Output> {
        if line.trim().is_empty() {
            return Vec::new();
        }
        let mut out = Vec::new();
        let Some(event) = json::object(line) else {
            self.end_text(&mut out);
            out.push(log::stdout(line));
            return out;
        };
        match str_at(&event, "type") {
            Some("init") => self.init(&event, &mut out),
            Some("message") => self.message(&event, &mut out),
            Some("tool_use") => {
                self.end_text(&mut out);
                let name = str_at(&event, "tool_name").unwrap_or("?");
                out.push(log::stdout(&json::tool_line(name, event.get("parameters"))));
            }
            Some("tool_result") => {
                self.end_text(&mut out);
                if str_at(&event, "status") == Some("error") {
                    let error = obj_at(&event, "error").and_then(|error| str_at(error, "message"));
                    let why = error
                        .or(str_at(&event, "output"))
                        .and_then(|text| json::first_line(text, 200));
                    out.push(log::stdout(&format!(
                        "tool failed: {}",
                        why.as_deref().unwrap_or("(no message)")
                    )));
                }
            }
            Some("error") => {
                self.end_text(&mut out);
                let message = str_at(&event, "message").unwrap_or("");
                if str_at(&event, "severity") == Some("warning") {
                    out.push(log::stdout(&format!("warning: {message}")));
                } else {
                    out.push(log::stdout(&format!("error: {message}")));
                    self.last_error = Some(message.to_owned());
                }
            }
            Some("result") => {
                self.end_text(&mut out);
                self.result(&event, &mut out);
            }
            _ => {}
        }
        out
    }

    fn finish(&mut self, exit_code: Option<i32>) -> Outcome {
        let mut rest = Vec::new();
        self.end_text(&mut rest);
        let ending = match (&self.ending, &self.last_error) {
            // Killed or cut short after an error: the error says why.
            (None, Some(error)) => Some(Ending::Failed(format!("{TOOL}: {error}"))),
            (ending, _) => ending.clone(),
        };
        let summary = (!self.last_segment.trim().is_empty()).then_some(self.last_segment.as_str());
        log::outcome(TOOL, "its result event", ending, summary, exit_code)
    }
}

#[cfg(test)]
mod tests;
