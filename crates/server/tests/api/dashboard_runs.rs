//! The dashboard's runs, usage and cost (decision D-106) through a real server: a task's
//! runs, the run page (its facts, usage, log and the poll that follows it), the Stop
//! button (refused to who may not oversee the agent), another organization's run, the
//! spend page's numbers for usage reported through the API with known costs, and
//! hostile model names shown as text.

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::dashboard_support::Browser;
use crate::helpers::{ADMIN_PASSWORD, Agent, TestApp, send, str_of};
use crate::runs_support::{report, run_of, running, start_run};
use crate::task_support::{assigned_task, walk};

api_tests!(
    the_task_page_lists_its_runs,
    the_run_page_shows_its_log_and_usage_and_follows_it,
    the_stop_button_asks_the_run_to_stop,
    a_viewer_may_not_stop_a_run,
    another_orgs_run_is_not_found,
    the_spend_page_adds_up_reported_costs,
    hostile_model_names_are_shown_as_text,
);

/// Reports usage of `model` costing `microusd` on `run` as `agent` (asserting 201).
async fn spend(app: &TestApp, agent: &Agent, run: &str, model: &str, microusd: i64) {
    let body = json!({
        "model": model, "inputTokens": 1000, "outputTokens": 200, "costMicrousd": microusd,
    });
    let reply = report(app, agent, run, &body).await;
    assert_eq!(reply.status.as_u16(), 201, "{}", reply.text);
}

/// Appends `lines` of stdout to `run`'s log as `agent` (asserting 200).
async fn log(app: &TestApp, agent: &Agent, run: &str, lines: &[&str]) {
    let lines: Vec<Value> = lines
        .iter()
        .map(|text| json!({"stream": "stdout", "text": text}))
        .collect();
    let body = json!({ "lines": lines }).to_string();
    let reply = app.post(agent, &format!("/runs/{run}/log"), &body).await;
    assert_eq!(reply.status.as_u16(), 200, "{}", reply.text);
}

/// Finishes `run` as `agent` with `status`.
async fn finish(app: &TestApp, agent: &Agent, run: &str, status: &str) {
    let body = json!({ "status": status, "exitCode": 0 }).to_string();
    let reply = app.post(agent, &format!("/runs/{run}/finish"), &body).await;
    assert_eq!(reply.status.as_u16(), 200, "{}", reply.text);
}

/// The `seen` the run page's poll carries.
fn seen_of(page: &str) -> String {
    let at = page.find("&amp;seen=").expect("a poll") + "&amp;seen=".len();
    page[at..].split('"').next().unwrap_or_default().to_owned()
}

async fn the_task_page_lists_its_runs(app: &TestApp) {
    let browser = Browser::admin(app, &app.org).await;
    let (worker, task, first) = running(app, 5_000, &json!({"adapter": "claude-code"})).await;
    spend(app, &worker, &first, "model-a", 150_000).await;
    finish(app, &worker, &first, "failed").await;
    let second = str_of(&start_run(app, &worker, &task, &json!({})).await, "id");
    let page = browser.get(&format!("/ui/tasks/{task}")).await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.text);
    assert!(
        page.text.contains("<h2 id=\"runs-h\">Runs</h2>"),
        "{}",
        page.text
    );
    // Newest first, each linking to its page.
    let (at_first, at_second) = (
        page.text
            .find(&format!("href=\"/ui/runs/{first}\""))
            .expect("first run linked"),
        page.text
            .find(&format!("href=\"/ui/runs/{second}\""))
            .expect("second run linked"),
    );
    assert!(at_second < at_first, "newest first");
    let row = |run: &str| {
        let start = page.text.find(&format!("data-run=\"{run}\"")).unwrap();
        let end = page.text[start..].find("</tr>").unwrap() + start;
        page.text[start..end].to_owned()
    };
    let first_row = row(&first);
    // $0.15 at the default 1,000 credits a dollar: 150 credits; 1,200 tokens.
    for shown in ["failed", "$0.15", ">150<", "1,200", &worker.handle] {
        assert!(first_row.contains(shown), "{shown} in {first_row}");
    }
    let second_row = row(&second);
    for shown in ["running", "still running", "unknown", ">0<"] {
        assert!(second_row.contains(shown), "{shown} in {second_row}");
    }
}

async fn the_run_page_shows_its_log_and_usage_and_follows_it(app: &TestApp) {
    let browser = Browser::admin(app, &app.org).await;
    let start = json!({"adapter": "claude-code", "model": "model-a"});
    let (worker, task, run) = running(app, 5_000, &start).await;
    log(app, &worker, &run, &["compiling <crate>", "tests passed"]).await;
    spend(app, &worker, &run, "model-a", 150_000).await;
    spend(app, &worker, &run, "model-b", 50_000).await;
    let page = browser.get(&format!("/ui/runs/{run}")).await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.text);
    let text = &page.text;
    for shown in [
        "claude-code",
        &format!("href=\"/ui/tasks/{task}\""),
        &format!("href=\"/ui/agents/{}\"", worker.uuid),
        // The log, escaped, numbered.
        "<li class=\"stdout\" value=\"1\">compiling &lt;crate&gt;</li>",
        "<li class=\"stdout\" value=\"2\">tests passed</li>",
        // Usage by model and in total: $0.20 is 200 credits.
        "<th scope=\"row\">model-a</th>",
        "<th scope=\"row\">model-b</th>",
        "$0.15",
        "$0.05",
        "$0.20",
        "200 credits",
        "Stop requested</dt><dd class=\"stop\">no",
    ] {
        assert!(text.contains(shown), "{shown} in {text}");
    }
    assert!(!text.contains("compiling <crate>"));
    // While it runs, the page asks for the lines after the last it shows.
    let poll = format!("hx-get=\"/ui/runs/{run}/log?from=1&amp;after=2&amp;seen=");
    assert!(text.contains(&poll), "{text}");
    assert!(text.contains("hx-trigger=\"every 2s\""));
    let seen = seen_of(text);
    // A poll with nothing new: no lines, no facts, the next poll.
    let path = format!("/ui/runs/{run}/log?from=1&after=2&seen={seen}");
    let idle = browser
        .send(Method::GET, &path, None, &[("hx-request", "true")])
        .await;
    assert_eq!(idle.status, StatusCode::OK, "{}", idle.text);
    assert!(!idle.text.contains("<li"), "{}", idle.text);
    assert!(!idle.text.contains("run-facts"), "{}", idle.text);
    assert!(idle.text.contains(&poll));
    // A line appended: the poll brings it, to be added to the log.
    log(app, &worker, &run, &["done & dusted"]).await;
    let fresh = browser
        .send(Method::GET, &path, None, &[("hx-request", "true")])
        .await;
    assert!(
        fresh.text.contains(
            "<ol hx-swap-oob=\"beforeend:#log-lines\"><li class=\"stdout\" value=\"3\">done &amp; dusted</li></ol>"
        ),
        "{}",
        fresh.text
    );
    assert!(
        fresh
            .text
            .contains(&format!("/log?from=1&amp;after=3&amp;seen={seen}\""))
    );
    // The range of lines shown is said again.
    assert!(
        fresh.text.contains(
            "<p class=\"more\" id=\"log-range\" hx-swap-oob=\"true\">Lines 1–3 of 3.</p>"
        ),
        "{}",
        fresh.text
    );
    assert!(!idle.text.contains("log-range"), "{}", idle.text);
    // The run finished: the facts come again, and the polls end.
    finish(app, &worker, &run, "succeeded").await;
    let path = format!("/ui/runs/{run}/log?after=3&seen={seen}");
    let ended = browser
        .send(Method::GET, &path, None, &[("hx-request", "true")])
        .await;
    assert!(
        ended.text.contains("id=\"run-facts\"") && ended.text.contains("hx-swap-oob=\"true\""),
        "{}",
        ended.text
    );
    assert!(ended.text.contains("succeeded"));
    assert!(!ended.text.contains("hx-get"), "{}", ended.text);
    assert!(ended.text.contains("The run has ended (succeeded)"));
    // A finished run's page has no poll.
    let page = browser.get(&format!("/ui/runs/{run}")).await;
    assert!(!page.text.contains("hx-get"), "{}", page.text);
    assert!(page.text.contains("done &amp; dusted"));
    // Pages of the log.
    let later = browser.get(&format!("/ui/runs/{run}?after=2")).await;
    assert!(later.text.contains("value=\"3\"") && !later.text.contains("value=\"2\""));
    assert!(
        later
            .text
            .contains(&format!("href=\"/ui/runs/{run}?after=0\""))
    );
    for bad in ["?after=-1", "?after=two"] {
        let refused = browser.get(&format!("/ui/runs/{run}{bad}")).await;
        assert_eq!(refused.status, StatusCode::BAD_REQUEST, "{bad}");
        assert!(
            refused.text.contains("after must be a whole number"),
            "{bad}"
        );
    }
    let bad = browser.get("/ui/runs/not-a-uuid").await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST);
    assert!(bad.text.contains("run id must be a UUID"), "{}", bad.text);
}

async fn the_stop_button_asks_the_run_to_stop(app: &TestApp) {
    let browser = Browser::admin(app, &app.org).await;
    let (worker, _task, run) = running(app, 5_000, &json!({})).await;
    let page = browser.get(&format!("/ui/runs/{run}")).await;
    let action = format!("action=\"/ui/runs/{run}/stop\"");
    assert!(page.text.contains(&action), "{}", page.text);
    // Without the page's token: refused before anything is read.
    let forged = browser
        .send(
            Method::POST,
            &format!("/ui/runs/{run}/stop"),
            Some(&[("csrf", "forged")]),
            &[],
        )
        .await;
    assert_eq!(forged.status, StatusCode::FORBIDDEN);
    assert_eq!(run_of(app, &worker, &run).await["stopRequested"], false);
    let stopped = browser.post(&format!("/ui/runs/{run}/stop"), &[]).await;
    assert_eq!(stopped.status, StatusCode::SEE_OTHER, "{}", stopped.text);
    assert_eq!(stopped.location(), format!("/ui/runs/{run}"));
    // The agent learns it from its next answer.
    let seen = run_of(app, &worker, &run).await;
    assert_eq!(seen["stopRequested"], true, "{seen}");
    assert_eq!(seen["stopReason"], "requested");
    let page = browser.get(&format!("/ui/runs/{run}")).await;
    assert!(page.text.contains("yes (requested)"), "{}", page.text);
    assert!(page.text.contains("running, asked to stop (requested)"));
    assert!(!page.text.contains(&action), "nothing left to stop");
    // Asking again changes nothing.
    let again = browser.post(&format!("/ui/runs/{run}/stop"), &[]).await;
    assert_eq!(again.status, StatusCode::SEE_OTHER, "{}", again.text);
}

async fn a_viewer_may_not_stop_a_run(app: &TestApp) {
    let (email, _) = app.user_token(&app.org, "viewer").await;
    let browser = Browser::new(app);
    let done = browser.sign_in(&email, ADMIN_PASSWORD, &app.org).await;
    assert_eq!(done.status, StatusCode::SEE_OTHER, "{}", done.text);
    let (worker, _task, run) = running(app, 5_000, &json!({})).await;
    log(app, &worker, &run, &["visible to viewers"]).await;
    let page = browser.get(&format!("/ui/runs/{run}")).await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(page.text.contains("visible to viewers"));
    assert!(
        !page.text.contains(&format!("/ui/runs/{run}/stop")),
        "Stop shown to a viewer"
    );
    // The service refuses what is not shown, with the API's sentence, on the run page.
    let refused = browser.post(&format!("/ui/runs/{run}/stop"), &[]).await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN, "{}", refused.text);
    assert!(
        refused.text.contains("class=\"notice error\""),
        "{}",
        refused.text
    );
    assert!(refused.text.contains("visible to viewers"), "the run page");
    assert_eq!(run_of(app, &worker, &run).await["stopRequested"], false);
}

async fn another_orgs_run_is_not_found(app: &TestApp) {
    let browser = Browser::admin(app, &app.org).await;
    let theirs = app.worker(&app.other).await;
    let task = assigned_task(app, &app.other.hr, &theirs, json!({})).await;
    walk(app, &theirs, &task, &["in_progress"]).await;
    let run = str_of(&start_run(app, &theirs, &task, &json!({})).await, "id");
    log(app, &theirs, &run, &["Globex secret output"]).await;
    let page = browser.get(&format!("/ui/runs/{run}")).await;
    assert_eq!(page.status, StatusCode::NOT_FOUND, "{}", page.text);
    assert!(!page.text.contains("Globex secret output"));
    let poll = browser
        .send(
            Method::GET,
            &format!("/ui/runs/{run}/log?after=0"),
            None,
            &[("hx-request", "true")],
        )
        .await;
    assert_eq!(poll.status, StatusCode::NOT_FOUND, "{}", poll.text);
    assert!(!poll.text.contains("Globex secret output"));
    let stopped = browser.post(&format!("/ui/runs/{run}/stop"), &[]).await;
    assert_eq!(stopped.status, StatusCode::NOT_FOUND, "{}", stopped.text);
    assert_eq!(run_of(app, &theirs, &run).await["stopRequested"], false);
    // Their usage is not in this organization's spend.
    let body =
        json!({"model": "globex-model", "inputTokens": 1, "outputTokens": 1, "costMicrousd": 10});
    assert_eq!(report(app, &theirs, &run, &body).await.status.as_u16(), 201);
    let spend = browser.get("/ui/spend").await;
    assert!(!spend.text.contains("globex-model"), "{}", spend.text);
}

/// Sets `agent`'s period limit as `org`'s admin.
async fn set_limit(app: &TestApp, agent: &Agent, limit: i64) {
    let token = app.admin_token(&app.org).await;
    let body = json!({ "budgetPeriodLimit": limit });
    let path = format!("/agents/{}/budget", agent.uuid);
    let reply = send(app.bearer(&token, Method::PATCH, &path, Some(&body))).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);
}

async fn the_spend_page_adds_up_reported_costs(app: &TestApp) {
    let browser = Browser::admin(app, &app.org).await;
    let empty = browser.get("/ui/spend").await;
    assert_eq!(empty.status, StatusCode::OK, "{}", empty.text);
    assert!(
        empty
            .text
            .contains("No usage was reported in the last 30 days.")
    );
    assert!(
        empty
            .text
            .contains("href=\"/ui/spend\" aria-current=\"page\"")
    );
    // Two workers: a $0.15 + $0.05 run (a budget of 1,000 credits), a $0.10 run.
    let (big, _, big_run) = running(app, 5_000, &json!({})).await;
    set_limit(app, &big, 1_000).await;
    spend(app, &big, &big_run, "model-a", 150_000).await;
    spend(app, &big, &big_run, "model-b", 50_000).await;
    let (small, _, small_run) = running(app, 5_000, &json!({})).await;
    spend(app, &small, &small_run, "model-a", 100_000).await;
    let page = browser.get("/ui/spend").await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.text);
    let text = &page.text;
    // The whole: $0.30, 300 credits, 3 reports of 1,200 tokens, 2 runs.
    assert!(
        text.contains("<strong>$0.30</strong> in 2 runs, 300 credits, 3,600 tokens."),
        "{text}"
    );
    // Today's row: model-a (costliest first) $0.25, model-b $0.05, $0.30 in total.
    let today = time::OffsetDateTime::now_utc().date().to_string();
    let row_at = text
        .find(&format!("<th scope=\"row\">{today}</th>"))
        .expect("today's row");
    let row = &text[row_at..row_at + text[row_at..].find("</tr>").unwrap()];
    assert!(
        row.contains("<td class=\"num\">$0.25</td><td class=\"num\">$0.05</td><td class=\"num\">$0.30</td><td class=\"num\">300</td><td class=\"num\">3,600</td>"),
        "{row}"
    );
    // The chart: the axis ends at $0.50, so 200 units stand for $0.50, model-a's $0.25
    // is 100 units high and model-b's $0.05 20, in their colours.
    assert!(text.contains(">$0.50</text>"), "{text}");
    assert!(text.contains("height=\"100\" fill=\"#0072b2\""), "{text}");
    assert!(text.contains("height=\"20\" fill=\"#e69f00\""), "{text}");
    assert!(text.contains("model-a: $0.25</title>"));
    // Top agents: the $0.20 worker before the $0.10 one.
    let (at_big, at_small) = (
        text.find(&format!("{}: $0.20</title>", big.handle))
            .expect("big worker drawn"),
        text.find(&format!("{}: $0.10</title>", small.handle))
            .expect("small worker drawn"),
    );
    assert!(at_big < at_small);
    // Budgets: 200 of 1,000 credits, 20 %.
    assert!(text.contains("200 of 1,000 credits (20 %)"), "{text}");
    assert!(
        text.contains(&format!(
            "{}: 200 of 1,000 credits (20 %)</title>",
            big.handle
        )),
        "{text}"
    );
    // The agent's own page: its spend this period against its budget, and its runs.
    let agent = browser.get(&format!("/ui/agents/{}", big.uuid)).await;
    assert!(
        agent
            .text
            .contains("200 credits spent</strong> of a limit of 1,000 (20 %)."),
        "{}",
        agent.text
    );
    assert!(
        agent
            .text
            .contains("The usage its runs reported this period cost $0.20.")
    );
    assert!(agent.text.contains(&format!("href=\"/ui/runs/{big_run}\"")));
    assert!(agent.text.contains("<th scope=\"row\">model-b</th>"));
    assert!(
        agent
            .text
            .contains("width=\"66\" height=\"18\" fill=\"#1a7f37\""),
        "{}",
        agent.text
    );
}

async fn hostile_model_names_are_shown_as_text(app: &TestApp) {
    let browser = Browser::admin(app, &app.org).await;
    let hostile = "<script>alert('m')</script><b>";
    let start = json!({"adapter": hostile, "model": hostile});
    let (worker, task, run) = running(app, 5_000, &start).await;
    spend(app, &worker, &run, hostile, 10_000).await;
    for path in [
        format!("/ui/runs/{run}"),
        format!("/ui/tasks/{task}"),
        format!("/ui/agents/{}", worker.uuid),
        "/ui/spend".to_owned(),
    ] {
        let page = browser.get(&path).await;
        assert_eq!(page.status, StatusCode::OK, "{path}: {}", page.text);
        assert!(
            !page.text.contains("<script>alert"),
            "{path}: {}",
            page.text
        );
        assert!(!page.text.contains("<b>"), "{path}");
    }
    let spend = browser.get("/ui/spend").await;
    // In the chart's key and tooltips as in the table.
    assert!(spend.text.contains("&lt;script&gt;alert"), "{}", spend.text);
    assert!(spend.text.contains("<title>"), "{}", spend.text);
}
