//! What the request log shows: never a credential carried in the path (an inbound
//! webhook's key), always the request's route and status; and that a client's errors
//! add no lines of their own (whoever sends bad requests must not fill the logs).

use std::process::Stdio;

use muster_persistence::testing::TestDatabase;
use muster_persistence::{DatabaseUrl, Engine};

use crate::Scratch;
use crate::shutdown::{sigterm, start_on, start_with, stderr_of, wait_exit};

#[test]
fn client_errors_add_no_log_lines_and_the_request_line_shows_the_status() {
    let requests = [
        ("GET /tasks HTTP/1.1", "HTTP/1.1 401"),
        ("GET /no-such-route-here HTTP/1.1", "HTTP/1.1 404"),
        ("GET /tasks/not-a-uuid HTTP/1.1", "HTTP/1.1 40"),
    ];
    for (level, request_lines) in [("warn", false), ("info", true)] {
        let scratch = Scratch::new();
        let mut server = start_with(&scratch, &[("MUSTER_LOG", level)], Stdio::piped());
        let mut messages = Vec::new();
        for (line, status) in requests {
            let answer = crate::send_raw(
                server.port,
                &format!("{line}\r\nHost: localhost\r\nConnection: close\r\n\r\n"),
            );
            assert!(answer.starts_with(status), "{line}: {answer}");
            let body = answer.split("\r\n\r\n").nth(1).unwrap_or_default();
            let message = serde_json::from_str::<serde_json::Value>(body).unwrap()["message"]
                .as_str()
                .unwrap()
                .to_owned();
            messages.push(message);
        }

        sigterm(&server);
        assert!(wait_exit(&mut server).success());
        let logs = stderr_of(&mut server);
        let about_requests: Vec<&str> = logs
            .lines()
            .filter(|line| line.contains("WARN") || line.contains("ERROR"))
            .filter(|line| messages.iter().any(|m| line.contains(m.as_str())))
            .collect();
        assert!(
            about_requests.is_empty(),
            "a client's error was logged as a warning or error at {level}:\n{logs}"
        );
        if request_lines {
            for status in ["http.status_code=401", "http.status_code=404"] {
                assert!(
                    logs.contains(status),
                    "no request line with {status}:\n{logs}"
                );
            }
        } else {
            assert!(
                !logs.contains("/no-such-route-here"),
                "a request was logged at {level}:\n{logs}"
            );
        }
    }
}

#[test]
fn an_inbound_key_in_the_path_never_reaches_the_log() {
    let scratch = Scratch::new();
    let mut server = start_with(&scratch, &[("MUSTER_LOG", "info")], Stdio::piped());
    let body = r#"{"title":"from a form"}"#;
    let request = format!(
        "POST /api/v1/webhooks/inbound/leaky-key-0123456789 HTTP/1.1\r\nHost: localhost\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let answer = crate::send_raw(server.port, &request);
    assert!(answer.starts_with("HTTP/1.1 404"), "{answer}");

    sigterm(&server);
    assert!(wait_exit(&mut server).success());
    let logs = stderr_of(&mut server);
    assert!(
        logs.contains("/api/v1/webhooks/inbound/***"),
        "the request is logged by its route:\n{logs}"
    );
    assert!(
        !logs.contains("leaky-key"),
        "the key reached the log:\n{logs}"
    );
}

/// Spellings of an inbound key's URL a client may get wrong: a trailing slash, a doubled
/// or leading `/`, something after `/batch`, another case, an encoded `/`, another method.
const KEY_URL_SPELLINGS: [(&str, &str); 9] = [
    ("POST", "/api/v1/webhooks/inbound/leaky-key-0/"),
    ("POST", "/api/v1/webhooks/inbound//leaky-key-1"),
    ("POST", "/api/v1/webhooks/inbound/leaky-key-2/batch/"),
    ("POST", "/api/v1/webhooks/inbound/leaky-key-3/batch/more"),
    ("POST", "//api/v1//webhooks/inbound/leaky-key-4"),
    ("POST", "/api/v1/webhooks/inbound/leaky-key-5?source=ci"),
    ("POST", "/API/v1/webhooks/Inbound/leaky-key-6"),
    ("POST", "/api/v1/webhooks/inbound%2Fleaky-key-7"),
    ("GET", "/api/v1/webhooks/inbound/leaky-key-8/"),
];

/// Sends every spelling to a server over `url` (debug logs on) and checks its log.
fn no_spelling_of_a_key_url_reaches_the_log(url: &str) {
    let secret_key = "22".repeat(32);
    let env = [("MUSTER_LOG", "debug"), ("MUSTER_SECRET_KEY", &secret_key)];
    let mut server = start_on(url, &env, Stdio::piped());
    let body = r#"{"title":"from a typo"}"#;
    for (method, path) in KEY_URL_SPELLINGS {
        let request = format!(
            "{method} {path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n\
             Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
        let answer = crate::send_raw(server.port, &request);
        assert!(
            answer.starts_with("HTTP/1.1 4"),
            "{method} {path}: {answer}"
        );
    }

    sigterm(&server);
    assert!(wait_exit(&mut server).success());
    let logs = stderr_of(&mut server);
    assert!(
        logs.contains("/api/v1/webhooks/inbound/***"),
        "the requests are logged, masked:\n{logs}"
    );
    assert!(
        !logs.contains("leaky-key"),
        "a key reached the log:\n{logs}"
    );
}

#[test]
fn sqlite_no_spelling_of_an_inbound_key_url_reaches_the_log() {
    let scratch = Scratch::new();
    no_spelling_of_a_key_url_reaches_the_log(&scratch.sqlite_url());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_no_spelling_of_an_inbound_key_url_reaches_the_log() {
    let Some(test_db) = TestDatabase::new(Engine::Postgres).await else {
        return;
    };
    let DatabaseUrl::Postgres(url) = &test_db.url else {
        unreachable!("a PostgreSQL test database");
    };
    let url = url.clone();
    tokio::task::spawn_blocking(move || no_spelling_of_a_key_url_reaches_the_log(&url))
        .await
        .unwrap();
}
