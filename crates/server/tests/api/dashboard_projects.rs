//! The dashboard's projects (issue 66) through a real server: the list with progress
//! bars, creating one from its form (and a refused one kept in the form), a project's
//! page with its numbers, burn-up chart and table, the board filtered to it, archiving,
//! another organization's project not found, and hostile names shown as text.

use reqwest::StatusCode;
use serde_json::json;

use crate::dashboard_support::Browser;
use crate::helpers::{TestApp, str_of};
use crate::task_support::walk;

api_tests!(
    the_projects_page_lists_projects_with_their_progress,
    a_project_is_created_from_the_form_and_refusals_keep_what_was_typed,
    the_project_page_shows_its_progress_and_burn_up,
    the_board_filters_by_project,
    archiving_from_the_page_archives,
    another_orgs_project_is_not_found,
);

async fn project(app: &TestApp, name: &str) -> String {
    let reply = app
        .post(&app.org.hr, "/projects", &json!({"name": name}).to_string())
        .await;
    assert_eq!(reply.status.as_u16(), 201, "{}", reply.text);
    str_of(&reply.body["data"], "id")
}

/// A task of `project` titled `title`, walked through `path`.
async fn task_in(app: &TestApp, project: &str, title: &str, path: &[&str]) -> String {
    let task = app
        .create_task(
            &app.org.hr,
            &json!({"title": title, "projectId": project, "reward": 0}),
        )
        .await;
    let id = str_of(&task, "id");
    walk(app, &app.org.hr, &id, path).await;
    id
}

async fn the_projects_page_lists_projects_with_their_progress(app: &TestApp) {
    let browser = Browser::admin(app, &app.org).await;
    let empty = browser.get("/ui/projects").await;
    assert_eq!(empty.status, StatusCode::OK, "{}", empty.text);
    assert!(empty.text.contains("No project yet."), "{}", empty.text);
    let launch = project(app, "Launch <b>now</b>").await;
    task_in(app, &launch, "one", &["in_progress", "done"]).await;
    task_in(app, &launch, "two", &[]).await;
    task_in(app, &launch, "three", &[]).await;
    task_in(app, &launch, "gone", &["cancelled"]).await;
    let page = browser.get("/ui/projects").await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.text);
    assert!(
        page.text.contains(&format!(
            "href=\"/ui/projects/{launch}\">Launch &lt;b&gt;now&lt;/b&gt;</a>"
        )),
        "{}",
        page.text
    );
    // 1 done of the 3 not cancelled: 33 %.
    assert!(
        page.text.contains("<progress value=\"33\" max=\"100\""),
        "{}",
        page.text
    );
    assert!(
        page.text.contains("33 % done (1 of 4 tasks, 2 open)"),
        "{}",
        page.text
    );
    assert!(
        page.text.contains("href=\"/ui/projects\""),
        "in the navigation"
    );
}

async fn a_project_is_created_from_the_form_and_refusals_keep_what_was_typed(app: &TestApp) {
    let browser = Browser::admin(app, &app.org).await;
    browser.get("/ui/projects").await;
    let refused = browser
        .post(
            "/ui/projects",
            &[
                ("name", "Q3 audit"),
                ("goal", "Every crate"),
                ("due", "someday"),
            ],
        )
        .await;
    assert_eq!(refused.status, StatusCode::BAD_REQUEST, "{}", refused.text);
    assert!(refused.text.contains("dueAt"), "{}", refused.text);
    assert!(
        refused.text.contains("value=\"Q3 audit\""),
        "{}",
        refused.text
    );
    assert!(app.get(&app.org.hr, "/projects").await.list().is_empty());
    let created = browser
        .post(
            "/ui/projects",
            &[
                ("name", "Q3 audit"),
                ("goal", "Every crate"),
                ("due", "2027-03-31"),
            ],
        )
        .await;
    assert_eq!(created.status, StatusCode::SEE_OTHER, "{}", created.text);
    let listed = app.get(&app.org.hr, "/projects").await;
    let id = listed.ids().pop().expect("one project");
    assert_eq!(created.location(), format!("/ui/projects/{id}"));
    let read = app.get(&app.org.hr, &format!("/projects/{id}")).await;
    assert_eq!(read.data()["goal"], "Every crate");
    assert_eq!(read.data()["dueAt"], "2027-03-31T00:00:00.000Z");
    // Without the form's token nothing is created.
    let forged = browser
        .send(
            reqwest::Method::POST,
            "/ui/projects",
            Some(&[("name", "forged")]),
            &[],
        )
        .await;
    assert_eq!(forged.status, StatusCode::FORBIDDEN, "{}", forged.text);
    assert_eq!(app.get(&app.org.hr, "/projects").await.list().len(), 1);
}

async fn the_project_page_shows_its_progress_and_burn_up(app: &TestApp) {
    let browser = Browser::admin(app, &app.org).await;
    let launch = project(app, "Launch").await;
    let stuck = task_in(app, &launch, "stuck <i>", &["in_progress", "blocked"]).await;
    task_in(app, &launch, "shipped", &["in_progress", "done"]).await;
    let page = browser.get(&format!("/ui/projects/{launch}")).await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.text);
    assert!(page.text.contains("<h1>Launch</h1>"), "{}", page.text);
    assert!(
        page.text.contains("50 % done (1 of 2 tasks, 1 open)"),
        "{}",
        page.text
    );
    // The blocked task, linked and escaped.
    assert!(
        page.text
            .contains(&format!("href=\"/ui/tasks/{stuck}\">stuck &lt;i&gt;</a>")),
        "{}",
        page.text
    );
    // The burn-up: a drawing with its description, and today's row of the table.
    assert!(page.text.contains("<polyline"), "{}", page.text);
    assert!(page.text.contains("role=\"img\""), "{}", page.text);
    let today = time::OffsetDateTime::now_utc().date().to_string();
    assert!(
        page.text.contains(&format!(
            "<th scope=\"row\">{today}</th><td class=\"num\">2</td><td class=\"num\">1</td>"
        )),
        "{}",
        page.text
    );
    assert!(
        page.text
            .contains(&format!("href=\"/ui/board?project={launch}\"")),
        "{}",
        page.text
    );
    let bad = browser.get("/ui/projects/not-a-uuid").await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST, "{}", bad.text);
}

async fn the_board_filters_by_project(app: &TestApp) {
    let browser = Browser::admin(app, &app.org).await;
    let launch = project(app, "Launch").await;
    task_in(app, &launch, "inside the project", &[]).await;
    app.task_titled(&app.org.hr, "outside the project").await;
    let all = browser.get("/ui/board").await;
    assert!(all.text.contains("outside the project"), "{}", all.text);
    assert!(
        all.text
            .contains(&format!("<option value=\"{launch}\">Launch</option>")),
        "{}",
        all.text
    );
    let filtered = browser.get(&format!("/ui/board?project={launch}")).await;
    assert_eq!(filtered.status, StatusCode::OK, "{}", filtered.text);
    assert!(
        filtered.text.contains("inside the project"),
        "{}",
        filtered.text
    );
    assert!(
        !filtered.text.contains("outside the project"),
        "{}",
        filtered.text
    );
    let bad = browser.get("/ui/board/columns?project=nope").await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST, "{}", bad.text);
}

async fn archiving_from_the_page_archives(app: &TestApp) {
    let browser = Browser::admin(app, &app.org).await;
    let launch = project(app, "Launch").await;
    let page = browser.get(&format!("/ui/projects/{launch}")).await;
    assert!(page.text.contains("Archive project"), "{}", page.text);
    let done = browser
        .post(&format!("/ui/projects/{launch}/archive"), &[])
        .await;
    assert_eq!(done.status, StatusCode::SEE_OTHER, "{}", done.text);
    let read = app.get(&app.org.hr, &format!("/projects/{launch}")).await;
    assert_eq!(read.data()["status"], "archived");
    let page = browser.get(&format!("/ui/projects/{launch}")).await;
    assert!(!page.text.contains("Archive project"), "{}", page.text);
    assert!(page.text.contains("archived"), "{}", page.text);
}

async fn another_orgs_project_is_not_found(app: &TestApp) {
    let browser = Browser::admin(app, &app.org).await;
    let reply = app
        .post(
            &app.other.hr,
            "/projects",
            &json!({"name": "Globex secret plan"}).to_string(),
        )
        .await;
    let theirs = str_of(&reply.body["data"], "id");
    let page = browser.get(&format!("/ui/projects/{theirs}")).await;
    assert_eq!(page.status, StatusCode::NOT_FOUND, "{}", page.text);
    assert!(!page.text.contains("Globex secret plan"));
    let list = browser.get("/ui/projects").await;
    assert!(!list.text.contains("Globex secret plan"));
    let archived = browser
        .post(&format!("/ui/projects/{theirs}/archive"), &[])
        .await;
    assert_eq!(archived.status, StatusCode::NOT_FOUND, "{}", archived.text);
    let read = app.get(&app.other.hr, &format!("/projects/{theirs}")).await;
    assert_eq!(read.data()["status"], "active");
}
