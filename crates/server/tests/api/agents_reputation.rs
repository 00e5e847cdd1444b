//! Reputation (decisions D-63, D-64, D-65): the summary and its level names at every
//! boundary, the history and its paging, bonuses and penalties with their limits and
//! who may give them, demotion, and the trust leaderboard.

use muster_domain::model::{AgentRole, AgentStatus};
use reqwest::Method;
use serde_json::{Value, json};
use uuid::Uuid;

use crate::agent_support::{active_child, agent_with};
use crate::helpers::{
    Agent, Reply, TestApp, assert_bad_queries, assert_error, assert_error_exact, assert_timestamp,
    keys_of, str_of,
};
use crate::stored::{change_agent, insert_worker};
use crate::task_support::{assigned_task, events_typed, walk};
use crate::task_tools::{Caller, event_total};

api_tests!(
    the_summary_names_the_level_at_every_boundary,
    history_is_newest_first_and_paged,
    bonuses_and_penalties_move_the_score_within_0_and_100,
    bad_bonuses_and_penalties_are_400_and_change_nothing,
    level_7_agents_parents_and_admins_may_score_others,
    everyone_else_may_not_score_and_changes_nothing,
    founders_and_admins_demote_agents_below_them,
    demote_refusals_change_nothing,
    the_leaderboard_ranks_active_agents_by_score,
    leaderboard_limits,
);

/// The reputation summary of `agent` as its organization's HR agent reads it.
async fn summary(app: &TestApp, agent: &Agent) -> Value {
    app.get(&app.org.hr, &format!("/agents/{}/reputation", agent.uuid))
        .await
        .data()
        .clone()
}

/// `(reputationScore, totalEvents)` of `agent`.
async fn score_of(app: &TestApp, agent: &Agent) -> (i64, i64) {
    let s = summary(app, agent).await;
    (
        s["reputationScore"].as_i64().unwrap(),
        s["totalEvents"].as_i64().unwrap(),
    )
}

/// `GET /agents/:id/reputation/history?{query}` by the organization's HR agent.
async fn history(app: &TestApp, agent: &Agent, query: &str) -> Reply {
    app.get(
        &app.org.hr,
        &format!("/agents/{}/reputation/history?{query}", agent.uuid),
    )
    .await
}

/// `POST /agents/:id/reputation/{kind}` (`bonus` or `penalty`) by `caller`.
async fn give(app: &TestApp, caller: &Caller, agent: &Agent, kind: &str, body: &Value) -> Reply {
    let path = format!("/agents/{}/reputation/{kind}", agent.uuid);
    caller.call(app, Method::POST, &path, Some(body)).await
}

/// `POST /agents/:id/demote` by `caller`, with `body` when given.
async fn demote(app: &TestApp, caller: &Caller, agent: &Agent, body: Option<&Value>) -> Reply {
    let path = format!("/agents/{}/demote", agent.uuid);
    caller.call(app, Method::POST, &path, body).await
}

/// An active agent of the organization at `level` with `role` and `mode` (the role set
/// as stored: HR may not register founder or admin agents).
async fn ranked(app: &TestApp, level: u8, role: &str, mode: &str) -> Agent {
    let agent = agent_with(app, &app.org, level, "worker", mode).await;
    let role = AgentRole::parse(role).unwrap();
    change_agent(app, &agent, move |a| a.role = role).await;
    agent
}

/// The stored level of `agent`.
async fn level_of(app: &TestApp, agent: &Agent) -> i64 {
    app.get(&app.org.hr, &format!("/agents/{}", agent.uuid))
        .await
        .data()["level"]
        .as_i64()
        .unwrap()
}

/// The events of `kind` on `agent`, newest first.
async fn agent_events(app: &TestApp, agent: &Agent, kind: &str) -> Vec<Value> {
    events_typed(app, &app.org.hr, &agent.uuid.to_string(), kind).await
}

async fn the_summary_names_the_level_at_every_boundary(app: &TestApp) {
    let agent = agent_with(app, &app.org, 3, "worker", "worker").await;
    let fresh = summary(app, &agent).await;
    assert_eq!(
        keys_of(&fresh),
        ["agentId", "level", "reputationScore", "totalEvents"]
    );
    assert_eq!(
        fresh,
        json!({
            "agentId": agent.uuid, "reputationScore": 50, "level": "trusted", "totalEvents": 0,
        })
    );
    let cases = [
        (0, "untrusted"),
        (20, "untrusted"),
        (21, "probation"),
        (40, "probation"),
        (41, "trusted"),
        (70, "trusted"),
        (71, "veteran"),
        (85, "veteran"),
        (86, "elite"),
        (100, "elite"),
    ];
    for (score, level) in cases {
        change_agent(app, &agent, move |a| a.reputation_score = score).await;
        let s = summary(app, &agent).await;
        assert_eq!(s["reputationScore"], score, "{s}");
        assert_eq!(s["level"], level, "score {score}");
    }

    // Anyone in the organization reads it, even read-only callers.
    let observer = agent_with(app, &app.org, 1, "worker", "observer").await;
    let (_, viewer) = app.user_token(&app.org, "viewer").await;
    let path = format!("/agents/{}/reputation", agent.uuid);
    for caller in [Caller::Agent(observer), Caller::Bearer(viewer)] {
        let reply = caller.call(app, Method::GET, &path, None).await;
        assert_eq!(reply.data()["level"], "elite");
    }

    // Only agents of the organization.
    let hr = &app.org.hr;
    let unknown = Uuid::now_v7();
    for id in [unknown, app.other.hr.uuid] {
        for tail in ["reputation", "reputation/history"] {
            let reply = app.get(hr, &format!("/agents/{id}/{tail}")).await;
            assert_error_exact(&reply, 404, &format!("Agent {id} not found"));
        }
    }
    for tail in ["reputation", "reputation/history"] {
        let reply = app.get(hr, &format!("/agents/not-a-uuid/{tail}")).await;
        assert_error_exact(&reply, 400, "id must be a UUID");
    }
}

async fn history_is_newest_first_and_paged(app: &TestApp) {
    let hr = Caller::Agent(app.org.hr.clone());
    let agent = app.worker(&app.org).await;
    // Oldest: a task the agent completed (task_completed, +5, naming the task).
    let task = assigned_task(app, &app.org.hr, &agent, json!({})).await;
    walk(app, &agent, &task, &["in_progress", "done"]).await;
    let mut ids = Vec::new();
    for i in 0..25 {
        let body = json!({ "reason": format!("r{i}"), "amount": 1 });
        let reply = give(app, &hr, &agent, "bonus", &body).await;
        ids.push(str_of(reply.data(), "id"));
    }
    let reasons = |reply: &Reply| -> Vec<String> {
        reply.list().iter().map(|e| str_of(e, "reason")).collect()
    };
    let newest_first = |from: usize, to: usize| -> Vec<String> {
        (to..=from).rev().map(|i| format!("r{i}")).collect()
    };

    let page = history(app, &agent, "").await;
    assert_eq!(keys_of(&page.body), ["data", "total"]);
    assert_eq!(page.body["total"], 26);
    assert_eq!(reasons(&page), newest_first(24, 5));
    let newest = &page.list()[0];
    assert_eq!(
        keys_of(newest),
        [
            "agentId",
            "amount",
            "createdAt",
            "id",
            "reason",
            "taskId",
            "type"
        ]
    );
    assert_eq!(newest["id"], ids[24].as_str());
    assert_eq!(newest["agentId"], agent.uuid.to_string());
    assert_eq!(newest["type"], "quality_bonus");
    assert_eq!(newest["amount"], 1);
    assert_eq!(newest["taskId"], Value::Null);
    assert_timestamp(newest, "createdAt");

    let page = history(app, &agent, "offset=20").await;
    assert_eq!(page.body["total"], 26);
    let mut tail = newest_first(4, 0);
    assert_eq!(reasons(&page)[..5], tail[..]);
    let oldest = page.list().last().unwrap();
    assert_eq!(page.list().len(), 6);
    assert_eq!(oldest["type"], "task_completed");
    assert_eq!(oldest["amount"], 5);
    assert_eq!(oldest["taskId"], task.as_str());
    tail.push(str_of(oldest, "reason"));

    let page = history(app, &agent, "limit=5&offset=3").await;
    assert_eq!(reasons(&page), newest_first(21, 17));
    assert_eq!(page.body["total"], 26);
    let page = history(app, &agent, "limit=1").await;
    assert_eq!(reasons(&page), ["r24"]);
    let page = history(app, &agent, "limit=100").await;
    let mut all = newest_first(24, 0);
    all.push(tail[5].clone());
    assert_eq!(reasons(&page), all);
    for query in ["offset=26", "offset=1000&limit=100"] {
        let page = history(app, &agent, query).await;
        assert!(page.list().is_empty(), "{query}");
        assert_eq!(page.body["total"], 26, "{query}");
    }
    // The summary counts the same events.
    assert_eq!(summary(app, &agent).await["totalEvents"], 26);

    let path = format!("/agents/{}/reputation/history", agent.uuid);
    assert_bad_queries(
        app,
        &app.org.hr,
        &path,
        &[
            ("limit=0", "limit must be between 1 and 100"),
            ("limit=101", "limit must be between 1 and 100"),
            ("limit=-1", "limit must be between 1 and 100"),
            ("limit=ten", "limit"),
            ("offset=-1", "offset must be at least 0"),
            ("offset=x", "offset"),
            ("page=2", "property page should not exist"),
        ],
    )
    .await;
}

async fn bonuses_and_penalties_move_the_score_within_0_and_100(app: &TestApp) {
    let hr = Caller::Agent(app.org.hr.clone());
    let agent = agent_with(app, &app.org, 3, "worker", "worker").await;

    let reply = give(
        app,
        &hr,
        &agent,
        "bonus",
        &json!({ "reason": "great work" }),
    )
    .await;
    assert_eq!(keys_of(&reply.body), ["data", "message"]);
    assert_eq!(reply.body["message"], "Quality bonus of 10 recorded");
    let event = reply.data();
    assert_eq!(event["type"], "quality_bonus");
    assert_eq!(event["amount"], 10);
    assert_eq!(event["reason"], "great work");
    assert_eq!(event["agentId"], agent.uuid.to_string());
    assert_eq!(event["taskId"], Value::Null);
    assert_timestamp(event, "createdAt");
    assert_eq!(score_of(app, &agent).await, (60, 1));
    // The answer is the stored event.
    assert_eq!(&history(app, &agent, "").await.list()[0], event);

    let reply = give(app, &hr, &agent, "penalty", &json!({ "reason": "sloppy" })).await;
    assert_eq!(reply.body["message"], "Quality penalty of 10 recorded");
    assert_eq!(reply.data()["type"], "quality_penalty");
    assert_eq!(reply.data()["amount"], -10, "stored negative");
    assert_eq!(score_of(app, &agent).await, (50, 2));

    // Amounts 1 and 50 are the bounds; 51 + 50 clamps at 100, the event keeps 50.
    let one = json!({ "reason": "a little", "amount": 1 });
    assert_eq!(
        give(app, &hr, &agent, "bonus", &one).await.data()["amount"],
        1
    );
    let long_reason = "z".repeat(2000);
    let fifty = json!({ "reason": long_reason, "amount": 50 });
    let reply = give(app, &hr, &agent, "bonus", &fifty).await;
    assert_eq!(reply.body["message"], "Quality bonus of 50 recorded");
    assert_eq!(reply.data()["amount"], 50);
    assert_eq!(score_of(app, &agent).await, (100, 4));
    let changed = agent_events(app, &agent, "reputation.changed").await;
    assert_eq!(changed.len(), 4);
    assert_eq!(
        changed[0]["payload"],
        json!({
            "type": "quality_bonus", "amount": 50, "scoreBefore": 51, "scoreAfter": 100,
            "reason": long_reason, "taskId": null,
        })
    );
    assert_eq!(changed[0]["entityId"], agent.uuid.to_string());
    assert_eq!(changed[0]["actorId"], app.org.hr.uuid.to_string());
    // At 100 a bonus changes nothing but is recorded.
    give(app, &hr, &agent, "bonus", &one).await.data();
    assert_eq!(score_of(app, &agent).await, (100, 5));

    // 3 - 10 clamps at 0, the event keeps -10.
    change_agent(app, &agent, |a| a.reputation_score = 3).await;
    let reply = give(
        app,
        &hr,
        &agent,
        "penalty",
        &json!({ "reason": "broke the build", "amount": 10 }),
    )
    .await;
    assert_eq!(reply.data()["amount"], -10);
    assert_eq!(score_of(app, &agent).await, (0, 6));
    let changed = agent_events(app, &agent, "reputation.changed").await;
    assert_eq!(
        changed[0]["payload"],
        json!({
            "type": "quality_penalty", "amount": -10, "scoreBefore": 3, "scoreAfter": 0,
            "reason": "broke the build", "taskId": null,
        })
    );
    let reply = give(
        app,
        &hr,
        &agent,
        "penalty",
        &json!({ "reason": "again", "amount": 50 }),
    )
    .await;
    assert_eq!(reply.body["message"], "Quality penalty of 50 recorded");
    assert_eq!(reply.data()["amount"], -50);
    assert_eq!(score_of(app, &agent).await, (0, 7));
    let amounts: Vec<i64> = history(app, &agent, "")
        .await
        .list()
        .iter()
        .map(|e| e["amount"].as_i64().unwrap())
        .collect();
    assert_eq!(amounts, [-50, -10, 1, 50, 1, -10, 10]);
    assert_eq!(
        agent_events(app, &agent, "reputation.changed").await.len(),
        7
    );
}

async fn bad_bonuses_and_penalties_are_400_and_change_nothing(app: &TestApp) {
    let hr = app.org.hr.clone();
    let agent = agent_with(app, &app.org, 3, "worker", "worker").await;
    let events_before = event_total(app, &hr).await;
    let cases: Vec<(String, &str)> = vec![
        (
            json!({ "reason": "r", "amount": 0 }).to_string(),
            "amount must be between 1 and 50",
        ),
        (
            json!({ "reason": "r", "amount": 51 }).to_string(),
            "amount must be between 1 and 50",
        ),
        (
            json!({ "reason": "r", "amount": -5 }).to_string(),
            "amount must be between 1 and 50",
        ),
        (
            json!({ "reason": "r", "amount": 4_294_967_306_i64 }).to_string(),
            "amount must be between 1 and 50",
        ),
        (
            json!({ "reason": "r", "amount": "ten" }).to_string(),
            "amount",
        ),
        (
            json!({ "reason": "r", "amount": 1.5 }).to_string(),
            "amount",
        ),
        (json!({}).to_string(), "reason is required"),
        (json!({ "amount": 5 }).to_string(), "reason is required"),
        (json!({ "reason": null }).to_string(), "reason"),
        (
            json!({ "reason": "" }).to_string(),
            "reason must not be empty",
        ),
        (
            json!({ "reason": " \t " }).to_string(),
            "reason must not be empty",
        ),
        (
            json!({ "reason": "y".repeat(2001) }).to_string(),
            "reason must be at most 2000 characters",
        ),
        (
            json!({ "reason": "r", "points": 3 }).to_string(),
            "property points should not exist",
        ),
        (r#"{"reason": "r""#.to_owned(), "malformed JSON"),
        (String::new(), "request body must be a JSON object"),
    ];
    for kind in ["bonus", "penalty"] {
        let path = format!("/agents/{}/reputation/{kind}", agent.uuid);
        for (body, message) in &cases {
            let reply = app.post(&hr, &path, body).await;
            assert_eq!(reply.status.as_u16(), 400, "{kind} {body}: {}", reply.text);
            assert_error(&reply, 400, message);
        }
        let good = json!({ "reason": "fine" }).to_string();
        let reply = app
            .post(&hr, &format!("/agents/not-a-uuid/reputation/{kind}"), &good)
            .await;
        assert_error_exact(&reply, 400, "id must be a UUID");
        let unknown = Uuid::now_v7();
        let reply = app
            .post(&hr, &format!("/agents/{unknown}/reputation/{kind}"), &good)
            .await;
        assert_error_exact(&reply, 404, &format!("Agent {unknown} not found"));
    }
    assert_eq!(score_of(app, &agent).await, (50, 0));
    assert_eq!(event_total(app, &hr).await, events_before);
}

async fn level_7_agents_parents_and_admins_may_score_others(app: &TestApp) {
    let parent = agent_with(app, &app.org, 5, "worker", "worker").await;
    let child = active_child(app, &parent, &json!({})).await;
    let target = agent_with(app, &app.org, 3, "worker", "worker").await;
    let admin = app.admin_token(&app.org).await;
    let write_key = app.api_key(&admin, &["write"]).await;
    let admin_key = app.api_key(&admin, &["admin"]).await;
    let level7 = agent_with(app, &app.org, 7, "worker", "worker").await;
    let orchestrator = agent_with(app, &app.org, 7, "worker", "orchestrator").await;
    let cases = [
        ("a level-7 worker", Caller::Agent(level7.clone()), &target),
        (
            "a level-7 orchestrator",
            Caller::Agent(orchestrator),
            &target,
        ),
        (
            "a level-10 worker",
            Caller::Agent(agent_with(app, &app.org, 10, "worker", "worker").await),
            &target,
        ),
        ("the HR agent", Caller::Agent(app.org.hr.clone()), &target),
        // A level-5 parent, on its child only.
        ("the parent", Caller::Agent(parent.clone()), &child),
        ("a level-7 agent on a child", Caller::Agent(level7), &child),
        ("an admin user", Caller::Bearer(admin), &target),
        ("a write-scoped key", Caller::Bearer(write_key), &target),
        ("an admin-scoped key", Caller::Bearer(admin_key), &target),
    ];
    for (who, caller, agent) in &cases {
        // Room for the bonus below 100.
        change_agent(app, agent, |a| a.reputation_score = 50).await;
        let (score, total) = score_of(app, agent).await;
        let reply = give(app, caller, agent, "bonus", &json!({ "reason": who })).await;
        assert_eq!(reply.status.as_u16(), 200, "{who} bonus: {}", reply.text);
        let body = json!({ "reason": who, "amount": 3 });
        let reply = give(app, caller, agent, "penalty", &body).await;
        assert_eq!(reply.status.as_u16(), 200, "{who} penalty: {}", reply.text);
        assert_eq!(score_of(app, agent).await, (score + 7, total + 2), "{who}");
    }
    assert_eq!(
        agent_events(app, &target, "reputation.changed").await.len(),
        14
    );
    assert_eq!(
        agent_events(app, &child, "reputation.changed").await.len(),
        4
    );
}

/// A request that must be refused: who sends it, about which agent, the status and the
/// message.
struct Refusal {
    who: &'static str,
    caller: Caller,
    target: Agent,
    status: u16,
    message: String,
}

fn refusal(
    who: &'static str,
    caller: Caller,
    target: &Agent,
    status: u16,
    message: impl Into<String>,
) -> Refusal {
    Refusal {
        who,
        caller,
        target: target.clone(),
        status,
        message: message.into(),
    }
}

/// The bonuses and penalties [`everyone_else_may_not_score_and_changes_nothing`] sends,
/// and the agents whose scores must not move.
async fn scoring_refusals(app: &TestApp) -> (Vec<Refusal>, Vec<Agent>) {
    let hr = app.org.hr.clone();
    let parent = agent_with(app, &app.org, 5, "worker", "worker").await;
    let child = active_child(app, &parent, &json!({})).await;
    let sibling = active_child(app, &parent, &json!({})).await;
    let target = agent_with(app, &app.org, 3, "worker", "worker").await;
    let level10 = agent_with(app, &app.org, 10, "worker", "worker").await;
    let level6 = agent_with(app, &app.org, 6, "worker", "worker").await;
    let observer = agent_with(app, &app.org, 9, "worker", "observer").await;
    let admin = app.admin_token(&app.org).await;
    let read_key = app.api_key(&admin, &["read"]).await;
    let (_, viewer) = app.user_token(&app.org, "viewer").await;
    let (_, operator) = app.user_token(&app.org, "operator").await;

    let giver =
        "only agents of level 7 or above, or the agent's parent, may give a bonus or penalty";
    let own = "you cannot give yourself a bonus or penalty";
    let foreign = format!("Agent {} not found", app.other.hr.uuid);
    let cases = vec![
        refusal(
            "an unrelated level-6 worker",
            Caller::Agent(level6),
            &target,
            403,
            giver,
        ),
        refusal(
            "a child on its parent",
            Caller::Agent(child.clone()),
            &parent,
            403,
            giver,
        ),
        refusal("a sibling", Caller::Agent(sibling), &child, 403, giver),
        refusal(
            "a level-10 agent on itself",
            Caller::Agent(level10.clone()),
            &level10,
            403,
            own,
        ),
        refusal(
            "the HR agent on itself",
            Caller::Agent(hr.clone()),
            &hr,
            403,
            own,
        ),
        refusal(
            "a level-9 observer",
            Caller::Agent(observer),
            &target,
            403,
            "observer agents are read-only",
        ),
        refusal(
            "a viewer user",
            Caller::Bearer(viewer),
            &target,
            403,
            "viewer users are read-only",
        ),
        refusal(
            "an operator user",
            Caller::Bearer(operator),
            &target,
            403,
            giver,
        ),
        refusal(
            "a read-scoped key",
            Caller::Bearer(read_key),
            &target,
            403,
            "API key lacks the write scope",
        ),
        refusal(
            "an agent of another organization",
            Caller::Agent(hr.clone()),
            &app.other.hr,
            404,
            foreign,
        ),
    ];
    (cases, vec![target, parent, child, level10, hr])
}

async fn everyone_else_may_not_score_and_changes_nothing(app: &TestApp) {
    let hr = app.org.hr.clone();
    let (cases, watched) = scoring_refusals(app).await;
    let mut before = Vec::new();
    for agent in &watched {
        before.push(score_of(app, agent).await);
    }
    let events_before = event_total(app, &hr).await;
    let other_events_before = event_total(app, &app.other.hr).await;
    let other_path = format!("/agents/{}/reputation", app.other.hr.uuid);
    let other_before = app.get(&app.other.hr, &other_path).await.data().clone();

    for case in &cases {
        for kind in ["bonus", "penalty"] {
            let body = json!({ "reason": "r" });
            let reply = give(app, &case.caller, &case.target, kind, &body).await;
            let who = case.who;
            assert_eq!(
                reply.status.as_u16(),
                case.status,
                "{who} {kind}: {}",
                reply.text
            );
            assert_error_exact(&reply, case.status, &case.message);
        }
    }

    for (agent, was) in watched.iter().zip(&before) {
        assert_eq!(&score_of(app, agent).await, was, "{}", agent.handle);
    }
    assert_eq!(event_total(app, &hr).await, events_before);
    assert_eq!(event_total(app, &app.other.hr).await, other_events_before);
    let other_after = app.get(&app.other.hr, &other_path).await;
    assert_eq!(other_after.data(), &other_before);
}

/// Demotions by an admin agent at level 9 (with a reason), an admin user and an
/// admin-scoped key (any level; the score clamps at 0 while the event keeps -5).
async fn demotions_by_admins(app: &TestApp) {
    // An admin agent at level 9, one level above, with a reason.
    let admin_agent = ranked(app, 9, "admin", "worker").await;
    let eight = agent_with(app, &app.org, 8, "worker", "worker").await;
    let body = json!({ "reason": "missed reviews" });
    let reply = demote(app, &Caller::Agent(admin_agent), &eight, Some(&body)).await;
    assert_eq!(reply.data()["level"], 7);
    assert_eq!(reply.body["message"], "Agent demoted to level 7");
    let event = history(app, &eight, "").await.list()[0].clone();
    assert_eq!(event["reason"], "missed reviews");
    assert_eq!(event["amount"], -5);
    let changed = agent_events(app, &eight, "reputation.changed").await;
    assert_eq!(changed[0]["payload"]["reason"], "missed reviews");

    let admin = app.admin_token(&app.org).await;
    let admin_key = app.api_key(&admin, &["admin"]).await;
    let top = agent_with(app, &app.org, 10, "worker", "worker").await;
    change_agent(app, &top, |a| a.reputation_score = 3).await;
    let reply = demote(app, &Caller::Bearer(admin), &top, None).await;
    assert_eq!(reply.data()["level"], 9);
    assert_eq!(score_of(app, &top).await, (0, 1));
    let reply = demote(app, &Caller::Bearer(admin_key), &top, Some(&json!({}))).await;
    assert_eq!(reply.data()["level"], 8);
    assert_eq!(score_of(app, &top).await, (0, 2));
    let amounts: Vec<i64> = history(app, &top, "")
        .await
        .list()
        .iter()
        .map(|e| e["amount"].as_i64().unwrap())
        .collect();
    assert_eq!(amounts, [-5, -5]);
    let changed = agent_events(app, &top, "reputation.changed").await;
    assert_eq!(changed[1]["payload"]["scoreBefore"], 3);
    assert_eq!(changed[1]["payload"]["scoreAfter"], 0);
    assert_eq!(changed[0]["payload"]["scoreBefore"], 0);
    assert_eq!(changed[0]["payload"]["scoreAfter"], 0);
    let demoted = agent_events(app, &top, "agent.demoted").await;
    assert_eq!(
        demoted[0]["payload"],
        json!({ "fromLevel": 9, "toLevel": 8 })
    );
}

async fn founders_and_admins_demote_agents_below_them(app: &TestApp) {
    let founder = ranked(app, 10, "founder", "worker").await;
    let target = agent_with(app, &app.org, 5, "worker", "worker").await;

    let reply = demote(app, &Caller::Agent(founder.clone()), &target, None).await;
    assert_eq!(keys_of(&reply.body), ["data", "message"]);
    assert_eq!(
        reply.data(),
        &json!({ "id": target.uuid, "agentId": target.handle, "status": "active", "level": 4 })
    );
    assert_eq!(reply.body["message"], "Agent demoted to level 4");
    assert_eq!(level_of(app, &target).await, 4);
    assert_eq!(score_of(app, &target).await, (45, 1));
    let event = history(app, &target, "").await.list()[0].clone();
    assert_eq!(event["type"], "level_down");
    assert_eq!(event["amount"], -5);
    assert_eq!(event["reason"], "demoted from level 5 to 4");
    assert_eq!(event["taskId"], Value::Null);
    let demoted = agent_events(app, &target, "agent.demoted").await;
    assert_eq!(demoted.len(), 1);
    assert_eq!(
        demoted[0]["payload"],
        json!({ "fromLevel": 5, "toLevel": 4 })
    );
    assert_eq!(demoted[0]["actorId"], founder.uuid.to_string());
    let changed = agent_events(app, &target, "reputation.changed").await;
    assert_eq!(changed.len(), 1);
    assert_eq!(
        changed[0]["payload"],
        json!({
            "type": "level_down", "amount": -5, "scoreBefore": 50, "scoreAfter": 45,
            "reason": "demoted from level 5 to 4", "taskId": null,
        })
    );

    demotions_by_admins(app).await;

    // Down to level 1, then no further.
    let low = agent_with(app, &app.org, 2, "worker", "worker").await;
    let reply = demote(app, &Caller::Agent(founder.clone()), &low, None).await;
    assert_eq!(reply.data()["level"], 1);
    let reply = demote(app, &Caller::Agent(founder), &low, None).await;
    assert_error_exact(&reply, 409, "Agent is already at level 1");
    assert_eq!(level_of(app, &low).await, 1);
    assert_eq!(score_of(app, &low).await, (45, 1));
}

/// The demotions [`demote_refusals_change_nothing`] sends, the agents that must keep
/// their level and score, a level-10 founder and a level-5 target.
async fn demote_refusals(app: &TestApp) -> (Vec<Refusal>, Vec<Agent>, Agent, Agent) {
    let hr = app.org.hr.clone();
    let founder9 = ranked(app, 9, "founder", "worker").await;
    let founder10 = ranked(app, 10, "founder", "worker").await;
    let founder8 = ranked(app, 8, "founder", "worker").await;
    let admin8 = ranked(app, 8, "admin", "worker").await;
    let observer = ranked(app, 10, "founder", "observer").await;
    let nine = agent_with(app, &app.org, 9, "worker", "worker").await;
    let ten = agent_with(app, &app.org, 10, "worker", "worker").await;
    let target = agent_with(app, &app.org, 5, "worker", "worker").await;
    let one = agent_with(app, &app.org, 1, "worker", "worker").await;

    let below = "you can only demote agents below your own level";
    let demoter = "only founder or admin agents of level 9 or above, or admin users, may demote";
    let f9 = || Caller::Agent(founder9.clone());
    let f10 = || Caller::Agent(founder10.clone());
    let mut cases = vec![
        refusal("a level-9 founder on level 9", f9(), &nine, 403, below),
        refusal("a level-9 founder on level 10", f9(), &ten, 403, below),
        refusal("a founder on itself", f10(), &founder10, 403, below),
        refusal(
            "a level-8 founder",
            Caller::Agent(founder8),
            &target,
            403,
            demoter,
        ),
        refusal(
            "a level-8 admin",
            Caller::Agent(admin8),
            &target,
            403,
            demoter,
        ),
        refusal(
            "the HR agent",
            Caller::Agent(hr.clone()),
            &target,
            403,
            demoter,
        ),
        refusal(
            "a level-10 worker",
            Caller::Agent(ten.clone()),
            &target,
            403,
            demoter,
        ),
        refusal(
            "a level-10 founder observer",
            Caller::Agent(observer),
            &target,
            403,
            "observer agents are read-only",
        ),
    ];
    cases.extend(user_demote_refusals(app, &target, &one, &founder10).await);
    let watched = vec![
        nine,
        ten,
        founder9,
        founder10.clone(),
        target.clone(),
        one,
        hr,
    ];
    (cases, watched, founder10, target)
}

/// Demotions by users and keys without the right, of a level-1 agent, and of another
/// organization's agent.
async fn user_demote_refusals(
    app: &TestApp,
    target: &Agent,
    one: &Agent,
    founder: &Agent,
) -> Vec<Refusal> {
    let admin = app.admin_token(&app.org).await;
    let write_key = app.api_key(&admin, &["write"]).await;
    let read_key = app.api_key(&admin, &["read"]).await;
    let (_, viewer) = app.user_token(&app.org, "viewer").await;
    let (_, operator) = app.user_token(&app.org, "operator").await;
    let demoter = "only founder or admin agents of level 9 or above, or admin users, may demote";
    let lowest = "Agent is already at level 1";
    let foreign = format!("Agent {} not found", app.other.hr.uuid);
    let other = &app.other.hr;
    let admin_user = || Caller::Bearer(admin.clone());
    let founder = || Caller::Agent(founder.clone());
    vec![
        refusal(
            "a viewer user",
            Caller::Bearer(viewer),
            target,
            403,
            "viewer users are read-only",
        ),
        refusal(
            "an operator user",
            Caller::Bearer(operator),
            target,
            403,
            demoter,
        ),
        refusal(
            "a write-scoped key",
            Caller::Bearer(write_key),
            target,
            403,
            "API key lacks the admin scope",
        ),
        refusal(
            "a read-scoped key",
            Caller::Bearer(read_key),
            target,
            403,
            "API key lacks the write scope",
        ),
        refusal("an admin user on level 1", admin_user(), one, 409, lowest),
        refusal("a founder on level 1", founder(), one, 409, lowest),
        refusal(
            "an admin user elsewhere",
            admin_user(),
            other,
            404,
            &*foreign,
        ),
        refusal("a founder elsewhere", founder(), other, 404, foreign),
    ]
}

async fn demote_refusals_change_nothing(app: &TestApp) {
    let hr = app.org.hr.clone();
    let (cases, watched, founder10, target) = demote_refusals(app).await;
    let mut before = Vec::new();
    for agent in &watched {
        before.push((level_of(app, agent).await, score_of(app, agent).await));
    }
    let events_before = event_total(app, &hr).await;
    let other_events_before = event_total(app, &app.other.hr).await;

    for case in &cases {
        let reply = demote(app, &case.caller, &case.target, None).await;
        let who = case.who;
        assert_eq!(reply.status.as_u16(), case.status, "{who}: {}", reply.text);
        assert_error_exact(&reply, case.status, &case.message);
    }
    // Bad requests.
    let founder = Caller::Agent(founder10.clone());
    let bodies: [(Value, &str); 3] = [
        (json!({ "why": "x" }), "property why should not exist"),
        (
            json!({ "reason": "r".repeat(2001) }),
            "reason must be at most 2000 characters",
        ),
        (json!({ "reason": 5 }), "reason"),
    ];
    for (body, message) in &bodies {
        let reply = demote(app, &founder, &target, Some(body)).await;
        assert_error(&reply, 400, message);
    }
    let reply = app.post(&founder10, "/agents/not-a-uuid/demote", "").await;
    assert_error_exact(&reply, 400, "id must be a UUID");
    let unknown = Uuid::now_v7();
    let reply = app
        .post(&founder10, &format!("/agents/{unknown}/demote"), "")
        .await;
    assert_error_exact(&reply, 404, &format!("Agent {unknown} not found"));

    for (agent, was) in watched.iter().zip(&before) {
        let now = (level_of(app, agent).await, score_of(app, agent).await);
        assert_eq!(&now, was, "{}", agent.handle);
    }
    assert_eq!(event_total(app, &hr).await, events_before);
    assert_eq!(event_total(app, &app.other.hr).await, other_events_before);
    let other = app
        .get(&app.other.hr, &format!("/agents/{}", app.other.hr.uuid))
        .await;
    assert_eq!(other.data()["level"], 10);
}

/// An active worker whose `agentId` starts with `prefix`, scored `score` (as stored).
async fn scored(app: &TestApp, prefix: &str, score: i32) -> Agent {
    let handle = format!("{prefix}-{}", Uuid::now_v7().simple());
    insert_worker(app, &app.org, &handle, |a| a.reputation_score = score).await
}

async fn the_leaderboard_ranks_active_agents_by_score(app: &TestApp) {
    let hr = app.org.hr.clone();
    // A tie at 95 goes by agentId: a before b, though b is older.
    let b = scored(app, "lb-b", 95).await;
    let a = scored(app, "lb-a", 95).await;
    // c finishes two tasks and fails one.
    let c = scored(app, "lb-c", 90).await;
    for _ in 0..2 {
        let task = assigned_task(app, &hr, &c, json!({})).await;
        walk(app, &c, &task, &["in_progress", "done"]).await;
    }
    let failed = assigned_task(app, &hr, &c, json!({})).await;
    walk(app, &c, &failed, &["in_progress", "cancelled"]).await;
    // Finishing paid c reputation: set the score the ranking needs last.
    change_agent(app, &c, |a| a.reputation_score = 90).await;
    let mut rest = Vec::new();
    for (i, score) in [86, 85, 71, 70, 41, 40, 21, 20].into_iter().enumerate() {
        rest.push(scored(app, &format!("lb-r{i}"), score).await);
    }
    // Never listed: not active, or another organization's.
    let mut never = Vec::new();
    for status in ["suspended", "pending", "revoked"] {
        let agent = app.add_agent(&app.org, "worker", status).await;
        change_agent(app, &agent, |a| a.reputation_score = 100).await;
        never.push(agent.uuid.to_string());
    }
    let foreign = app.worker(&app.other).await;
    change_agent(app, &foreign, |a| a.reputation_score = 100).await;
    never.push(foreign.uuid.to_string());
    // A done task of a since-suspended agent does not bring it back.
    let gone = scored(app, "lb-gone", 99).await;
    let task = assigned_task(app, &hr, &gone, json!({})).await;
    walk(app, &gone, &task, &["in_progress", "done"]).await;
    change_agent(app, &gone, |a| a.status = AgentStatus::Suspended).await;
    never.push(gone.uuid.to_string());

    // HR keeps the initial 50.
    let mut expected: Vec<(&Agent, i64, &str)> =
        vec![(&a, 95, "elite"), (&b, 95, "elite"), (&c, 90, "elite")];
    let names = [
        "elite",
        "veteran",
        "veteran",
        "trusted",
        "trusted",
        "probation",
        "probation",
        "untrusted",
    ];
    let scores = [86, 85, 71, 70, 41, 40, 21, 20];
    for (i, agent) in rest.iter().enumerate() {
        expected.push((agent, scores[i], names[i]));
        if scores[i] == 70 {
            expected.push((&hr, 50, "trusted"));
        }
    }
    let order: Vec<i64> = expected.iter().map(|e| e.1).collect();
    assert_eq!(order, [95, 95, 90, 86, 85, 71, 70, 50, 41, 40, 21, 20]);

    let reply = app.get(&hr, "/agents/leaderboard/trust?limit=100").await;
    let want: Vec<String> = expected.iter().map(|e| e.0.uuid.to_string()).collect();
    assert_eq!(reply.ids(), want, "{}", reply.text);
    for (row, (agent, score, level)) in reply.list().iter().zip(&expected) {
        let record = app
            .get(&hr, &format!("/agents/{}", agent.uuid))
            .await
            .data()
            .clone();
        assert_eq!(
            keys_of(row),
            [
                "agentId",
                "id",
                "level",
                "name",
                "reputationLevel",
                "reputationScore",
                "tasksCompleted"
            ]
        );
        assert_eq!(row["agentId"], agent.handle.as_str());
        assert_eq!(row["name"], record["name"]);
        assert_eq!(row["level"], record["level"]);
        assert_eq!(row["reputationScore"], *score);
        assert_eq!(row["reputationLevel"], *level, "{row}");
        let done = if agent.uuid == c.uuid { 2 } else { 0 };
        assert_eq!(row["tasksCompleted"], done, "{row}");
        assert!(!never.contains(&str_of(row, "id")));
    }

    // The default is 10; a smaller limit cuts the same order.
    let reply = app.get(&hr, "/agents/leaderboard/trust").await;
    assert_eq!(reply.ids(), want[..10]);
    let reply = app.get(&hr, "/agents/leaderboard/trust?limit=3").await;
    assert_eq!(reply.ids(), want[..3]);

    // Another organization sees only its own.
    let reply = app.get(&app.other.hr, "/agents/leaderboard/trust").await;
    assert_eq!(
        reply.ids(),
        [foreign.uuid.to_string(), app.other.hr.uuid.to_string()]
    );
}

async fn leaderboard_limits(app: &TestApp) {
    let hr = app.org.hr.clone();
    for i in 0..100 {
        scored(app, &format!("many-{i:03}"), 60).await;
    }
    let reply = app.get(&hr, "/agents/leaderboard/trust?limit=100").await;
    assert_eq!(reply.list().len(), 100);
    // 101 active agents in all: the HR agent at 50 is the one left out.
    assert!(!reply.ids().contains(&hr.uuid.to_string()));
    let reply = app.get(&hr, "/agents/leaderboard/trust?limit=1").await;
    assert_eq!(reply.list().len(), 1);
    assert_error_exact(
        &app.get(&hr, "/agents/leaderboard/trust?limit=101").await,
        400,
        "limit must be between 1 and 100",
    );
    assert_bad_queries(
        app,
        &hr,
        "/agents/leaderboard/trust",
        &[
            ("limit=0", "limit must be between 1 and 100"),
            ("limit=-1", "limit must be between 1 and 100"),
            ("limit=ten", "limit"),
            ("offset=1", "property offset should not exist"),
        ],
    )
    .await;
}
