//! The Rust client (`muster-client`) against a live server: each credential scheme, an
//! agent's whole loop, the API's refusals, token renewal, a retry that must not take
//! effect twice, and the live event stream.

use std::time::Duration;

use muster_client::types::auth::{CreateApiKeyBody, TokensResponse, TotpCodeBody, TotpSetupBody};
use muster_client::types::claims::{ClaimBody, HeartbeatBody};
use muster_client::types::events::ListEventsQuery;
use muster_client::types::model::TaskStatus;
use muster_client::types::task_links::CommentRequest;
use muster_client::types::tasks::{CreateTaskRequest, ListTasksQuery, TransitionRequest};
use muster_client::{Client, Credentials, Error, UserSession, login_body};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use uuid::Uuid;

use crate::helpers::{ADMIN_PASSWORD, TestApp};

api_tests!(
    an_agent_claims_comments_and_finishes_a_task,
    refusals_come_back_with_the_apis_status_and_message,
    a_user_signs_in_renews_tokens_and_makes_an_api_key,
    a_second_factor_is_asked_for_then_accepted,
    a_post_retried_after_a_lost_answer_takes_effect_once,
    the_event_stream_hands_out_events_and_resumes_after_one
);

fn task(title: &str) -> CreateTaskRequest {
    CreateTaskRequest {
        title: title.to_owned(),
        ..CreateTaskRequest::default()
    }
}

async fn an_agent_claims_comments_and_finishes_a_task(app: &TestApp) {
    let worker = app.worker(&app.org).await;
    let client = Client::agent(&app.base, &worker.handle, &worker.secret).unwrap();

    let created = client.create_task(&task("Ship the client")).await.unwrap();
    assert_eq!(created.status, TaskStatus::Todo);
    assert_eq!(
        client.get_task(created.id).await.unwrap().title,
        "Ship the client"
    );
    let listed = client
        .list_tasks(&ListTasksQuery {
            status: Some(TaskStatus::Todo),
            ..ListTasksQuery::default()
        })
        .await
        .unwrap();
    assert!(listed.data.iter().any(|t| t.id == created.id), "{listed:?}");

    let claimed = client
        .claim_task(&ClaimBody::default())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(claimed.id, created.id);
    assert_eq!(claimed.status, TaskStatus::InProgress);
    assert_eq!(claimed.assignee_id, Some(worker.uuid));
    let kept = client
        .heartbeat_task(claimed.id, &HeartbeatBody::default())
        .await
        .unwrap();
    assert!(kept.lease_expires_at.is_some());
    assert!(
        client
            .claim_task(&ClaimBody::default())
            .await
            .unwrap()
            .is_none()
    );

    let comment = client
        .comment_on_task(
            created.id,
            &CommentRequest {
                body: "done, see the PR".to_owned(),
                ..CommentRequest::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(comment.agent_id, Some(worker.uuid));
    let done = client
        .transition_task(
            created.id,
            &TransitionRequest {
                status: TaskStatus::Done,
                reason: None,
                result: Some("Shipped".into()),
                outcome: None,
            },
        )
        .await
        .unwrap();
    assert_eq!(done.status, TaskStatus::Done);
    assert_eq!(done.result.as_deref(), Some("Shipped"));
}

async fn refusals_come_back_with_the_apis_status_and_message(app: &TestApp) {
    let worker = app.worker(&app.org).await;
    let client = Client::agent(&app.base, &worker.handle, &worker.secret).unwrap();

    let err = client
        .create_task(&task(&"x".repeat(256)))
        .await
        .unwrap_err();
    let refusal = err
        .api()
        .unwrap_or_else(|| panic!("not a refusal: {err:?}"));
    assert_eq!(
        (refusal.status(), refusal.code(), refusal.message()),
        (
            400,
            Some("validation_failed"),
            "title must be at most 255 characters"
        ),
    );
    assert!(!err.is_retryable());
    let err = client.get_task(Uuid::now_v7()).await.unwrap_err();
    assert_eq!(err.status(), Some(404), "{err:?}");
    assert_eq!(err.code(), Some("task_not_found"), "{err:?}");

    let forger = Client::agent(&app.base, &worker.handle, "0".repeat(64)).unwrap();
    let err = forger.get_task(Uuid::now_v7()).await.unwrap_err();
    assert_eq!(err.status(), Some(401), "{err:?}");
    assert_eq!(err.code(), Some("invalid_signature"), "{err:?}");
    // TLS is set up (no missing crypto provider): speaking it to a plain-HTTP server
    // fails the handshake, as a transport error.
    let tls = Client::anonymous(&app.base.replace("http://", "https://")).unwrap();
    let err = tls.health().await.unwrap_err();
    assert!(matches!(err, Error::Transport(_)), "{err:?}");
    assert!(matches!(
        Client::anonymous("ftp://127.0.0.1/"),
        Err(Error::Request(_))
    ));
    assert_eq!(client.health().await.unwrap().status, "ok");

    // Nothing was created by the refused calls.
    let page = client.list_tasks(&ListTasksQuery::default()).await.unwrap();
    assert!(page.data.is_empty(), "{page:?}");
}

async fn a_second_factor_is_asked_for_then_accepted(app: &TestApp) {
    let mut body = login_body(&app.org.admin_email, ADMIN_PASSWORD);
    body.org_id = Some(app.org.id);
    let user = Client::login(&app.base, &body).await.unwrap();
    let setup = user
        .set_up_totp(&TotpSetupBody {
            password: ADMIN_PASSWORD.to_owned(),
        })
        .await
        .unwrap();
    let id = user.me().await.unwrap().id;
    let now = time::OffsetDateTime::now_utc();
    let code = crate::auth_totp::code(app, id, crate::auth_totp::Secret::Pending, now).await;
    user.verify_totp(&TotpCodeBody { code }).await.unwrap();

    // Without a code: the client says a second factor is needed, not that it failed.
    let err = Client::login(&app.base, &body).await.unwrap_err();
    assert!(matches!(err, Error::TwoFactorRequired), "{err:?}");
    // A wrong code is the API's refusal.
    body.totp_code = Some("000000".to_owned());
    let err = Client::login(&app.base, &body).await.unwrap_err();
    assert_eq!(err.status(), Some(401), "{err:?}");
    // A recovery code signs in.
    body.totp_code = Some(setup.recovery_codes[0].clone());
    let again = Client::login(&app.base, &body).await.unwrap();
    assert!(again.me().await.unwrap().totp_enabled);
}

async fn a_user_signs_in_renews_tokens_and_makes_an_api_key(app: &TestApp) {
    let mut body = login_body(&app.org.admin_email, ADMIN_PASSWORD);
    body.org_id = Some(app.org.id);
    let user = Client::login(&app.base, &body).await.unwrap();
    assert_eq!(user.me().await.unwrap().email, app.org.admin_email);

    let mut wrong = login_body(&app.org.admin_email, "not the password");
    wrong.org_id = Some(app.org.id);
    let err = Client::login(&app.base, &wrong).await.unwrap_err();
    assert_eq!(err.status(), Some(401), "{err:?}");

    // An access token the server refuses is renewed with the refresh token, once.
    let answer = app.login(&app.org.admin_email, ADMIN_PASSWORD).await;
    let mut tokens: TokensResponse = serde_json::from_value(answer).unwrap();
    "no-longer-valid".clone_into(&mut tokens.access_token);
    let stale = Client::new(&app.base, Credentials::User(UserSession::new(&tokens))).unwrap();
    assert_eq!(stale.me().await.unwrap().email, app.org.admin_email);

    // One about to run out is renewed before it is sent.
    let answer = app.login(&app.org.admin_email, ADMIN_PASSWORD).await;
    let mut tokens: TokensResponse = serde_json::from_value(answer).unwrap();
    tokens.expires_in = 0;
    let expiring = Client::new(&app.base, Credentials::User(UserSession::new(&tokens))).unwrap();
    assert_eq!(expiring.me().await.unwrap().email, app.org.admin_email);

    let key = user
        .create_api_key(&CreateApiKeyBody {
            name: "ci".to_owned(),
            ..CreateApiKeyBody::default()
        })
        .await
        .unwrap();
    let secret = key.secret.clone().unwrap();
    let script = Client::api_key(&app.base, secret).unwrap();
    script.list_tasks(&ListTasksQuery::default()).await.unwrap();
    let keys = user.list_api_keys().await.unwrap();
    assert!(keys.iter().any(|k| k.id == key.id), "{keys:?}");
    user.revoke_api_key(key.id).await.unwrap();
    let err = script
        .list_tasks(&ListTasksQuery::default())
        .await
        .unwrap_err();
    assert_eq!(err.status(), Some(401), "{err:?}");

    user.logout().await.unwrap();
}

/// A proxy in front of the app that passes the first request on but drops the
/// connection instead of the answer; later connections pass through.
async fn lossy_proxy(upstream: String) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let mut first = true;
        while let Ok((mut client, _)) = listener.accept().await {
            let mut server = TcpStream::connect(&upstream).await.unwrap();
            if first {
                first = false;
                tokio::spawn(async move {
                    let mut buf = vec![0; 64 * 1024];
                    let n = client.read(&mut buf).await.unwrap();
                    server.write_all(&buf[..n]).await.unwrap();
                    // Wait for the answer, then lose it.
                    let _ = server.read(&mut buf).await;
                    drop(client);
                });
            } else {
                tokio::spawn(async move {
                    let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
                });
            }
        }
    });
    format!("http://{address}")
}

async fn a_post_retried_after_a_lost_answer_takes_effect_once(app: &TestApp) {
    let worker = app.worker(&app.org).await;
    let upstream = app.base.trim_start_matches("http://").to_owned();
    let proxy = lossy_proxy(upstream).await;
    let client = Client::agent(&proxy, &worker.handle, &worker.secret).unwrap();

    let created = client.create_task(&task("Exactly once")).await.unwrap();

    let direct = Client::agent(&app.base, &worker.handle, &worker.secret).unwrap();
    let page = direct.list_tasks(&ListTasksQuery::default()).await.unwrap();
    let copies: Vec<_> = page
        .data
        .iter()
        .filter(|t| t.title == "Exactly once")
        .collect();
    assert_eq!(copies.len(), 1, "{page:?}");
    assert_eq!(copies[0].id, created.id);

    // Without retries the lost answer is the caller's to handle.
    let proxy = lossy_proxy(app.base.trim_start_matches("http://").to_owned()).await;
    let once = Client::agent(&proxy, &worker.handle, &worker.secret)
        .unwrap()
        .with_retries(0);
    let err = once.create_task(&task("Maybe")).await.unwrap_err();
    assert!(matches!(err, Error::Transport(_)), "{err:?}");
}

async fn the_event_stream_hands_out_events_and_resumes_after_one(app: &TestApp) {
    let worker = app.worker(&app.org).await;
    let client = Client::agent(&app.base, &worker.handle, &worker.secret).unwrap();
    let filter = ListEventsQuery {
        event_type: Some("task.created".to_owned()),
        ..ListEventsQuery::default()
    };
    let mut stream = client.stream_events(&filter, None).unwrap();
    // The stream opens on the first call; create the tasks once it is reading.
    let writer = client.clone();
    let titles = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        let first = writer.create_task(&task("first")).await.unwrap();
        let second = writer.create_task(&task("second")).await.unwrap();
        (first.id, second.id)
    });
    let one = next(&mut stream).await;
    let two = next(&mut stream).await;
    let (first, second) = titles.await.unwrap();
    assert_eq!((one.entity_id, two.entity_id), (first, second));
    assert_eq!(stream.last_event_id(), Some(two.id));

    let mut resumed = client.stream_events(&filter, Some(one.id)).unwrap();
    assert_eq!(next(&mut resumed).await.id, two.id);
}

/// The stream's next event, failing after 20 seconds.
async fn next(
    stream: &mut muster_client::EventStream,
) -> muster_client::types::events::EventResponse {
    tokio::time::timeout(Duration::from_secs(20), stream.next())
        .await
        .unwrap()
        .unwrap()
}
