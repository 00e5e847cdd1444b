//! Tool input schemas, built from the very operation of the OpenAPI document each tool
//! stands for: its path and query parameters and its body's fields, `$ref`s inlined.
//!
//! The document is the API's, assembled elsewhere: the app hands [`ToolSchemas`] the
//! function that builds it.

use std::sync::{Arc, OnceLock};

use rmcp::model::JsonObject;
use serde_json::{Map, Value, json};

use super::catalog::{Spec, TOOLS};

/// The tools' input schemas, built on first use from the document `document` returns.
pub(crate) struct ToolSchemas {
    document: fn() -> Value,
    built: OnceLock<Map<String, Value>>,
}

impl ToolSchemas {
    /// The schemas of the operations of the document `document` returns.
    pub(crate) const fn new(document: fn() -> Value) -> Self {
        Self {
            document,
            built: OnceLock::new(),
        }
    }

    /// The input schema of `operation`: an object whose properties are its path and
    /// query parameters and its body's fields, every `$ref` inlined.
    pub(crate) fn input_schema(&self, operation: &str) -> Arc<JsonObject> {
        let all = self.built.get_or_init(|| {
            let document = (self.document)();
            TOOLS
                .iter()
                .map(|spec| {
                    (
                        spec.operation.to_owned(),
                        Value::Object(build(&document, spec)),
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
}

/// The tools whose operation `document` does not have (their input schema is then a
/// bare object).
#[cfg(test)]
pub(crate) fn unmatched(document: &Value) -> Vec<&'static str> {
    TOOLS
        .iter()
        .filter(|spec| find_operation(document, spec.operation).is_none())
        .map(|spec| spec.name)
        .collect()
}

fn build(document: &Value, spec: &Spec) -> JsonObject {
    let mut properties = Map::new();
    let mut required = Vec::new();
    let Some(op) = find_operation(document, spec.operation) else {
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
        if spec.own_id && name == "id" {
            if let Value::Object(fields) = &mut schema {
                fields.insert(
                    "description".to_owned(),
                    json!("Agent id; the calling agent when left out"),
                );
            }
            properties.insert(name.to_owned(), schema);
            continue;
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Two operations in the shape of the API's document: a task by id in the path, and
    /// an agent's balance whose `id` may be left out, with a body by `$ref`.
    fn document() -> Value {
        json!({
            "paths": {
                "/tasks/{id}": {"get": {
                    "operationId": "getTask",
                    "parameters": [{"name": "id", "in": "path", "required": true,
                        "description": "Task id", "schema": {"type": "string", "format": "uuid"}}]
                }},
                "/agents/{id}/credits/balance": {"post": {
                    "operationId": "getAgentBalance",
                    "parameters": [{"name": "id", "in": "path", "required": true,
                        "description": "Agent id", "schema": {"type": "string"}}],
                    "requestBody": {"content": {"application/json": {"schema":
                        {"$ref": "#/components/schemas/Note"}}}}
                }}
            },
            "components": {"schemas": {"Note": {
                "type": "object",
                "properties": {"note": {"$ref": "#/components/schemas/Text"}},
                "required": ["note"]
            }, "Text": {"type": "string", "maxLength": 10}}}
        })
    }

    #[test]
    fn an_own_id_is_optional_and_a_task_id_is_required() {
        let schemas = ToolSchemas::new(document);
        let balance = schemas.input_schema("getAgentBalance");
        assert!(balance["properties"]["id"].is_object(), "{balance:?}");
        assert_eq!(balance["required"], json!(["note"]), "{balance:?}");
        let task = schemas.input_schema("getTask");
        assert_eq!(task["required"], json!(["id"]), "{task:?}");
        assert_eq!(task["properties"]["id"]["description"], json!("Task id"));
        assert_eq!(task["additionalProperties"], json!(false));
    }

    #[test]
    fn refs_are_inlined() {
        let balance = ToolSchemas::new(document).input_schema("getAgentBalance");
        assert_eq!(
            balance["properties"]["note"],
            json!({"type": "string", "maxLength": 10})
        );
    }

    #[test]
    fn a_tool_without_its_operation_takes_a_bare_object() {
        let unmatched = unmatched(&document());
        assert!(unmatched.contains(&"claim_task"), "{unmatched:?}");
        assert!(!unmatched.contains(&"get_task"), "{unmatched:?}");
        let schema = ToolSchemas::new(document).input_schema("claimTask");
        assert_eq!(
            *schema,
            Map::from_iter([("type".to_owned(), json!("object"))])
        );
    }
}
