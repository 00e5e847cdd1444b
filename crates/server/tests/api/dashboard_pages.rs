//! The dashboard's pages through a real server: what they show, what their forms do
//! (always through the API's use cases, with the API's refusals), and that a user sees
//! only their organization and only the controls their role may use.

use reqwest::{Method, StatusCode};
use serde_json::json;

use crate::dashboard_support::Browser;
use crate::helpers::{ADMIN_PASSWORD, TestApp, str_of};
use crate::hook_receiver::Receiver;

api_tests!(
    the_board_shows_the_org_tasks_by_status_with_filters,
    another_orgs_task_is_not_found,
    moving_a_card_is_a_transition,
    the_task_page_comments_replies_and_links,
    approving_assigning_and_escalating,
    a_viewer_sees_no_controls_and_is_refused_anyway,
    agents_are_registered_and_suspended,
    agent_registration_refuses_bad_input,
    the_audit_log_filters_like_the_api,
    api_keys_and_two_factor_from_the_account_page,
);

/// The live stream, bounded to one per instance.
mod live {
    use super::the_live_stream_carries_task_events_and_is_bounded;

    api_tests!(with muster_http::StreamOptions {
        max_streams: 1,
        ..crate::events_stream::quick()
    };
        the_live_stream_carries_task_events_and_is_bounded,
    );
}

/// The webhook page needs hooks that may call a loopback receiver.
mod with_hooks {
    use super::the_webhook_page_tests_a_hook;

    api_tests!(with crate::webhook_support::loopback_hooks(); the_webhook_page_tests_a_hook);
}

async fn the_board_shows_the_org_tasks_by_status_with_filters(app: &TestApp) {
    let browser = Browser::admin(app, &app.org).await;
    let high = app
        .create_task(
            &app.org.hr,
            &json!({"title": "Ship <the> release", "priority": "high", "tags": ["q4"]}),
        )
        .await;
    app.create_task(
        &app.org.hr,
        &json!({"title": "Water the plants", "priority": "low"}),
    )
    .await;
    app.task_titled(&app.other.hr, "Globex secret plan").await;
    let board = browser.get("/ui/board").await;
    assert_eq!(board.status, StatusCode::OK);
    // Escaped, in its column.
    assert!(
        board.text.contains("Ship &lt;the&gt; release"),
        "{}",
        board.text
    );
    assert!(!board.text.contains("Ship <the> release"));
    let id = str_of(&high, "id");
    assert!(
        board
            .text
            .contains(&format!("data-task=\"{id}\" data-status=\"todo\""))
    );
    assert!(board.text.contains("Water the plants"));
    assert!(
        !board.text.contains("Globex secret plan"),
        "another org's task shown"
    );
    for (query, shown, hidden) in [
        (
            "?priority=high",
            "Ship &lt;the&gt; release",
            "Water the plants",
        ),
        ("?tag=Q4", "Ship &lt;the&gt; release", "Water the plants"),
        ("?q=plants", "Water the plants", "Ship &lt;the&gt; release"),
    ] {
        let columns = browser.get(&format!("/ui/board/columns{query}")).await;
        assert_eq!(columns.status, StatusCode::OK, "{query}");
        assert!(columns.text.contains(shown), "{query}");
        assert!(!columns.text.contains(hidden), "{query}");
    }
    // A refused new task comes back in its form, open.
    let refused = browser
        .post(
            "/ui/tasks",
            &[
                ("title", "Keep me"),
                ("priority", "someday"),
                ("description", "A long thought"),
            ],
        )
        .await;
    assert_eq!(refused.status, StatusCode::BAD_REQUEST);
    assert!(
        refused.text.contains("<details class=\"create\" open>"),
        "{}",
        refused.text
    );
    assert!(refused.text.contains("value=\"Keep me\"") && refused.text.contains("A long thought"));
    // The new-task form's own default priority is one the API takes.
    let board = browser.get("/ui/board").await;
    assert!(
        board.text.contains("<option value=\"normal\" selected>"),
        "{}",
        board.text
    );
    let created = browser
        .post(
            "/ui/tasks",
            &[("title", "Default priority"), ("priority", "normal")],
        )
        .await;
    assert_eq!(created.status, StatusCode::SEE_OTHER, "{}", created.text);
    let by_assignee = browser
        .get(&format!("/ui/board/columns?assignee={}", app.org.hr.uuid))
        .await;
    assert!(!by_assignee.text.contains("Water the plants"));
    let long_tag = format!("?tag={}", "t".repeat(101));
    for bad in ["?priority=critical", "?assignee=nobody", long_tag.as_str()] {
        let refused = browser.get(&format!("/ui/board/columns{bad}")).await;
        assert_eq!(
            refused.status,
            StatusCode::BAD_REQUEST,
            "{bad}: {}",
            refused.text
        );
    }
}

async fn another_orgs_task_is_not_found(app: &TestApp) {
    let browser = Browser::admin(app, &app.org).await;
    let theirs = app.task_titled(&app.other.hr, "Globex only").await;
    let page = browser.get(&format!("/ui/tasks/{theirs}")).await;
    assert_eq!(page.status, StatusCode::NOT_FOUND);
    assert!(!page.text.contains("Globex only"));
    let moved = browser
        .post(
            &format!("/ui/tasks/{theirs}/move"),
            &[("status", "in_progress")],
        )
        .await;
    assert_eq!(moved.status, StatusCode::NOT_FOUND);
    let reply = app.get(&app.other.hr, &format!("/tasks/{theirs}")).await;
    assert_eq!(str_of(reply.data(), "status"), "todo");
    let bad = browser.get("/ui/tasks/not-a-uuid").await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST);
    assert!(bad.text.contains("task id must be a UUID"), "{}", bad.text);
}

async fn moving_a_card_is_a_transition(app: &TestApp) {
    let browser = Browser::admin(app, &app.org).await;
    let id = app.task_titled(&app.org.hr, "Move me").await;
    let path = format!("/ui/tasks/{id}/move");
    let token = browser.cookie("muster_csrf").unwrap();
    let script = [("x-csrf-token", token.as_str())];
    // The board's script: the API's status and message come back as they are.
    let moved = browser
        .send(
            Method::POST,
            &path,
            Some(&[("status", "in_progress")]),
            &script,
        )
        .await;
    assert_eq!(moved.status, StatusCode::OK, "{}", moved.text);
    assert_eq!(moved.text, "in_progress");
    let refused = browser
        .send(Method::POST, &path, Some(&[("status", "backlog")]), &script)
        .await;
    assert_eq!(refused.status, StatusCode::CONFLICT, "{}", refused.text);
    assert_eq!(refused.text, "Invalid transition: in_progress -> backlog");
    let reply = app.get(&app.org.hr, &format!("/tasks/{id}")).await;
    assert_eq!(str_of(reply.data(), "status"), "in_progress");
    // A form post (no script) comes back to the board with the refusal shown.
    let page = browser.post(&path, &[("status", "bogus")]).await;
    assert_eq!(page.status, StatusCode::BAD_REQUEST);
    assert!(page.text.contains("status must be one of"), "{}", page.text);
    let done = browser.post(&path, &[("status", "done")]).await;
    assert_eq!(done.status, StatusCode::SEE_OTHER);
    let reply = app.get(&app.org.hr, &format!("/tasks/{id}")).await;
    assert_eq!(str_of(reply.data(), "status"), "done");
}

async fn the_task_page_comments_replies_and_links(app: &TestApp) {
    let browser = Browser::admin(app, &app.org).await;
    let id = app.task_titled(&app.org.hr, "Talk about me").await;
    let other = app.task_titled(&app.org.hr, "Do me first").await;
    let base = format!("/ui/tasks/{id}");
    let said = browser
        .post(
            &format!("{base}/comments"),
            &[("body", "First <b>draft</b>")],
        )
        .await;
    assert_eq!(said.status, StatusCode::SEE_OTHER, "{}", said.text);
    let comments = app.get(&app.org.hr, &format!("/tasks/{id}/comments")).await;
    let first = str_of(&comments.list()[0], "id");
    let replied = browser
        .post(
            &format!("{base}/comments"),
            &[("body", "Thanks"), ("parent", &first)],
        )
        .await;
    assert_eq!(replied.status, StatusCode::SEE_OTHER, "{}", replied.text);
    let empty = browser
        .post(&format!("{base}/comments"), &[("body", "  ")])
        .await;
    assert_eq!(empty.status, StatusCode::BAD_REQUEST, "{}", empty.text);
    // A refused comment stays in its form: nothing typed is lost.
    let long = "y".repeat(20_001);
    let refused = browser
        .post(&format!("{base}/comments"), &[("body", &long)])
        .await;
    assert_eq!(refused.status, StatusCode::BAD_REQUEST);
    assert!(refused.text.contains(&long), "the typed comment is kept");
    let linked = browser
        .post(
            &format!("{base}/dependencies"),
            &[("dependsOn", &other), ("blocking", "on")],
        )
        .await;
    assert_eq!(linked.status, StatusCode::SEE_OTHER, "{}", linked.text);
    let cycle = browser
        .post(
            &format!("/ui/tasks/{other}/dependencies"),
            &[("dependsOn", &id), ("blocking", "on")],
        )
        .await;
    assert_eq!(cycle.status, StatusCode::CONFLICT, "{}", cycle.text);
    let page = browser.get(&base).await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(page.text.contains("First &lt;b&gt;draft&lt;/b&gt;"));
    // The reply sits inside its parent's article.
    let parent_at = page.text.find(&format!("id=\"comment-{first}\"")).unwrap();
    assert!(page.text[parent_at..].contains("Thanks"));
    assert!(page.text.contains("Do me first"));
    assert!(page.text.contains("blocking"));
    assert!(page.text.contains("task.dependency_added"), "audit trail");
    let deps = app
        .get(&app.org.hr, &format!("/tasks/{id}/dependencies"))
        .await;
    let dependency = str_of(&deps.list()[0], "id");
    let removed = browser
        .post(&format!("{base}/dependencies/{dependency}/remove"), &[])
        .await;
    assert_eq!(removed.status, StatusCode::SEE_OTHER, "{}", removed.text);
    let deps = app
        .get(&app.org.hr, &format!("/tasks/{id}/dependencies"))
        .await;
    assert!(deps.list().is_empty());
}

async fn approving_assigning_and_escalating(app: &TestApp) {
    let browser = Browser::admin(app, &app.org).await;
    let task = app
        .create_task(
            &app.org.hr,
            &json!({"title": "Needs a yes", "approvalRequired": true}),
        )
        .await;
    let id = str_of(&task, "id");
    let base = format!("/ui/tasks/{id}");
    // Not in review yet: the API's refusal, on the task page.
    let early = browser.post(&format!("{base}/approve"), &[]).await;
    assert_eq!(early.status, StatusCode::CONFLICT, "{}", early.text);
    assert!(early.text.contains("class=\"notice error\""));
    let worker = app.worker(&app.org).await;
    let assigned = browser
        .post(
            &format!("{base}/assign"),
            &[("assignee", &worker.uuid.to_string())],
        )
        .await;
    assert_eq!(assigned.status, StatusCode::SEE_OTHER, "{}", assigned.text);
    let reply = app.get(&app.org.hr, &format!("/tasks/{id}")).await;
    assert_eq!(str_of(reply.data(), "assigneeId"), worker.uuid.to_string());
    let escalated = browser
        .post(&format!("{base}/escalate"), &[("notes", "stuck on review")])
        .await;
    assert_eq!(
        escalated.status,
        StatusCode::SEE_OTHER,
        "{}",
        escalated.text
    );
    let page = browser.get(&base).await;
    assert!(page.text.contains("MANUAL") && page.text.contains("stuck on review"));
    let edited = browser
        .post(
            &format!("{base}/edit"),
            &[("title", ""), ("priority", "low"), ("tags", "")],
        )
        .await;
    assert_eq!(edited.status, StatusCode::BAD_REQUEST, "{}", edited.text);
    for status in ["in_progress", "review"] {
        browser
            .post(&format!("{base}/move"), &[("status", status)])
            .await;
    }
    let page = browser.get(&base).await;
    assert!(page.text.contains(&format!("action=\"{base}/approve\"")));
    let approved = browser.post(&format!("{base}/approve"), &[]).await;
    assert_eq!(approved.status, StatusCode::SEE_OTHER, "{}", approved.text);
    let reply = app.get(&app.org.hr, &format!("/tasks/{id}")).await;
    assert!(!reply.data()["approvedAt"].is_null());
    // Approval closes the reviewed task.
    assert_eq!(str_of(reply.data(), "status"), "done");
}

async fn a_viewer_sees_no_controls_and_is_refused_anyway(app: &TestApp) {
    let (email, _) = app.user_token(&app.org, "viewer").await;
    let browser = Browser::new(app);
    let done = browser.sign_in(&email, ADMIN_PASSWORD, &app.org).await;
    assert_eq!(done.status, StatusCode::SEE_OTHER, "{}", done.text);
    let id = app.task_titled(&app.org.hr, "Look, don't touch").await;
    let board = browser.get("/ui/board").await;
    assert!(
        board.text.contains("Look, don&#39;t touch") || board.text.contains("Look, don't touch")
    );
    assert!(
        !board.text.contains("New task"),
        "create form shown to a viewer"
    );
    assert!(
        !board.text.contains("/move\""),
        "move form shown to a viewer"
    );
    assert!(
        !board.text.contains("draggable"),
        "draggable card for a viewer"
    );
    let task = browser.get(&format!("/ui/tasks/{id}")).await;
    assert!(
        !task.text.contains("/comments\""),
        "comment form shown to a viewer"
    );
    let agents = browser.get("/ui/agents").await;
    assert!(!agents.text.contains("Register an agent"));
    // The server refuses what is not shown.
    let created = browser
        .post("/ui/tasks", &[("title", "Sneaky"), ("priority", "low")])
        .await;
    assert_eq!(created.status, StatusCode::FORBIDDEN, "{}", created.text);
    let moved = browser
        .post(
            &format!("/ui/tasks/{id}/move"),
            &[("status", "in_progress")],
        )
        .await;
    assert_eq!(moved.status, StatusCode::FORBIDDEN, "{}", moved.text);
    let reply = app.get(&app.org.hr, &format!("/tasks/{id}")).await;
    assert_eq!(str_of(reply.data(), "status"), "todo");
}

async fn agents_are_registered_and_suspended(app: &TestApp) {
    let browser = Browser::admin(app, &app.org).await;
    let form = [
        ("agentId", "writer-1"),
        ("name", "Report Writer"),
        ("level", "3"),
        ("mode", "worker"),
        ("role", "worker"),
        ("capabilities", "writing:expert, research"),
    ];
    let page = browser.post("/ui/agents", &form).await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.text);
    assert!(page.text.contains("Registered Report Writer"));
    let secret_at = page.text.find("class=\"secret\">").unwrap() + "class=\"secret\">".len();
    let secret: String = page.text[secret_at..]
        .chars()
        .take_while(char::is_ascii_hexdigit)
        .collect();
    assert_eq!(secret.len(), 64, "the secret is shown once");
    let again = browser.post("/ui/agents", &form).await;
    assert_eq!(again.status, StatusCode::CONFLICT, "{}", again.text);
    assert!(
        again.text.contains("value=\"writer-1\""),
        "the typed form is kept"
    );
    let list = app.get(&app.org.hr, "/agents?limit=100").await;
    let agent = list
        .list()
        .iter()
        .find(|a| a["agentId"] == "writer-1")
        .unwrap()
        .clone();
    let id = str_of(&agent, "id");
    let detail = browser.get(&format!("/ui/agents/{id}")).await;
    assert!(detail.text.contains("writing") && detail.text.contains("expert"));
    assert!(detail.text.contains("Credit history"));
    let suspended = browser.post(&format!("/ui/agents/{id}/suspend"), &[]).await;
    assert_eq!(
        suspended.status,
        StatusCode::SEE_OTHER,
        "{}",
        suspended.text
    );
    let reply = app.get(&app.org.hr, &format!("/agents/{id}")).await;
    assert_eq!(str_of(reply.data(), "status"), "suspended");
    let twice = browser.post(&format!("/ui/agents/{id}/suspend"), &[]).await;
    assert_eq!(twice.status, StatusCode::CONFLICT, "{}", twice.text);
    let theirs = app.other.hr.uuid;
    let malformed = browser.post("/ui/agents/not-an-id/suspend", &[]).await;
    assert_eq!(
        malformed.status,
        StatusCode::BAD_REQUEST,
        "{}",
        malformed.text
    );
    assert!(
        malformed.text.contains("agent id must be a UUID"),
        "{}",
        malformed.text
    );
    let cross = browser
        .post(&format!("/ui/agents/{theirs}/suspend"), &[])
        .await;
    assert_eq!(cross.status, StatusCode::NOT_FOUND, "{}", cross.text);
}

async fn the_audit_log_filters_like_the_api(app: &TestApp) {
    let browser = Browser::admin(app, &app.org).await;
    let id = app.task_titled(&app.org.hr, "Audited").await;
    let page = browser.get("/ui/audit?type=task.created").await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(page.text.contains(&format!("/ui/tasks/{id}")));
    let none = browser.get("/ui/audit?type=task.cancelled").await;
    assert!(none.text.contains("No events."));
    let bad = browser.get("/ui/audit?startDate=yesterday").await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST);
    assert!(bad.text.contains("startDate must be an RFC 3339 date-time"));
    let severity = browser.get("/ui/audit?severity=loud").await;
    assert_eq!(severity.status, StatusCode::BAD_REQUEST);
    for page in ["abc", "0", "-1"] {
        let bad = browser.get(&format!("/ui/audit?page={page}")).await;
        assert_eq!(bad.status, StatusCode::BAD_REQUEST, "{page}");
        assert!(
            bad.text.contains("page must be a whole number"),
            "{}",
            bad.text
        );
    }
}

async fn api_keys_and_two_factor_from_the_account_page(app: &TestApp) {
    let browser = Browser::admin(app, &app.org).await;
    let page = browser
        .post(
            "/ui/account/api-keys",
            &[("name", "ci"), ("scope", "read"), ("expiresInDays", "")],
        )
        .await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.text);
    let at = page.text.find("<p class=\"secret\">").unwrap() + "<p class=\"secret\">".len();
    let key: String = page.text[at..].chars().take_while(|c| *c != '<').collect();
    let reply = app
        .client
        .get(app.url("/tasks"))
        .bearer_auth(&key)
        .send()
        .await
        .unwrap();
    assert_eq!(reply.status(), StatusCode::OK, "the shown key works");
    let shown = browser.get("/ui/account").await;
    assert!(!shown.text.contains(&key), "the key is shown only once");
    let bad = browser
        .post("/ui/account/api-keys", &[("name", "x"), ("scope", "root")])
        .await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST);
    // Two-factor: the QR code and the key to type, then a wrong code is refused.
    let setup = browser
        .post("/ui/account/totp/setup", &[("password", ADMIN_PASSWORD)])
        .await;
    assert_eq!(setup.status, StatusCode::OK, "{}", setup.text);
    assert!(setup.text.contains("src=\"data:image/png;base64,"));
    assert!(setup.text.contains("id=\"totp-key\""));
    let wrong = browser
        .post("/ui/account/totp/verify", &[("code", "000000")])
        .await;
    assert_eq!(wrong.status, StatusCode::UNAUTHORIZED, "{}", wrong.text);
    let bad_password = browser
        .post("/ui/account/totp/setup", &[("password", "nope")])
        .await;
    assert_eq!(
        bad_password.status,
        StatusCode::UNAUTHORIZED,
        "{}",
        bad_password.text
    );
}

async fn the_webhook_page_tests_a_hook(app: &TestApp) {
    let receiver = Receiver::start();
    let token = app.admin_token(&app.org).await;
    let body = json!({"name": "ops", "url": receiver.url("/hook"), "events": ["task.created"]});
    let id = crate::webhook_support::register(app, &token, &body).await;
    let browser = Browser::admin(app, &app.org).await;
    let list = browser.get("/ui/webhooks").await;
    assert!(list.text.contains(&format!("/ui/webhooks/{id}")));
    let tested = browser.post(&format!("/ui/webhooks/{id}/test"), &[]).await;
    assert_eq!(tested.status, StatusCode::OK, "{}", tested.text);
    assert!(
        tested.text.contains("Test delivered: HTTP 200"),
        "{}",
        tested.text
    );
    assert_eq!(receiver.received().len(), 1);
    let page = browser.get(&format!("/ui/webhooks/{id}")).await;
    assert!(page.text.contains("Delivery log"));
    let bad = browser.get("/ui/webhooks/nope").await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST);
    assert!(
        bad.text.contains("webhook id must be a UUID"),
        "{}",
        bad.text
    );
    assert!(bad.text.contains("Back to the webhooks"));
}

async fn the_live_stream_carries_task_events_and_is_bounded(app: &TestApp) {
    let browser = Browser::admin(app, &app.org).await;
    let cookie = format!(
        "muster_session={}",
        browser.cookie("muster_session").unwrap()
    );
    let open = || {
        app.client
            .get(app.url("/ui/live"))
            .header("cookie", &cookie)
            .send()
    };
    let mut stream = open().await.unwrap();
    assert_eq!(stream.status(), StatusCode::OK);
    assert_eq!(stream.headers()["content-type"], "text/event-stream");
    // The bound holds for the dashboard's streams too: a clear 503, not a hang.
    let second = open().await.unwrap();
    assert_eq!(second.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert!(
        second
            .text()
            .await
            .unwrap()
            .contains("too many open event streams")
    );
    let id = app.task_titled(&app.org.hr, "Arrives live").await;
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(10);
    let mut seen = String::new();
    while !seen.contains(&id) {
        let chunk = tokio::time::timeout_at(deadline, stream.chunk())
            .await
            .expect("the task's event within 10 s")
            .unwrap()
            .expect("the stream stays open");
        seen.push_str(&String::from_utf8_lossy(&chunk));
    }
    assert!(seen.contains("task.created"), "{seen}");
}

async fn agent_registration_refuses_bad_input(app: &TestApp) {
    let browser = Browser::admin(app, &app.org).await;
    let refused: [(&[(&str, &str)], &str); 3] = [
        (&[("agentId", "x"), ("name", "X"), ("level", "11")], "level"),
        (
            &[
                ("agentId", "y"),
                ("name", "Y"),
                ("capabilities", "writing:guru"),
            ],
            "must be one of basic, standard, expert",
        ),
        (
            &[("agentId", "z"), ("name", "Z"), ("role", "emperor")],
            "role `emperor` is not one of the choices",
        ),
    ];
    for (fields, message) in refused {
        let mut form = vec![("mode", "worker"), ("role", "worker")];
        form.retain(|(name, _)| !fields.iter().any(|(given, _)| given == name));
        form.extend_from_slice(fields);
        let page = browser.post("/ui/agents", &form).await;
        assert_eq!(
            page.status,
            StatusCode::BAD_REQUEST,
            "{fields:?}: {}",
            page.text
        );
        assert!(page.text.contains(message), "{fields:?}: {}", page.text);
    }
    let list = app.get(&app.org.hr, "/agents?limit=100").await;
    assert!(
        !list
            .list()
            .iter()
            .any(|a| ["x", "y", "z"].contains(&a["agentId"].as_str().unwrap_or_default())),
        "a refused registration registers nothing"
    );
}
