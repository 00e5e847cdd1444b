//! The dashboard's defences: every post needs the CSRF token of its cookie and must come
//! from the dashboard's own origin, or nothing changes; every page carries a strict
//! Content-Security-Policy and no inline script or style that it would have to allow.

use reqwest::{Method, StatusCode};

use crate::dashboard_support::Browser;
use crate::helpers::TestApp;

api_tests!(
    a_post_without_the_right_csrf_token_changes_nothing,
    a_post_from_another_site_changes_nothing,
    the_sign_in_form_is_protected_too,
    every_page_has_a_strict_csp_and_no_inline_code,
    assets_are_embedded_and_typed,
);

/// How many tasks the first organization has, read through the API.
async fn task_count(app: &TestApp) -> usize {
    let reply = app.get(&app.org.hr, "/tasks?limit=500").await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);
    reply.body["data"].as_array().map_or(0, Vec::len)
}

async fn a_post_without_the_right_csrf_token_changes_nothing(app: &TestApp) {
    let browser = Browser::admin(app, &app.org).await;
    let before = task_count(app).await;
    let title = [("title", "Forged"), ("priority", "high")];
    let cases: [(&str, Option<&str>); 3] = [
        ("no token", None),
        (
            "a wrong token",
            Some("AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"),
        ),
        ("an empty token", Some("")),
    ];
    for (case, token) in cases {
        let mut form: Vec<(&str, &str)> = title.to_vec();
        if let Some(token) = token {
            form.push(("csrf", token));
        }
        let answer = browser
            .send(Method::POST, "/ui/tasks", Some(&form), &[])
            .await;
        assert_eq!(
            answer.status,
            StatusCode::FORBIDDEN,
            "{case}: {}",
            answer.text
        );
        assert!(answer.text.contains("CSRF"), "{case}: {}", answer.text);
    }
    // A form too large to be one of the dashboard's.
    let long = "x".repeat(70 * 1024);
    let answer = browser.post("/ui/tasks", &[("title", &long)]).await;
    assert_eq!(
        answer.status,
        StatusCode::PAYLOAD_TOO_LARGE,
        "{}",
        answer.text
    );
    // A script's header must match as well.
    let answer = browser
        .send(
            Method::POST,
            "/ui/tasks",
            Some(&title),
            &[(
                "x-csrf-token",
                "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
            )],
        )
        .await;
    assert_eq!(answer.status, StatusCode::FORBIDDEN, "{}", answer.text);
    assert_eq!(task_count(app).await, before);
    // With it, the same form creates the task.
    let done = browser.post("/ui/tasks", &title).await;
    assert_eq!(done.status, StatusCode::SEE_OTHER, "{}", done.text);
    assert!(
        done.location().starts_with("/ui/tasks/"),
        "{}",
        done.location()
    );
    assert_eq!(task_count(app).await, before + 1);
}

async fn a_post_from_another_site_changes_nothing(app: &TestApp) {
    let browser = Browser::admin(app, &app.org).await;
    let before = task_count(app).await;
    let token = browser.cookie("muster_csrf").unwrap();
    let form = [
        ("csrf", token.as_str()),
        ("title", "From elsewhere"),
        ("priority", "low"),
    ];
    for headers in [
        [("origin", "https://evil.example")],
        [("sec-fetch-site", "cross-site")],
        [("origin", "null")],
    ] {
        let answer = browser
            .send(Method::POST, "/ui/tasks", Some(&form), &headers)
            .await;
        assert_eq!(
            answer.status,
            StatusCode::FORBIDDEN,
            "{headers:?}: {}",
            answer.text
        );
        assert!(answer.text.contains("another site"), "{}", answer.text);
    }
    assert_eq!(task_count(app).await, before);
    // Behind a TLS-terminating proxy the page's origin is https while the request is
    // not: the host is what must match.
    let https = app.base.replace("http://", "https://");
    let answer = browser
        .send(
            Method::POST,
            "/ui/tasks",
            Some(&form),
            &[("origin", &https)],
        )
        .await;
    assert_eq!(answer.status, StatusCode::SEE_OTHER, "{}", answer.text);
    let same = app.base.clone();
    let answer = browser
        .send(Method::POST, "/ui/tasks", Some(&form), &[("origin", &same)])
        .await;
    assert_eq!(answer.status, StatusCode::SEE_OTHER, "{}", answer.text);
}

async fn the_sign_in_form_is_protected_too(app: &TestApp) {
    // Without the login page's cookie, a sign-in (login CSRF) is refused.
    let browser = Browser::new(app);
    let org = app.org.id.to_string();
    let form = [
        ("email", app.org.admin_email.as_str()),
        ("password", crate::helpers::ADMIN_PASSWORD),
        ("org", org.as_str()),
    ];
    let answer = browser
        .send(Method::POST, "/ui/login", Some(&form), &[])
        .await;
    assert_eq!(answer.status, StatusCode::FORBIDDEN, "{}", answer.text);
    assert!(answer.set_cookie("muster_session").is_none());
}

const PAGES: [&str; 6] = [
    "/ui/login",
    "/ui/board",
    "/ui/agents",
    "/ui/audit",
    "/ui/webhooks",
    "/ui/account",
];

async fn every_page_has_a_strict_csp_and_no_inline_code(app: &TestApp) {
    let browser = Browser::admin(app, &app.org).await;
    let task = app.task_titled(&app.org.hr, "Inspect me").await;
    let agent = app.org.hr.uuid.to_string();
    let mut pages: Vec<String> = PAGES.iter().map(|p| (*p).to_owned()).collect();
    pages.push(format!("/ui/tasks/{task}"));
    pages.push(format!("/ui/agents/{agent}"));
    for path in pages {
        let page = browser.get(&path).await;
        assert_eq!(page.status, StatusCode::OK, "{path}: {}", page.text);
        let header = |name: &str| {
            page.headers
                .get(name)
                .and_then(|v| v.to_str().ok())
                .unwrap_or_default()
                .to_owned()
        };
        assert_eq!(
            header("content-security-policy"),
            muster_dashboard::CONTENT_SECURITY_POLICY
        );
        for rule in [
            "default-src 'none'",
            "script-src 'self'",
            "frame-ancestors 'none'",
            "form-action 'self'",
        ] {
            assert!(
                header("content-security-policy").contains(rule),
                "{path}: {rule}"
            );
        }
        assert_eq!(header("x-content-type-options"), "nosniff");
        assert_eq!(header("x-frame-options"), "DENY");
        assert_eq!(header("cache-control"), "no-store");
        // Nothing the policy would have to allow: no inline script, style or handler.
        let html = page.text.to_lowercase();
        assert!(!html.contains("<script>"), "{path}: inline script");
        assert!(
            html.matches("<script").count() == html.matches("<script src=").count(),
            "{path}"
        );
        assert!(!html.contains(" style="), "{path}: inline style");
        assert!(!html.contains("<style"), "{path}: style element");
        assert!(
            !html.contains(" onclick=") && !html.contains(" onsubmit="),
            "{path}: handler"
        );
        assert!(!html.contains("javascript:"), "{path}: javascript: URL");
    }
}

async fn assets_are_embedded_and_typed(app: &TestApp) {
    let browser = Browser::new(app);
    let page = browser.get("/ui/login").await;
    for asset in [
        "/ui/assets/htmx-2.0.11.min.js",
        "/ui/assets/muster-2.js",
        "/ui/assets/muster-2.css",
    ] {
        assert!(page.text.contains(asset), "{asset} not linked");
        let answer = browser.get(asset).await;
        assert_eq!(answer.status, StatusCode::OK, "{asset}");
        let kind = answer.headers["content-type"].to_str().unwrap();
        let wanted = if asset.contains(".css") {
            "text/css"
        } else {
            "text/javascript"
        };
        assert!(kind.starts_with(wanted), "{asset}: {kind}");
        assert!(answer.text.len() > 1000, "{asset} is empty");
    }
    assert_eq!(
        browser.get("/ui/assets/nothing.js").await.status,
        StatusCode::NOT_FOUND
    );
}
