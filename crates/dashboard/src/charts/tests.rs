//! The charts' drawings for fixtures counted by hand, and their escaping.

use super::*;

#[test]
fn values_scale_to_the_nearest_unit_within_the_span() {
    assert_eq!(scale(50, 100, 200), 100);
    assert_eq!(scale(1, 3, 100), 33);
    assert_eq!(scale(2, 3, 100), 67);
    assert_eq!(scale(150, 100, 200), 200, "capped at the span");
    assert_eq!(scale(0, 100, 200), 0);
    assert_eq!(scale(-5, 100, 200), 0);
    assert_eq!(scale(5, 0, 200), 0);
    assert_eq!(scale(i64::MAX, i64::MAX, 200), 200, "no overflow");
}

#[test]
fn stacked_segments_add_up_to_the_bar_of_the_total() {
    // 30 + 20 of 100 in 200 units: 60 and 40 units, from the baseline up.
    assert_eq!(stack(&[30, 20], 100, 200), [(140, 60), (100, 40)]);
    // Three thirds of 1 in 100 units: 33, 34 and 33 (33 + 67 + 100 rounded), never
    // 33 × 3 = 99.
    let thirds = stack(&[1, 1, 1], 3, 100);
    assert_eq!(thirds, [(67, 33), (33, 34), (0, 33)]);
    assert_eq!(thirds.iter().map(|(_, h)| h).sum::<i64>(), 100);
    // A missing series draws nothing and moves nothing.
    assert_eq!(
        stack(&[0, 50, -7], 100, 200),
        [(200, 0), (100, 100), (100, 0)]
    );
}

#[test]
fn axes_end_on_a_round_number_with_round_marks() {
    assert_eq!(nice_ceiling(0), 1);
    assert_eq!(nice_ceiling(1), 1);
    assert_eq!(nice_ceiling(7), 10);
    assert_eq!(nice_ceiling(130_000), 200_000);
    assert_eq!(nice_ceiling(200_001), 500_000);
    assert_eq!(nice_ceiling(i64::MAX), i64::MAX);
    assert_eq!(ticks(10), [0, 2, 4, 6, 8, 10]);
    assert_eq!(ticks(200_000), [0, 50_000, 100_000, 150_000, 200_000]);
    assert_eq!(
        ticks(500_000),
        [0, 100_000, 200_000, 300_000, 400_000, 500_000]
    );
    assert_eq!(ticks(1), [0, 1]);
    assert_eq!(ticks(2), [0, 2]);
}

fn day(label: &str, values: &[i64]) -> Stack {
    Stack {
        label: label.to_owned(),
        values: values.to_vec(),
    }
}

fn two_models() -> Vec<Series> {
    vec![
        Series {
            name: "model-a".to_owned(),
            colour: colour(0),
        },
        Series {
            name: "model-b".to_owned(),
            colour: colour(1),
        },
    ]
}

#[test]
fn a_stacked_chart_draws_each_segment_at_its_height() {
    // Days of $0.15 + $0.05 and $0.10: the axis ends at $0.20 (200,000 millionths),
    // so the plot's 200 units stand for $0.20 and $0.15 is 150 units high, drawn
    // from 12 (the top margin) + 50. The plot is 720 − 76 − 12 = 632 wide: two
    // slots of 316, of which a fifth (63) is the gap, so bars 253 wide from 76 + 31
    // and 392 + 31.
    let bars = [
        day("11-01", &[150_000, 50_000]),
        day("11-02", &[0, 100_000]),
    ];
    let svg = stacked_bars(&two_models(), &bars, crate::figures::usd, 1, "Cost").into_string();
    assert!(
        svg.contains(r##"<rect x="107" y="62" width="253" height="150" fill="#0072b2">"##),
        "{svg}"
    );
    assert!(
        svg.contains(r##"<rect x="107" y="12" width="253" height="50" fill="#e69f00">"##),
        "{svg}"
    );
    assert!(
        svg.contains(r##"<rect x="423" y="112" width="253" height="100" fill="#e69f00">"##),
        "{svg}"
    );
    // Marks every $0.05 (quarters of a 2).
    assert_eq!(
        svg.matches("</text>").count(),
        5 + 2,
        "five marks, two day labels"
    );
    // The empty segment of the second day is not drawn.
    assert_eq!(svg.matches("<rect").count(), 3);
    assert!(
        svg.contains("<title>11-01 · model-a: $0.15</title>"),
        "{svg}"
    );
    assert!(svg.contains(">$0.20</text>") && svg.contains(">$0.00</text>"));
    // Every element is closed: in HTML, SVG content is foreign and `<rect>` alone
    // would swallow what follows it.
    assert_eq!(svg.matches("<rect").count(), svg.matches("</rect>").count());
    assert_eq!(svg.matches("<line").count(), svg.matches("</line>").count());
}

#[test]
fn text_in_a_chart_is_escaped() {
    let hostile = "<script>alert(1)</script>&\"'";
    let series = [Series {
        name: hostile.to_owned(),
        colour: colour(0),
    }];
    let bars = [day(hostile, &[5])];
    let svg = stacked_bars(&series, &bars, crate::figures::usd, 1, hostile).into_string();
    let rows = row_bars(
        &[Row {
            label: hostile.to_owned(),
            value: 1,
            shown: hostile.to_owned(),
        }],
        hostile,
    )
    .into_string();
    let gauges = gauges(
        &[Gauge {
            label: hostile.to_owned(),
            spent: 1,
            limit: 2,
        }],
        hostile,
    )
    .into_string();
    let key = legend(&series).into_string();
    for drawn in [svg, rows, gauges, key] {
        assert!(!drawn.contains("<script"), "{drawn}");
        assert!(drawn.contains("&lt;script&gt;"), "{drawn}");
        assert!(!drawn.contains("&\""), "{drawn}");
    }
}

#[test]
fn rows_scale_to_the_largest_and_cut_long_labels() {
    let rows = [
        Row {
            label: "coder".to_owned(),
            value: 300,
            shown: "$0.30".to_owned(),
        },
        Row {
            label: "a".repeat(40),
            value: 100,
            shown: "$0.10".to_owned(),
        },
    ];
    let svg = row_bars(&rows, "Top agents").into_string();
    // 720 − 200 − 190 = 330 units for the largest.
    assert!(svg.contains(r#"width="330" height="18""#), "{svg}");
    assert!(svg.contains(r#"width="110" height="18""#), "{svg}");
    assert!(
        svg.contains(&format!(">{}…</text>", "a".repeat(25))),
        "{svg}"
    );
    assert!(svg.contains(&format!("<title>{}: $0.10</title>", "a".repeat(40))));
}

#[test]
fn gauges_fill_their_track_up_to_the_limit_and_turn_red_past_it() {
    let rows = [
        Gauge {
            label: "half".to_owned(),
            spent: 50,
            limit: 100,
        },
        Gauge {
            label: "over".to_owned(),
            spent: 150,
            limit: 100,
        },
        Gauge {
            label: "nothing allowed".to_owned(),
            spent: 0,
            limit: 0,
        },
    ];
    assert_eq!(
        rows.iter().map(Gauge::percent).collect::<Vec<_>>(),
        [50, 150, 100]
    );
    let svg = gauges(&rows, "Budgets").into_string();
    assert!(
        svg.contains(r##"width="165" height="18" fill="#1a7f37""##),
        "{svg}"
    );
    assert!(
        svg.contains(r##"width="330" height="18" fill="#b3261e""##),
        "{svg}"
    );
    assert!(svg.contains(">150 of 100 credits (150 %)</text>"), "{svg}");
    assert_eq!(
        Gauge {
            label: String::new(),
            spent: 85,
            limit: 100
        }
        .colour(),
        "#9a6700"
    );
}

#[test]
fn a_line_runs_from_the_left_edge_to_the_right_on_the_value_axis() {
    // 0 at the baseline (y 212), 10 at the top of an axis up to 10 (y 12), 5 halfway.
    assert_eq!(line_points(&[0, 5, 10], 10), "76,212 392,112 708,12");
    // One point stands at the left edge.
    assert_eq!(line_points(&[3], 5), "76,92");
    let series = [
        Series {
            name: "created".to_owned(),
            colour: colour(0),
        },
        Series {
            name: "done".to_owned(),
            colour: colour(1),
        },
    ];
    let points = [
        Stack {
            label: "12-05".to_owned(),
            values: vec![2, 1],
        },
        Stack {
            label: "12-06".to_owned(),
            values: vec![4, 2],
        },
    ];
    let svg = lines(&series, &points, 7, "Burn-up <of> Launch").into_string();
    assert!(
        svg.contains(r#"aria-label="Burn-up &lt;of&gt; Launch""#),
        "{svg}"
    );
    assert_eq!(svg.matches("<polyline").count(), 2, "{svg}");
    // The axis goes up to 5 (the nice ceiling of 4): 4 is at 4/5 of 200 above 212.
    assert!(svg.contains(r#"points="76,132 708,52""#), "{svg}");
    assert!(svg.contains(">12-06</text>"), "{svg}");
}
