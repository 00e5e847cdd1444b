//! A2A `ListTasks`: the organization's tasks by A2A state, by context, by status change,
//! by pages, with the total; bad parameters are -32602.

use serde_json::{Value, json};

use crate::a2a::{error_code, message, result, writer_key};
use crate::helpers::{TestApp, str_of};
use crate::task_support::walk;

api_tests!(
    tasks_are_listed_by_state_with_the_total,
    tasks_are_listed_by_page_and_context,
    bad_list_parameters_are_refused,
    tasks_are_listed_by_status_change,
);

/// Three tasks sent over A2A (the first one started) and one waiting for its approval:
/// the three ids, oldest first, and the last.
async fn seed(app: &TestApp, key: &str) -> (Vec<String>, String) {
    let mut ids = Vec::new();
    for n in 0..3 {
        let params = json!({"message": message(&format!("Job {n}"))});
        let sent = result(app, key, "SendMessage", &params).await;
        ids.push(str_of(&sent["task"], "id"));
    }
    walk(app, &app.org.hr, &ids[0], &["in_progress"]).await;
    let body = json!({"title": "Needs sign-off", "approvalRequired": true});
    let review = str_of(&app.create_task(&app.org.hr, &body).await, "id");
    walk(app, &app.org.hr, &review, &["in_progress", "review"]).await;
    (ids, review)
}

/// The (id, state) of each task of a list.
fn states(list: &Value) -> Vec<(String, String)> {
    list["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (str_of(t, "id"), str_of(&t["status"], "state")))
        .collect()
}

async fn list(app: &TestApp, key: &str, params: Value) -> Value {
    result(app, key, "ListTasks", &params).await
}

async fn tasks_are_listed_by_state_with_the_total(app: &TestApp) {
    let key = writer_key(app).await;
    let (ids, review) = seed(app, &key).await;
    let all = list(app, &key, json!({})).await;
    assert_eq!(all["totalSize"], 4);
    assert_eq!(all["pageSize"], 50);
    assert_eq!(all["nextPageToken"], "");
    let first = &all["tasks"][0];
    assert!(first.get("history").is_none(), "no history unless asked");
    let working = list(app, &key, json!({"status": "TASK_STATE_WORKING"})).await;
    let started = (ids[0].clone(), "TASK_STATE_WORKING".to_owned());
    assert_eq!(states(&working), [started]);
    let waiting = list(app, &key, json!({"status": "TASK_STATE_INPUT_REQUIRED"})).await;
    let approval = (review, "TASK_STATE_INPUT_REQUIRED".to_owned());
    assert_eq!(states(&waiting), [approval]);
    assert_eq!(waiting["totalSize"], 1);
    let submitted = list(app, &key, json!({"status": "TASK_STATE_SUBMITTED"})).await;
    assert_eq!(submitted["totalSize"], 2);
    let failed = list(app, &key, json!({"status": "TASK_STATE_FAILED"})).await;
    assert_eq!(failed["totalSize"], 0);
    assert_eq!(failed["tasks"], json!([]));
}

async fn tasks_are_listed_by_page_and_context(app: &TestApp) {
    let key = writer_key(app).await;
    let (ids, review) = seed(app, &key).await;
    // Pages, newest first, chained by their tokens.
    let mut seen = Vec::new();
    let mut token = String::new();
    loop {
        let page = list(app, &key, json!({"pageSize": 3, "pageToken": token})).await;
        assert_eq!(page["totalSize"], 4);
        seen.extend(states(&page).into_iter().map(|(id, _)| id));
        token = str_of(&page, "nextPageToken");
        if token.is_empty() {
            break;
        }
    }
    let mut expected = ids.clone();
    expected.push(review);
    expected.reverse();
    assert_eq!(seen, expected);
    // A context lists its task and the sub-tasks.
    let child = json!({"messageId": "c", "role": "ROLE_USER", "contextId": ids[1],
                       "parts": [{"text": "Part of job 1"}]});
    let sub = result(app, &key, "SendMessage", &json!({"message": child})).await;
    let params = json!({"contextId": ids[1], "historyLength": 5});
    let in_context = list(app, &key, params).await;
    let tasks = in_context["tasks"].as_array().unwrap();
    assert_eq!(tasks.len(), 2, "{in_context}");
    assert_eq!(tasks[0]["id"], sub["task"]["id"]);
    assert_eq!(tasks[0]["history"].as_array().unwrap().len(), 1);
    assert_eq!(tasks[1]["id"], json!(ids[1]));
    assert_eq!(tasks[0]["contextId"], tasks[1]["contextId"]);
    // A sub-task's id names no context of its own.
    let params = json!({"contextId": sub["task"]["id"]});
    assert_eq!(list(app, &key, params).await["totalSize"], 0);
    let unknown = list(app, &key, json!({"contextId": "not-a-task"})).await;
    assert_eq!(unknown["totalSize"], 0);
}

async fn bad_list_parameters_are_refused(app: &TestApp) {
    let key = writer_key(app).await;
    for bad in [
        json!({"pageSize": 0}),
        json!({"pageSize": 101}),
        json!({"pageSize": "ten"}),
        json!({"status": "WORKING"}),
        json!({"pageToken": "not-a-token"}),
        json!({"historyLength": -1}),
        json!({"tenant": "acme"}),
    ] {
        let code = error_code(app, &key, "ListTasks", &bad).await;
        assert_eq!(code, -32602, "{bad}");
    }
    for since in [
        "yesterday",
        "2026-13-01T00:00:00Z",
        "2026-11-27 10:00:00",
        "0000-01-01T00:00:00+01:00",
    ] {
        let bad = json!({"statusTimestampAfter": since});
        assert_eq!(
            error_code(app, &key, "ListTasks", &bad).await,
            -32602,
            "{since}"
        );
    }
}

async fn tasks_are_listed_by_status_change(app: &TestApp) {
    let key = writer_key(app).await;
    let mut ids = Vec::new();
    for n in 0..2 {
        let params = json!({"message": message(&format!("Change {n}"))});
        ids.push(str_of(
            &result(app, &key, "SendMessage", &params).await["task"],
            "id",
        ));
    }
    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    walk(app, &app.org.hr, &ids[0], &["in_progress"]).await;
    let moved = result(app, &key, "GetTask", &json!({"id": ids[0]})).await;
    let at = str_of(&moved["status"], "timestamp");
    let since = list(app, &key, json!({"statusTimestampAfter": at})).await;
    let listed: Vec<String> = states(&since).into_iter().map(|(id, _)| id).collect();
    assert_eq!(listed, [ids[0].clone()], "only the task that moved since");
    assert_eq!(since["totalSize"], 1);
    let all = list(
        app,
        &key,
        json!({"statusTimestampAfter": "2020-01-01T00:00:00Z"}),
    )
    .await;
    assert_eq!(all["totalSize"], 2, "{all}");
}
