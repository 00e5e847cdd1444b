//! Tables for people, JSON for scripts.

use muster_client::types::paging::NextCursor;
use serde::Serialize;

/// Prints `value` as the API's JSON, pretty.
pub fn json<T: Serialize>(value: &T) -> anyhow::Result<()> {
    println!("{}", serde_json::to_string_pretty(value)?);
    Ok(())
}

/// Prints rows under a header, each column as wide as its widest cell.
pub fn table(header: &[&str], rows: &[Vec<String>]) {
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let line = |cells: Vec<String>| {
        let last = cells.len().saturating_sub(1);
        let padded: Vec<String> = cells
            .into_iter()
            .enumerate()
            .map(|(i, cell)| {
                if i == last {
                    cell
                } else {
                    format!("{cell:<width$}", width = widths[i])
                }
            })
            .collect();
        println!("{}", padded.join("  ").trim_end());
    };
    line(header.iter().map(|h| (*h).to_owned()).collect());
    for row in rows {
        line(row.clone());
    }
}

/// After a page that has a next one: how to get it.
pub fn more(next: Option<&NextCursor>) {
    if let Some(next) = next {
        println!("(more: --cursor {})", next.next_cursor);
    }
}

/// `key: value` lines, keys aligned.
pub fn fields(pairs: &[(&str, String)]) {
    let width = pairs.iter().map(|(k, _)| k.len()).max().unwrap_or(0);
    for (key, value) in pairs {
        println!("{:<width$}  {value}", format!("{key}:"), width = width + 1);
    }
}

/// A wire enum as it is spelled in JSON (`in_progress`).
pub fn wire<T: Serialize>(value: &T) -> String {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::String(s)) => s,
        Ok(other) => other.to_string(),
        Err(_) => String::new(),
    }
}

/// An optional value, or `-`.
pub fn or_dash<T: ToString>(value: Option<T>) -> String {
    value.map_or_else(|| "-".to_owned(), |v| v.to_string())
}

/// At most `max` characters, with `…` when cut.
pub fn clip(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        text.to_owned()
    } else {
        let mut cut: String = text.chars().take(max.saturating_sub(1)).collect();
        cut.push('…');
        cut
    }
}

/// Millionths of a US dollar as dollars (`$1.234567`), or `-` when unknown.
pub fn usd(microusd: Option<i64>) -> String {
    microusd.map_or_else(
        || "-".to_owned(),
        |m| {
            let sign = if m < 0 { "-" } else { "" };
            let m = m.unsigned_abs();
            format!("{sign}${}.{:06}", m / 1_000_000, m % 1_000_000)
        },
    )
}
