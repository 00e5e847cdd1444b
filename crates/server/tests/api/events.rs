//! `GET /events` and `GET /events/:id`: paging meta, filters, query validation, scoping
//! (D-8) and the absence of any write (D-70).

use serde_json::json;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use crate::helpers::{Agent, Reply, TestApp, assert_error, str_of};
use crate::helpers::{assert_bad_queries, keys_of};

api_tests!(
    list_has_default_meta_and_newest_first,
    list_filters,
    list_filters_by_date,
    invalid_list_queries_are_400,
    list_pages,
    other_org_events_are_never_listed,
);

/// `meta.total` of a list answer.
pub(crate) fn total(reply: &Reply) -> u64 {
    assert_eq!(reply.status.as_u16(), 200, "{}", reply.text);
    reply.body["meta"]["total"].as_u64().unwrap()
}

/// Creates a task as `agent` and moves it to `in_progress` then `cancelled`: one
/// `task.created`, two `task.transitioned`, one `task.cancelled`.
async fn busy_task(app: &TestApp, agent: &Agent, title: &str) -> String {
    let id = app.task_titled(agent, title).await;
    for to in ["in_progress", "cancelled"] {
        let reply = app
            .transition(agent, &id, &json!({ "status": to }).to_string())
            .await;
        assert_eq!(reply.data()["status"], to);
    }
    id
}

async fn list_has_default_meta_and_newest_first(app: &TestApp) {
    let hr = &app.org.hr;
    let start = app.get(hr, "/events").await;
    let initial = total(&start);
    let keys: Vec<&str> = keys_of(&start.body);
    assert_eq!(keys, ["data", "meta"]);
    assert_eq!(
        start.body["meta"],
        json!({ "total": initial, "page": 1, "limit": 50 })
    );
    assert_eq!(start.list().len() as u64, initial);

    let id = app.task_titled(hr, "first").await;
    let reply = app.get(hr, "/events").await;
    assert_eq!(
        reply.body["meta"],
        json!({ "total": initial + 1, "page": 1, "limit": 50 })
    );
    let newest = &reply.list()[0];
    assert_eq!(newest["type"], "task.created");
    assert_eq!(newest["entityId"], id);

    // More than one page: the default limit holds 50 events.
    for i in 0..50 {
        app.task_titled(hr, &format!("task {i}")).await;
    }
    let reply = app.get(hr, "/events").await;
    assert_eq!(
        reply.body["meta"],
        json!({ "total": initial + 51, "page": 1, "limit": 50 })
    );
    assert_eq!(reply.list().len(), 50);
    let times: Vec<String> = reply
        .list()
        .iter()
        .map(|e| str_of(e, "createdAt"))
        .collect();
    assert!(
        times.windows(2).all(|w| w[0] >= w[1]),
        "newest first: {times:?}"
    );
    assert_eq!(reply.list()[0]["payload"]["title"], "task 49");
}

async fn list_filters(app: &TestApp) {
    let hr = &app.org.hr;
    let worker = app.worker(&app.org).await;
    let t1 = busy_task(app, hr, "t1").await;
    let t2 = app.task_titled(&worker, "t2").await;
    let all = total(&app.get(hr, "/events").await);

    let count = |query: String| async move {
        let reply = app.get(hr, &format!("/events?{query}")).await;
        let n = total(&reply);
        assert_eq!(reply.list().len() as u64, n, "{query}");
        (n, reply)
    };
    let (n, reply) = count("type=task.created".into()).await;
    assert_eq!(n, 2);
    assert!(reply.list().iter().all(|e| e["type"] == "task.created"));
    assert_eq!(count("type=task.transitioned".into()).await.0, 2);
    assert_eq!(count("type=task.cancelled".into()).await.0, 1);
    assert_eq!(count("type=task.done".into()).await.0, 0);
    assert_eq!(count("type=task".into()).await.0, 0, "type matches exactly");

    let (n, reply) = count(format!("actorId={}", worker.uuid)).await;
    assert_eq!(n, 1);
    assert_eq!(reply.list()[0]["entityId"], t2);
    assert_eq!(count(format!("actorId={}", hr.uuid)).await.0, 4);

    let (n, reply) = count("entityType=task".into()).await;
    assert_eq!(n, 5);
    assert!(reply.list().iter().all(|e| e["entityType"] == "task"));
    // The HR agent's registration by bootstrap is an agent event of this organization.
    let (n, reply) = count("entityType=agent".into()).await;
    assert!(n >= 1, "{}", reply.text);
    assert!(reply.list().iter().all(|e| e["entityType"] == "agent"));
    assert!(
        reply
            .list()
            .iter()
            .any(|e| e["entityId"] == hr.uuid.to_string()),
        "{}",
        reply.text
    );

    let (n, reply) = count(format!("entityId={t1}")).await;
    assert_eq!(n, 4);
    assert!(reply.list().iter().all(|e| e["entityId"] == t1));

    assert_eq!(count("severity=info".into()).await.0, all);
    assert_eq!(count("severity=warning".into()).await.0, 0);
    assert_eq!(count("severity=error".into()).await.0, 0);

    // Combined filters narrow each other.
    assert_eq!(
        count(format!("entityId={t1}&type=task.transitioned"))
            .await
            .0,
        2
    );
    assert_eq!(
        count(format!("entityId={t1}&actorId={}", worker.uuid))
            .await
            .0,
        0
    );
    assert_eq!(
        count(format!(
            "entityType=task&actorId={}&severity=info",
            worker.uuid
        ))
        .await
        .0,
        1
    );
    assert_eq!(
        count(format!("entityId={t2}&type=task.created&severity=warning"))
            .await
            .0,
        0
    );
}

fn parse_time(text: &str) -> OffsetDateTime {
    OffsetDateTime::parse(text, &Rfc3339).unwrap()
}

fn format_time(at: OffsetDateTime) -> String {
    at.format(&Rfc3339).unwrap()
}

async fn list_filters_by_date(app: &TestApp) {
    let hr = &app.org.hr;
    let id = app.task_titled(hr, "dated").await;
    let event = app.events_of(hr, &id).await.remove(0);
    let created = str_of(&event, "createdAt");
    let at = parse_time(&created);
    let ms = time::Duration::milliseconds(1);
    let day = at.date();
    let id = id.as_str();
    let query = |q: String| async move {
        let reply = app.get(hr, &format!("/events?entityId={id}&{q}")).await;
        assert_eq!(reply.status.as_u16(), 200, "{q}: {}", reply.text);
        total(&reply)
    };
    // Bounds are inclusive, to the millisecond.
    assert_eq!(query(format!("startDate={created}")).await, 1);
    assert_eq!(query(format!("endDate={created}")).await, 1);
    assert_eq!(
        query(format!("startDate={created}&endDate={created}")).await,
        1
    );
    assert_eq!(
        query(format!("startDate={}", format_time(at + ms))).await,
        0
    );
    assert_eq!(query(format!("endDate={}", format_time(at - ms))).await, 0);
    // Another offset is the same instant ("+" must be escaped in a query).
    let shifted = at
        .to_offset(time::macros::offset!(+2))
        .format(&Rfc3339)
        .unwrap();
    assert_eq!(
        query(format!("startDate={}", shifted.replace('+', "%2B"))).await,
        1
    );
    // Plain dates cover the whole UTC day: start at 00:00, end at 23:59:59.999.
    let previous = day.previous_day().unwrap();
    let next = day.next_day().unwrap();
    assert_eq!(query(format!("startDate={day}&endDate={day}")).await, 1);
    assert_eq!(query(format!("startDate={previous}")).await, 1);
    assert_eq!(query(format!("endDate={previous}")).await, 0);
    assert_eq!(query(format!("startDate={next}")).await, 0);
    assert_eq!(query(format!("endDate={next}")).await, 1);

    let reply = app
        .get(hr, &format!("/events?startDate={next}&endDate={previous}"))
        .await;
    assert_error(&reply, 400, "startDate");
}

async fn invalid_list_queries_are_400(app: &TestApp) {
    let hr = &app.org.hr;
    let cases = [
        ("limit=201", "limit must be between 1 and 200"),
        ("limit=0", "limit must be between 1 and 200"),
        ("limit=abc", "limit"),
        ("limit=-5", "limit"),
        ("page=0", "page must be at least 1"),
        ("page=-1", "page"),
        ("page=two", "page"),
        ("severity=fatal", "severity"),
        ("severity=INFO", "severity"),
        (
            "startDate=yesterday",
            "startDate must be an ISO 8601 date-time",
        ),
        (
            "startDate=2026-13-01",
            "startDate must be an ISO 8601 date-time",
        ),
        (
            "startDate=9999-12-31T23:59:59-23:59",
            "startDate must be an ISO 8601 date-time",
        ),
        ("type=a%00b", "type must not contain the NUL character"),
        (
            "entityType=%00",
            "entityType must not contain the NUL character",
        ),
        (
            "endDate=2026-01-01T25:00:00Z",
            "endDate must be an ISO 8601 date-time",
        ),
        ("endDate=", "endDate must be an ISO 8601 date-time"),
        ("actorId=abc", "actorId"),
        ("entityId=42", "entityId"),
        ("foo=1", "property foo should not exist"),
        ("cursor=abc", "property cursor should not exist"),
    ];
    assert_bad_queries(app, hr, "/events", &cases).await;
    for query in ["limit=200", "limit=1", "page=1000", "page=4294967295"] {
        let reply = app.get(hr, &format!("/events?{query}")).await;
        assert_eq!(
            reply.status.as_u16(),
            200,
            "GET /events?{query}: {}",
            reply.text
        );
    }
    let reply = app.get(hr, "/events?page=1000").await;
    assert_eq!(reply.body["data"], json!([]));
}

async fn list_pages(app: &TestApp) {
    let hr = &app.org.hr;
    busy_task(app, hr, "paged").await;
    let all = app.get(hr, "/events?limit=200").await;
    let ids = all.ids();
    let n = total(&all);
    assert!(n >= 4);

    let second = app.get(hr, "/events?page=2&limit=1").await;
    assert_eq!(second.ids(), [ids[1].clone()], "the second newest");
    assert_eq!(
        second.body["meta"],
        json!({ "total": n, "page": 2, "limit": 1 })
    );

    let page = app.get(hr, "/events?page=2&limit=3").await;
    assert_eq!(page.ids(), ids[3..ids.len().min(6)]);
    let mut walked = Vec::new();
    for page in 1.. {
        let reply = app.get(hr, &format!("/events?page={page}&limit=2")).await;
        if reply.list().is_empty() {
            break;
        }
        walked.extend(reply.ids());
    }
    assert_eq!(walked, ids, "pages cover every event once, in order");
}

async fn other_org_events_are_never_listed(app: &TestApp) {
    let ours = app.task_titled(&app.org.hr, "ours").await;
    let theirs = busy_task(app, &app.other.hr, "theirs").await;
    let hr = &app.org.hr;
    let reply = app.get(hr, "/events?limit=200").await;
    assert!(
        reply
            .list()
            .iter()
            .all(|e| e["orgId"] == app.org.id.to_string()),
        "{}",
        reply.text
    );
    assert!(reply.list().iter().any(|e| e["entityId"] == ours));
    for query in [
        format!("entityId={theirs}"),
        format!("actorId={}", app.other.hr.uuid),
        format!("entityId={}", app.other.hr.uuid),
    ] {
        let reply = app.get(hr, &format!("/events?{query}")).await;
        assert_eq!(reply.body["data"], json!([]), "{query}");
        assert_eq!(reply.body["meta"]["total"], 0, "{query}");
    }
    // The owner sees them.
    assert_eq!(
        total(
            &app.get(&app.other.hr, &format!("/events?entityId={theirs}"))
                .await
        ),
        4
    );
}
