//! Reading the JSON the agent CLIs print: lenient about shapes (a field of the wrong
//! type reads as absent), strict about what reaches the API (token counts and costs in
//! range, names within their limits).

use muster_client::types::runs::UsageBody;
use serde_json::{Map, Value};

/// The most tokens one report may carry (the API's limit).
pub const MAX_TOKENS: i64 = 1_000_000_000_000;

/// The highest cost one report may carry, in millionths of a US dollar (the API's limit).
const MAX_COST_MICROUSD: i64 = 1_000_000_000_000;

/// The longest model or provider name the API takes, in characters.
const MAX_NAME_CHARS: usize = 100;

/// The longest tool detail shown after a tool's name, in characters.
const MAX_DETAIL_CHARS: usize = 120;

/// One line of JSON output as an object; `None` when it is not JSON, or JSON that is not
/// an object (either is logged as plain text).
pub fn object(line: &str) -> Option<Map<String, Value>> {
    match serde_json::from_str(line) {
        Ok(Value::Object(map)) => Some(map),
        _ => None,
    }
}

/// The string at `key`, if there is one.
pub fn str_at<'a>(map: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    map.get(key).and_then(Value::as_str)
}

/// The object at `key`, if there is one.
pub fn obj_at<'a>(map: &'a Map<String, Value>, key: &str) -> Option<&'a Map<String, Value>> {
    map.get(key).and_then(Value::as_object)
}

/// A token count: a non-negative number (rounded), at most [`MAX_TOKENS`]; anything
/// else counts as none.
pub fn tokens(value: Option<&Value>) -> i64 {
    match value {
        Some(Value::Number(number)) => {
            if let Some(n) = number.as_i64() {
                n.clamp(0, MAX_TOKENS)
            } else if number.as_u64().is_some() {
                MAX_TOKENS
            } else {
                number.as_f64().map_or(0, |f| round_clamped(f, MAX_TOKENS))
            }
        }
        _ => 0,
    }
}

/// The first of `keys` that holds a token count (`input_tokens` or its older `prompt`).
pub fn tokens_of(map: &Map<String, Value>, keys: &[&str]) -> i64 {
    tokens(keys.iter().find_map(|key| map.get(*key)))
}

/// A cost in US dollars as millionths of a dollar, rounded; `None` when it is absent,
/// negative or not a number (the server then prices the tokens itself).
pub fn cost_microusd(value: Option<&Value>) -> Option<i64> {
    let usd = value?.as_f64()?;
    (usd.is_finite() && usd >= 0.0).then(|| round_clamped(usd * 1_000_000.0, MAX_COST_MICROUSD))
}

fn round_clamped(value: f64, max: i64) -> i64 {
    if !value.is_finite() || value <= 0.0 {
        return 0;
    }
    // Clamped below `max` (< 2^53) first, so the cast is exact.
    #[allow(clippy::cast_possible_truncation, clippy::cast_precision_loss)]
    let rounded = value.round().min(max as f64) as i64;
    rounded
}

/// A model or provider name the API takes: without NULs, trimmed, at most 100
/// characters; `None` when nothing is left.
pub fn name(raw: &str) -> Option<String> {
    let clean: String = raw.chars().filter(|c| *c != '\0').collect();
    let trimmed: String = clean.trim().chars().take(MAX_NAME_CHARS).collect();
    let trimmed = trimmed.trim_end();
    (!trimmed.is_empty()).then(|| trimmed.to_owned())
}

/// A usage report with no cost: the server prices its tokens by the model.
pub fn usage(model: &str, provider: &str, report_id: String) -> UsageBody {
    UsageBody {
        model: name(model).unwrap_or_else(|| provider.to_owned()),
        provider: Some(provider.to_owned()),
        input_tokens: 0,
        output_tokens: 0,
        cache_read_tokens: None,
        cache_write_tokens: None,
        cost_microusd: None,
        report_id: Some(report_id),
    }
}

/// Whether a report says nothing (no tokens, no cost): not worth sending.
pub fn is_empty(usage: &UsageBody) -> bool {
    usage.input_tokens == 0
        && usage.output_tokens == 0
        && usage.cache_read_tokens.unwrap_or(0) == 0
        && usage.cache_write_tokens.unwrap_or(0) == 0
        && usage.cost_microusd.unwrap_or(0) == 0
}

/// The first line of `text`, trimmed and shortened to `max` characters (with `…`).
pub fn first_line(text: &str, max: usize) -> Option<String> {
    let line = text.lines().map(str::trim).find(|line| !line.is_empty())?;
    let mut short: String = line.chars().take(max).collect();
    if line.chars().nth(max).is_some() {
        short.push('…');
    }
    Some(short)
}

/// The text of a tool result's content: a string, or the text of its blocks.
pub fn content_text(content: &Value) -> String {
    match content {
        Value::String(text) => text.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|block| block.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// A tool use as a short log line: `tool: NAME (what it was given)`, the detail taken
/// from the argument that says the most in few words (a command, a path, a pattern).
pub fn tool_line(tool: &str, input: Option<&Value>) -> String {
    const KEYS: [&str; 9] = [
        "command",
        "file_path",
        "absolute_path",
        "path",
        "dir_path",
        "pattern",
        "url",
        "query",
        "description",
    ];
    let detail = input.and_then(Value::as_object).and_then(|args| {
        KEYS.iter()
            .find_map(|key| args.get(*key).and_then(Value::as_str))
            .and_then(|text| first_line(text, MAX_DETAIL_CHARS))
    });
    match detail {
        Some(detail) => format!("tool: {tool} ({detail})"),
        None => format!("tool: {tool}"),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn token_counts_are_whole_non_negative_and_bounded() {
        assert_eq!(tokens(Some(&json!(42))), 42);
        assert_eq!(tokens(Some(&json!(-5))), 0);
        assert_eq!(tokens(Some(&json!(12.6))), 13);
        assert_eq!(tokens(Some(&json!(u64::MAX))), MAX_TOKENS);
        assert_eq!(tokens(Some(&json!(1e300))), MAX_TOKENS);
        assert_eq!(tokens(Some(&json!("12"))), 0);
        assert_eq!(tokens(None), 0);
    }

    #[test]
    fn costs_are_rounded_to_millionths_of_a_dollar() {
        assert_eq!(cost_microusd(Some(&json!(0.079_948_2))), Some(79_948));
        assert_eq!(cost_microusd(Some(&json!(0.000_000_5))), Some(1));
        assert_eq!(cost_microusd(Some(&json!(0))), Some(0));
        assert_eq!(cost_microusd(Some(&json!(-1.0))), None);
        assert_eq!(cost_microusd(Some(&json!(1e30))), Some(MAX_COST_MICROUSD));
        assert_eq!(cost_microusd(Some(&json!("0.1"))), None);
        assert_eq!(cost_microusd(None), None);
    }

    #[test]
    fn names_are_cleaned_and_bounded() {
        assert_eq!(name("  gpt-5 \0"), Some("gpt-5".to_owned()));
        assert_eq!(name(" \0 "), None);
        assert_eq!(name(&"m".repeat(150)).map(|n| n.len()), Some(100));
    }

    #[test]
    fn tool_lines_name_the_tool_and_what_it_was_given() {
        let bash = json!({"command": "cargo test\n  --all", "description": "Run tests"});
        assert_eq!(tool_line("Bash", Some(&bash)), "tool: Bash (cargo test)");
        assert_eq!(
            tool_line("TodoWrite", Some(&json!({"todos": []}))),
            "tool: TodoWrite"
        );
        assert_eq!(tool_line("x", None), "tool: x");
        let long = json!({"pattern": "a".repeat(200)});
        assert_eq!(
            tool_line("Grep", Some(&long)),
            format!("tool: Grep ({}…)", "a".repeat(120))
        );
    }

    #[test]
    fn only_objects_are_events() {
        assert!(object(r#"{"type":"x"}"#).is_some());
        assert!(object("[1,2]").is_none());
        assert!(object("{\"type\":").is_none());
        assert!(object("plain text").is_none());
    }
}
