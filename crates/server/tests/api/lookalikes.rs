//! Look-alikes and text that cannot be shown honestly: an `agentId` differing from a
//! taken one only by case is taken; an e-mail is one address whatever its case and width
//! (NFKC) and holds no invisible character; a title or a name must show a visible
//! character and hold no bidirectional control. Handles registered in two cases before
//! the rule keep working.

use reqwest::Method;
use serde_json::json;

use crate::economy_support::task_total;
use crate::helpers::{Agent, TestApp, assert_error, assert_error_exact, send, unique_handle};
use crate::stored::{all_agents, insert_worker};
use crate::task_support::is_postgres;
use crate::task_tools::Caller;

api_tests!(
    an_agent_id_differing_only_by_case_is_taken,
    emails_differing_by_case_or_width_are_one_and_hidden_characters_are_refused,
    titles_and_names_must_show_what_they_hold,
    handles_registered_in_two_cases_before_the_rule_keep_working,
);

/// `POST /agents/register` by `hr` with `agentId` `handle`, answered.
async fn register(app: &TestApp, hr: &Agent, handle: &str, name: &str) -> crate::helpers::Reply {
    let body = json!({"agentId": handle, "name": name});
    app.post(hr, "/agents/register", &body.to_string()).await
}

/// How many stored agents carry `handle` in any case.
async fn in_any_case(app: &TestApp, handle: &str) -> usize {
    all_agents(app)
        .await
        .iter()
        .filter(|a| a.handle.as_str().eq_ignore_ascii_case(handle))
        .count()
}

/// How many users `org` holds, as stored.
async fn users_of(app: &TestApp, org: &crate::helpers::Org) -> i64 {
    // Raw SQL: no route and no port lists (or counts) an organization's users.
    let sql = format!(
        "SELECT CAST(COUNT(*) AS TEXT) AS v FROM users WHERE org_id = '{}'",
        org.id
    );
    app.db().db.text_of(&sql).await.parse().unwrap()
}

async fn an_agent_id_differing_only_by_case_is_taken(app: &TestApp) {
    let lower = unique_handle("bob");
    let first = register(app, &app.org.hr, &lower, "Bob").await;
    assert_eq!(first.status, 200, "{}", first.text);
    let upper = format!("B{}", &lower[1..]);
    // In this organization and in any other: handles are unique across the deployment.
    for hr in [&app.org.hr, &app.other.hr] {
        for variant in [upper.clone(), lower.to_ascii_uppercase()] {
            let reply = register(app, hr, &variant, "Look-alike").await;
            assert_error_exact(&reply, 409, &format!("agentId {variant} is taken"));
        }
    }
    assert_eq!(in_any_case(app, &lower).await, 1);
    // A handle is kept as given: a mixed-case one of its own is fine and shown so.
    let mixed = unique_handle("Carol");
    let registered = register(app, &app.org.hr, &mixed, "Carol").await;
    assert_eq!(registered.data()["agentId"], mixed.as_str());
}

/// `POST /auth/register` by the organization's admin, answered.
async fn add_user(app: &TestApp, admin: &str, email: &str) -> crate::helpers::Reply {
    let body = json!({"email": email, "password": "a user password", "name": "User",
                      "orgId": app.org.id});
    send(app.bearer(admin, Method::POST, "/auth/register", Some(&body))).await
}

async fn emails_differing_by_case_or_width_are_one_and_hidden_characters_are_refused(
    app: &TestApp,
) {
    let before = users_of(app, &app.org).await;
    let admin = app.admin_token(&app.org).await;
    let created = add_user(app, &admin, "carol@example.com").await;
    assert_eq!(created.status, 200, "{}", created.text);
    // Full-width letters are their plain letters (NFKC), case is ignored: the same address.
    for same in [
        "ｃａｒｏｌ@example.com",
        "ＣＡＲＯＬ＠ＥＸＡＭＰＬＥ．ＣＯＭ",
        "Carol@Example.com",
    ] {
        assert_error(
            &add_user(app, &admin, same).await,
            409,
            "email is already in use",
        );
    }
    // A new address in full-width letters is stored in its plain form, and signs in so.
    let wide = add_user(app, &admin, "ｄａｖｅ@example.com").await;
    assert_eq!(wide.status, 200, "{}", wide.text);
    assert_eq!(wide.body["email"], "dave@example.com");
    app.login("dave@example.com", "a user password").await;
    // Invisible characters are refused, never quietly taken out.
    for hidden in [
        "carol\u{200B}@example.com",
        "ca\u{200D}rol@example.com",
        "\u{FEFF}erin@example.com",
        "erin@exa\u{2060}mple.com",
        "erin@\u{202E}moc.elpmaxe",
    ] {
        assert_error(
            &add_user(app, &admin, hidden).await,
            400,
            "email must not contain invisible characters",
        );
    }
    let profile = json!({"email": "carol\u{200B}@example.com"});
    let changed = send(app.bearer(&admin, Method::POST, "/auth/profile", Some(&profile))).await;
    assert_error(&changed, 400, "email must not contain invisible characters");
    assert_eq!(
        users_of(app, &app.org).await,
        before + 2,
        "carol and dave only"
    );
}

async fn titles_and_names_must_show_what_they_hold(app: &TestApp) {
    let hr = Caller::Agent(app.org.hr.clone());
    let before = task_total(app, &hr).await;
    let create = |title: &str| {
        let body = json!({"title": title}).to_string();
        async move { app.post(&app.org.hr, "/tasks", &body).await }
    };
    let invisible = "title must contain a visible character";
    let bidi = "title must not contain bidirectional control characters";
    assert_error(&create("\u{200B}").await, 400, invisible);
    assert_error(&create(" \u{200B}\u{2060}\u{FEFF} ").await, 400, invisible);
    assert_error(&create("Invoice \u{202E}fdp.exe").await, 400, bidi);
    assert_error(&create("a\u{2066}b\u{2069}").await, 400, bidi);
    let task = create("Réparer l'analyseur 🚀").await;
    assert_eq!(task.data()["title"], "Réparer l'analyseur 🚀");
    let id = task.data()["id"].as_str().unwrap().to_owned();
    let patched = send(app.signed(
        &app.org.hr,
        Method::PATCH,
        &format!("/tasks/{id}"),
        Some(&json!({"title": "x\u{202D}y"}).to_string()),
    ))
    .await;
    assert_error(&patched, 400, bidi);
    // An agent's and a user's display name follow the same rule.
    let handle = unique_handle("named");
    assert_error(
        &register(app, &app.org.hr, &handle, "\u{200B}\u{200C}").await,
        400,
        "name must contain a visible character",
    );
    assert_error(
        &register(app, &app.org.hr, &handle, "Ada \u{202E}nimda").await,
        400,
        "name must not contain bidirectional control characters",
    );
    let admin = app.admin_token(&app.org).await;
    let profile = json!({"name": "\u{3164}"});
    let renamed = send(app.bearer(&admin, Method::POST, "/auth/profile", Some(&profile))).await;
    assert_error(&renamed, 400, "name must contain a visible character");
    assert_eq!(
        task_total(app, &hr).await,
        before + 1,
        "only the displayable title"
    );
}

/// The migration that makes handles unique regardless of case, for the engine.
fn migration(app: &TestApp, file: &str) -> String {
    let engine = if is_postgres(app) {
        "postgres"
    } else {
        "sqlite"
    };
    let path = format!(
        "{}/../../migrations/{engine}/2026-12-04-000002_agent_handles_any_case/{file}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

async fn handles_registered_in_two_cases_before_the_rule_keep_working(app: &TestApp) {
    // A database from before the rule, holding two agents whose handles differ by case.
    // The migration's own SQL undoes it: no route or port runs a migration backwards.
    app.db().execute(&migration(app, "down.sql")).await;
    let first = app.worker(&app.org).await;
    let twin = insert_worker(app, &app.org, &first.handle.to_ascii_uppercase(), |_| {}).await;
    // The migration (its own SQL again) does not fail on them, and both go on signing
    // as themselves.
    app.db().execute(&migration(app, "up.sql")).await;
    for agent in [&first, &twin] {
        let me = app.get(agent, &format!("/agents/{}", agent.uuid)).await;
        assert_eq!(me.data()["agentId"], agent.handle.as_str());
    }
    // No third case of theirs can be registered.
    let third = format!(
        "{}{}",
        &first.handle[..1].to_ascii_uppercase(),
        &first.handle[1..]
    );
    let reply = register(app, &app.org.hr, &third, "Third").await;
    assert_error_exact(&reply, 409, &format!("agentId {third} is taken"));
    assert_eq!(in_any_case(app, &first.handle).await, 2);
    // And the rule holds for new handles.
    let fresh = unique_handle("fresh");
    assert_eq!(
        register(app, &app.org.hr, &fresh, "Fresh").await.status,
        200
    );
    let reply = register(app, &app.org.hr, &fresh.to_ascii_uppercase(), "Copy").await;
    assert_eq!(reply.status, 409, "{}", reply.text);
}
