//! `GET /tasks/:id` and `GET /tasks`: scoping to the organization (D-8), filters, query
//! validation (D-4) and cursor paging (D-7).

use serde_json::{Value, json};
use uuid::Uuid;

use crate::helpers::{Reply, TestApp, assert_error, assert_error_exact, str_of};
use crate::helpers::{assert_bad_queries, keys_of};

api_tests!(
    task_is_read_wrapped,
    other_org_task_is_404_like_a_missing_one,
    non_uuid_task_id_is_400,
    list_is_newest_first,
    list_filters_alone_and_combined,
    list_filters_by_priority_tag_and_text,
    invalid_list_queries_are_400,
    list_pages_with_a_cursor,
    list_page_size_defaults_to_100,
    other_org_tasks_are_never_listed,
);

/// The 404 message with the id it names replaced, to compare two 404 bodies.
fn without_id(reply: &Reply, id: &str) -> Value {
    let mut body = reply.body.clone();
    let message = body["message"].as_str().unwrap().replace(id, "<id>");
    body["message"] = Value::String(message);
    body
}

async fn task_is_read_wrapped(app: &TestApp) {
    let hr = &app.org.hr;
    let created = app
        .create_task(
            hr,
            &json!({ "title": "read me", "description": "body", "tags": ["x"] }),
        )
        .await;
    let id = str_of(&created, "id");
    let reply = app.get(hr, &format!("/tasks/{id}")).await;
    let keys: Vec<&str> = keys_of(&reply.body);
    assert_eq!(keys, ["data"], "a task is wrapped as {{data}}");
    assert_eq!(reply.data(), &created);

    // Any agent of the organization reads it, read-only ones included.
    let observer = app.add_agent(&app.org, "observer", "active").await;
    assert_eq!(
        app.get(&observer, &format!("/tasks/{id}")).await.data(),
        &created
    );
}

async fn other_org_task_is_404_like_a_missing_one(app: &TestApp) {
    let theirs = app.task_titled(&app.other.hr, "theirs").await;
    let missing = Uuid::now_v7().to_string();
    let foreign = app.get(&app.org.hr, &format!("/tasks/{theirs}")).await;
    let absent = app.get(&app.org.hr, &format!("/tasks/{missing}")).await;
    assert_error(&foreign, 404, "");
    assert_error(&absent, 404, "");
    assert_eq!(without_id(&foreign, &theirs), without_id(&absent, &missing));
    // The owner still reads it.
    assert_eq!(
        app.get(&app.other.hr, &format!("/tasks/{theirs}"))
            .await
            .data()["id"],
        theirs
    );
}

async fn non_uuid_task_id_is_400(app: &TestApp) {
    for id in ["123", "not-a-uuid", "0190a7c4-0000-7000-8000-00000000000g"] {
        let reply = app.get(&app.org.hr, &format!("/tasks/{id}")).await;
        assert_error_exact(&reply, 400, "id must be a UUID");
    }
}

async fn list_is_newest_first(app: &TestApp) {
    let hr = &app.org.hr;
    let empty = app.get(hr, "/tasks").await;
    assert_eq!(empty.body["data"], json!([]), "{}", empty.text);
    assert!(
        empty.body["meta"].get("nextCursor").is_none(),
        "{}",
        empty.text
    );

    let mut ids = Vec::new();
    for title in ["first", "second", "third"] {
        ids.push(app.task_titled(hr, title).await);
    }
    let reply = app.get(hr, "/tasks").await;
    ids.reverse();
    assert_eq!(reply.ids(), ids);
    assert!(
        reply.body["meta"].get("nextCursor").is_none(),
        "{}",
        reply.text
    );
    assert_eq!(reply.list()[0]["title"], "third");
}

async fn list_filters_alone_and_combined(app: &TestApp) {
    let hr = &app.org.hr;
    let (w1, w2) = (app.worker(&app.org).await, app.worker(&app.org).await);
    let t1 = str_of(
        &app.create_task(hr, &json!({ "title": "t1", "assigneeId": w1.uuid }))
            .await,
        "id",
    );
    let t2 = str_of(
        &app.create_task(&w1, &json!({ "title": "t2", "assigneeId": w2.uuid }))
            .await,
        "id",
    );
    let body = json!({ "title": "t3", "assigneeId": w1.uuid, "parentTaskId": t1 });
    let t3 = str_of(&app.create_task(&w2, &body).await, "id");
    let t4 = app.task_titled(hr, "t4").await;
    let moved = app.transition(hr, &t4, r#"{"status":"in_progress"}"#).await;
    assert_eq!(moved.data()["status"], "in_progress");

    let cases: Vec<(String, Vec<&String>)> = vec![
        ("status=in_progress".into(), vec![&t4]),
        ("status=todo".into(), vec![&t3, &t2, &t1]),
        ("status=done".into(), vec![]),
        (format!("assigneeId={}", w1.uuid), vec![&t3, &t1]),
        (format!("assigneeId={}", w2.uuid), vec![&t2]),
        (format!("assigneeId={}", hr.uuid), vec![]),
        (format!("creatorId={}", hr.uuid), vec![&t4, &t1]),
        (format!("creatorId={}", w1.uuid), vec![&t2]),
        (format!("parentTaskId={t1}"), vec![&t3]),
        (format!("parentTaskId={t3}"), vec![]),
        (
            format!("assigneeId={}&status=todo&creatorId={}", w1.uuid, w2.uuid),
            vec![&t3],
        ),
        (
            format!("assigneeId={}&creatorId={}", w1.uuid, hr.uuid),
            vec![&t1],
        ),
        (format!("status=todo&creatorId={}", hr.uuid), vec![&t1]),
        (format!("status=in_progress&creatorId={}", w1.uuid), vec![]),
        (
            format!("parentTaskId={t1}&assigneeId={}&status=todo", w1.uuid),
            vec![&t3],
        ),
        (format!("parentTaskId={t1}&assigneeId={}", w2.uuid), vec![]),
    ];
    for (query, expected) in cases {
        let reply = app.get(hr, &format!("/tasks?{query}")).await;
        let expected: Vec<String> = expected.into_iter().cloned().collect();
        assert_eq!(reply.ids(), expected, "GET /tasks?{query}");
    }
}

/// Beyond the contract's filters: `priority`, `tag` and `q` (title or description),
/// the board's filters, alone and with the others.
async fn list_filters_by_priority_tag_and_text(app: &TestApp) {
    let hr = &app.org.hr;
    let w1 = app.worker(&app.org).await;
    let mut made = Vec::new();
    for body in [
        json!({ "title": "Ship the release", "priority": "high", "tags": ["Q4", "ops"] }),
        json!({ "title": "Water plants", "description": "the RELEASE of spring", "tags": ["home"] }),
        json!({ "title": "Fix 100% of bugs_here", "priority": "high", "assigneeId": w1.uuid }),
        json!({ "title": r"Clean C:\temp", "priority": "low", "tags": [r"win\x"] }),
    ] {
        made.push(str_of(&app.create_task(hr, &body).await, "id"));
    }
    let [ship, water, fix, clean] = [&made[0], &made[1], &made[2], &made[3]];
    let cases: Vec<(String, Vec<&String>)> = vec![
        ("priority=high".into(), vec![fix, ship]),
        ("priority=normal".into(), vec![water]),
        ("priority=urgent".into(), vec![]),
        ("tag=q4".into(), vec![ship]),
        ("tag=%20ops%20".into(), vec![ship]),
        ("tag=op".into(), vec![]),
        ("q=release".into(), vec![water, ship]),
        ("q=SHIP".into(), vec![ship]),
        ("q=100%25".into(), vec![fix]),
        ("q=p_t".into(), vec![]),
        ("q=%25of".into(), vec![]),
        ("q=%25%20of".into(), vec![fix]),
        // A backslash is a character like any other: it matches itself, and
        // neither escapes what follows nor stands for anything else.
        ("q=%5C".into(), vec![clean]),
        ("q=c%3A%5CT".into(), vec![clean]),
        ("q=%5Ct".into(), vec![clean]),
        ("q=%5C%5C".into(), vec![]),
        ("q=x%5C%25".into(), vec![]),
        ("q=%3A%5C%25".into(), vec![]),
        ("tag=%5C".into(), vec![]),
        ("tag=WIN%5CX".into(), vec![clean]),
        ("q=bugs_here".into(), vec![fix]),
        ("q=".into(), vec![clean, fix, water, ship]),
        ("q=release&priority=high".into(), vec![ship]),
        ("tag=home&q=release".into(), vec![water]),
        (format!("priority=high&assigneeId={}", w1.uuid), vec![fix]),
    ];
    for (query, expected) in cases {
        let reply = app.get(hr, &format!("/tasks?{query}")).await;
        let expected: Vec<String> = expected.into_iter().cloned().collect();
        assert_eq!(reply.ids(), expected, "GET /tasks?{query}");
    }
}

async fn invalid_list_queries_are_400(app: &TestApp) {
    let hr = &app.org.hr;
    app.task_titled(hr, "one").await;
    let (long_q, long_tag) = (
        format!("q={}", "x".repeat(101)),
        format!("tag={}", "%C3%A9".repeat(101)),
    );
    let cases = [
        ("status=finished", "status"),
        ("status=", "status"),
        ("assigneeId=abc", "assigneeId"),
        ("creatorId=123", "creatorId"),
        ("parentTaskId=x", "parentTaskId"),
        ("foo=1", "property foo should not exist"),
        ("title=one", "property title should not exist"),
        ("limit=0", "limit must be between 1 and 500"),
        ("limit=501", "limit must be between 1 and 500"),
        ("limit=abc", "limit"),
        ("limit=-1", "limit"),
        ("limit=1.5", "limit"),
        ("cursor=abc", "cursor"),
        ("status=todo&status=done", "status"),
        ("priority=extreme", "priority"),
        ("tag=a%00b", "tag must not contain the NUL character"),
        ("q=a%00b", "q must not contain the NUL character"),
        (&long_q, "q must be at most 100 characters"),
        (&long_tag, "tag must be at most 100 characters"),
    ];
    assert_bad_queries(app, hr, "/tasks", &cases).await;
    for query in ["limit=1", "limit=500"] {
        let reply = app.get(hr, &format!("/tasks?{query}")).await;
        assert_eq!(reply.list().len(), 1, "GET /tasks?{query}");
    }
}

async fn list_pages_with_a_cursor(app: &TestApp) {
    let hr = &app.org.hr;
    let mut all = Vec::new();
    for i in 0..5 {
        all.push(app.task_titled(hr, &format!("task {i}")).await);
    }
    all.reverse();

    let first = app.get(hr, "/tasks?limit=2").await;
    assert_eq!(first.ids(), all[0..2]);
    let cursor = str_of(&first.body["meta"], "nextCursor");
    let second = app
        .get(hr, &format!("/tasks?limit=2&cursor={cursor}"))
        .await;
    assert_eq!(second.ids(), all[2..4]);
    let cursor = str_of(&second.body["meta"], "nextCursor");
    let third = app
        .get(hr, &format!("/tasks?cursor={cursor}&limit=2"))
        .await;
    assert_eq!(third.ids(), all[4..5]);
    assert!(
        third.body["meta"].get("nextCursor").is_none(),
        "last page: {}",
        third.text
    );
    // D-7: `meta` is there only when more remain.
    assert!(third.body.get("meta").is_none(), "{}", third.text);

    // A page that ends exactly at the last task has no cursor either.
    let whole = app.get(hr, "/tasks?limit=5").await;
    assert_eq!(whole.ids(), all);
    assert!(
        whole.body["meta"].get("nextCursor").is_none(),
        "{}",
        whole.text
    );

    // Paging keeps the filter.
    let moved = app
        .transition(hr, &all[1], r#"{"status":"in_progress"}"#)
        .await;
    assert_eq!(moved.status.as_u16(), 200, "{}", moved.text);
    let todo = app.get(hr, "/tasks?status=todo&limit=3").await;
    assert_eq!(todo.ids(), [all[0].clone(), all[2].clone(), all[3].clone()]);
    let cursor = str_of(&todo.body["meta"], "nextCursor");
    let rest = app
        .get(hr, &format!("/tasks?status=todo&limit=3&cursor={cursor}"))
        .await;
    assert_eq!(rest.ids(), [all[4].clone()]);

    let bad = app.get(hr, "/tasks?cursor=not-a-cursor").await;
    assert_error(&bad, 400, "cursor");
}

async fn list_page_size_defaults_to_100(app: &TestApp) {
    let hr = &app.org.hr;
    let mut all = Vec::new();
    for i in 0..101 {
        all.push(app.task_titled(hr, &format!("task {i}")).await);
    }
    all.reverse();
    let first = app.get(hr, "/tasks").await;
    assert_eq!(first.ids(), all[..100]);
    let cursor = str_of(&first.body["meta"], "nextCursor");
    let rest = app.get(hr, &format!("/tasks?cursor={cursor}")).await;
    assert_eq!(rest.ids(), all[100..]);
    assert!(
        rest.body["meta"].get("nextCursor").is_none(),
        "{}",
        rest.text
    );
}

async fn other_org_tasks_are_never_listed(app: &TestApp) {
    let ours = app.task_titled(&app.org.hr, "ours").await;
    let theirs = app.task_titled(&app.other.hr, "theirs").await;
    let body = json!({ "title": "their child", "parentTaskId": theirs });
    app.create_task(&app.other.hr, &body).await;

    let hr = &app.org.hr;
    assert_eq!(
        app.get(hr, "/tasks").await.ids(),
        std::slice::from_ref(&ours)
    );
    for query in [
        format!("creatorId={}", app.other.hr.uuid),
        format!("parentTaskId={theirs}"),
        "status=todo&limit=500".to_owned(),
    ] {
        let reply = app.get(hr, &format!("/tasks?{query}")).await;
        assert!(
            !reply.ids().contains(&theirs),
            "GET /tasks?{query}: {}",
            reply.text
        );
        for task in reply.list() {
            assert_eq!(task["orgId"], app.org.id.to_string());
        }
    }
    // A cursor taken from another organization does not reveal its tasks.
    let reply = app.get(hr, &format!("/tasks?cursor={theirs}")).await;
    assert!(
        reply
            .list()
            .iter()
            .all(|t| t["orgId"] == app.org.id.to_string()),
        "{}",
        reply.text
    );
    // And the other organization sees only its own.
    let theirs_list = app.get(&app.other.hr, "/tasks").await;
    assert_eq!(theirs_list.list().len(), 2);
    assert!(!theirs_list.ids().contains(&ours));
}
