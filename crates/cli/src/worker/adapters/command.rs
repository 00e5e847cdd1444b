//! Any program: the prompt on its stdin, its stdout lines to the log, except the lines
//! `::muster-usage {json}` that report usage (the fields of a usage report, in
//! camelCase). Exit code 0 is success; the summary is its last line of output.

use serde::Deserialize;

use muster_client::types::runs::UsageBody;

use super::json;
use super::log::{self, Ending};
use super::{Invocation, Outcome, Output};

/// What starts a usage line.
pub const USAGE_PREFIX: &str = "::muster-usage";

/// The longest report id the API takes, in characters.
const MAX_REPORT_ID_CHARS: usize = 200;

/// `PROGRAM [EXTRA…]`, the prompt on stdin.
pub fn invocation(program: &str, prompt: &str, extra: &[String]) -> Invocation {
    Invocation {
        program: program.to_owned(),
        args: extra.to_vec(),
        stdin: Some(prompt.to_owned()),
    }
}

/// Reads one run of a program.
#[derive(Debug)]
pub struct Reader {
    model: Option<String>,
    last_line: Option<String>,
}

impl Reader {
    pub fn new(model: Option<&str>) -> Self {
        Self {
            model: model.and_then(json::name),
            last_line: None,
        }
    }

    fn usage(&self, json_text: &str) -> Output {
        match serde_json::from_str::<UsageLine>(json_text) {
            Ok(line) => match line.into_usage(self.model.as_deref()) {
                Ok(usage) => Output::Usage(usage),
                Err(why) => log::system(&format!("usage line ignored: {why}")),
            },
            Err(err) if err.is_data() => log::system(&format!("usage line ignored: {err}")),
            Err(err) => log::system(&format!("usage line ignored: not JSON ({err})")),
        }
    }
}

/// A `::muster-usage` line's JSON.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct UsageLine {
    model: Option<String>,
    provider: Option<String>,
    input_tokens: i64,
    output_tokens: i64,
    cache_read_tokens: Option<i64>,
    cache_write_tokens: Option<i64>,
    cost_microusd: Option<i64>,
    report_id: Option<String>,
}

impl UsageLine {
    /// The report, checked as the API checks it; `model` stands in for a missing one.
    fn into_usage(self, model: Option<&str>) -> Result<UsageBody, String> {
        let model = match self.model {
            Some(raw) => json::name(&raw).ok_or("model is empty")?,
            None => model.map(str::to_owned).ok_or("model is missing")?,
        };
        let provider = match self.provider {
            Some(raw) => Some(json::name(&raw).ok_or("provider is empty")?),
            None => None,
        };
        for (field, value) in [
            ("inputTokens", Some(self.input_tokens)),
            ("outputTokens", Some(self.output_tokens)),
            ("cacheReadTokens", self.cache_read_tokens),
            ("cacheWriteTokens", self.cache_write_tokens),
            ("costMicrousd", self.cost_microusd),
        ] {
            // Tokens and micro-dollars share the API's bound.
            if let Some(value) = value
                && !(0..=json::MAX_TOKENS).contains(&value)
            {
                return Err(format!("{field} must be from 0 to 1000000000000"));
            }
        }
        if let Some(id) = &self.report_id {
            if id.is_empty() || id.contains('\0') {
                return Err("reportId must be a non-empty text without NUL".to_owned());
            }
            if id.chars().count() > MAX_REPORT_ID_CHARS {
                return Err("reportId is longer than 200 characters".to_owned());
            }
        }
        Ok(UsageBody {
            model,
            provider,
            input_tokens: self.input_tokens,
            output_tokens: self.output_tokens,
            cache_read_tokens: self.cache_read_tokens,
            cache_write_tokens: self.cache_write_tokens,
            cost_microusd: self.cost_microusd,
            report_id: self.report_id,
        })
    }
}

impl super::Reader for Reader {
    fn stdout_line(&mut self, line: &str) -> Vec<Output> {
        if let Some(rest) = line.strip_prefix(USAGE_PREFIX)
            && (rest.is_empty() || rest.starts_with(char::is_whitespace) || rest.starts_with('{'))
        {
            return vec![self.usage(rest.trim())];
        }
        if !line.trim().is_empty() {
            self.last_line = Some(line.to_owned());
        }
        vec![log::stdout(line)]
    }

    fn finish(&mut self, exit_code: Option<i32>) -> Outcome {
        let ending = match exit_code {
            Some(0) => Ending::Succeeded,
            Some(code) => Ending::Failed(format!("the program exited with code {code}")),
            None => Ending::Failed("the program was killed by a signal".to_owned()),
        };
        log::outcome(
            "the program",
            "",
            Some(ending),
            self.last_line.as_deref(),
            exit_code,
        )
    }
}

#[cfg(test)]
mod tests;
