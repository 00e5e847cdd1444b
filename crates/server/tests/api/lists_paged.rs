//! The short lists the contract shows unpaged and that are read whole — a user's API
//! keys, an organization's outbound hooks and inbound keys — page as every such list
//! does (decision D-7): newest first, `limit` (1..=500, default 100) and `cursor`, with
//! `meta.nextCursor` while more remain.

use reqwest::Method;
use serde_json::{Value, json};

use crate::helpers::{PAGE_REFUSALS, TestApp, assert_error, keys_of, send, str_of};

api_tests!(
    api_keys_page_newest_first,
    webhooks_page_newest_first,
    inbound_keys_page_newest_first,
);

/// Pages through `path` as `token` two at a time and checks the pages against `made`
/// (the ids in creation order), then the refusals of a bad page size or cursor.
async fn assert_pages(app: &TestApp, token: &str, path: &str, mut made: Vec<String>) {
    made.reverse(); // newest first
    let get = |query: String| send(app.bearer(token, Method::GET, &format!("{path}{query}"), None));
    let all = get(String::new()).await;
    assert_eq!(all.status, 200, "{}", all.text);
    assert_eq!(all.ids(), made);
    assert_eq!(keys_of(&all.body), ["data"], "no meta when nothing remains");

    let first = get("?limit=2".to_owned()).await;
    assert_eq!(first.ids(), &made[..2]);
    let cursor = str_of(&first.body["meta"], "nextCursor");
    assert_eq!(cursor, made[1]);
    let second = get(format!("?limit=2&cursor={cursor}")).await;
    assert_eq!(second.ids(), &made[2..]);
    assert_eq!(keys_of(&second.body), ["data"], "the last page");

    for (bad, message) in PAGE_REFUSALS {
        assert_error(&get(format!("?{bad}")).await, 400, message);
    }
}

/// Creates one item per body with `POST path` as `token` (asserting 200): their ids, in
/// creation order.
async fn created(app: &TestApp, token: &str, path: &str, bodies: [Value; 3]) -> Vec<String> {
    let mut ids = Vec::new();
    for body in &bodies {
        let reply = send(app.bearer(token, Method::POST, path, Some(body))).await;
        assert_eq!(reply.status, 200, "{}", reply.text);
        ids.push(str_of(&reply.body, "id"));
    }
    ids
}

/// `{name}` bodies named one, two, three.
fn named() -> [Value; 3] {
    ["one", "two", "three"].map(|name| json!({ "name": name }))
}

async fn api_keys_page_newest_first(app: &TestApp) {
    let token = app.admin_token(&app.org).await;
    let made = created(app, &token, "/api-keys", named()).await;
    assert_pages(app, &token, "/api-keys", made).await;
}

async fn webhooks_page_newest_first(app: &TestApp) {
    let token = app.admin_token(&app.org).await;
    let bodies = ["one", "two", "three"].map(|name| {
        json!({ "name": name, "url": "https://203.0.113.10/hook", "events": ["task.created"] })
    });
    let made = created(app, &token, "/api/v1/webhooks", bodies).await;
    assert_pages(app, &token, "/api/v1/webhooks", made).await;
}

async fn inbound_keys_page_newest_first(app: &TestApp) {
    let token = app.admin_token(&app.org).await;
    let path = "/api/v1/inbound-webhooks";
    let made = created(app, &token, path, named()).await;
    assert_pages(app, &token, path, made).await;
}
