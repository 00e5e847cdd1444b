//! Reputation is earned from others' work orders only (decision D-101): finishing a task
//! that the assignee itself or an agent of its own line (ancestors, descendants) created
//! gives no completion and no on-time bonus; a user's, a sibling's or an unrelated
//! agent's task gives both as before. Penalties stay as they were.

use serde_json::json;

use crate::agent_support::{active_child, agent_with};
use crate::economy_support::{admin, created, id_of, score_of, walk_as};
use crate::helpers::{Agent, TestApp};
use crate::task_support::walk;
use crate::task_tools::Caller;

api_tests!(
    the_own_line_earns_no_reputation,
    others_work_orders_earn_reputation,
);

/// Far in the future, so that finishing is on time.
const DUE: &str = "2999-01-01T00:00:00.000Z";

/// `type:amount` of each reputation event of `agent`, newest first.
async fn reputation_rows(app: &TestApp, agent: &Agent) -> Vec<String> {
    let reply = app
        .get(
            &app.org.hr,
            &format!("/agents/{}/reputation/history?limit=100", agent.uuid),
        )
        .await;
    reply
        .list()
        .iter()
        .map(|e| format!("{}:{}", e["type"].as_str().unwrap_or("?"), e["amount"]))
        .collect()
}

/// A task by `creator` for `assignee`, due on time, finished by the assignee.
async fn finished_for(app: &TestApp, creator: &Caller, assignee: &Agent) -> String {
    let body = json!({ "title": "work order", "assigneeId": assignee.uuid, "dueAt": DUE });
    let task = id_of(&created(app, creator, &body).await);
    walk(app, assignee, &task, &["in_progress", "done"]).await;
    task
}

/// A grandparent, its child and grandchild (each spawned by the one above), and a
/// sibling of the child.
async fn line(app: &TestApp) -> (Agent, Agent, Agent, Agent) {
    let grandparent = agent_with(app, &app.org, 8, "worker", "worker").await;
    let parent = active_child(app, &grandparent, &json!({})).await;
    let sibling = active_child(app, &grandparent, &json!({})).await;
    let child = active_child(app, &parent, &json!({})).await;
    (grandparent, parent, child, sibling)
}

async fn the_own_line_earns_no_reputation(app: &TestApp) {
    let (grandparent, parent, child, _) = line(app).await;
    let orders: [(&Agent, &Agent, &str); 6] = [
        (&parent, &child, "a parent for its child"),
        (&grandparent, &child, "a grandparent for its grandchild"),
        (&child, &parent, "a child for its parent"),
        (&child, &grandparent, "a grandchild for its grandparent"),
        (&parent, &parent, "itself"),
        (&grandparent, &grandparent, "itself, at the top"),
    ];
    for (creator, assignee, what) in orders {
        finished_for(app, &Caller::Agent(creator.clone()), assignee).await;
        assert_eq!(score_of(app, assignee, assignee).await, 50, "{what}");
    }
    for agent in [&grandparent, &parent, &child] {
        assert!(reputation_rows(app, agent).await.is_empty());
    }

    // Penalties still count on the line's own tasks: late and reworked.
    let late =
        json!({ "title": "late", "assigneeId": child.uuid, "dueAt": "2020-01-01T00:00:00.000Z" });
    let task = id_of(&created(app, &Caller::Agent(parent.clone()), &late).await);
    walk(
        app,
        &child,
        &task,
        &["in_progress", "review", "in_progress", "review", "done"],
    )
    .await;
    assert_eq!(score_of(app, &child, &child).await, 50 - 3 - 5);
    let mut rows = reputation_rows(app, &child).await;
    rows.sort();
    assert_eq!(rows, ["late_delivery:-5", "task_rework:-3"]);
    // And a failure.
    let body = json!({ "title": "failed", "assigneeId": child.uuid });
    let task = id_of(&created(app, &Caller::Agent(grandparent.clone()), &body).await);
    walk(app, &child, &task, &["in_progress", "cancelled"]).await;
    assert_eq!(score_of(app, &child, &child).await, 50 - 3 - 5 - 10);
}

async fn others_work_orders_earn_reputation(app: &TestApp) {
    let (_, parent, child, sibling) = line(app).await;
    let nephew = active_child(app, &sibling, &json!({})).await;
    let stranger = agent_with(app, &app.org, 5, "worker", "worker").await;
    let admin = admin(app, &app.org).await;
    let token = app.admin_token(&app.org).await;
    let key = Caller::Bearer(app.api_key(&token, &["write"]).await);
    let orders: [(Caller, &Agent, &str); 6] = [
        (admin.clone(), &child, "a user"),
        (key, &child, "an API key"),
        (
            Caller::Agent(stranger.clone()),
            &child,
            "an unrelated agent",
        ),
        (Caller::Agent(sibling.clone()), &parent, "a sibling"),
        (Caller::Agent(nephew.clone()), &parent, "a sibling's child"),
        (Caller::Agent(app.org.hr.clone()), &stranger, "the HR agent"),
    ];
    let mut expected = std::collections::HashMap::new();
    for (creator, assignee, what) in &orders {
        finished_for(app, creator, assignee).await;
        let score = expected.entry(assignee.uuid).or_insert(50);
        *score += 5 + 2;
        assert_eq!(score_of(app, assignee, assignee).await, *score, "{what}");
    }
    let rows = reputation_rows(app, &child).await;
    assert_eq!(rows.len(), 6, "{rows:?}");
    assert_eq!(
        rows.iter().filter(|r| *r == "task_completed:5").count(),
        3,
        "{rows:?}"
    );
    assert_eq!(
        rows.iter().filter(|r| *r == "on_time_delivery:2").count(),
        3,
        "{rows:?}"
    );
    // A user's task, done by the admin for the assignee, still counts for the assignee.
    let body = json!({ "title": "closed by the admin", "assigneeId": stranger.uuid });
    let task = id_of(&created(app, &admin, &body).await);
    walk_as(app, &admin, &task, &["in_progress", "done"]).await;
    assert_eq!(score_of(app, &stranger, &stranger).await, 50 + 7 + 5);
}
