//! `POST|GET /tasks/:id/comments`: authors (D-40), threads, body limits (D-5),
//! validation (D-3, D-4), paging oldest first (D-7, D-40), scoping (D-8) and the
//! `task.commented` event (D-70).

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use uuid::Uuid;

use crate::helpers::{
    Agent, Reply, TestApp, assert_bad_queries, assert_error, assert_timestamp, keys_of, send,
    str_of,
};

api_tests!(
    agent_comment_is_answered_stored_and_listed,
    user_comment_names_the_user,
    replies_thread_under_comments_of_the_same_task,
    comment_bodies_are_checked,
    invalid_comment_requests_are_400_and_change_nothing,
    comments_are_listed_oldest_first_in_pages,
    bad_paging_queries_are_400,
    comments_are_audited,
    comments_on_missing_or_foreign_tasks_are_404,
    read_only_callers_cannot_comment,
);

/// `POST /tasks/{task}/comments` with a raw body.
async fn post_raw(app: &TestApp, agent: &Agent, task: &str, body: &str) -> Reply {
    app.post(agent, &format!("/tasks/{task}/comments"), body)
        .await
}

/// `POST /tasks/{task}/comments` with `body`.
async fn comment(app: &TestApp, agent: &Agent, task: &str, body: &Value) -> Reply {
    post_raw(app, agent, task, &body.to_string()).await
}

/// Comments `text` on `task`, answering the comment (asserting 200).
async fn say(app: &TestApp, agent: &Agent, task: &str, text: &str) -> Value {
    comment(app, agent, task, &json!({ "body": text }))
        .await
        .data()
        .clone()
}

/// The first page of comments of `task`.
async fn comments_of(app: &TestApp, agent: &Agent, task: &str) -> Vec<Value> {
    app.get(agent, &format!("/tasks/{task}/comments"))
        .await
        .list()
        .clone()
}

/// The id of the user holding `token`.
async fn user_id(app: &TestApp, token: &str) -> String {
    let me = send(app.bearer(token, Method::GET, "/auth/me", None)).await;
    assert_eq!(me.status, StatusCode::OK, "{}", me.text);
    str_of(&me.body, "id")
}

async fn agent_comment_is_answered_stored_and_listed(app: &TestApp) {
    let worker = app.worker(&app.org).await;
    let task = app.task_titled(&app.org.hr, "discussed").await;
    // Bodies are kept as written: Markdown, surrounding spaces and all.
    let text = "  Looks **good**\n\n- ship it ✅  ";
    let reply = comment(app, &worker, &task, &json!({ "body": text })).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);
    assert_eq!(keys_of(&reply.body), ["data"]);
    let answered = reply.data().clone();
    assert_eq!(
        keys_of(&answered),
        [
            "agentId",
            "body",
            "createdAt",
            "id",
            "parentCommentId",
            "taskId",
            "userId"
        ]
    );
    let id = Uuid::parse_str(&str_of(&answered, "id")).unwrap();
    assert_eq!(id.get_version_num(), 7, "ids are UUID v7 (D-6)");
    assert_eq!(answered["taskId"], task);
    assert_eq!(answered["body"], text);
    assert_eq!(answered["agentId"], worker.uuid.to_string());
    assert_eq!(answered["userId"], Value::Null);
    assert_eq!(answered["parentCommentId"], Value::Null);
    assert_timestamp(&answered, "createdAt");

    // Listed as answered, by anyone of the organization.
    assert_eq!(
        comments_of(app, &app.org.hr, &task).await,
        std::slice::from_ref(&answered)
    );
    // A comment does not change the task's fields.
    let read = app.get(&worker, &format!("/tasks/{task}")).await;
    assert_eq!(read.data()["status"], "todo");
    // Other tasks have their own comments.
    let other = app.task_titled(&app.org.hr, "quiet").await;
    assert!(comments_of(app, &worker, &other).await.is_empty());
}

async fn user_comment_names_the_user(app: &TestApp) {
    let task = app.task_titled(&app.org.hr, "reviewed by people").await;
    let (_, token) = app.user_token(&app.org, "operator").await;
    let user = user_id(app, &token).await;
    let path = format!("/tasks/{task}/comments");
    let body = json!({ "body": "from a person" });
    let reply = send(app.bearer(&token, Method::POST, &path, Some(&body))).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);
    let answered = reply.data().clone();
    assert_eq!(answered["userId"], user);
    assert_eq!(answered["agentId"], Value::Null);
    assert_eq!(answered["body"], "from a person");

    // An admin's API key acts as that admin (D-17).
    let admin = app.admin_token(&app.org).await;
    let admin_id = user_id(app, &admin).await;
    let key = app.api_key(&admin, &["write"]).await;
    let body = json!({ "body": "from a key" });
    let reply = send(app.bearer(&key, Method::POST, &path, Some(&body))).await;
    let by_key = reply.data().clone();
    assert_eq!(by_key["userId"], admin_id);
    assert_eq!(by_key["agentId"], Value::Null);

    // An agent's reply to the user's comment.
    let hr = &app.org.hr;
    let body = json!({ "body": "noted", "parentCommentId": answered["id"] });
    let reply = comment(app, hr, &task, &body).await.data().clone();
    assert_eq!(reply["agentId"], hr.uuid.to_string());
    assert_eq!(reply["userId"], Value::Null);

    let listed = send(app.bearer(&token, Method::GET, &path, None)).await;
    assert_eq!(listed.list(), &[answered, by_key, reply]);
}

async fn replies_thread_under_comments_of_the_same_task(app: &TestApp) {
    let hr = &app.org.hr;
    let worker = app.worker(&app.org).await;
    let task = app.task_titled(hr, "threaded").await;
    let elsewhere = app.task_titled(hr, "elsewhere").await;
    let root = say(app, hr, &task, "question").await;
    let foreign = say(app, hr, &elsewhere, "other thread").await;

    let body = json!({ "body": "answer", "parentCommentId": root["id"] });
    let answer = comment(app, &worker, &task, &body).await.data().clone();
    assert_eq!(answer["parentCommentId"], root["id"]);
    assert_eq!(answer["taskId"], task);
    // A reply to a reply.
    let body = json!({ "body": "follow-up", "parentCommentId": answer["id"] });
    let follow_up = comment(app, hr, &task, &body).await.data().clone();
    assert_eq!(follow_up["parentCommentId"], answer["id"]);
    // An explicit null parent is a top-level comment.
    let body = json!({ "body": "new topic", "parentCommentId": null });
    let top = comment(app, hr, &task, &body).await.data().clone();
    assert_eq!(top["parentCommentId"], Value::Null);

    // The parent must be a comment of the same task (D-40): 400, nothing stored.
    let body = json!({ "body": "misplaced", "parentCommentId": foreign["id"] });
    assert_error(
        &comment(app, hr, &task, &body).await,
        400,
        "parentCommentId",
    );
    // ... nor of another organization's task, nor unknown, nor a task's id.
    let theirs = app.task_titled(&app.other.hr, "theirs").await;
    let their_comment = say(app, &app.other.hr, &theirs, "theirs").await;
    for parent in [
        their_comment["id"].clone(),
        json!(Uuid::now_v7()),
        json!(task),
    ] {
        let body = json!({ "body": "orphan", "parentCommentId": parent });
        assert_error(
            &comment(app, hr, &task, &body).await,
            400,
            "parentCommentId",
        );
    }
    let body = json!({ "body": "bad", "parentCommentId": "not-a-uuid" });
    assert_error(
        &comment(app, hr, &task, &body).await,
        400,
        "parentCommentId",
    );

    assert_eq!(
        comments_of(app, hr, &task).await,
        [root, answer, follow_up, top]
    );
    assert_eq!(comments_of(app, hr, &elsewhere).await, [foreign]);
    assert_eq!(
        comments_of(app, &app.other.hr, &theirs).await,
        [their_comment]
    );
}

async fn comment_bodies_are_checked(app: &TestApp) {
    let hr = &app.org.hr;
    let task = app.task_titled(hr, "limits").await;
    for (text, message) in [
        (String::new(), "body must be 1 to 20000 characters"),
        (" ".into(), "body must not be blank"),
        (" \n\t \r\n".into(), "body must not be blank"),
        ("x".repeat(20_001), "body must be 1 to 20000 characters"),
        // Characters, not bytes: 20,001 two-byte characters.
        ("é".repeat(20_001), "body must be 1 to 20000 characters"),
    ] {
        let reply = comment(app, hr, &task, &json!({ "body": text })).await;
        assert_error(&reply, 400, message);
    }
    assert!(comments_of(app, hr, &task).await.is_empty());

    // The bounds themselves are fine: one character, and 20,000 (also as 40,000 bytes).
    for text in ["x".to_owned(), "x".repeat(20_000), "é".repeat(20_000)] {
        let answered = say(app, hr, &task, &text).await;
        assert_eq!(answered["body"], text);
    }
    let stored: Vec<usize> = comments_of(app, hr, &task)
        .await
        .iter()
        .map(|c| c["body"].as_str().unwrap().chars().count())
        .collect();
    assert_eq!(stored, [1, 20_000, 20_000]);
}

async fn invalid_comment_requests_are_400_and_change_nothing(app: &TestApp) {
    let hr = &app.org.hr;
    let task = app.task_titled(hr, "strict").await;
    let cases: Vec<(String, &str)> = vec![
        ("{}".into(), "body is required"),
        (
            format!(r#"{{"parentCommentId":"{}"}}"#, Uuid::now_v7()),
            "body is required",
        ),
        (r#"{"body":null}"#.into(), "body"),
        (r#"{"body":42}"#.into(), "body"),
        (r#"{"body":["a"]}"#.into(), "body"),
        (
            r#"{"body":"x","parentCommentId":42}"#.into(),
            "parentCommentId",
        ),
        (
            r#"{"body":"x","agentId":"0190a7c4-0000-7000-8000-000000000000"}"#.into(),
            "property agentId should not exist",
        ),
        (
            r#"{"body":"x","userId":"0190a7c4-0000-7000-8000-000000000000"}"#.into(),
            "property userId should not exist",
        ),
        (r#"{"body":"x""#.into(), "malformed JSON"),
        (String::new(), "JSON object"),
        (r#"["x"]"#.into(), "JSON object"),
        (r#""x""#.into(), "JSON object"),
        ("null".into(), "JSON object"),
    ];
    for (body, message) in &cases {
        let reply = post_raw(app, hr, &task, body).await;
        assert_eq!(
            reply.status,
            StatusCode::BAD_REQUEST,
            "body {body}: {}",
            reply.text
        );
        assert_error(&reply, 400, message);
    }
    // A body with a NUL character is refused, not stored.
    let reply = comment(app, hr, &task, &json!({ "body": "a\u{0}b" })).await;
    assert_error(&reply, 400, "body");

    // Task ids in the path that are not UUIDs.
    let reply = post_raw(app, hr, "not-a-uuid", r#"{"body":"x"}"#).await;
    assert_error(&reply, 400, "id must be a UUID");
    let reply = app.get(hr, "/tasks/not-a-uuid/comments").await;
    assert_error(&reply, 400, "id must be a UUID");

    assert!(comments_of(app, hr, &task).await.is_empty());
    assert_eq!(app.events_of(hr, &task).await.len(), 1, "only task.created");
}

async fn comments_are_listed_oldest_first_in_pages(app: &TestApp) {
    let hr = &app.org.hr;
    let task = app.task_titled(hr, "chatty").await;
    let mut written = Vec::new();
    for n in 1..=5 {
        written.push(say(app, hr, &task, &format!("c{n}")).await);
    }
    // Noise on another task of the organization is not listed.
    let other = app.task_titled(hr, "other").await;
    say(app, hr, &other, "elsewhere").await;

    let path = format!("/tasks/{task}/comments");
    let all = app.get(hr, &path).await;
    assert_eq!(all.list(), &written, "oldest first");
    assert_eq!(keys_of(&all.body), ["data"], "no meta when nothing remains");

    // Pages of two: a cursor while more remain, none on the last page.
    let first = app.get(hr, &format!("{path}?limit=2")).await;
    assert_eq!(first.list(), &written[..2]);
    let cursor = str_of(&first.body["meta"], "nextCursor");
    let second = app
        .get(hr, &format!("{path}?limit=2&cursor={cursor}"))
        .await;
    assert_eq!(second.list(), &written[2..4]);
    let cursor = str_of(&second.body["meta"], "nextCursor");
    let last = app
        .get(hr, &format!("{path}?cursor={cursor}&limit=2"))
        .await;
    assert_eq!(last.list(), &written[4..]);
    assert_eq!(keys_of(&last.body), ["data"]);

    // A page ending exactly at the last comment has no cursor; nor does a larger one.
    for limit in [5, 6, 500] {
        let whole = app.get(hr, &format!("{path}?limit={limit}")).await;
        assert_eq!(whole.list(), &written);
        assert_eq!(keys_of(&whole.body), ["data"], "limit {limit}");
    }
    // One at a time walks all of them.
    let mut seen = Vec::new();
    let mut query = format!("{path}?limit=1");
    loop {
        let page = app.get(hr, &query).await;
        seen.extend(page.list().iter().cloned());
        match page.body.get("meta") {
            Some(meta) => query = format!("{path}?limit=1&cursor={}", str_of(meta, "nextCursor")),
            None => break,
        }
    }
    assert_eq!(seen, written);

    // A cursor past the newest comment answers an empty page.
    let reply = app
        .get(hr, &format!("{path}?cursor={}", Uuid::now_v7()))
        .await;
    assert!(reply.list().is_empty(), "nothing is newer: {}", reply.text);
}

async fn bad_paging_queries_are_400(app: &TestApp) {
    let hr = &app.org.hr;
    let task = app.task_titled(hr, "paged").await;
    say(app, hr, &task, "one").await;
    assert_bad_queries(
        app,
        hr,
        &format!("/tasks/{task}/comments"),
        &[
            ("limit=0", "limit must be between 1 and 500"),
            ("limit=501", "limit must be between 1 and 500"),
            ("limit=-1", "limit"),
            ("limit=abc", "limit"),
            ("limit=1.5", "limit"),
            ("cursor=abc", "cursor"),
            ("cursor=", "cursor"),
            ("order=desc", "property order should not exist"),
        ],
    )
    .await;
    for query in ["limit=1", "limit=500"] {
        let reply = app
            .get(hr, &format!("/tasks/{task}/comments?{query}"))
            .await;
        assert_eq!(reply.list().len(), 1, "{query}");
    }
}

async fn comments_are_audited(app: &TestApp) {
    let hr = &app.org.hr;
    let task = app.task_titled(hr, "audited").await;
    let root = say(app, hr, &task, "root").await;
    let (_, token) = app.user_token(&app.org, "operator").await;
    let user = user_id(app, &token).await;
    let path = format!("/tasks/{task}/comments");
    let body = json!({ "body": "reply", "parentCommentId": root["id"] });
    let reply = send(app.bearer(&token, Method::POST, &path, Some(&body))).await;
    let reply = reply.data().clone();

    let events = app.events_of(hr, &task).await;
    let types: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(
        types,
        ["task.commented", "task.commented", "task.created"],
        "newest first"
    );
    let (second, first) = (&events[0], &events[1]);
    for event in [first, second] {
        assert_eq!(event["entityType"], "task");
        assert_eq!(event["entityId"], task);
        assert_eq!(event["severity"], "info");
    }
    assert_eq!(first["actorId"], hr.uuid.to_string());
    assert_eq!(first["payload"]["commentId"], root["id"]);
    assert_eq!(first["payload"]["parentCommentId"], Value::Null);
    assert_eq!(first["createdAt"], root["createdAt"]);
    assert_eq!(second["actorId"], user);
    assert_eq!(second["payload"]["commentId"], reply["id"]);
    assert_eq!(second["payload"]["parentCommentId"], root["id"]);

    let by_type = app.get(hr, "/events?type=task.commented").await;
    assert_eq!(by_type.list().len(), 2);
    // A refused comment writes no event.
    let refused = comment(app, hr, &task, &json!({ "body": " " })).await;
    assert_error(&refused, 400, "body");
    assert_eq!(app.events_of(hr, &task).await.len(), 3);
}

async fn comments_on_missing_or_foreign_tasks_are_404(app: &TestApp) {
    let hr = &app.org.hr;
    let theirs = &app.other.hr;
    let mine = app.task_titled(hr, "mine").await;
    let their_task = app.task_titled(theirs, "theirs").await;
    let missing = Uuid::now_v7().to_string();
    let body = json!({ "body": "hello" });

    for task in [&missing, &their_task] {
        assert_error(&comment(app, hr, task, &body).await, 404, "not found");
        let reply = app.get(hr, &format!("/tasks/{task}/comments")).await;
        assert_error(&reply, 404, "not found");
    }
    assert_error(&comment(app, theirs, &mine, &body).await, 404, "not found");
    let reply = app.get(theirs, &format!("/tasks/{mine}/comments")).await;
    assert_error(&reply, 404, "not found");
    // A user of the other organization likewise.
    let (_, token) = app.user_token(&app.other, "operator").await;
    let path = format!("/tasks/{mine}/comments");
    let reply = send(app.bearer(&token, Method::POST, &path, Some(&body))).await;
    assert_error(&reply, 404, "not found");

    assert!(comments_of(app, hr, &mine).await.is_empty());
    assert!(comments_of(app, theirs, &their_task).await.is_empty());
    assert!(
        app.get(hr, "/events?type=task.commented")
            .await
            .list()
            .is_empty()
            && app
                .get(theirs, "/events?type=task.commented")
                .await
                .list()
                .is_empty()
    );
}

/// Observers (D-55), viewers (D-14) and `read` keys (D-17) may read comments, not write.
async fn read_only_callers_cannot_comment(app: &TestApp) {
    let hr = &app.org.hr;
    let task = app.task_titled(hr, "read only").await;
    let existing = say(app, hr, &task, "existing").await;
    let observer = app.add_agent(&app.org, "observer", "active").await;
    assert_error(
        &comment(app, &observer, &task, &json!({ "body": "no" })).await,
        403,
        "",
    );
    assert_eq!(
        comments_of(app, &observer, &task).await,
        std::slice::from_ref(&existing)
    );

    let (_, viewer) = app.user_token(&app.org, "viewer").await;
    let admin = app.admin_token(&app.org).await;
    let read_key = app.api_key(&admin, &["read"]).await;
    let path = format!("/tasks/{task}/comments");
    for credential in [&viewer, &read_key] {
        let body = json!({ "body": "no" });
        let reply = send(app.bearer(credential, Method::POST, &path, Some(&body))).await;
        assert_error(&reply, 403, "");
        let reply = send(app.bearer(credential, Method::GET, &path, None)).await;
        assert_eq!(reply.list(), std::slice::from_ref(&existing));
    }
    // Orchestrators coordinate, so they may comment.
    let orchestrator = app.add_agent(&app.org, "orchestrator", "active").await;
    let by_orchestrator = say(app, &orchestrator, &task, "go").await;
    assert_eq!(by_orchestrator["agentId"], orchestrator.uuid.to_string());
    assert_eq!(comments_of(app, hr, &task).await.len(), 2);
}
