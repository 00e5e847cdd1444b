//! Resources for the fuzzed operations to find. Without them every `/tasks/{id}/…` and
//! `/agents/{id}/…` operation only ever sees random ids and answers 404, so its real
//! logic is never reached. A few tasks (one depending on another, one commented, one
//! made a template), worker agents and events are created before the run; their ids go
//! into schemathesis dictionaries that the id parameters draw from most of the time
//! (and from random values the rest).

use muster_client::Client;
use muster_client::types::agents::{CapabilityInput, RegisterRequest};
use muster_client::types::events::ListEventsQuery;
use muster_client::types::model::Proficiency;
use muster_client::types::routing::CreateTemplateRequest;
use muster_client::types::task_links::{CommentRequest, DependencyRequest};
use muster_client::types::tasks::CreateTaskRequest;

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

/// Creates the resources as the bootstrap admin. The HR agent the signing proxy signs
/// as is left out of the agent ids on purpose: a fuzzed revocation of it would lock
/// every signed request out for the rest of the run.
pub async fn seed(admin: &Client) -> anyhow::Result<Seeded> {
    let mut seeded = Seeded::default();
    let mut tasks = Vec::new();
    for n in 0..6 {
        let task = CreateTaskRequest {
            title: format!("seeded {n}"),
            ..Default::default()
        };
        tasks.push(admin.create_task(&task).await?.id);
    }
    for n in 0..3 {
        let agent = RegisterRequest {
            agent_id: format!("fuzz-worker-{n}"),
            name: format!("Fuzz worker {n}"),
            capabilities: Some(vec![CapabilityInput {
                capability: "rust".to_owned(),
                proficiency: Some(Proficiency::Expert),
            }]),
            ..Default::default()
        };
        let registered = admin.register_agent(&agent).await?;
        seeded.agents.push(registered.data.id.to_string());
    }
    let dependency = DependencyRequest {
        depends_on_id: tasks[1],
        blocking: true,
    };
    admin.add_dependency(tasks[0], &dependency).await?;
    let comment = CommentRequest {
        body: "seeded comment".to_owned(),
        ..Default::default()
    };
    admin.comment_on_task(tasks[0], &comment).await?;
    let template = CreateTemplateRequest {
        name: "seeded template".to_owned(),
    };
    let made = admin.create_template(tasks[2], &template).await?;
    seeded.templates.push(made.id.to_string());
    let query = ListEventsQuery {
        limit: Some(5),
        ..Default::default()
    };
    for event in admin.list_events(&query).await?.data {
        seeded.events.push(event.id.to_string());
    }
    seeded.tasks = tasks.iter().map(ToString::to_string).collect();
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
        // `POST /a2a/rest/tasks/{target}` takes a task id with its verb.
        let verbs: Vec<String> = self
            .tasks
            .iter()
            .flat_map(|task| [format!("{task}:cancel"), format!("{task}:subscribe")])
            .collect();
        format!(
            r#"
[dictionaries.tasks]
values = {tasks}
[dictionaries.task_verbs]
values = {task_verbs}
[dictionaries.agents]
values = {agents}
[dictionaries.templates]
values = {templates}
[dictionaries.events]
values = {events}

[dictionaries.capabilities]
values = ["rust"]

[dictionaries.a2a_methods]
values = ["SendMessage", "SendStreamingMessage", "GetTask", "ListTasks", "CancelTask", "SubscribeToTask", "GetExtendedAgentCard"]

[[operations]]
include-path-regex = '^/tasks/\{{id\}}'
parameters = {{ "path.id" = {task}, "path.depId" = {task}, "body.dependsOnId" = {task}, "body.assigneeId" = {agent} }}
[[operations]]
include-path-regex = '^/a2a/jsonrpc$'
parameters = {{ "body.method" = {a2a_method} }}
[[operations]]
include-operation-id = "a2aCancelOrSubscribe"
parameters = {{ "path.target" = {task_verb} }}
[[operations]]
include-path-regex = '^/a2a/rest/tasks/\{{target\}}'
exclude-operation-id = "a2aCancelOrSubscribe"
parameters = {{ "path.target" = {task} }}
[[operations]]
include-path-regex = '^/agents/(credits|capabilities)/'
parameters = {{ "body.toAgentId" = {agent}, "query.capabilities" = {capability} }}
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
            task_verbs = list(&verbs),
            agents = list(&self.agents),
            templates = list(&self.templates),
            events = list(&self.events),
            task = bind("tasks"),
            task_verb = bind("task_verbs"),
            agent = bind("agents"),
            template = bind("templates"),
            event = bind("events"),
            capability = bind("capabilities"),
            a2a_method = bind("a2a_methods"),
        )
    }
}
