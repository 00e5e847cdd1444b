//! The rules a schema cannot state, applied by the proxy to what schemathesis sends
//! before it is signed: each depends on another field or on something outside the
//! request. Only values the schema already calls valid are touched, so a deliberately
//! invalid value still reaches the server and must still be refused. (schemathesis
//! hooks were the first home for these, but its coverage phase does not run them.)

use muster_domain::model::CapabilityName;
use serde_json::Value;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

/// A loopback receiver the fuzzed server may call (it runs with private targets and
/// plain http allowed); nothing listens there, which is a failed delivery, not an error.
const HOOK_URL: &str = "http://127.0.0.1:9/fuzzed-hook";

/// The level of the agent the proxy signs with (the bootstrap HR agent), less one.
const BELOW_SIGNER: i64 = 9;

/// Whether to drop a header that names something the server issued (`Last-Event-ID`,
/// like a cursor): a made-up id is rightly refused. One that is not even a UUID is
/// left, for the server to refuse as invalid.
pub fn drop_header(path: &str, name: &str, value: &[u8]) -> bool {
    path == "/events/stream"
        && name.eq_ignore_ascii_case("last-event-id")
        && std::str::from_utf8(value).is_ok_and(|v| uuid::Uuid::parse_str(v.trim()).is_ok())
}

/// A routine's body as the server takes it: a cron expression the document's shape
/// allows but whose values are out of range (or that never fires) becomes one that
/// fires, a time zone that is no IANA name becomes `UTC`, and the work is a task or a
/// template, not both (a create without either gets a task).
fn routine_body(method: &str, object: &mut serde_json::Map<String, Value>) -> bool {
    use muster_domain::rules::schedule::Schedule;
    // Only values of the document's shapes (see `CRON` and `TIME_ZONE` in the HTTP
    // crate's openapi rules): others must still reach the server, to be refused.
    let cron_shaped = |v: &str| {
        let fields = v.split_whitespace().count();
        (9..=200).contains(&v.len())
            && (5..=6).contains(&fields)
            && v.chars()
                .all(|c| c == ' ' || c == '\t' || c.is_ascii_alphanumeric() || "*/,#?-".contains(c))
    };
    let zone_shaped = |v: &str| {
        let long = v.len() > 64;
        let v = v.trim_matches([' ', '\t']);
        !long
            && v.starts_with(|c: char| c.is_ascii_alphabetic())
            && v.chars()
                .all(|c| c.is_ascii_alphanumeric() || "_+/-".contains(c))
    };
    let mut changed = false;
    if let Some(Value::String(zone)) = object.get("timezone")
        && zone_shaped(zone)
        && Schedule::new("0 9 * * *", zone).is_err()
    {
        object.insert("timezone".to_owned(), Value::from("UTC"));
        changed = true;
    }
    let zone = object
        .get("timezone")
        .and_then(Value::as_str)
        .unwrap_or("UTC")
        .to_owned();
    if let Some(Value::String(expression)) = object.get("schedule")
        && cron_shaped(expression)
    {
        let fires = Schedule::new(expression, &zone)
            .ok()
            .and_then(|s| s.next_after(OffsetDateTime::now_utc()))
            .is_some();
        if !fires {
            object.insert("schedule".to_owned(), Value::from("*/5 * * * *"));
            changed = true;
        }
    }
    // `null` is left out (both fields are optional, neither nullable on the server).
    let given = |object: &serde_json::Map<String, Value>, key: &str| {
        object.get(key).is_some_and(|v| !v.is_null())
    };
    let template_is_an_id = object
        .get("templateId")
        .and_then(Value::as_str)
        .is_some_and(|id| uuid::Uuid::parse_str(id).is_ok());
    if object.get("task").is_some_and(Value::is_object) && template_is_an_id {
        object.remove("templateId");
        changed = true;
    }
    if method == "POST" && !given(object, "task") && !given(object, "templateId") {
        object.insert(
            "task".to_owned(),
            serde_json::json!({"title": "Fuzzed routine task"}),
        );
        changed = true;
    }
    changed
}

/// The query, with `startDate` and `endDate` swapped when the first is later.
pub fn query(target: &str) -> String {
    let Some((path, query)) = target.split_once('?') else {
        return target.to_owned();
    };
    if path != "/events" && path != "/events/stream" {
        return target.to_owned();
    }
    let mut pairs: Vec<(String, String)> = form_pairs(query);
    let find = |pairs: &[(String, String)], key: &str| pairs.iter().position(|(k, _)| k == key);
    if let (Some(s), Some(e)) = (find(&pairs, "startDate"), find(&pairs, "endDate")) {
        let instant = |v: &str| OffsetDateTime::parse(v, &Rfc3339).ok();
        if let (Some(start), Some(end)) = (instant(&pairs[s].1), instant(&pairs[e].1))
            && start > end
        {
            let start_value = std::mem::take(&mut pairs[s].1);
            pairs[s].1 = std::mem::replace(&mut pairs[e].1, start_value);
            return format!("{path}?{}", encode(&pairs));
        }
    }
    target.to_owned()
}

/// The JSON body, adjusted for the operation at `method` `path`; `None` leaves it as
/// sent.
pub fn body(method: &str, path: &str, body: &[u8]) -> Option<Vec<u8>> {
    let mut value: Value = serde_json::from_slice(body).ok()?;
    let object = value.as_object_mut()?;
    let mut changed = false;
    // A webhook URL must name a host that resolves.
    if is_webhook(path) {
        changed |= callable_url(object);
    }
    // Only a pre-hook can block.
    if is_webhook(path) && object.get("canBlock") == Some(&Value::Bool(true)) {
        object.insert("hookType".to_owned(), Value::from("pre"));
        changed = true;
    }
    // A spawned agent's level is below its parent's (10, written `10` or `10.0`).
    if method == "POST"
        && path == "/agents/spawn"
        && object
            .get("level")
            .and_then(Value::as_f64)
            .is_some_and(|level| (9.5..=10.5).contains(&level))
    {
        object.insert("level".to_owned(), Value::from(BELOW_SIGNER));
        changed = true;
    }
    // An agent names each capability once, as the server normalizes names.
    if method == "POST"
        && (path == "/agents/spawn" || path == "/agents/register")
        && let Some(Value::Array(capabilities)) = object.get_mut("capabilities")
    {
        let before = capabilities.len();
        let mut seen = Vec::new();
        capabilities.retain(|entry| {
            let name = entry
                .get("capability")
                .and_then(Value::as_str)
                .and_then(|n| CapabilityName::new(n).ok());
            match name {
                Some(name) if seen.contains(&name) => false,
                Some(name) => {
                    seen.push(name);
                    true
                }
                None => true,
            }
        });
        changed |= capabilities.len() != before;
    }
    // A reply names a comment of the same task (a 400 otherwise): a made-up comment id
    // is dropped, one that is not even a UUID is left for the server to refuse.
    if method == "POST"
        && is_task_comments(path)
        && object
            .get("parentCommentId")
            .and_then(Value::as_str)
            .is_some_and(|id| uuid::Uuid::parse_str(id).is_ok())
    {
        object.remove("parentCommentId");
        changed = true;
    }
    // An outcome (failed, rejected) goes with a move to cancelled only: a valid
    // outcome on another move is dropped, an invalid one left for the server to refuse.
    if method == "POST"
        && is_task_transition(path)
        && object.get("status").is_some_and(|s| s != "cancelled")
        && object
            .get("outcome")
            .is_some_and(|o| o == "failed" || o == "rejected")
    {
        object.remove("outcome");
        changed = true;
    }
    // `metadata` holds no NUL at any depth, but the document can say so only of its
    // top-level keys (the rest needs a recursive schema, which code generators cannot
    // read): NULs below them are taken out. A2A's metadata is not stored and may hold any.
    if !path.starts_with("/a2a") {
        changed |= nul_free_metadata(object);
        if let Some(Value::Array(tasks)) = object.get_mut("tasks") {
            for task in tasks.iter_mut().filter_map(Value::as_object_mut) {
                changed |= nul_free_metadata(task);
            }
        }
    }
    // A routine's own body (create, change), not its run's.
    if path == "/routines" || (path.starts_with("/routines/") && !path.ends_with("/run")) {
        changed |= routine_body(method, object);
        if let Some(Value::Object(task)) = object.get_mut("task") {
            changed |= nul_free_metadata(task);
        }
    }
    changed |= a2a_body(method, path, object);
    if changed {
        serde_json::to_vec(&value).ok()
    } else {
        None
    }
}

/// The rules of A2A's HTTP+JSON bodies that depend on the server's state: a message's
/// `taskId` and `contextId` must name tasks of the organization (made-up ones are
/// dropped: the message then creates a task), a push config's `taskId` must be its
/// task's (blanked), its `url` must be callable (pointed at loopback), and a task holds
/// at most ten configs (every config gets the same id, so a new one replaces the last);
/// a cancel's `id` must be the path's (blanked). Answers whether anything changed.
fn a2a_body(method: &str, path: &str, object: &mut serde_json::Map<String, Value>) -> bool {
    if method != "POST" {
        return false;
    }
    let mut changed = false;
    match path {
        "/a2a/rest/message:send" | "/a2a/rest/message:stream" => {
            if let Some(Value::Object(message)) = object.get_mut("message") {
                changed |= blank(message, "taskId") | blank(message, "contextId");
            }
            if let Some(Value::Object(config)) = object
                .get_mut("configuration")
                .and_then(|c| c.get_mut("taskPushNotificationConfig"))
            {
                changed |= blank(config, "taskId") | callable_url(config);
            }
        }
        _ if path.starts_with("/a2a/rest/tasks/") && path.ends_with("/pushNotificationConfigs") => {
            changed |= blank(object, "taskId") | callable_url(object);
            let id_is_valid = match object.get("id") {
                None | Some(Value::Null) => true,
                Some(Value::String(id)) => id
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || ".~_:-".contains(c)),
                Some(_) => false,
            };
            if id_is_valid && object.get("id") != Some(&Value::from(FUZZ_CONFIG_ID)) {
                object.insert("id".to_owned(), Value::from(FUZZ_CONFIG_ID));
                changed = true;
            }
        }
        _ if path.starts_with("/a2a/rest/tasks/")
            && [":cancel", "%3Acancel", "%3acancel"]
                .iter()
                .any(|verb| path.ends_with(verb)) =>
        {
            changed |= blank(object, "id");
        }
        _ => {}
    }
    changed
}

/// Takes every NUL out of the values of an object `metadata` (its own keys, which the
/// document rules on, are left); answers whether there was one.
fn nul_free_metadata(object: &mut serde_json::Map<String, Value>) -> bool {
    let Some(Value::Object(metadata)) = object.get_mut("metadata") else {
        return false;
    };
    let mut changed = false;
    for value in metadata.values_mut() {
        changed |= strip_nul(value);
    }
    changed
}

/// Takes every NUL out of the keys and strings of `value`; answers whether there was one.
fn strip_nul(value: &mut Value) -> bool {
    match value {
        Value::String(text) if text.contains('\0') => {
            text.retain(|c| c != '\0');
            true
        }
        Value::Array(items) => items
            .iter_mut()
            .fold(false, |changed, item| strip_nul(item) | changed),
        Value::Object(fields) => {
            let mut changed = false;
            let mut clean = serde_json::Map::new();
            for (key, mut field) in std::mem::take(fields) {
                changed |= key.contains('\0') | strip_nul(&mut field);
                clean.insert(key.replace('\0', ""), field);
            }
            *fields = clean;
            changed
        }
        _ => false,
    }
}

/// Empties a non-empty string `field`; answers whether it did.
fn blank(object: &mut serde_json::Map<String, Value>, field: &str) -> bool {
    let filled = object
        .get(field)
        .and_then(Value::as_str)
        .is_some_and(|value| !value.is_empty());
    if filled {
        object.insert(field.to_owned(), Value::from(""));
    }
    filled
}

/// The id every fuzzed push config is given (see [`a2a_body`]).
const FUZZ_CONFIG_ID: &str = "fuzz-config";

/// Points a valid `url` of an object at [`HOOK_URL`]; answers whether it did.
fn callable_url(object: &mut serde_json::Map<String, Value>) -> bool {
    match object.get("url") {
        Some(Value::String(url))
            if url.chars().count() <= 2048
                && (url.starts_with("http://") || url.starts_with("https://")) =>
        {
            object.insert("url".to_owned(), Value::from(HOOK_URL));
            true
        }
        _ => false,
    }
}

/// `/tasks/{uuid}/transition`.
fn is_task_transition(path: &str) -> bool {
    path.strip_prefix("/tasks/")
        .and_then(|rest| rest.strip_suffix("/transition"))
        .is_some_and(|id| uuid::Uuid::parse_str(id).is_ok())
}

/// `/api/v1/webhooks` or `/api/v1/webhooks/{uuid}` (not the inbound or chat routes).
fn is_webhook(path: &str) -> bool {
    match path.strip_prefix("/api/v1/webhooks") {
        Some("") => true,
        Some(rest) => rest
            .strip_prefix('/')
            .is_some_and(|id| uuid::Uuid::parse_str(id).is_ok()),
        None => false,
    }
}

/// `/tasks/{uuid}/comments`.
fn is_task_comments(path: &str) -> bool {
    path.strip_prefix("/tasks/")
        .and_then(|rest| rest.strip_suffix("/comments"))
        .is_some_and(|id| uuid::Uuid::parse_str(id).is_ok())
}

fn form_pairs(query: &str) -> Vec<(String, String)> {
    form_urlencoded::parse(query.as_bytes())
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect()
}

fn encode(pairs: &[(String, String)]) -> String {
    form_urlencoded::Serializer::new(String::new())
        .extend_pairs(pairs)
        .finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn swaps_dates_only_when_reversed() {
        let reversed = "/events?startDate=2026-02-01T00:00:00Z&endDate=2026-01-01T00:00:00Z";
        assert_eq!(
            query(reversed),
            "/events?startDate=2026-01-01T00%3A00%3A00Z&endDate=2026-02-01T00%3A00%3A00Z"
        );
        let ordered = "/events?startDate=2026-01-01T00:00:00Z&endDate=2026-02-01T00:00:00Z";
        assert_eq!(query(ordered), ordered);
        assert_eq!(
            query("/tasks?startDate=b&endDate=a"),
            "/tasks?startDate=b&endDate=a"
        );
    }

    #[test]
    fn points_valid_webhook_urls_at_loopback_and_leaves_invalid_ones() {
        let fixed = body(
            "POST",
            "/api/v1/webhooks",
            br#"{"url":"https://nowhere.example"}"#,
        );
        assert!(
            String::from_utf8(fixed.unwrap())
                .unwrap()
                .contains(HOOK_URL)
        );
        assert!(body("POST", "/api/v1/webhooks", br#"{"url":"ftp://x"}"#).is_none());
        assert!(
            body(
                "POST",
                "/api/v1/webhooks/inbound/k",
                br#"{"url":"https://x"}"#
            )
            .is_none()
        );
    }

    #[test]
    fn drops_a_made_up_parent_comment_and_leaves_a_malformed_one() {
        let path = "/tasks/01a2190a-ae4e-7493-8db1-363ab816386a/comments";
        let sent = br#"{"body":"hi","parentCommentId":"cf6d7ba3-4c92-433d-b231-f201df41e7e8"}"#;
        let fixed: Value = serde_json::from_slice(&body("POST", path, sent).unwrap()).unwrap();
        assert_eq!(fixed, serde_json::json!({"body": "hi"}));
        assert!(body("POST", path, br#"{"body":"hi","parentCommentId":"nope"}"#).is_none());
        assert!(
            body("POST", "/tasks/x/comments", sent).is_none(),
            "not a task id"
        );
    }

    #[test]
    fn drops_an_outcome_from_a_move_other_than_a_cancel() {
        let path = "/tasks/01a2190a-ae4e-7493-8db1-363ab816386a/transition";
        let sent = br#"{"status":"done","outcome":"rejected","result":"0"}"#;
        let fixed: Value = serde_json::from_slice(&body("POST", path, sent).unwrap()).unwrap();
        assert_eq!(fixed, serde_json::json!({"status": "done", "result": "0"}));
        let cancel = br#"{"status":"cancelled","outcome":"failed"}"#;
        assert!(body("POST", path, cancel).is_none(), "a cancel keeps it");
        let bad = br#"{"status":"done","outcome":"exploded"}"#;
        assert!(body("POST", path, bad).is_none(), "an invalid one is left");
    }

    #[test]
    fn keeps_the_first_of_repeated_capabilities() {
        let sent = br#"{"capabilities":[{"capability":"Rust"},{"capability":" rust "},{"capability":"sql"}]}"#;
        let fixed: Value =
            serde_json::from_slice(&body("POST", "/agents/register", sent).unwrap()).unwrap();
        assert_eq!(fixed["capabilities"].as_array().unwrap().len(), 2);
    }

    #[test]
    fn takes_nuls_out_of_nested_metadata_only() {
        let sent =
            br#"{"metadata":{"k":["a\u0000b",{"x\u0000":"\u0000"}],"n":1},"title":"t\u0000"}"#;
        let adjusted: Value =
            serde_json::from_slice(&body("POST", "/tasks", sent).expect("adjusted")).unwrap();
        assert_eq!(
            adjusted,
            serde_json::json!({"metadata": {"k": ["ab", {"x": ""}], "n": 1}, "title": "t\u{0}"})
        );
        // A NUL in a top-level key is the document's to refuse: left for the server.
        let key = br#"{"metadata":{"a\u0000":1}}"#;
        assert_eq!(body("POST", "/tasks", key), None);
        let batch = br#"{"tasks":[{"title":"t","metadata":{"k":"\u0000"}}]}"#;
        assert!(body("POST", "/api/v1/webhooks/inbound/k/batch", batch).is_some());
    }

    #[test]
    fn fits_a2a_bodies_to_the_servers_state() {
        let adjusted = |path: &str, sent: &str| {
            body("POST", path, sent.as_bytes())
                .map(|b| serde_json::from_slice::<Value>(&b).unwrap())
        };
        let sent = r#"{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"x"}],"taskId":"made-up","contextId":""},
            "configuration":{"taskPushNotificationConfig":{"taskId":"t","url":"https://example.com/hook"}}}"#;
        let fixed = adjusted("/a2a/rest/message:send", sent).unwrap();
        assert_eq!(fixed["message"]["taskId"], "");
        assert_eq!(fixed["message"]["contextId"], "");
        let config = &fixed["configuration"]["taskPushNotificationConfig"];
        assert_eq!(config["taskId"], "");
        assert_eq!(config["url"], HOOK_URL);

        let fixed = adjusted(
            "/a2a/rest/tasks/t/pushNotificationConfigs",
            r#"{"url":"ftp://x","taskId":"t"}"#,
        )
        .unwrap();
        assert_eq!(
            fixed["url"], "ftp://x",
            "an invalid url is left for the server to refuse"
        );
        assert_eq!(fixed["taskId"], "");
        assert_eq!(fixed["id"], FUZZ_CONFIG_ID);
        let kept = adjusted(
            "/a2a/rest/tasks/t/pushNotificationConfigs",
            r#"{"url":"","id":"a/b"}"#,
        );
        assert!(kept.is_none(), "an invalid id is left: {kept:?}");

        let fixed = adjusted("/a2a/rest/tasks/t%3Acancel", r#"{"id":"other"}"#).unwrap();
        assert_eq!(fixed["id"], "");
        assert!(adjusted("/a2a/rest/tasks/t:cancel", r#"{"id":5}"#).is_none());
    }
}
