//! Answers and the assertions on them: the contract's error body, envelopes and
//! timestamps.

use reqwest::header::HeaderMap;
use reqwest::{RequestBuilder, StatusCode};
use serde_json::Value;

/// An answer: status, headers and the body parsed as JSON (`Null` when empty or not JSON).
#[derive(Debug)]
pub struct Reply {
    /// HTTP status.
    pub status: StatusCode,
    /// Response headers.
    pub headers: HeaderMap,
    /// Parsed body.
    pub body: Value,
    /// The body as text.
    pub text: String,
}

impl Reply {
    /// `body.data`, asserting the status is 200.
    #[track_caller]
    pub fn data(&self) -> &Value {
        assert_eq!(
            self.status,
            StatusCode::OK,
            "expected 200, got body {}",
            self.text
        );
        self.body
            .get("data")
            .unwrap_or_else(|| panic!("no data in {}", self.text))
    }

    /// `body.data` as an array, asserting the status is 200.
    #[track_caller]
    pub fn list(&self) -> &Vec<Value> {
        self.data()
            .as_array()
            .unwrap_or_else(|| panic!("data is not an array: {}", self.text))
    }

    /// Ids of `body.data[*].id`, asserting the status is 200.
    #[track_caller]
    pub fn ids(&self) -> Vec<String> {
        self.list().iter().map(|item| str_of(item, "id")).collect()
    }
}

/// Sends and reads the answer.
pub async fn send(request: RequestBuilder) -> Reply {
    let response = request.send().await.unwrap();
    let status = response.status();
    let headers = response.headers().clone();
    let text = response.text().await.unwrap();
    let body = serde_json::from_str(&text).unwrap_or(Value::Null);
    Reply {
        status,
        headers,
        body,
        text,
    }
}

/// `value[key]` as a string.
#[track_caller]
pub fn str_of(value: &Value, key: &str) -> String {
    value
        .get(key)
        .and_then(Value::as_str)
        .unwrap_or_else(|| panic!("{key} is not a string in {value}"))
        .to_owned()
}

/// Asserts `reply` is the contract's error body `{statusCode, code, message, error}`
/// (exactly those keys, a `snake_case` `code` (decision D-102), JSON content type) with
/// `status` and a message containing `message_part`.
#[track_caller]
pub fn assert_error(reply: &Reply, status: u16, message_part: &str) {
    assert_eq!(reply.status.as_u16(), status, "status; body {}", reply.text);
    let object = reply
        .body
        .as_object()
        .unwrap_or_else(|| panic!("error body is not a JSON object: {:?}", reply.text));
    let mut keys: Vec<&str> = object.keys().map(String::as_str).collect();
    keys.sort_unstable();
    assert_eq!(
        keys,
        ["code", "error", "message", "statusCode"],
        "error body keys: {}",
        reply.text
    );
    let code = object["code"].as_str().unwrap_or_default();
    assert!(
        code.starts_with(|c: char| c.is_ascii_lowercase())
            && code
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_'),
        "code {code:?} is not snake_case: {}",
        reply.text
    );
    assert_eq!(object["statusCode"], status, "statusCode: {}", reply.text);
    let reason = StatusCode::from_u16(status)
        .unwrap()
        .canonical_reason()
        .unwrap();
    assert_eq!(object["error"], reason, "reason phrase: {}", reply.text);
    let message = object["message"].as_str().expect("message is a string");
    assert!(!message.is_empty(), "empty message");
    assert!(
        message.contains(message_part),
        "message {message:?} does not contain {message_part:?}"
    );
    let content_type = reply
        .headers
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    assert!(
        content_type.starts_with("application/json"),
        "content-type {content_type:?}"
    );
}

/// Asserts `reply` is the error body with exactly `message`.
#[track_caller]
pub fn assert_error_exact(reply: &Reply, status: u16, message: &str) {
    assert_error(reply, status, message);
    assert_eq!(reply.body["message"], message, "message: {}", reply.text);
}

/// Asserts `reply` is the error body with `status` and exactly `code` (decision D-102).
#[track_caller]
pub fn assert_error_code(reply: &Reply, status: u16, code: &str) {
    assert_error(reply, status, "");
    assert_eq!(reply.body["code"], code, "code: {}", reply.text);
}

/// Whether `text` is `YYYY-MM-DDTHH:MM:SS.mmmZ` (RFC 3339 UTC with milliseconds).
fn is_utc_millis(text: &str) -> bool {
    let bytes = text.as_bytes();
    let pattern = b"dddd-dd-ddTdd:dd:dd.dddZ";
    bytes.len() == pattern.len()
        && bytes.iter().zip(pattern).all(|(b, p)| match p {
            b'd' => b.is_ascii_digit(),
            other => b == other,
        })
}

/// Asserts `value[key]` is an RFC 3339 UTC timestamp with milliseconds.
#[track_caller]
pub fn assert_timestamp(value: &Value, key: &str) {
    let text = str_of(value, key);
    assert!(
        is_utc_millis(&text),
        "{key} = {text:?} is not RFC 3339 UTC with milliseconds"
    );
}

/// The keys of a JSON object (in order: `serde_json` keeps them sorted).
#[track_caller]
pub fn keys_of(value: &Value) -> Vec<&str> {
    value
        .as_object()
        .unwrap_or_else(|| panic!("not an object: {value}"))
        .keys()
        .map(String::as_str)
        .collect()
}

/// The `(query, message part)` refusals of every paged list (decision D-7).
pub const PAGE_REFUSALS: [(&str, &str); 4] = [
    ("limit=0", "limit must be between 1 and 500"),
    ("limit=501", "limit must be between 1 and 500"),
    ("limit=ten", "limit"),
    ("cursor=nope", "cursor is not valid"),
];

/// Each `(query, message part)` on `GET {path}?{query}` answers 400 naming the problem.
pub async fn assert_bad_queries(
    app: &crate::helpers::TestApp,
    agent: &crate::helpers::Agent,
    path: &str,
    cases: &[(&str, &str)],
) {
    for (query, message) in cases {
        let reply = app.get(agent, &format!("{path}?{query}")).await;
        assert_eq!(
            reply.status.as_u16(),
            400,
            "GET {path}?{query}: {}",
            reply.text
        );
        assert_error(&reply, 400, message);
    }
}
