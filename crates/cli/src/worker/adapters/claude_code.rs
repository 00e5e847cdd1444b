//! Claude Code: `claude -p PROMPT --output-format stream-json --verbose`.
//!
//! Its stdout is one JSON message a line (the Agent SDK's message types): a
//! `system`/`init` line naming the model, `assistant` lines (text, tool uses), `user`
//! lines (tool results), and a final `result` line with the answer, the outcome and the
//! whole run's usage: per model in `modelUsage` (tokens and `costUSD`), else in `usage`
//! and `total_cost_usd`. Only the result is reported: the per-message usage of the
//! assistant lines is already in it.

use muster_client::types::runs::UsageBody;
use serde_json::{Map, Value};

use super::json::{self, obj_at, str_at};
use super::log::{self, Ending, Paragraphs};
use super::{Invocation, Outcome, Output};

const TOOL: &str = "Claude Code";
const PROVIDER: &str = "anthropic";

/// `claude -p PROMPT --output-format stream-json --verbose [EXTRA…]`.
pub fn invocation(program: &str, prompt: &str, extra: &[String]) -> Invocation {
    Invocation::with_args(
        program,
        &["-p", prompt, "--output-format", "stream-json", "--verbose"],
        extra,
    )
}

/// Reads one run of Claude Code.
#[derive(Debug)]
pub struct Reader {
    /// The `--model` of the worker's arguments.
    model_arg: Option<String>,
    /// The model the init line names.
    init_model: Option<String>,
    /// The last text an assistant message said (the summary when the result has none).
    last_text: Option<String>,
    ending: Option<Ending>,
    summary: Option<String>,
}

impl Reader {
    pub fn new(model: Option<&str>) -> Self {
        Self {
            model_arg: model.and_then(json::name),
            init_model: None,
            last_text: None,
            ending: None,
            summary: None,
        }
    }

    fn init(&mut self, event: &Map<String, Value>, out: &mut Vec<Output>) {
        self.init_model = str_at(event, "model").and_then(json::name);
        let session = str_at(event, "session_id");
        out.extend(log::session(TOOL, self.init_model.as_deref(), session));
    }

    fn assistant(&mut self, event: &Map<String, Value>, out: &mut Vec<Output>) {
        let blocks = obj_at(event, "message")
            .and_then(|message| message.get("content"))
            .and_then(Value::as_array);
        for block in blocks.into_iter().flatten() {
            match block.get("type").and_then(Value::as_str) {
                Some("text") => {
                    let text = block.get("text").and_then(Value::as_str).unwrap_or("");
                    Paragraphs::default().message(text, out);
                    if !text.trim().is_empty() {
                        self.last_text = Some(text.to_owned());
                    }
                }
                Some("tool_use" | "server_tool_use" | "mcp_tool_use") => {
                    let name = block.get("name").and_then(Value::as_str).unwrap_or("?");
                    out.push(log::stdout(&json::tool_line(name, block.get("input"))));
                }
                // Thinking stays private; unknown blocks are skipped.
                _ => {}
            }
        }
    }

    /// A tool result that failed is worth a line; a successful one is the tool's
    /// business (it can be huge).
    fn user(event: &Map<String, Value>, out: &mut Vec<Output>) {
        let blocks = obj_at(event, "message")
            .and_then(|message| message.get("content"))
            .and_then(Value::as_array);
        for block in blocks.into_iter().flatten() {
            let failed = block.get("type").and_then(Value::as_str) == Some("tool_result")
                && block.get("is_error").and_then(Value::as_bool) == Some(true);
            if failed {
                let text = block.get("content").map(json::content_text);
                let why = text.as_deref().and_then(|text| json::first_line(text, 200));
                out.push(log::stdout(&format!(
                    "tool failed: {}",
                    why.as_deref().unwrap_or("(no message)")
                )));
            }
        }
    }

    fn result(&mut self, event: &Map<String, Value>, out: &mut Vec<Output>) {
        let subtype = str_at(event, "subtype").unwrap_or("");
        let is_error = event.get("is_error").and_then(Value::as_bool) == Some(true);
        let text = str_at(event, "result").filter(|text| !text.trim().is_empty());
        let mut finished = vec![format!(
            "finished: {}",
            if subtype.is_empty() { "?" } else { subtype }
        )];
        match event.get("num_turns").and_then(Value::as_u64) {
            Some(1) => finished.push("1 turn".to_owned()),
            Some(turns) => finished.push(format!("{turns} turns")),
            None => {}
        }
        if let Some(cost) = event.get("total_cost_usd").and_then(Value::as_f64) {
            finished.push(format!("${cost:.4}"));
        }
        out.push(log::system(&finished.join(", ")));

        self.ending = Some(if subtype == "success" && !is_error {
            Ending::Succeeded
        } else {
            Ending::Failed(failure(subtype, text, event.get("errors")))
        });
        self.summary = text.map(str::to_owned);
        out.extend(self.usage(event).into_iter().map(Output::Usage));
    }

    /// One report per model of `modelUsage`; without it, one of the totals under the
    /// run's model.
    fn usage(&self, event: &Map<String, Value>) -> Vec<UsageBody> {
        let per_model = obj_at(event, "modelUsage").filter(|models| !models.is_empty());
        let mut reports = Vec::new();
        if let Some(models) = per_model {
            let mut models: Vec<(&String, &Value)> = models.iter().collect();
            models.sort_by_key(|(name, _)| *name);
            for (raw, counts) in models {
                let (Some(model), Some(counts)) = (json::name(raw), counts.as_object()) else {
                    continue;
                };
                let mut report = json::usage(&model, PROVIDER, format!("result:{model}"));
                report.input_tokens = json::tokens(counts.get("inputTokens"));
                report.output_tokens = json::tokens(counts.get("outputTokens"));
                report.cache_read_tokens = Some(json::tokens(counts.get("cacheReadInputTokens")));
                report.cache_write_tokens =
                    Some(json::tokens(counts.get("cacheCreationInputTokens")));
                report.cost_microusd = json::cost_microusd(counts.get("costUSD"));
                reports.push(report);
            }
        } else {
            let model = self
                .init_model
                .as_deref()
                .or(self.model_arg.as_deref())
                .unwrap_or("claude");
            let counts = obj_at(event, "usage").cloned().unwrap_or_default();
            let mut report = json::usage(model, PROVIDER, format!("result:{model}"));
            report.input_tokens = json::tokens(counts.get("input_tokens"));
            report.output_tokens = json::tokens(counts.get("output_tokens"));
            report.cache_read_tokens = Some(json::tokens(counts.get("cache_read_input_tokens")));
            report.cache_write_tokens =
                Some(json::tokens(counts.get("cache_creation_input_tokens")));
            report.cost_microusd = json::cost_microusd(event.get("total_cost_usd"));
            reports.push(report);
        }
        reports.retain(|report| !json::is_empty(report));
        reports
    }
}

/// Why a result that is not a success failed, in words.
fn failure(subtype: &str, text: Option<&str>, errors: Option<&Value>) -> String {
    let errors: Vec<&str> = errors
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .filter(|error| !error.trim().is_empty())
        .collect();
    let what = match subtype {
        // An API error ends as a "success" whose `is_error` is set and whose result
        // is the error.
        "success" => {
            return format!(
                "{TOOL} failed: {}",
                text.unwrap_or("an error it did not describe")
            );
        }
        "error_max_turns" => "reached its maximum number of turns",
        "error_max_budget_usd" => "reached its maximum budget",
        "error_during_execution" => "failed during execution",
        "error_max_structured_output_retries" => "could not produce valid structured output",
        _ => "ended with an error",
    };
    let mut why = format!(
        "{TOOL} {what} ({})",
        if subtype.is_empty() {
            "no subtype"
        } else {
            subtype
        }
    );
    if !errors.is_empty() {
        why.push_str(": ");
        why.push_str(&errors.join("; "));
    }
    why
}

impl super::Reader for Reader {
    fn stdout_line(&mut self, line: &str) -> Vec<Output> {
        if line.trim().is_empty() {
            return Vec::new();
        }
        let Some(event) = json::object(line) else {
            return vec![log::stdout(line)];
        };
        let mut out = Vec::new();
        match str_at(&event, "type") {
            Some("system") if str_at(&event, "subtype") == Some("init") => {
                self.init(&event, &mut out);
            }
            Some("assistant") => self.assistant(&event, &mut out),
            Some("user") => Self::user(&event, &mut out),
            Some("result") => self.result(&event, &mut out),
            // Other system lines (hooks, retries, compaction) and stream events.
            _ => {}
        }
        out
    }

    fn finish(&mut self, exit_code: Option<i32>) -> Outcome {
        let summary = self.summary.as_deref().or(self.last_text.as_deref());
        log::outcome(
            TOOL,
            "its result line",
            self.ending.clone(),
            summary,
            exit_code,
        )
    }
}

#[cfg(test)]
mod tests;
