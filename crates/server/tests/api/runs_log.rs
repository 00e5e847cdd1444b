//! A run's log (decision D-106): 1 MiB a call (413 beyond), 10 MiB a run, then one
//! marker line and nothing more; read back in pages after a line number.

use serde_json::json;

use crate::helpers::{TestApp, assert_error, assert_error_code, send};
use crate::runs_support::{run_of, running};

api_tests!(
    a_log_keeps_ten_mib_then_a_marker_then_nothing,
    a_log_is_read_in_pages_after_a_line,
);

/// Bytes of each big line: ten fit in one call.
const LINE: usize = 100_000;

fn big_lines(count: usize, fill: char) -> String {
    let text: String = std::iter::repeat_n(fill, LINE).collect();
    let lines: Vec<_> = (0..count)
        .map(|_| json!({"stream": "stdout", "text": text}))
        .collect();
    json!({ "lines": lines }).to_string()
}

async fn a_log_keeps_ten_mib_then_a_marker_then_nothing(app: &TestApp) {
    let (worker, _task, run) = running(app, 0, &json!({})).await;
    let path = format!("/runs/{run}/log");
    // More than 1 MiB in one call is refused whole.
    let too_big = big_lines(11, 'y');
    assert!(too_big.len() > 1024 * 1024);
    let refused = app.post(&worker, &path, &too_big).await;
    assert_error_code(&refused, 413, "payload_too_large");
    assert_eq!(run_of(app, &worker, &run).await["logLines"], 0);
    // 100 lines: 10,000,000 bytes, all kept.
    let batch = big_lines(10, 'x');
    for _ in 0..10 {
        let reply = app.post(&worker, &path, &batch).await;
        assert_eq!(reply.data()["logTruncated"], false);
    }
    let kept = run_of(app, &worker, &run).await;
    assert_eq!(kept["logLines"], 100);
    assert_eq!(kept["logBytes"], 10_000_000);
    // Four more fit in 10 MiB (10,485,760 bytes); the fifth is replaced by the marker,
    // and the rest of the call is not kept.
    let full = app.post(&worker, &path, &batch).await;
    let data = full.data();
    assert_eq!(data["logTruncated"], true);
    assert_eq!(data["logLines"], 105);
    let bytes = data["logBytes"].as_i64().unwrap();
    assert!(
        bytes > 10_400_000 && bytes <= 10 * 1024 * 1024 + 200,
        "{bytes}"
    );
    // Later lines keep nothing, and the call still answers the run.
    let after = app
        .post(
            &worker,
            &path,
            &json!({"lines": [{"stream": "stderr", "text": "late"}]}).to_string(),
        )
        .await;
    assert_eq!(after.data()["logLines"], 105);
    assert_eq!(after.data()["logBytes"], bytes);
    let tail = app
        .get(&worker, &format!("{path}?after=103&limit=10"))
        .await;
    assert_eq!(
        tail.body["truncated"],
        true,
        "{}",
        &tail.text[..200.min(tail.text.len())]
    );
    assert_eq!(tail.body["last"], 105);
    let lines = tail.body["data"].as_array().unwrap();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[1]["seq"], 105);
    assert_eq!(lines[1]["stream"], "system");
    assert!(
        lines[1]["text"].as_str().unwrap().contains("10 MiB"),
        "{}",
        lines[1]["text"]
    );
}

async fn a_log_is_read_in_pages_after_a_line(app: &TestApp) {
    let (worker, _task, run) = running(app, 0, &json!({})).await;
    let path = format!("/runs/{run}/log");
    let lines: Vec<_> = (1..=25)
        .map(|i| json!({"stream": if i % 2 == 0 { "stderr" } else { "stdout" }, "text": format!("line {i}")}))
        .collect();
    let reply = app
        .post(&worker, &path, &json!({ "lines": lines }).to_string())
        .await;
    assert_eq!(reply.data()["logLines"], 25);
    // Follow the log ten lines at a time, passing `last` on.
    let mut after = 0;
    let mut seen = Vec::new();
    loop {
        let page = app
            .get(&app.org.hr, &format!("{path}?after={after}&limit=10"))
            .await;
        assert_eq!(page.status.as_u16(), 200, "{}", page.text);
        let data = page.body["data"].as_array().unwrap();
        if data.is_empty() {
            assert_eq!(
                page.body["last"], after,
                "an empty page answers the after asked"
            );
            break;
        }
        assert!(data.len() <= 10);
        seen.extend(data.iter().map(|l| l["text"].as_str().unwrap().to_owned()));
        after = page.body["last"].as_i64().unwrap();
    }
    let expected: Vec<String> = (1..=25).map(|i| format!("line {i}")).collect();
    assert_eq!(seen, expected);
    let all = app.get(&worker, &path).await;
    assert_eq!(all.body["data"].as_array().unwrap().len(), 25);
    for (query, message) in [
        ("limit=0", "limit must be between 1 and 1000"),
        ("limit=1001", "limit must be between 1 and 1000"),
        ("after=-1", "after must be 0 or more"),
        ("after=x", "after"),
        ("colour=red", "colour"),
    ] {
        let reply = app.get(&worker, &format!("{path}?{query}")).await;
        assert_error(&reply, 400, message);
    }
    // A bad stream or an empty line's stream is refused whole.
    let bad =
        json!({"lines": [{"stream": "stdout", "text": "ok"}, {"stream": "video", "text": "x"}]});
    let refused = send(app.signed(
        &worker,
        reqwest::Method::POST,
        &path,
        Some(&bad.to_string()),
    ))
    .await;
    assert_error(
        &refused,
        400,
        "stream must be one of stdout, stderr, system",
    );
    assert_eq!(run_of(app, &worker, &run).await["logLines"], 25);
}
