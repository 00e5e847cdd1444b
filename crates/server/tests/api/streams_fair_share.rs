//! Open streams are shared fairly between organizations: each may hold at most its share
//! of the instance's bound, so a tenant that floods the instance with streams (event
//! streams, A2A subscriptions, live boards: one pool) cannot take the places another
//! tenant needs.

use std::time::Duration;

use reqwest::{Method, StatusCode};
use serde_json::json;

use crate::a2a::{message, request, result, stream_error_code, writer_key};
use crate::dashboard_support::Browser;
use crate::events_stream::Sse;
use crate::helpers::{Org, Reply, TestApp, assert_error, str_of};

/// Five streams on the instance, two per organization.
mod shared {
    use super::a_flooding_tenant_cannot_take_another_tenants_streams;

    api_tests!(with muster_http::StreamOptions {
        max_streams: 5,
        max_streams_per_org: 2,
        ..crate::events_stream::quick()
    };
        a_flooding_tenant_cannot_take_another_tenants_streams,
    );
}

/// `GET /events/stream` with a bearer credential, not yet sent.
fn event_stream(app: &TestApp, token: &str) -> reqwest::RequestBuilder {
    app.bearer(token, Method::GET, "/events/stream", None)
        .timeout(Duration::from_secs(60))
}

/// The organization's live board (`GET /ui/live`) in a signed-in admin's browser.
async fn live_board(app: &TestApp, org: &Org) -> reqwest::Response {
    let browser = Browser::admin(app, org).await;
    let cookie = format!(
        "muster_session={}",
        browser.cookie("muster_session").unwrap()
    );
    app.client
        .get(app.url("/ui/live"))
        .header("cookie", cookie)
        .send()
        .await
        .unwrap()
}

/// An open task of the key's organization, for `SubscribeToTask`.
async fn a2a_task(app: &TestApp, key: &str) -> String {
    let sent = result(
        app,
        key,
        "SendMessage",
        &json!({"message": message("Watch me")}),
    )
    .await;
    str_of(&sent["task"], "id")
}

/// `SubscribeToTask` over JSON-RPC, answered as it comes (a stream or an error object).
async fn subscribe(app: &TestApp, key: &str, task: &str) -> reqwest::Response {
    app.bearer(key, Method::POST, "/a2a/jsonrpc", None)
        .header("A2A-Version", "1.0")
        .header("content-type", "application/json")
        .body(request("SubscribeToTask", &json!({"id": task})))
        .send()
        .await
        .unwrap()
}

async fn a_flooding_tenant_cannot_take_another_tenants_streams(app: &TestApp) {
    // Organization A floods with a read-only key, as the probe did.
    let admin_a = app.admin_token(&app.org).await;
    let reader_a = app.api_key(&admin_a, &["read"]).await;
    let mut flood = Vec::new();
    loop {
        let response = event_stream(app, &reader_a).send().await.unwrap();
        if response.status() != StatusCode::OK {
            let (status, headers) = (response.status(), response.headers().clone());
            let text = response.text().await.unwrap();
            let refused = Reply {
                status,
                headers,
                body: serde_json::from_str(&text).unwrap_or_default(),
                text,
            };
            assert_error(
                &refused,
                503,
                "Too many open event streams for this organization (2); retry later",
            );
            assert!(refused.headers.contains_key("retry-after"));
            break;
        }
        flood.push(Sse::new(response));
        assert!(flood.len() <= 2, "organization A took more than its share");
    }
    assert_eq!(flood.len(), 2);
    // A's other kinds of stream come out of the same share: refused too, although the
    // instance has three places left.
    let writer_a = writer_key(app).await;
    let task_a = a2a_task(app, &writer_a).await;
    assert_eq!(
        stream_error_code(app, &writer_a, "SubscribeToTask", &json!({"id": task_a})).await,
        -32042
    );
    let board_a = live_board(app, &app.org).await;
    assert_eq!(board_a.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert!(
        board_a
            .text()
            .await
            .unwrap()
            .contains("too many open event streams for this organization")
    );

    // Organization B still gets its streams: its live board and its A2A subscription.
    let board_b = live_board(app, &app.other).await;
    assert_eq!(board_b.status(), StatusCode::OK);
    assert_eq!(board_b.headers()["content-type"], "text/event-stream");
    let admin_b = app.admin_token(&app.other).await;
    let writer_b = app.api_key(&admin_b, &["read", "write"]).await;
    let task_b = a2a_task(app, &writer_b).await;
    let subscribed = subscribe(app, &writer_b, &task_b).await;
    assert_eq!(subscribed.status(), StatusCode::OK);
    assert_eq!(subscribed.headers()["content-type"], "text/event-stream");
    let mut sse = Sse::new(subscribed);
    let first = sse.event().await.json();
    assert_eq!(first["result"]["task"]["id"], task_b.as_str(), "{first}");

    // A place A gives back is A's again.
    drop(flood.pop());
    let mut reopened = false;
    for _ in 0..50 {
        let response = event_stream(app, &reader_a).send().await.unwrap();
        if response.status() == StatusCode::OK {
            flood.push(Sse::new(response));
            reopened = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(reopened, "the place was never given back");
    drop((flood, sse, board_b));
}
