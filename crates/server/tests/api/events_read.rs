//! `GET /events/:id` (scoped to the organization, D-8) and the absence of any write
//! (events are immutable, D-70).

use reqwest::Method;
use serde_json::{Value, json};
use uuid::Uuid;

use crate::events::total;
use crate::helpers::keys_of;
use crate::helpers::{
    Reply, TestApp, assert_error, assert_error_exact, assert_timestamp, send, str_of,
};

api_tests!(
    event_is_read_wrapped_with_every_field,
    other_org_event_is_404_like_a_missing_one,
    events_cannot_be_written,
);

async fn event_is_read_wrapped_with_every_field(app: &TestApp) {
    let hr = &app.org.hr;
    let id = app.task_titled(hr, "look").await;
    let listed = app.events_of(hr, &id).await.remove(0);
    let event_id = str_of(&listed, "id");
    let reply = app.get(hr, &format!("/events/{event_id}")).await;
    let keys: Vec<&str> = keys_of(&reply.body);
    assert_eq!(keys, ["data"]);
    let event = reply.data();
    let mut fields: Vec<&str> = keys_of(event);
    fields.sort_unstable();
    assert_eq!(
        fields,
        [
            "actorId",
            "createdAt",
            "entityId",
            "entityType",
            "id",
            "orgId",
            "payload",
            "severity",
            "type"
        ]
    );
    assert_eq!(event, &listed);
    assert_eq!(Uuid::parse_str(&event_id).unwrap().get_version_num(), 7);
    assert_eq!(event["orgId"], app.org.id.to_string());
    assert_eq!(event["type"], "task.created");
    assert_eq!(event["actorId"], hr.uuid.to_string());
    assert_eq!(event["entityType"], "task");
    assert_eq!(event["entityId"], id);
    assert_eq!(event["severity"], "info");
    assert!(event["payload"].is_object());
    assert_eq!(event["payload"]["title"], "look");
    assert_timestamp(event, "createdAt");
}

async fn other_org_event_is_404_like_a_missing_one(app: &TestApp) {
    let theirs = app.task_titled(&app.other.hr, "theirs").await;
    let event_id = str_of(&app.events_of(&app.other.hr, &theirs).await[0], "id");
    let missing = Uuid::now_v7().to_string();
    let foreign = app.get(&app.org.hr, &format!("/events/{event_id}")).await;
    let absent = app.get(&app.org.hr, &format!("/events/{missing}")).await;
    assert_error(&foreign, 404, "");
    assert_error(&absent, 404, "");
    let strip = |reply: &Reply, id: &str| {
        let mut body = reply.body.clone();
        body["message"] = Value::String(body["message"].as_str().unwrap().replace(id, "<id>"));
        body
    };
    assert_eq!(strip(&foreign, &event_id), strip(&absent, &missing));
    for bad in ["abc", "1"] {
        assert_error_exact(
            &app.get(&app.org.hr, &format!("/events/{bad}")).await,
            400,
            "id must be a UUID",
        );
    }
}

async fn events_cannot_be_written(app: &TestApp) {
    let hr = &app.org.hr;
    let id = app.task_titled(hr, "immutable").await;
    let event_id = str_of(&app.events_of(hr, &id).await[0], "id");
    let before = total(&app.get(hr, "/events").await);
    let body = json!({ "type": "task.created", "entityType": "task", "entityId": id }).to_string();
    let reply = send(app.signed(hr, Method::POST, "/events", Some(&body))).await;
    assert_error(&reply, 405, "");
    let path = format!("/events/{event_id}");
    for method in [Method::PUT, Method::PATCH, Method::DELETE, Method::POST] {
        let reply = send(app.signed(hr, method.clone(), &path, Some("{}"))).await;
        assert_error(&reply, 405, method.as_str());
    }
    assert_eq!(total(&app.get(hr, "/events").await), before);
    assert_eq!(app.get(hr, &path).await.data()["type"], "task.created");
}
