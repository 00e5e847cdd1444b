//! A2A push notification configs: set with a message or on their own, through both
//! bindings; each status change of their task is sent to a receiver on loopback as a
//! `StreamResponse`, with the config's token and `Authorization`, signed with the token,
//! and nothing about other tasks. Configs are write-only in their secrets, stay out of
//! `/webhooks`, and follow the webhooks' policy.

use std::time::Duration;

use muster_auth::signing::HmacSha256;
use muster_outbound::delivery_signature;
use reqwest::Method;
use serde_json::{Value, json};

use crate::a2a::{error_code, message, rest, result, writer_key};
use crate::helpers::{TestApp, send, str_of};
use crate::hook_receiver::Receiver;
use crate::task_support::walk;

api_tests!(with crate::webhook_support::loopback_hooks();
    a_push_config_hears_its_tasks_status_changes,
    push_configs_are_set_read_listed_and_deleted,
    push_configs_over_rest,
    push_configs_follow_the_webhooks_policy,
);

const WAIT: Duration = Duration::from_secs(10);

async fn a_push_config_hears_its_tasks_status_changes(app: &TestApp) {
    let receiver = Receiver::start();
    let key = writer_key(app).await;
    let config = json!({"url": receiver.url("/a2a"), "token": "tok-1",
                        "authentication": {"scheme": "Bearer", "credentials": "cred-1"}});
    let sent = result(
        app,
        &key,
        "SendMessage",
        &json!({"message": message("Watch me"),
                "configuration": {"taskPushNotificationConfig": config}}),
    )
    .await;
    let id = str_of(&sent["task"], "id");
    // Another task's changes are not this config's business.
    let other = app.task_titled(&app.org.hr, "Unwatched").await;
    walk(app, &app.org.hr, &other, &["in_progress"]).await;
    walk(app, &app.org.hr, &id, &["in_progress"]).await;
    let canceled = result(app, &key, "CancelTask", &json!({"id": id})).await;
    assert_eq!(canceled["status"]["state"], "TASK_STATE_CANCELED");
    let got = receiver.wait_for(2, WAIT).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let got_all = receiver.received();
    assert_eq!(got_all.len(), 2, "two pushes, none for the other task");
    let states: Vec<Value> = got
        .iter()
        .map(|push| push.json()["statusUpdate"]["status"]["state"].clone())
        .collect();
    assert_eq!(
        states,
        [json!("TASK_STATE_WORKING"), json!("TASK_STATE_CANCELED")]
    );
    for push in &got {
        assert_eq!(push.path, "/a2a");
        assert_eq!(push.header("content-type"), Some("application/a2a+json"));
        assert_eq!(push.header("x-a2a-notification-token"), Some("tok-1"));
        assert_eq!(push.header("authorization"), Some("Bearer cred-1"));
        assert_eq!(
            push.header("x-service-signature").unwrap(),
            delivery_signature(&HmacSha256, "tok-1", &push.body),
            "signed with the token"
        );
        let body = push.json();
        assert_eq!(
            body.as_object().unwrap().len(),
            1,
            "one StreamResponse case"
        );
        assert_eq!(body["statusUpdate"]["taskId"], json!(id));
        assert_eq!(body["statusUpdate"]["contextId"], json!(id));
        assert!(body["statusUpdate"]["status"]["timestamp"].is_string());
    }
    // The config: its id picked by the server, its secrets never read back.
    let listed = result(
        app,
        &key,
        "ListTaskPushNotificationConfigs",
        &json!({"taskId": id}),
    )
    .await;
    let configs = listed["configs"].as_array().unwrap();
    assert_eq!(configs.len(), 1, "{listed}");
    let config = &configs[0];
    assert!(!str_of(config, "id").is_empty());
    assert_eq!(config["taskId"], json!(id));
    assert_eq!(config["url"], json!(receiver.url("/a2a")));
    assert_eq!(config["authentication"], json!({"scheme": "Bearer"}));
    assert!(config.get("token").is_none(), "{config}");
    assert!(!listed.to_string().contains("cred-1") && !listed.to_string().contains("tok-1"));
    // Push configs are not the organization's webhooks.
    let admin = app.admin_token(&app.org).await;
    let hooks = send(app.bearer(&admin, Method::GET, "/api/v1/webhooks", None)).await;
    assert_eq!(hooks.status, 200, "{}", hooks.text);
    assert!(
        !hooks.text.contains(&receiver.url("/a2a")),
        "{}",
        hooks.text
    );
    receiver.stop().await;
}

async fn push_configs_are_set_read_listed_and_deleted(app: &TestApp) {
    let receiver = Receiver::start();
    let key = writer_key(app).await;
    let id = app.task_titled(&app.org.hr, "Configured").await;
    let create = |config_id: &str, path: &str| json!({"taskId": id, "id": config_id, "url": receiver.url(path)});
    let made = result(
        app,
        &key,
        "CreateTaskPushNotificationConfig",
        &create("cfg-1", "/one"),
    )
    .await;
    assert_eq!(
        made,
        json!({"id": "cfg-1", "taskId": id, "url": receiver.url("/one")})
    );
    result(
        app,
        &key,
        "CreateTaskPushNotificationConfig",
        &create("cfg-2", "/two"),
    )
    .await;
    // Setting an id again replaces that config.
    let replaced = result(
        app,
        &key,
        "CreateTaskPushNotificationConfig",
        &create("cfg-1", "/uno"),
    )
    .await;
    assert_eq!(replaced["url"], json!(receiver.url("/uno")));
    let ids = |listed: &Value| -> Vec<String> {
        listed["configs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| str_of(c, "id"))
            .collect()
    };
    let list = json!({"taskId": id});
    let listed = result(app, &key, "ListTaskPushNotificationConfigs", &list).await;
    assert_eq!(ids(&listed), ["cfg-1", "cfg-2"]);
    assert_eq!(listed["nextPageToken"], "");
    let one = json!({"taskId": id, "id": "cfg-1"});
    let got = result(app, &key, "GetTaskPushNotificationConfig", &one).await;
    assert_eq!(got["url"], json!(receiver.url("/uno")));
    // A move reaches both configs once.
    walk(app, &app.org.hr, &id, &["in_progress"]).await;
    let pushes = receiver.wait_for(2, WAIT).await;
    let mut paths: Vec<&str> = pushes.iter().map(|p| p.path.as_str()).collect();
    paths.sort_unstable();
    assert_eq!(paths, ["/two", "/uno"]);
    // Deleting is idempotent; a deleted config is not found and hears nothing more.
    for _ in 0..2 {
        let deleted = result(app, &key, "DeleteTaskPushNotificationConfig", &one).await;
        assert_eq!(deleted, Value::Null);
    }
    assert_eq!(
        error_code(app, &key, "GetTaskPushNotificationConfig", &one).await,
        -32001
    );
    let listed = result(app, &key, "ListTaskPushNotificationConfigs", &list).await;
    assert_eq!(ids(&listed), ["cfg-2"]);
    walk(app, &app.org.hr, &id, &["blocked"]).await;
    let pushes = receiver.wait_for(3, WAIT).await;
    assert_eq!(pushes.len(), 3);
    assert_eq!(pushes[2].path, "/two");
    // Set and deleted configs are in the audit log.
    let admin = app.admin_token(&app.org).await;
    let events = send(app.bearer(
        &admin,
        Method::GET,
        "/events?type=webhook.deleted&limit=10",
        None,
    ))
    .await;
    assert_eq!(events.status, 200, "{}", events.text);
    assert!(events.text.contains("A2A push cfg-1"), "{}", events.text);
    receiver.stop().await;
}

async fn push_configs_over_rest(app: &TestApp) {
    let receiver = Receiver::start();
    let key = writer_key(app).await;
    let id = app.task_titled(&app.org.hr, "Rest").await;
    let path = format!("/a2a/rest/tasks/{id}/pushNotificationConfigs");
    let config = json!({"id": "r1", "url": receiver.url("/r"), "token": "t",
                        "authentication": {"scheme": "Basic", "credentials": "dXNlcjpw"}});
    let made = send(rest(app, &key, Method::POST, &path).json(&config)).await;
    assert_eq!(made.status, 200, "{}", made.text);
    assert_eq!(made.body["id"], "r1");
    assert_eq!(made.body["taskId"], json!(id));
    assert_eq!(made.body["authentication"], json!({"scheme": "Basic"}));
    let wrong_task = json!({"taskId": uuid::Uuid::now_v7(), "url": receiver.url("/r")});
    let refused = send(rest(app, &key, Method::POST, &path).json(&wrong_task)).await;
    assert_eq!(refused.status, 400, "{}", refused.text);
    let listed = send(rest(app, &key, Method::GET, &path)).await;
    assert_eq!(listed.status, 200, "{}", listed.text);
    assert_eq!(listed.body["configs"].as_array().unwrap().len(), 1);
    let one = format!("{path}/r1");
    let got = send(rest(app, &key, Method::GET, &one)).await;
    assert_eq!(got.status, 200, "{}", got.text);
    assert_eq!(got.body["url"], json!(receiver.url("/r")));
    walk(app, &app.org.hr, &id, &["in_progress"]).await;
    let pushes = receiver.wait_for(1, WAIT).await;
    assert_eq!(pushes[0].header("authorization"), Some("Basic dXNlcjpw"));
    for _ in 0..2 {
        let deleted = send(rest(app, &key, Method::DELETE, &one)).await;
        assert_eq!(deleted.status, 200, "{}", deleted.text);
        assert_eq!(deleted.body, json!({}));
    }
    let gone = send(rest(app, &key, Method::GET, &one)).await;
    assert_eq!(gone.status, 404, "{}", gone.text);
    assert_eq!(gone.body["error"]["details"][0]["reason"], "TASK_NOT_FOUND");
    let missing = format!(
        "/a2a/rest/tasks/{}/pushNotificationConfigs",
        uuid::Uuid::now_v7()
    );
    let unknown = send(rest(app, &key, Method::GET, &missing)).await;
    assert_eq!(unknown.status, 404, "{}", unknown.text);
    receiver.stop().await;
}

async fn push_configs_follow_the_webhooks_policy(app: &TestApp) {
    let key = writer_key(app).await;
    let id = app.task_titled(&app.org.hr, "Guarded").await;
    let code = |params: Value| {
        let key = key.clone();
        async move { error_code(app, &key, "CreateTaskPushNotificationConfig", &params).await }
    };
    // Loopback may be called here (the settings allow it); a scheme other than http(s)
    // may not.
    let url = "http://127.0.0.1:9/in";
    for bad in [
        json!({"taskId": id, "url": ""}),
        json!({"taskId": id, "url": "ftp://hooks.example/in"}),
        json!({"taskId": id, "url": url, "id": "a/b"}),
        json!({"taskId": id, "url": url, "id": "x".repeat(129)}),
        json!({"taskId": id, "url": url, "token": "has space"}),
        json!({"taskId": id, "url": url, "authentication": {"scheme": "Bear er"}}),
        json!({"taskId": id, "url": url, "authentication": {"scheme": ""}}),
        json!({"taskId": id, "url": url,
               "authentication": {"scheme": "Bearer", "credentials": "a\nb"}}),
        json!({"taskId": id, "url": url, "tenant": "acme"}),
    ] {
        assert_eq!(code(bad.clone()).await, -32602, "{bad}");
    }
    let missing = json!({"taskId": uuid::Uuid::now_v7(), "url": url});
    assert_eq!(code(missing).await, -32001);
    // A task has at most ten configs.
    for n in 0..10 {
        let config = json!({"taskId": id, "id": format!("c{n}"), "url": url});
        result(app, &key, "CreateTaskPushNotificationConfig", &config).await;
    }
    let eleventh = json!({"taskId": id, "id": "c10", "url": url});
    assert_eq!(code(eleventh).await, -32602);
    let again = json!({"taskId": id, "id": "c3", "url": url});
    result(app, &key, "CreateTaskPushNotificationConfig", &again).await;
    // A reply carrying an eleventh config is refused before it is posted; one naming
    // its own task (rather than none) is accepted.
    let history = |task: Value| task["history"].as_array().map_or(0, Vec::len);
    let before = history(result(app, &key, "GetTask", &json!({"id": id})).await);
    let reply = |config: Value| {
        json!({"message": {"messageId": uuid::Uuid::now_v7().to_string(), "role": "ROLE_USER",
                           "taskId": id, "parts": [{"text": "and tell me"}]},
               "configuration": {"taskPushNotificationConfig": config}})
    };
    let eleventh = reply(json!({"url": url, "id": "c11"}));
    assert_eq!(
        error_code(app, &key, "SendMessage", &eleventh).await,
        -32602
    );
    let after = history(result(app, &key, "GetTask", &json!({"id": id})).await);
    assert_eq!(after, before, "the refused reply posted no comment");
    let replaced = reply(json!({"url": url, "id": "c4", "taskId": id}));
    result(app, &key, "SendMessage", &replaced).await;
    // Readers may list but not set; agents may do neither.
    let admin = app.admin_token(&app.org).await;
    let reader = app.api_key(&admin, &["read"]).await;
    let config = json!({"taskId": id, "url": url});
    assert_eq!(
        error_code(app, &reader, "CreateTaskPushNotificationConfig", &config).await,
        -32040
    );
    let list = json!({"taskId": id});
    let listed = result(app, &reader, "ListTaskPushNotificationConfigs", &list).await;
    assert_eq!(listed["configs"].as_array().unwrap().len(), 10);
    let body = crate::a2a::request("ListTaskPushNotificationConfigs", &list);
    let signed = send(
        app.signed(&app.org.hr, Method::POST, "/a2a/jsonrpc", Some(&body))
            .header("A2A-Version", "1.0")
            .header("content-type", "application/json"),
    )
    .await;
    assert_eq!(signed.body["error"]["code"], -32040, "{}", signed.text);
}
