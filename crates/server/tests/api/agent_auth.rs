//! Agent HMAC signing on the wire (interface "Authentication 1", decision D-10): every
//! refusal is a 401 with the short reason, and a forged request changes nothing.

use std::time::Duration;

use muster_auth::agent::CREDENTIAL_TTL;
use muster_domain::model::AgentStatus;
use muster_domain::ports::NonceStore;
use reqwest::Method;

use crate::helpers::{
    Agent, Headers, Reply, TestApp, assert_error_exact, new_nonce, now_secs, send, signature,
    unique_handle,
};
use crate::stored::change_agent;

api_tests!(
    each_missing_header_is_401,
    timestamp_must_be_within_five_minutes,
    timestamp_must_be_a_decimal_integer,
    reused_nonce_is_401,
    concurrent_replays_are_accepted_once,
    a_purge_keeps_a_nonce_while_its_timestamp_could_pass,
    forged_request_does_not_burn_its_nonce,
    nonce_syntax_is_checked,
    non_active_agents_are_401,
    a_suspension_is_seen_within_the_credential_ttl,
);

/// Takes one header out.
type RemoveHeader = fn(&mut Headers);

/// Sends `GET /tasks` with `headers`.
pub(crate) async fn list_with(app: &TestApp, headers: &Headers) -> Reply {
    send(app.with_headers(Method::GET, "/tasks", headers, None)).await
}

/// Headers for `GET /tasks` signed by `agent` with the given timestamp and nonce.
fn get_tasks_headers(agent: &Agent, timestamp: &str, nonce: &str) -> Headers {
    Headers {
        agent_id: Some(agent.handle.clone()),
        timestamp: Some(timestamp.to_owned()),
        nonce: Some(nonce.to_owned()),
        signature: Some(signature(
            &agent.secret,
            "GET",
            "/tasks",
            timestamp,
            nonce,
            b"",
        )),
    }
}

/// Number of tasks of the first organization.
pub(crate) async fn task_count(app: &TestApp) -> usize {
    app.get(&app.org.hr, "/tasks?limit=500").await.list().len()
}

async fn each_missing_header_is_401(app: &TestApp) {
    let hr = &app.org.hr;
    let good = TestApp::headers_for(hr, &Method::GET, "/tasks", b"");
    let cases: [(&str, RemoveHeader); 4] = [
        ("X-Agent-ID", |h| h.agent_id = None),
        ("X-Timestamp", |h| h.timestamp = None),
        ("X-Nonce", |h| h.nonce = None),
        ("X-Signature", |h| h.signature = None),
    ];
    for (name, remove) in cases {
        let mut headers = good.clone();
        remove(&mut headers);
        let reply = list_with(app, &headers).await;
        assert_error_exact(&reply, 401, &format!("missing {name} header"));
    }
    // An empty value counts as missing.
    let mut headers = good.clone();
    headers.nonce = Some(String::new());
    assert_error_exact(
        &list_with(app, &headers).await,
        401,
        "missing X-Nonce header",
    );
    // None at all.
    let reply = send(app.anonymous(Method::GET, "/events")).await;
    assert_error_exact(
        &reply,
        401,
        "missing credentials: sign the request as an agent or send Authorization: Bearer <token>",
    );
    // The untouched headers work (and were never burnt by the refusals above).
    assert_eq!(list_with(app, &good).await.status.as_u16(), 200);
}

async fn timestamp_must_be_within_five_minutes(app: &TestApp) {
    let hr = &app.org.hr;
    let now = now_secs();
    // A few seconds beyond the window: the server's clock moves on while a loaded
    // machine gets to the request, which brings a future timestamp back inside.
    for offset in [-305, 305, -3600, 86_400] {
        let ts = (now + offset).to_string();
        let reply = list_with(app, &get_tasks_headers(hr, &ts, &new_nonce())).await;
        assert_error_exact(&reply, 401, "stale timestamp");
    }
    for offset in [-295, 0, 295] {
        let ts = (now + offset).to_string();
        let reply = list_with(app, &get_tasks_headers(hr, &ts, &new_nonce())).await;
        assert_eq!(
            reply.status.as_u16(),
            200,
            "offset {offset}: {}",
            reply.text
        );
    }
    // Leading zeros are allowed: the header is signed as sent.
    let ts = format!("00{now}");
    let reply = list_with(app, &get_tasks_headers(hr, &ts, &new_nonce())).await;
    assert_eq!(reply.status.as_u16(), 200, "{}", reply.text);
}

async fn timestamp_must_be_a_decimal_integer(app: &TestApp) {
    let hr = &app.org.hr;
    let now = now_secs();
    for ts in [
        "abc".to_owned(),
        format!("{now}.0"),
        format!("{now}000"),
        format!("-{now}"),
        format!("+{now}"),
        "1.7e9".to_owned(),
        "2026-11-22T01:02:03Z".to_owned(),
        "9".repeat(25),
    ] {
        let reply = list_with(app, &get_tasks_headers(hr, &ts, &new_nonce())).await;
        assert_eq!(
            reply.status.as_u16(),
            401,
            "timestamp {ts:?}: {}",
            reply.text
        );
        let message = reply.body["message"].as_str().unwrap_or_default();
        assert!(
            message == "invalid timestamp" || message == "stale timestamp",
            "timestamp {ts:?}: {message}"
        );
        assert_error_exact(&reply, 401, message);
    }
    let reply = list_with(app, &get_tasks_headers(hr, "abc", &new_nonce())).await;
    assert_error_exact(&reply, 401, "invalid timestamp");
}

async fn reused_nonce_is_401(app: &TestApp) {
    let hr = &app.org.hr;
    let headers = TestApp::headers_for(hr, &Method::GET, "/tasks", b"");
    assert_eq!(list_with(app, &headers).await.status.as_u16(), 200);
    assert_error_exact(&list_with(app, &headers).await, 401, "nonce already used");

    // The same nonce on another, correctly signed request is refused too.
    let nonce = headers.nonce.clone().unwrap();
    let ts = now_secs().to_string();
    let body = r#"{"title":"replayed nonce"}"#;
    let reused = Headers {
        timestamp: Some(ts.clone()),
        signature: Some(signature(
            &hr.secret,
            "POST",
            "/tasks",
            &ts,
            &nonce,
            body.as_bytes(),
        )),
        ..headers.clone()
    };
    let request = app.with_headers(Method::POST, "/tasks", &reused, Some(body.into()));
    assert_error_exact(&send(request).await, 401, "nonce already used");
    assert_eq!(task_count(app).await, 0, "the replay created nothing");

    // A replayed write does not write twice.
    let body = r#"{"title":"once"}"#;
    let headers = TestApp::headers_for(hr, &Method::POST, "/tasks", body.as_bytes());
    let first = send(app.with_headers(Method::POST, "/tasks", &headers, Some(body.into()))).await;
    assert_eq!(first.status.as_u16(), 200, "{}", first.text);
    let again = send(app.with_headers(Method::POST, "/tasks", &headers, Some(body.into()))).await;
    assert_error_exact(&again, 401, "nonce already used");
    assert_eq!(task_count(app).await, 1);

    // Nonces are remembered per agent: another agent may use the same one.
    let worker = app.worker(&app.org).await;
    let reply = list_with(
        app,
        &get_tasks_headers(&worker, &now_secs().to_string(), &nonce),
    )
    .await;
    assert_eq!(reply.status.as_u16(), 200, "{}", reply.text);
}

/// The purge of expired nonces keeps a nonce for as long as its request's timestamp could
/// still be accepted (decision D-10): a request signed 295 s ahead of the server's clock
/// stays fresh for almost ten minutes, so a purge run as if 9 min 50 s had passed must not
/// forget its nonce, and the replay is still refused. (A nonce kept only five minutes
/// from its use would be gone, and the replay let in.)
async fn a_purge_keeps_a_nonce_while_its_timestamp_could_pass(app: &TestApp) {
    let headers = get_tasks_headers(&app.org.hr, &(now_secs() + 295).to_string(), &new_nonce());
    assert_eq!(list_with(app, &headers).await.status.as_u16(), 200);
    let later = time::OffsetDateTime::now_utc() + time::Duration::seconds(590);
    NonceStore::purge_expired(&app.db().db, later)
        .await
        .unwrap();
    assert_error_exact(&list_with(app, &headers).await, 401, "nonce already used");
}

/// The same signed write sent four times at once: the nonce store lets exactly one in.
async fn concurrent_replays_are_accepted_once(app: &TestApp) {
    let body = r#"{"title":"raced"}"#;
    let headers = TestApp::headers_for(&app.org.hr, &Method::POST, "/tasks", body.as_bytes());
    let request = || send(app.with_headers(Method::POST, "/tasks", &headers, Some(body.into())));
    let replies = tokio::join!(request(), request(), request(), request());
    let replies = [replies.0, replies.1, replies.2, replies.3];
    let accepted = replies.iter().filter(|r| r.status.as_u16() == 200).count();
    assert_eq!(
        accepted,
        1,
        "{:?}",
        replies.iter().map(|r| &r.text).collect::<Vec<_>>()
    );
    for reply in replies.iter().filter(|r| r.status.as_u16() != 200) {
        assert_error_exact(reply, 401, "nonce already used");
    }
    assert_eq!(task_count(app).await, 1);
}

async fn forged_request_does_not_burn_its_nonce(app: &TestApp) {
    let hr = &app.org.hr;
    let nonce = new_nonce();
    let ts = now_secs().to_string();
    let forged = Headers {
        signature: Some("0".repeat(64)),
        ..get_tasks_headers(hr, &ts, &nonce)
    };
    assert_error_exact(&list_with(app, &forged).await, 401, "invalid signature");
    // Wrong key: an unknown agent using the same nonce.
    let ghost = Headers {
        agent_id: Some(unique_handle("ghost")),
        ..get_tasks_headers(hr, &ts, &nonce)
    };
    assert_error_exact(&list_with(app, &ghost).await, 401, "invalid signature");

    let good = get_tasks_headers(hr, &ts, &nonce);
    assert_eq!(
        list_with(app, &good).await.status.as_u16(),
        200,
        "the nonce is still fresh"
    );
    assert_error_exact(&list_with(app, &good).await, 401, "nonce already used");

    // A signed request refused for the agent's status does not burn it either.
    let suspended = app.add_agent(&app.org, "worker", "suspended").await;
    let nonce = new_nonce();
    let headers = get_tasks_headers(&suspended, &now_secs().to_string(), &nonce);
    assert_error_exact(&list_with(app, &headers).await, 401, "agent is not active");
    // Stored straight away, so that nothing but the status changes (no route's event).
    change_agent(app, &suspended, |a| a.status = AgentStatus::Active).await;
    wait_for_credential_cache().await;
    assert_eq!(list_with(app, &headers).await.status.as_u16(), 200);
}

/// Waits until the authenticator has forgotten what it read of every agent.
async fn wait_for_credential_cache() {
    tokio::time::sleep(CREDENTIAL_TTL + Duration::from_millis(100)).await;
}

/// Credentials are cached briefly, but a suspension (or revocation) is seen within
/// `CREDENTIAL_TTL` (one second): after it, the agent's signed requests are refused.
async fn a_suspension_is_seen_within_the_credential_ttl(app: &TestApp) {
    let worker = app.worker(&app.org).await;
    assert_eq!(app.get(&worker, "/tasks").await.status.as_u16(), 200);
    for status in [AgentStatus::Suspended, AgentStatus::Revoked] {
        // Stored by another instance, as it were: this one's credential cache is not told.
        change_agent(app, &worker, move |a| a.status = status).await;
        wait_for_credential_cache().await;
        assert_error_exact(
            &app.get(&worker, "/tasks").await,
            401,
            "agent is not active",
        );
    }
}

async fn nonce_syntax_is_checked(app: &TestApp) {
    let hr = &app.org.hr;
    let ts = now_secs().to_string();
    for nonce in ["n".repeat(129), "tab\tbed".to_owned()] {
        let reply = list_with(app, &get_tasks_headers(hr, &ts, &nonce)).await;
        assert_error_exact(&reply, 401, "invalid nonce");
    }
    let long = "n".repeat(128);
    let reply = list_with(app, &get_tasks_headers(hr, &ts, &long)).await;
    assert_eq!(reply.status.as_u16(), 200, "128 characters: {}", reply.text);
    let reply = list_with(app, &get_tasks_headers(hr, &ts, "with space")).await;
    assert_eq!(
        reply.status.as_u16(),
        200,
        "space is printable: {}",
        reply.text
    );
    let reply = list_with(app, &get_tasks_headers(hr, &ts, "!~")).await;
    assert_eq!(
        reply.status.as_u16(),
        200,
        "printable ASCII: {}",
        reply.text
    );
}

async fn non_active_agents_are_401(app: &TestApp) {
    for status in ["suspended", "revoked", "pending"] {
        let agent = app.add_agent(&app.org, "worker", status).await;
        assert_error_exact(&app.get(&agent, "/tasks").await, 401, "agent is not active");
        let reply = app
            .post(&agent, "/tasks", r#"{"title":"from a non-active agent"}"#)
            .await;
        assert_error_exact(&reply, 401, "agent is not active");
    }
    assert_eq!(task_count(app).await, 0);
    let active = app.add_agent(&app.org, "worker", "active").await;
    assert_eq!(app.get(&active, "/tasks").await.status.as_u16(), 200);
}
