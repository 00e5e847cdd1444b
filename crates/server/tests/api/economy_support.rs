//! What the closed-economy tests share (decision D-101): the treasury read, funded and
//! listed through its routes, agents' balances and whole ledgers read through the API,
//! tasks created and re-priced by agents and users, and the checks every ledger must
//! pass (a `balanceAfter` chain that starts at 0 and never goes below it).

use reqwest::Method;
use serde_json::{Value, json};

use crate::helpers::{Agent, Org, Reply, TestApp, send, str_of};
use crate::task_tools::Caller;

/// The keys of a treasury entry, sorted.
pub const TREASURY_ENTRY_KEYS: [&str; 9] = [
    "actorId",
    "amount",
    "balanceAfter",
    "createdAt",
    "id",
    "orgId",
    "reason",
    "taskId",
    "type",
];

/// The reward a task gets when its body names none (`MUSTER_TASK_REWARD`, 10).
pub const DEFAULT_REWARD: i64 = 10;

/// The refusal of a reward outside `0..=1_000_000_000`.
pub const REWARD_RANGE: &str = "reward must be between 0 and 1000000000";

/// The refusal of a reward change by anyone but its payer.
pub const PAYER_ONLY: &str =
    "only the reward's payer may change it: the creating agent, or a user for the treasury";

/// The refusal of the treasury to anyone but admins.
pub const TREASURY_ADMINS: &str =
    "only admin users and founder or admin agents may see or fund the treasury";

/// `org`'s admin user, as a caller.
pub async fn admin(app: &TestApp, org: &Org) -> Caller {
    Caller::Bearer(app.admin_token(org).await)
}

/// `GET /org/treasury` as `caller`, answered.
pub async fn treasury_reply(app: &TestApp, caller: &Caller) -> Reply {
    caller.call(app, Method::GET, "/org/treasury", None).await
}

/// The treasury's balance as `caller` (an admin) reads it.
pub async fn treasury_balance(app: &TestApp, caller: &Caller) -> i64 {
    let reply = treasury_reply(app, caller).await;
    reply.data()["balance"]
        .as_i64()
        .unwrap_or_else(|| panic!("no balance in {}", reply.text))
}

/// `POST /org/treasury/grant` with `body` as `caller`, answered.
pub async fn treasury_grant_as(app: &TestApp, caller: &Caller, body: &Value) -> Reply {
    caller
        .call(app, Method::POST, "/org/treasury/grant", Some(body))
        .await
}

/// Grants `amount` to `org`'s treasury as its admin, asserting 200; answers the entry.
pub async fn fund_treasury(app: &TestApp, org: &Org, amount: i64) -> Value {
    let caller = admin(app, org).await;
    let body = json!({ "amount": amount, "reason": "test funds" });
    let reply = treasury_grant_as(app, &caller, &body).await;
    assert_eq!(reply.status.as_u16(), 200, "treasury grant: {}", reply.text);
    reply.data().clone()
}

/// Every page of `path` (a list answering `meta.nextCursor` while more remain) as
/// `caller`, newest first.
pub async fn all_pages(app: &TestApp, caller: &Caller, path: &str) -> Vec<Value> {
    let separator = if path.contains('?') { '&' } else { '?' };
    let mut rows = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let page = match &cursor {
            Some(cursor) => format!("{path}{separator}limit=200&cursor={cursor}"),
            None => format!("{path}{separator}limit=200"),
        };
        let reply = caller.call(app, Method::GET, &page, None).await;
        rows.extend(reply.list().iter().cloned());
        match reply.body["meta"]["nextCursor"].as_str() {
            Some(next) => cursor = Some(next.to_owned()),
            None => return rows,
        }
    }
}

/// The treasury's whole history as `caller` (an admin) reads it, newest first.
pub async fn treasury_history(app: &TestApp, caller: &Caller) -> Vec<Value> {
    all_pages(app, caller, "/org/treasury/history").await
}

/// An agent's balance (`GET /agents/:id/credits/balance`) as `reader` reads it.
pub async fn balance_of(app: &TestApp, reader: &Agent, agent: &Agent) -> i64 {
    let reply = app
        .get(reader, &format!("/agents/{}/credits/balance", agent.uuid))
        .await;
    reply.data()["currentBalance"]
        .as_i64()
        .unwrap_or_else(|| panic!("no currentBalance in {}", reply.text))
}

/// An agent's reputation score (`GET /agents/:id/reputation`) as `reader` reads it.
pub async fn score_of(app: &TestApp, reader: &Agent, agent: &Agent) -> i64 {
    let reply = app
        .get(reader, &format!("/agents/{}/reputation", agent.uuid))
        .await;
    reply.data()["reputationScore"]
        .as_i64()
        .unwrap_or_else(|| panic!("no reputationScore in {}", reply.text))
}

/// An agent's whole ledger as `reader` reads it, newest first.
pub async fn ledger_of(app: &TestApp, reader: &Agent, agent: &Agent) -> Vec<Value> {
    let path = format!("/agents/{}/credits/history", agent.uuid);
    all_pages(app, &Caller::Agent(reader.clone()), &path).await
}

/// `type:amount:balanceAfter` of each row.
pub fn brief(rows: &[Value]) -> Vec<String> {
    rows.iter()
        .map(|r| {
            format!(
                "{}:{}:{}",
                r["type"].as_str().unwrap_or("?"),
                r["amount"],
                r["balanceAfter"]
            )
        })
        .collect()
}

/// The rows of `rows` of `kind`.
pub fn of_type<'a>(rows: &'a [Value], kind: &str) -> Vec<&'a Value> {
    rows.iter().filter(|r| r["type"] == kind).collect()
}

/// The sum of the `amount`s of the rows of `kind`.
pub fn sum_of(rows: &[Value], kind: &str) -> i64 {
    of_type(rows, kind)
        .iter()
        .map(|r| r["amount"].as_i64().unwrap_or(0))
        .sum()
}

/// Asserts a ledger (newest first) is one chain: each row's `balanceAfter` less its
/// `amount` is the `balanceAfter` of the row before it in time, the first row starts
/// from 0, the newest ends at `current`, and no row leaves a negative balance.
#[track_caller]
pub fn assert_chain(rows: &[Value], current: i64, what: &str) {
    let int = |row: &Value, key: &str| {
        row[key]
            .as_i64()
            .unwrap_or_else(|| panic!("{what}: {key} is not an integer in {row}"))
    };
    let newest = rows.first().map_or(0, |row| int(row, "balanceAfter"));
    assert_eq!(
        newest, current,
        "{what}: the newest balanceAfter is the balance"
    );
    for (n, row) in rows.iter().enumerate() {
        let after = int(row, "balanceAfter");
        assert!(after >= 0, "{what}: a negative balanceAfter in {row}");
        let before = rows
            .get(n + 1)
            .map_or(0, |older| int(older, "balanceAfter"));
        assert_eq!(
            after - int(row, "amount"),
            before,
            "{what}: row {row} does not follow from the one before it ({before})"
        );
    }
}

/// `POST /tasks` with `body` as `caller`, answered.
pub async fn create_as(app: &TestApp, caller: &Caller, body: &Value) -> Reply {
    caller.call(app, Method::POST, "/tasks", Some(body)).await
}

/// Creates a task with `body` as `caller`, asserting 200; answers the task.
pub async fn created(app: &TestApp, caller: &Caller, body: &Value) -> Value {
    let reply = create_as(app, caller, body).await;
    assert_eq!(reply.status.as_u16(), 200, "create task: {}", reply.text);
    reply.data().clone()
}

/// `PATCH /tasks/:id` with `{reward}` as `caller`, answered.
pub async fn set_reward(app: &TestApp, caller: &Caller, task: &str, reward: &Value) -> Reply {
    let body = json!({ "reward": reward });
    caller
        .call(app, Method::PATCH, &format!("/tasks/{task}"), Some(&body))
        .await
}

/// Moves `task` through `path` as `caller`, asserting each step is 200.
pub async fn walk_as(app: &TestApp, caller: &Caller, task: &str, path: &[&str]) {
    for to in path {
        let body = json!({ "status": to });
        let reply = caller
            .call(
                app,
                Method::POST,
                &format!("/tasks/{task}/transition"),
                Some(&body),
            )
            .await;
        assert_eq!(reply.status.as_u16(), 200, "{task} -> {to}: {}", reply.text);
    }
}

/// `POST /tasks/:id/assign` of `assignee` as `caller`, asserting 200.
pub async fn assign_as(app: &TestApp, caller: &Caller, task: &str, assignee: &Agent) {
    let body = json!({ "assigneeId": assignee.uuid });
    let reply = caller
        .call(
            app,
            Method::POST,
            &format!("/tasks/{task}/assign"),
            Some(&body),
        )
        .await;
    assert_eq!(reply.status.as_u16(), 200, "assign: {}", reply.text);
}

/// The task as `caller` reads it.
pub async fn task_as(app: &TestApp, caller: &Caller, task: &str) -> Value {
    caller
        .call(app, Method::GET, &format!("/tasks/{task}"), None)
        .await
        .data()
        .clone()
}

/// The reward of the task as `caller` reads it.
pub async fn reward_of(app: &TestApp, caller: &Caller, task: &str) -> i64 {
    let task = task_as(app, caller, task).await;
    task["reward"]
        .as_i64()
        .unwrap_or_else(|| panic!("no reward in {task}"))
}

/// The `rewardPayer` of a task paid by the treasury of `org`.
pub fn treasury_payer(org: &Org) -> Value {
    json!({ "kind": "treasury", "id": org.id })
}

/// The `rewardPayer` of a task paid by `agent`.
pub fn agent_payer(agent: &Agent) -> Value {
    json!({ "kind": "agent", "id": agent.uuid })
}

/// How many tasks `caller`'s organization holds (every page).
pub async fn task_total(app: &TestApp, caller: &Caller) -> usize {
    all_pages(app, caller, "/tasks").await.len()
}

/// The events of `entity` of type `kind` as `reader` sees them, newest first.
pub async fn events_as(app: &TestApp, caller: &Caller, entity: &str, kind: &str) -> Vec<Value> {
    let path = format!("/events?entityId={entity}&type={kind}&limit=200");
    caller
        .call(app, Method::GET, &path, None)
        .await
        .list()
        .clone()
}

/// The payload of the one `task.created` event of `task`.
pub async fn created_payload(app: &TestApp, caller: &Caller, task: &str) -> Value {
    let events = events_as(app, caller, task, "task.created").await;
    assert_eq!(events.len(), 1, "{events:?}");
    events[0]["payload"].clone()
}

/// The id of `task` (a task object).
pub fn id_of(task: &Value) -> String {
    str_of(task, "id")
}

/// Sends `method path` with a raw `body` as `caller` (a bearer credential or an agent),
/// with the JSON content type: for malformed bodies.
pub async fn raw_as(
    app: &TestApp,
    caller: &Caller,
    method: Method,
    path: &str,
    body: &str,
) -> Reply {
    match caller {
        Caller::Agent(agent) => send(app.signed(agent, method, path, Some(body))).await,
        Caller::Bearer(token) => {
            send(
                app.bearer(token, method, path, None)
                    .header("content-type", "application/json")
                    .body(body.to_owned()),
            )
            .await
        }
    }
}
