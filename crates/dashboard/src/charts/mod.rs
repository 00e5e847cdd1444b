//! Charts drawn on the server as inline SVG: no script, no font of their own (their text
//! takes the page's), colours as presentation attributes (the CSP allows no inline
//! style). Each drawing is a pure function of its numbers, and every text in it is
//! escaped by maud like the rest of the page. The pages put a table of the same numbers
//! beside every chart, which is what screen readers read (the drawing is one image
//! with a short description).

use maud::{Markup, html};

/// Colours of the series, told apart by people with the common colour-vision
/// deficiencies (Okabe and Ito's palette, without its yellow, too pale on white).
const PALETTE: [&str; 6] = [
    "#0072b2", "#e69f00", "#009e73", "#cc79a7", "#56b4e9", "#d55e00",
];

/// The colour of the series that gathers the rest ("other models").
pub(crate) const REST: &str = "#8c959f";

/// The `i`-th colour of the palette (it repeats past its end).
pub(crate) fn colour(i: usize) -> &'static str {
    PALETTE[i % PALETTE.len()]
}

/// The drawing's width in its own units; the stylesheet scales it to the page.
const WIDTH: i64 = 720;
/// Room left of a plot for the axis labels (bar charts) or the row labels (rows).
const LEFT: i64 = 76;
const RIGHT: i64 = 12;
const TOP: i64 = 12;
/// Room under a bar chart for the bars' labels.
const BOTTOM: i64 = 30;
/// A bar chart's plot height.
const PLOT_HEIGHT: i64 = 200;
/// The height of one row of a row chart.
const ROW: i64 = 30;
/// Room left of a row chart's bars for the row labels.
const ROW_LABEL: i64 = 200;
/// Room right of a row chart's bars for the values.
const ROW_VALUE: i64 = 190;
/// Characters of a row label drawn (the table beside the chart has them all).
const LABEL_CHARS: usize = 26;

/// `value` of `max` as a share of `span`, rounded to the nearest whole unit: nothing for
/// a value or a maximum of 0 or less, never more than `span`.
pub(crate) fn scale(value: i64, max: i64, span: i64) -> i64 {
    if value <= 0 || max <= 0 || span <= 0 {
        return 0;
    }
    let (value, max, span) = (
        i128::from(value.min(max)),
        i128::from(max),
        i128::from(span),
    );
    i64::try_from((2 * value * span + max) / (2 * max)).unwrap_or(0)
}

/// One bar's segments from the baseline up, as `(top, height)` in a plot `height` high
/// whose top stands for `max`. Each segment ends where the rounded running total ends,
/// so the segments of a bar add up to exactly the bar the total would make.
pub(crate) fn stack(values: &[i64], max: i64, height: i64) -> Vec<(i64, i64)> {
    let mut total: i64 = 0;
    let mut base = 0;
    values
        .iter()
        .map(|value| {
            total = total.saturating_add((*value).max(0));
            let reached = scale(total, max, height);
            let segment = (height - reached, reached - base);
            base = reached;
            segment
        })
        .collect()
}

/// The top of an axis for values up to `max`: the smallest 1, 2 or 5 × 10ⁿ at or above
/// it (1 for nothing).
pub(crate) fn nice_ceiling(max: i64) -> i64 {
    let mut magnitude: i64 = 1;
    loop {
        for step in [1, 2, 5] {
            let candidate = magnitude.saturating_mul(step);
            if candidate >= max {
                return candidate;
            }
        }
        match magnitude.checked_mul(10) {
            Some(next) => magnitude = next,
            None => return max,
        }
    }
}

/// The axis's marks from 0 to `top` (a [`nice_ceiling`]): fifths of a 1 or a 5, quarters
/// of a 2; just the ends when those are not whole.
pub(crate) fn ticks(top: i64) -> Vec<i64> {
    let parts = if top.to_string().starts_with('2') {
        4
    } else {
        5
    };
    if top <= 0 || top % parts != 0 {
        return vec![0, top.max(0)];
    }
    (0..=parts).map(|k| top / parts * k).collect()
}

/// A label cut to `chars` characters, with an ellipsis when cut.
fn short(label: &str, chars: usize) -> String {
    if label.chars().count() <= chars {
        label.to_owned()
    } else {
        let mut cut: String = label.chars().take(chars.saturating_sub(1)).collect();
        cut.push('…');
        cut
    }
}

/// A series of a stacked chart: its name and its colour.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Series {
    pub name: String,
    pub colour: &'static str,
}

/// One bar of a stacked chart: its label and its values, one per series.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Stack {
    pub label: String,
    pub values: Vec<i64>,
}

/// Stacked bars, one per [`Stack`], with a value axis whose labels `unit` writes and the
/// label of every `label_every`-th bar under it; `description` is what a screen reader
/// hears for the drawing.
pub(crate) fn stacked_bars(
    series: &[Series],
    bars: &[Stack],
    unit: fn(i64) -> String,
    label_every: usize,
    description: &str,
) -> Markup {
    let max = bars
        .iter()
        .map(|bar| bar.values.iter().map(|v| (*v).max(0)).sum::<i64>())
        .max()
        .unwrap_or(0);
    let top = nice_ceiling(max);
    let height = TOP + PLOT_HEIGHT + BOTTOM;
    let plot = WIDTH - LEFT - RIGHT;
    let count = i64::try_from(bars.len()).unwrap_or(i64::MAX).max(1);
    let every = label_every.max(1);
    html! {
        svg.chart xmlns="http://www.w3.org/2000/svg" viewBox={"0 0 " (WIDTH) " " (height)}
            role="img" aria-label=(description) {
            @for tick in ticks(top) {
                @let y = TOP + PLOT_HEIGHT - scale(tick, top, PLOT_HEIGHT);
                line x1=(LEFT) x2=(WIDTH - RIGHT) y1=(y) y2=(y) stroke="#d0d7de" stroke-width="1" {}
                text x=(LEFT - 6) y=(y + 4) text-anchor="end" font-size="12" fill="#57606a" { (unit(tick)) }
            }
            @for (i, bar) in bars.iter().enumerate() {
                @let at = i64::try_from(i).unwrap_or(0);
                @let (left, right) = (LEFT + at * plot / count, LEFT + (at + 1) * plot / count);
                @let gap = ((right - left) / 5).max(1);
                @let width = (right - left - gap).max(1);
                @for ((top_y, h), (value, s)) in stack(&bar.values, top, PLOT_HEIGHT).into_iter().zip(bar.values.iter().zip(series)) {
                    @if h > 0 {
                        rect x=(left + gap / 2) y=(TOP + top_y) width=(width) height=(h) fill=(s.colour) {
                            title { (bar.label) " · " (s.name) ": " (unit(*value)) }
                        }
                    }
                }
                @if i % every == 0 {
                    text x=(left + (right - left) / 2) y=(TOP + PLOT_HEIGHT + 18) text-anchor="middle" font-size="11" fill="#57606a" { (bar.label) }
                }
            }
            line x1=(LEFT) x2=(WIDTH - RIGHT) y1=(TOP + PLOT_HEIGHT) y2=(TOP + PLOT_HEIGHT) stroke="#57606a" stroke-width="1" {}
        }
    }
}

/// The key of a chart's series: a swatch of each colour and its name.
pub(crate) fn legend(series: &[Series]) -> Markup {
    html! {
        ul.legend aria-hidden="true" {
            @for s in series {
                li {
                    svg.swatch xmlns="http://www.w3.org/2000/svg" viewBox="0 0 12 12" width="12" height="12" {
                        rect width="12" height="12" fill=(s.colour) {}
                    }
                    " " (s.name)
                }
            }
        }
    }
}

/// One row of a row chart: its label, its value, and what the value reads as.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Row {
    pub label: String,
    pub value: i64,
    pub shown: String,
}

/// Horizontal bars, one per row, scaled to the largest value.
pub(crate) fn row_bars(rows: &[Row], description: &str) -> Markup {
    let max = rows.iter().map(|r| r.value).max().unwrap_or(0);
    let span = WIDTH - ROW_LABEL - ROW_VALUE;
    let height = TOP * 2 + ROW * i64::try_from(rows.len()).unwrap_or(0);
    html! {
        svg.chart xmlns="http://www.w3.org/2000/svg" viewBox={"0 0 " (WIDTH) " " (height)}
            role="img" aria-label=(description) {
            @for (i, row) in rows.iter().enumerate() {
                @let y = TOP + ROW * i64::try_from(i).unwrap_or(0);
                @let width = scale(row.value, max, span);
                text x=(ROW_LABEL - 8) y=(y + 19) text-anchor="end" font-size="13" fill="#1b1f24" { (short(&row.label, LABEL_CHARS)) }
                @if width > 0 {
                    rect x=(ROW_LABEL) y=(y + 6) width=(width) height=(ROW - 12) fill=(colour(0)) {
                        title { (row.label) ": " (row.shown) }
                    }
                }
                text x=(ROW_LABEL + width + 6) y=(y + 19) font-size="12" fill="#57606a" { (row.shown) }
            }
        }
    }
}

/// One agent's budget: credits spent this period against its limit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Gauge {
    pub label: String,
    pub spent: i64,
    pub limit: i64,
}

impl Gauge {
    /// Spent as a whole percentage of the limit (100 for a limit of 0), as the API's
    /// `utilizationPercent` rounds it.
    pub(crate) fn percent(&self) -> i64 {
        if self.limit <= 0 {
            return 100;
        }
        let (spent, limit) = (i128::from(self.spent.max(0)), i128::from(self.limit));
        i64::try_from((200 * spent + limit) / (2 * limit)).unwrap_or(i64::MAX)
    }

    /// Green below 80 %, amber up to the limit, red at or past it.
    fn colour(&self) -> &'static str {
        match self.percent() {
            ..80 => "#1a7f37",
            80..100 => "#9a6700",
            _ => "#b3261e",
        }
    }
}

/// Budgets as bars, each on a track that stands for its limit (full at the limit and
/// past it).
pub(crate) fn gauges(rows: &[Gauge], description: &str) -> Markup {
    let span = WIDTH - ROW_LABEL - ROW_VALUE;
    let height = TOP * 2 + ROW * i64::try_from(rows.len()).unwrap_or(0);
    html! {
        svg.chart xmlns="http://www.w3.org/2000/svg" viewBox={"0 0 " (WIDTH) " " (height)}
            role="img" aria-label=(description) {
            @for (i, row) in rows.iter().enumerate() {
                @let y = TOP + ROW * i64::try_from(i).unwrap_or(0);
                @let width = if row.limit <= 0 { span } else { scale(row.spent, row.limit, span) };
                @let shown = format!("{} of {} credits ({} %)", crate::figures::count(row.spent), crate::figures::count(row.limit), row.percent());
                text x=(ROW_LABEL - 8) y=(y + 19) text-anchor="end" font-size="13" fill="#1b1f24" { (short(&row.label, LABEL_CHARS)) }
                rect x=(ROW_LABEL) y=(y + 6) width=(span) height=(ROW - 12) fill="#eaeef2" stroke="#d0d7de" {}
                @if width > 0 {
                    rect x=(ROW_LABEL) y=(y + 6) width=(width) height=(ROW - 12) fill=(row.colour()) {
                        title { (row.label) ": " (shown) }
                    }
                }
                text x=(ROW_LABEL + span + 6) y=(y + 19) font-size="12" fill="#57606a" { (shown) }
            }
        }
    }
}

/// The points of one line of a [`lines`] chart, left to right: its `y` value at the
/// `i`-th of `count` evenly spaced places.
pub(crate) fn line_points(values: &[i64], top: i64) -> String {
    let plot = WIDTH - LEFT - RIGHT;
    let last = i64::try_from(values.len())
        .unwrap_or(1)
        .saturating_sub(1)
        .max(1);
    values
        .iter()
        .enumerate()
        .map(|(i, value)| {
            let at = i64::try_from(i).unwrap_or(0);
            let x = LEFT + at * plot / last;
            let y = TOP + PLOT_HEIGHT - scale(*value, top, PLOT_HEIGHT);
            format!("{x},{y}")
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Lines, one per series, over the points of `points` (each point's `values` hold one
/// value per series), with a value axis and the label of every `label_every`-th point.
pub(crate) fn lines(
    series: &[Series],
    points: &[Stack],
    label_every: usize,
    description: &str,
) -> Markup {
    let max = points
        .iter()
        .flat_map(|p| p.values.iter().copied())
        .max()
        .unwrap_or(0);
    let top = nice_ceiling(max);
    let height = TOP + PLOT_HEIGHT + BOTTOM;
    let plot = WIDTH - LEFT - RIGHT;
    let last = i64::try_from(points.len())
        .unwrap_or(1)
        .saturating_sub(1)
        .max(1);
    let every = label_every.max(1);
    html! {
        svg.chart xmlns="http://www.w3.org/2000/svg" viewBox={"0 0 " (WIDTH) " " (height)}
            role="img" aria-label=(description) {
            @for tick in ticks(top) {
                @let y = TOP + PLOT_HEIGHT - scale(tick, top, PLOT_HEIGHT);
                line x1=(LEFT) x2=(WIDTH - RIGHT) y1=(y) y2=(y) stroke="#d0d7de" stroke-width="1" {}
                text x=(LEFT - 6) y=(y + 4) text-anchor="end" font-size="12" fill="#57606a" { (tick) }
            }
            @for (k, s) in series.iter().enumerate() {
                @let values: Vec<i64> = points.iter().map(|p| p.values.get(k).copied().unwrap_or(0)).collect();
                polyline points=(line_points(&values, top)) fill="none" stroke=(s.colour) stroke-width="2" {}
            }
            @for (i, point) in points.iter().enumerate() {
                @if i % every == 0 || i + 1 == points.len() {
                    @let x = LEFT + i64::try_from(i).unwrap_or(0) * plot / last;
                    text x=(x) y=(TOP + PLOT_HEIGHT + 18) text-anchor="middle" font-size="11" fill="#57606a" { (point.label) }
                }
            }
            line x1=(LEFT) x2=(WIDTH - RIGHT) y1=(TOP + PLOT_HEIGHT) y2=(TOP + PLOT_HEIGHT) stroke="#57606a" stroke-width="1" {}
        }
    }
}

#[cfg(test)]
mod tests;
