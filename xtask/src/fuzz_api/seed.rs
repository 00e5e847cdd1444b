//! Resources for the fuzzed operations to find. Without them every `/tasks/{id}/…` and
//! `/agents/{id}/…` operation only ever sees random ids and answers 404, so its real
//! logic is never reached. A few tasks (one depending on another, one commented, one
//! made a template), worker agents and events are created before the run; their ids go
//! into schemathesis dictionaries that the id parameters draw from most of the time
//! (and from random values the rest).

use anyhow::Context;
use hyper::Method;
use serde_json::{Value, json};

use crate::bench::client::{Call, Client};
use crate::bench::sign::Credentials;

/// How often an id parameter takes a seeded id rather than a generated one.
const SEEDED_SHARE: f64 = 0.8;

/// The ids of what was created.
#[derive(Debug, Default)]
pub struct Seeded {
    tasks: Vec<String>,
    agents: Vec<String>,
    templates: Vec<String>,
    events: Vec<String>,
}

/// Creates the resources as the bootstrap admin (`token`). The HR agent the signing
/// proxy signs as is left out of the agent ids on purpose: a fuzzed revocation of it
/// would lock every signed request out for the rest of the run.
pub async fn seed(client: &mut Client, token: &str) -> anyhow::Result<Seeded> {
    let mut seeded = Seeded::default();
    for n in 0..6 {
        let task = send(
            client,
            token,
            "/tasks",
            json!({"title": format!("seeded {n}")}),
        )
        .await?;
        seeded.tasks.push(id_of(&task)?);
    }
    for n in 0..3 {
        let body = json!({
            "agentId": format!("fuzz-worker-{n}"),
            "name": format!("Fuzz worker {n}"),
            "capabilities": [{"capability": "rust", "proficiency": "expert"}],
        });
        let agent = send(client, token, "/agents/register", body).await?;
        seeded.agents.push(id_of(&agent)?);
    }
    let (first, second) = (&seeded.tasks[0], &seeded.tasks[1]);
    let dependency = json!({"dependsOnId": second, "blocking": true});
    send(
        client,
        token,
        &format!("/tasks/{first}/dependencies"),
        dependency,
    )
    .await?;
    let comment = json!({"body": "seeded comment"});
    send(client, token, &format!("/tasks/{first}/comments"), comment).await?;
    let template = json!({"name": "seeded template"});
    let made = send(
        client,
        token,
        &format!("/tasks/{}/create-template", seeded.tasks[2]),
        template,
    )
    .await?;
    seeded.templates.push(id_of(&made)?);
    let call = Call::bearer(Method::GET, "/events?limit=5", String::new(), token);
    let page = answer(client, &call).await?;
    for event in page["data"].as_array().context("GET /events has no data")? {
        let id = event["id"].as_str().context("an event without an id")?;
        seeded.events.push(id.to_owned());
    }
    Ok(seeded)
}

impl Seeded {
    /// The schemathesis configuration that points the id parameters at the seeded ids.
    pub fn config(&self) -> String {
        let list = |ids: &[String]| {
            let quoted: Vec<String> = ids.iter().map(|id| format!("\"{id}\"")).collect();
            format!("[{}]", quoted.join(", "))
        };
        let bind = |dictionary: &str| {
            format!("{{ dictionary = \"{dictionary}\", probability = {SEEDED_SHARE} }}")
        };
        format!(
            r#"
[dictionaries.tasks]
values = {tasks}
[dictionaries.agents]
values = {agents}
[dictionaries.templates]
values = {templates}
[dictionaries.events]
values = {events}

[[operations]]
include-path-regex = '^/tasks/\{{id\}}'
parameters = {{ "path.id" = {task}, "path.dep_id" = {task}, "body.dependsOnId" = {task} }}
[[operations]]
include-path-regex = '^/agents/\{{id\}}'
parameters = {{ "path.id" = {agent} }}
[[operations]]
include-path-regex = '^/tasks/templates/\{{id\}}'
parameters = {{ "path.id" = {template} }}
[[operations]]
include-path-regex = '^/events/\{{id\}}'
parameters = {{ "path.id" = {event} }}
"#,
            tasks = list(&self.tasks),
            agents = list(&self.agents),
            templates = list(&self.templates),
            events = list(&self.events),
            task = bind("tasks"),
            agent = bind("agents"),
            template = bind("templates"),
            event = bind("events"),
        )
    }
}

/// POSTs `body` to `target` as the admin; the answer's `data`.
async fn send(
    client: &mut Client,
    token: &str,
    target: &str,
    body: Value,
) -> anyhow::Result<Value> {
    let call = Call::bearer(Method::POST, target, body.to_string(), token);
    Ok(answer(client, &call).await?["data"].take())
}

/// The JSON answer of a call that must succeed.
async fn answer(client: &mut Client, call: &Call) -> anyhow::Result<Value> {
    let answer = client.send(call, &Credentials::none()).await?;
    anyhow::ensure!(
        answer.status.is_success(),
        "seeding: {}",
        answer.describe(call)
    );
    Ok(serde_json::from_slice(&answer.body)?)
}

fn id_of(data: &Value) -> anyhow::Result<String> {
    Ok(data["id"]
        .as_str()
        .context("a created resource without an id")?
        .to_owned())
}
