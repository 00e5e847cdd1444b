//! The two text formats `GET /metrics` answers in, chosen by the scraper's `Accept`:
//! `OpenMetrics` 1.0.0 when it asks for it (Prometheus does by default), the Prometheus
//! text format 0.0.4 otherwise (curl, older scrapers, `promtool check metrics`).
//!
//! `prometheus_client` writes `OpenMetrics` only; the text format is derived from it.
//! They differ in the metadata lines only: `OpenMetrics` names a counter family without
//! its `_total` suffix and ends with `# EOF`, the text format names the family as its
//! samples are named and has no `# EOF` (nor `# UNIT`). Samples are written alike
//! (label values are escaped the same way in both).

use std::collections::HashMap;

/// An exposition format of the metrics.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exposition {
    /// `application/openmetrics-text; version=1.0.0`.
    OpenMetrics,
    /// The Prometheus text format, `text/plain; version=0.0.4`.
    Text,
}

impl Exposition {
    /// The format a scraper sending `accept` gets: the acceptable one with the highest
    /// weight (the first listed on a tie); the text format when it names neither.
    pub fn negotiate(accept: Option<&str>) -> Self {
        let mut best: Option<(u16, Self)> = None;
        for range in accept.unwrap_or_default().split(',') {
            let mut parts = range.split(';').map(str::trim);
            let media = parts.next().unwrap_or_default().to_ascii_lowercase();
            let mut weight = 1000;
            let mut version = None;
            for (name, value) in parts.filter_map(|p| p.split_once('=')) {
                let value = value.trim().trim_matches('"');
                match name.trim().to_ascii_lowercase().as_str() {
                    "q" => weight = quality(value),
                    "version" => version = Some(value.to_owned()),
                    _ => {}
                }
            }
            let format = match media.as_str() {
                // 0.0.1 is the draft Prometheus still lists; 1.0.0 reads the same.
                "application/openmetrics-text"
                    if matches!(version.as_deref(), None | Some("1.0.0" | "0.0.1")) =>
                {
                    Self::OpenMetrics
                }
                "text/plain" | "text/*" | "*/*" => Self::Text,
                _ => continue,
            };
            if weight > 0 && best.is_none_or(|(top, _)| weight > top) {
                best = Some((weight, format));
            }
        }
        best.map_or(Self::Text, |(_, format)| format)
    }

    /// The `Content-Type` of an answer in this format.
    pub fn content_type(self) -> &'static str {
        match self {
            Self::OpenMetrics => "application/openmetrics-text; version=1.0.0; charset=utf-8",
            Self::Text => "text/plain; version=0.0.4; charset=utf-8",
        }
    }
}

/// An `Accept` weight (`q`, 0 to 1 with up to three decimals) in thousandths; one that
/// cannot be read counts as 0 (not acceptable).
fn quality(value: &str) -> u16 {
    match value.parse::<f32>() {
        // In 0..=1000 after the clamp, so the cast neither truncates nor wraps.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        Ok(q) if q.is_finite() => (q.clamp(0.0, 1.0) * 1000.0).round() as u16,
        _ => 0,
    }
}

/// The samples that may carry an exemplar: the request latency buckets.
const EXEMPLARY: &str = "muster_http_request_duration_seconds_bucket{";

/// The Prometheus text format 0.0.4 of an `OpenMetrics` exposition written by
/// `prometheus_client`: counter families named with `_total` (as their samples are),
/// `info` families as gauges named with `_info`, `unknown` as `untyped`, and no `# UNIT`
/// or `# EOF` line.
pub(super) fn to_text_format(open_metrics: &str) -> String {
    // Family name -> (name in the text format, type in the text format).
    let mut families: HashMap<&str, (String, &str)> = HashMap::new();
    for line in open_metrics.lines() {
        if let Some((name, kind)) = line
            .strip_prefix("# TYPE ")
            .and_then(|rest| rest.split_once(' '))
        {
            let renamed = match kind {
                "counter" => (format!("{name}_total"), "counter"),
                "info" => (format!("{name}_info"), "gauge"),
                "gauge" | "histogram" | "summary" => (name.to_owned(), kind),
                _ => (name.to_owned(), "untyped"),
            };
            families.insert(name, renamed);
        }
    }
    let mut text = String::with_capacity(open_metrics.len());
    for line in open_metrics.lines() {
        if line == "# EOF" || line.starts_with("# UNIT ") {
            continue;
        }
        let metadata = ["# HELP ", "# TYPE "]
            .into_iter()
            .find_map(|prefix| Some((prefix, line.strip_prefix(prefix)?)));
        match metadata {
            Some((prefix, rest)) => {
                let (name, tail) = rest.split_once(' ').unwrap_or((rest, ""));
                let (renamed, kind) = families
                    .get(name)
                    .map_or((name, tail), |(renamed, kind)| (renamed.as_str(), *kind));
                let tail = if prefix == "# TYPE " { kind } else { tail };
                text.push_str(prefix);
                text.push_str(renamed);
                text.push(' ');
                text.push_str(tail);
            }
            // The text format has no exemplars: a latency bucket's ` # {...}` goes. (Only
            // there: its labels are a method and a route template, which hold no ` # {`;
            // another family's label, such as an organization's name, may.)
            None if line.starts_with(EXEMPLARY) => {
                text.push_str(line.split_once(" # {").map_or(line, |(sample, _)| sample));
            }
            None => text.push_str(line),
        }
        text.push('\n');
    }
    text
}

/// A label value as both formats write it: `\`, `"` and line feeds escaped
/// (`prometheus_client` writes label values as given).
pub(super) fn escape_label_value(value: &str) -> String {
    let mut escaped = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '\\' => escaped.push_str("\\\\"),
            '"' => escaped.push_str("\\\""),
            '\n' => escaped.push_str("\\n"),
            c => escaped.push(c),
        }
    }
    escaped
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn openmetrics_only_when_asked_for() {
        let prometheus = "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1";
        for (accept, expected) in [
            (None, Exposition::Text),
            (Some(""), Exposition::Text),
            (Some("*/*"), Exposition::Text),
            (Some("text/plain"), Exposition::Text),
            (Some("application/json"), Exposition::Text),
            (Some(prometheus), Exposition::OpenMetrics),
            (
                Some("application/openmetrics-text; version=1.0.0"),
                Exposition::OpenMetrics,
            ),
            (
                Some("Application/OpenMetrics-Text"),
                Exposition::OpenMetrics,
            ),
            (
                Some("text/plain;version=0.0.4;q=0.9, application/openmetrics-text;q=0.5"),
                Exposition::Text,
            ),
            (
                Some("text/plain;q=0.5, application/openmetrics-text"),
                Exposition::OpenMetrics,
            ),
            (
                Some("application/openmetrics-text;q=0, */*"),
                Exposition::Text,
            ),
            (
                Some("application/openmetrics-text; version=2.0.0"),
                Exposition::Text,
            ),
            (
                Some("application/openmetrics-text;q=nonsense"),
                Exposition::Text,
            ),
        ] {
            assert_eq!(Exposition::negotiate(accept), expected, "{accept:?}");
        }
    }

    #[test]
    fn the_text_format_names_families_as_their_samples() {
        let open_metrics = "# HELP muster_requests Requests.\n\
            # TYPE muster_requests counter\n\
            muster_requests_total{route=\"/a\"} 1\n\
            # HELP muster_build Build.\n\
            # TYPE muster_build info\n\
            muster_build_info{version=\"1\"} 1\n\
            # HELP muster_odd Odd.\n\
            # TYPE muster_odd unknown\n\
            muster_odd 2\n\
            # HELP muster_latency_seconds Latency.\n\
            # TYPE muster_latency_seconds histogram\n\
            # UNIT muster_latency_seconds seconds\n\
            muster_latency_seconds_count 1\n\
            # EOF\n";
        assert_eq!(
            to_text_format(open_metrics),
            "# HELP muster_requests_total Requests.\n\
            # TYPE muster_requests_total counter\n\
            muster_requests_total{route=\"/a\"} 1\n\
            # HELP muster_build_info Build.\n\
            # TYPE muster_build_info gauge\n\
            muster_build_info{version=\"1\"} 1\n\
            # HELP muster_odd Odd.\n\
            # TYPE muster_odd untyped\n\
            muster_odd 2\n\
            # HELP muster_latency_seconds Latency.\n\
            # TYPE muster_latency_seconds histogram\n\
            muster_latency_seconds_count 1\n"
        );
    }

    #[test]
    fn label_values_are_escaped() {
        assert_eq!(
            escape_label_value("a \"b\" \\ c\nd"),
            "a \\\"b\\\" \\\\ c\\nd"
        );
        assert_eq!(escape_label_value("Acme Corp"), "Acme Corp");
    }
}
