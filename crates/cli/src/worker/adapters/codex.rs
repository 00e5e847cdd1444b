//! The Codex CLI: `codex exec --json PROMPT`.
//!
//! Its stdout is one thread event a line (`ThreadEvent` of `codex-rs/exec`):
//! `thread.started`, `turn.started`, `item.started`/`item.updated`/`item.completed` (an
//! agent message, reasoning, a command, file changes, an MCP tool call, a web search, a
//! to-do list, a non-fatal error), then `turn.completed` with the token usage, or
//! `turn.failed`; a top-level `error` reports a stream error (a retry notice when a
//! completed turn follows it).
//!
//! A turn's `usage` is the thread's running total, and its `input_tokens` include the
//! cached ones: each report is what the turn added, with the cached tokens apart. The
//! output names no model and no cost; the server prices the tokens by the model.

use std::collections::HashSet;

use serde_json::{Map, Value};

use super::json::{self, obj_at, str_at};
use super::log::{self, Ending, Paragraphs};
use super::{Invocation, Outcome, Output};

const TOOL: &str = "Codex";
const PROVIDER: &str = "openai";

/// `codex exec --json PROMPT [EXTRA…]`.
pub fn invocation(program: &str, prompt: &str, extra: &[String]) -> Invocation {
    Invocation::with_args(program, &["exec", "--json", prompt], extra)
}

/// Token totals of the thread so far.
#[derive(Debug, Default, Clone, Copy)]
struct Totals {
    input: i64,
    cached: i64,
    output: i64,
}

/// Reads one run of Codex.
#[derive(Debug)]
pub struct Reader {
    model: String,
    turns: u32,
    totals: Totals,
    /// Commands whose start was logged.
    started: HashSet<String>,
    last_message: Option<String>,
    /// A stream error no completed turn has followed yet.
    error: Option<String>,
    ending: Option<Ending>,
}

impl Reader {
    pub fn new(model: Option<&str>) -> Self {
        Self {
            model: model
                .and_then(json::name)
                .unwrap_or_else(|| "codex".to_owned()),
            turns: 0,
            totals: Totals::default(),
            started: HashSet::new(),
            last_message: None,
            error: None,
            ending: None,
        }
    }

    fn item(&mut self, event: &str, item: &Map<String, Value>, out: &mut Vec<Output>) {
        let id = str_at(item, "id").unwrap_or("").to_owned();
        match (event, str_at(item, "type")) {
            ("item.started", Some("command_execution")) => {
                let command = str_at(item, "command").unwrap_or("");
                out.push(log::stdout(&format!("$ {command}")));
                self.started.insert(id);
            }
            ("item.completed", Some("command_execution")) => {
                let command = str_at(item, "command").unwrap_or("");
                if !self.started.remove(&id) {
                    out.push(log::stdout(&format!("$ {command}")));
                }
                let status = str_at(item, "status").unwrap_or("");
                match item.get("exit_code").and_then(Value::as_i64) {
                    Some(0) => {}
                    Some(code) => out.push(log::stdout(&format!("exit code {code}"))),
                    None if status == "declined" => out.push(log::stdout("command declined")),
                    None if status == "failed" => out.push(log::stdout("command failed")),
                    None => {}
                }
            }
            ("item.completed", Some("agent_message")) => {
                let text = str_at(item, "text").unwrap_or("");
                Paragraphs::default().message(text, out);
                if !text.trim().is_empty() {
                    self.last_message = Some(text.to_owned());
                }
            }
            ("item.completed", Some("file_change")) => {
                let failed = str_at(item, "status") == Some("failed");
                let changes = item.get("changes").and_then(Value::as_array);
                for change in changes.into_iter().flatten() {
                    let kind = change
                        .get("kind")
                        .and_then(Value::as_str)
                        .unwrap_or("change");
                    let path = change.get("path").and_then(Value::as_str).unwrap_or("?");
                    let verdict = if failed { " (failed)" } else { "" };
                    out.push(log::stdout(&format!("file {kind}: {path}{verdict}")));
                }
            }
            ("item.completed", Some("mcp_tool_call")) => {
                let server = str_at(item, "server").unwrap_or("?");
                let tool = str_at(item, "tool").unwrap_or("?");
                let line = json::tool_line(&format!("{server}.{tool}"), item.get("arguments"));
                let error = obj_at(item, "error").and_then(|error| str_at(error, "message"));
                out.push(log::stdout(&match error {
                    Some(error) => format!("{line} failed: {error}"),
                    None => line,
                }));
            }
            ("item.completed", Some("web_search")) => {
                let query = str_at(item, "query").unwrap_or("");
                out.push(log::stdout(&format!("web search: {query}")));
            }
            ("item.completed", Some("error")) => {
                let message = str_at(item, "message").unwrap_or("");
                out.push(log::stdout(&format!("warning: {message}")));
            }
            // Reasoning, to-do lists, updates and items this adapter does not know.
            _ => {}
        }
    }

    fn turn_completed(&mut self, event: &Map<String, Value>, out: &mut Vec<Output>) {
        self.turns += 1;
        let usage = obj_at(event, "usage").cloned().unwrap_or_default();
        let now = Totals {
            input: json::tokens(usage.get("input_tokens")),
            cached: json::tokens(usage.get("cached_input_tokens")),
            output: json::tokens(usage.get("output_tokens")),
        };
        let before = std::mem::replace(&mut self.totals, now);
        let (input, cached) = (
            (now.input - before.input).max(0),
            (now.cached - before.cached).max(0),
        );
        let mut report = json::usage(&self.model, PROVIDER, format!("turn:{}", self.turns));
        report.input_tokens = (input - cached).max(0);
        report.cache_read_tokens = Some(cached);
        report.cache_write_tokens = Some(0);
        report.output_tokens = (now.output - before.output).max(0);
        out.push(log::system(&format!("turn {} completed", self.turns)));
        if !json::is_empty(&report) {
            out.push(Output::Usage(report));
        }
        // A stream error before a completed turn was one Codex recovered from.
        self.error = None;
        if self.ending.is_none() {
            self.ending = Some(Ending::Succeeded);
        }
    }
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
            Some("thread.started") => {
                let thread = str_at(&event, "thread_id").unwrap_or("?");
                out.push(log::system(&format!("{TOOL}: thread {thread}")));
            }
            Some(kind @ ("item.started" | "item.completed")) => {
                if let Some(item) = obj_at(&event, "item") {
                    self.item(kind, item, &mut out);
                }
            }
            Some("turn.completed") => self.turn_completed(&event, &mut out),
            Some("turn.failed") => {
                let message = obj_at(&event, "error")
                    .and_then(|error| str_at(error, "message"))
                    .unwrap_or("the turn failed");
                out.push(log::stdout(&format!("turn failed: {message}")));
                self.ending = Some(Ending::Failed(format!("{TOOL}: {message}")));
            }
            Some("error") => {
                let message = str_at(&event, "message").unwrap_or("an error");
                out.push(log::stdout(&format!("error: {message}")));
                self.error = Some(message.to_owned());
            }
            // `turn.started`, `item.updated`, plan deltas, input requests.
            _ => {}
        }
        out
    }

    fn finish(&mut self, exit_code: Option<i32>) -> Outcome {
        let ending = match (self.ending.clone(), self.error.take()) {
            (Some(Ending::Failed(why)), _) => Some(Ending::Failed(why)),
            (_, Some(error)) => Some(Ending::Failed(format!("{TOOL}: {error}"))),
            (ending, None) => ending,
        };
        log::outcome(
            TOOL,
            "a turn.completed or turn.failed event",
            ending,
            self.last_message.as_deref(),
            exit_code,
        )
    }
}

#[cfg(test)]
mod tests;
