//! Tool input schemas, built from the very operation of the OpenAPI document each tool
//! stands for: its path and query parameters and its body's fields, `$ref`s inlined.

use std::sync::{Arc, OnceLock};

use rmcp::model::JsonObject;
use serde_json::{Map, Value, json};

use super::catalog::{Spec, TOOLS};

/// The input schema of `operation`: an object whose properties are its path and query
/// parameters and its body's fields, every `$ref` inlined.
pub(super) fn input_schema(operation: &str) -> Arc<JsonObject> {
    static SCHEMAS: OnceLock<Map<String, Value>> = OnceLock::new();
    let all = SCHEMAS.get_or_init(|| {
        let document = crate::openapi::document();
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

    #[test]
    fn every_tool_stands_for_an_operation_of_the_document() {
        let document = crate::openapi::document();
        for spec in TOOLS {
            assert!(
                find_operation(&document, spec.operation).is_some(),
                "{} names {}, which the document does not have",
                spec.name,
                spec.operation
            );
            let schema = input_schema(spec.operation);
            assert!(schema.get("properties").is_some(), "{}", spec.name);
        }
    }

    #[test]
    fn an_own_id_is_optional_and_a_task_id_is_required() {
        let balance = input_schema("getAgentBalance");
        assert!(balance["properties"]["id"].is_object(), "{balance:?}");
        assert!(balance.get("required").is_none(), "{balance:?}");
        let task = input_schema("getTask");
        assert_eq!(task["required"], json!(["id"]), "{task:?}");
    }
}
