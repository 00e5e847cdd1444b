//! The tools: what each is called, what it does, who may see it, and its input schema,
//! built from the very operation of the OpenAPI document it stands for.

use std::sync::{Arc, OnceLock};

use muster_domain::model::{Actor, ApiKeyScope, TaskStatus};
use muster_domain::policy;
use rmcp::model::{JsonObject, Tool};
use serde_json::{Map, Value, json};

/// Who may see a tool (and call it: the use case checks again, as on the API).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Access {
    /// Anyone who may read the organization's tasks and events.
    Read,
    /// Anyone who may change tasks (not a read-only API key).
    Write,
    /// An agent that may start work: it claims and keeps leases.
    Worker,
}

impl Access {
    fn allows(self, actor: &Actor) -> bool {
        match self {
            Self::Read => policy::has_scope(actor, ApiKeyScope::Read).is_ok(),
            Self::Write => policy::may_write(actor).is_ok(),
            Self::Worker => {
                policy::acting_agent(actor).is_ok()
                    && policy::may_transition(actor, TaskStatus::InProgress).is_ok()
            }
        }
    }
}

/// One tool and the API operation it stands for.
#[derive(Debug, Clone, Copy)]
pub(super) struct Spec {
    pub name: &'static str,
    pub description: &'static str,
    /// The `operationId` whose parameters and body make the input schema.
    pub operation: &'static str,
    pub access: Access,
}

/// Every tool, in the order an agent's loop meets them.
pub(super) const TOOLS: &[Spec] = &[
    Spec {
        name: "claim_task",
        description: "Claim the next task you may take: it is assigned to you, moved to in_progress and leased to you (keep it with heartbeat_task). Answers {data: task}, or {data: null} when there is nothing to claim.",
        operation: "claimTask",
        access: Access::Worker,
    },
    Spec {
        name: "heartbeat_task",
        description: "Extend your lease on a task you claimed.",
        operation: "heartbeatTask",
        access: Access::Worker,
    },
    Spec {
        name: "list_tasks",
        description: "List the organization's tasks, filtered by status, assignee, creator or parent, newest first, a page at a time (pass meta.nextCursor as cursor).",
        operation: "listTasks",
        access: Access::Read,
    },
    Spec {
        name: "get_task",
        description: "Read one task.",
        operation: "getTask",
        access: Access::Read,
    },
    Spec {
        name: "create_task",
        description: "Create a task.",
        operation: "createTask",
        access: Access::Write,
    },
    Spec {
        name: "update_task",
        description: "Change a task's title, description, priority, due date, tags or metadata; only the fields given change, null clears description and dueAt.",
        operation: "updateTask",
        access: Access::Write,
    },
    Spec {
        name: "transition_task",
        description: "Move a task to another status (todo, in_progress, review, blocked, done, cancelled, backlog), with an optional reason.",
        operation: "transitionTask",
        access: Access::Write,
    },
    Spec {
        name: "comment_on_task",
        description: "Comment on a task (optionally in reply to a comment).",
        operation: "commentOnTask",
        access: Access::Write,
    },
    Spec {
        name: "add_dependency",
        description: "Make a task wait for another (blocking by default).",
        operation: "addTaskDependency",
        access: Access::Write,
    },
    Spec {
        name: "escalate_task",
        description: "Escalate a task (to a given agent, or up the hierarchy) with a reason.",
        operation: "escalateTask",
        access: Access::Write,
    },
    Spec {
        name: "find_candidates",
        description: "The agents best suited to a task, ranked by capability coverage, reputation and load.",
        operation: "listTaskCandidates",
        access: Access::Read,
    },
    Spec {
        name: "list_events",
        description: "Read the organization's audit log, filtered by type, actor, entity, severity or dates, a page at a time.",
        operation: "listEvents",
        access: Access::Read,
    },
];

/// The tools `actor` may use, with their schemas.
pub(super) fn visible_to(actor: &Actor) -> Vec<Tool> {
    TOOLS
        .iter()
        .filter(|spec| spec.access.allows(actor))
        .map(|spec| Tool::new(spec.name, spec.description, input_schema(spec.operation)))
        .collect()
}

/// Whether a tool of that name exists at all (for a clearer refusal).
pub(super) fn exists(name: &str) -> bool {
    TOOLS.iter().any(|spec| spec.name == name)
}

/// The input schema of `operation`: an object whose properties are its path and query
/// parameters and its body's fields, every `$ref` inlined.
fn input_schema(operation: &str) -> Arc<JsonObject> {
    static SCHEMAS: OnceLock<Map<String, Value>> = OnceLock::new();
    let all = SCHEMAS.get_or_init(|| {
        let document = crate::openapi::document();
        TOOLS
            .iter()
            .map(|spec| {
                (
                    spec.operation.to_owned(),
                    Value::Object(build(&document, spec.operation)),
                )
            })
            .collect()
    });
    let schema = match all.get(operation) {
        Some(Value::Object(schema)) => schema.clone(),
        _ => Map::from_iter([("type".to_owned(), json!("object"))]),
    };
    Arc::new(schema)
}

fn build(document: &Value, operation: &str) -> JsonObject {
    let mut properties = Map::new();
    let mut required = Vec::new();
    let Some(op) = find_operation(document, operation) else {
        return Map::from_iter([("type".to_owned(), json!("object"))]);
    };
    for parameter in op["parameters"].as_array().into_iter().flatten() {
        let Some(name) = parameter["name"].as_str() else {
            continue;
        };
        let mut schema = inline(document, &parameter["schema"], 0);
        if let (Some(description), Value::Object(fields)) =
            (parameter["description"].as_str(), &mut schema)
        {
            fields.insert("description".to_owned(), json!(description));
        }
        properties.insert(name.to_owned(), schema);
        if parameter["required"] == json!(true) {
            required.push(json!(name));
        }
    }
    let body = &op["requestBody"]["content"]["application/json"]["schema"];
    if let Value::Object(body) = inline(document, body, 0) {
        if let Some(Value::Object(fields)) = body.get("properties") {
            properties.extend(fields.clone());
        }
        if let Some(Value::Array(names)) = body.get("required") {
            required.extend(names.iter().cloned());
        }
    }
    let mut schema = Map::new();
    schema.insert("type".to_owned(), json!("object"));
    schema.insert("properties".to_owned(), Value::Object(properties));
    if !required.is_empty() {
        schema.insert("required".to_owned(), Value::Array(required));
    }
    schema.insert("additionalProperties".to_owned(), json!(false));
    schema
}

fn find_operation<'a>(document: &'a Value, operation: &str) -> Option<&'a Value> {
    document["paths"]
        .as_object()?
        .values()
        .filter_map(Value::as_object)
        .flat_map(|methods| methods.values())
        .find(|op| op["operationId"] == json!(operation))
}

/// `schema` with every `$ref` to `#/components/schemas/…` replaced by its target.
fn inline(document: &Value, schema: &Value, depth: usize) -> Value {
    if depth > 16 {
        return json!({});
    }
    match schema {
        Value::Object(fields) => {
            if let Some(Value::String(reference)) = fields.get("$ref") {
                let name = reference.trim_start_matches("#/components/schemas/");
                let target = &document["components"]["schemas"][name];
                return inline(document, target, depth + 1);
            }
            Value::Object(
                fields
                    .iter()
                    .map(|(k, v)| (k.clone(), inline(document, v, depth + 1)))
                    .collect(),
            )
        }
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|v| inline(document, v, depth + 1))
                .collect(),
        ),
        other => other.clone(),
    }
}
