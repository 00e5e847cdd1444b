//! The rules a DTO's derived schema does not say, added in one place: string patterns
//! (each the domain's check written as a regular expression valid in ECMA-262 and Python
//! alike), the items of string arrays, `metadata` objects, and the `PATCH` bodies that
//! must name a field.
//! A client generated from the document, or a fuzzer, then refuses what the server
//! refuses and nothing more.

use serde_json::{Value, json};

/// At least one character other than the whitespace the server trims (Rust's
/// `char::is_whitespace`), and no NUL: titles, names, comment bodies.
pub(crate) const NON_BLANK: &str = "^[^\\x00]*[^\\x00\\t\\n\\v\\f\\r \\u0085\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000][^\\x00]*$";

/// No NUL (PostgreSQL cannot store it): descriptions, reasons.
pub(crate) const NO_NUL: &str = "^[^\\x00]*$";

/// An agent handle travels in a header: visible ASCII only.
pub(crate) const VISIBLE_ASCII: &str = "^[!-~]+$";

/// `owner/name`, no blanks.
pub(crate) const REPOSITORY: &str = "^[^/\\s]+/[^/\\s]+$";

/// A webhook subscription: `*` or an event type such as `task.created`.
pub(crate) const EVENT_TYPE: &str = "^(\\*|[a-z0-9_]([a-z0-9_.]*[a-z0-9_])?)$";

/// (schema, property, pattern) of single strings.
const PATTERNS: &[(&str, &str, &str)] = &[
    ("CreateTaskRequest", "title", NON_BLANK),
    ("PatchTaskRequest", "title", NON_BLANK),
    ("InboundTaskBody", "title", NON_BLANK),
    ("InstantiateRequest", "title", NON_BLANK),
    ("CreateTaskRequest", "description", NO_NUL),
    ("PatchTaskRequest", "description", NO_NUL),
    ("InboundTaskBody", "description", NO_NUL),
    ("TransitionRequest", "reason", NO_NUL),
    ("EscalateRequest", "notes", NO_NUL),
    ("CommentRequest", "body", NON_BLANK),
    ("CreateTemplateRequest", "name", NON_BLANK),
    ("RegisterRequest", "name", NON_BLANK),
    ("SpawnRequest", "name", NON_BLANK),
    ("PatchAgentRequest", "name", NON_BLANK),
    ("RegisterRequest", "agentId", VISIBLE_ASCII),
    ("SpawnRequest", "agentId", VISIBLE_ASCII),
    ("CreateWebhookBody", "name", NON_BLANK),
    ("UpdateWebhookBody", "name", NON_BLANK),
    ("CreateInboundKeyBody", "name", NON_BLANK),
    ("UpdateInboundKeyBody", "name", NON_BLANK),
    ("CreateConnectionBody", "name", NON_BLANK),
    ("CreateConnectionBody", "repository", REPOSITORY),
    ("CreateApiKeyBody", "name", NON_BLANK),
    ("RegisterBody", "name", NON_BLANK),
    ("ProfileBody", "name", NON_BLANK),
    ("ScoreRequest", "reason", NON_BLANK),
    ("CapabilityInput", "capability", NON_BLANK),
    ("AddCapabilityRequest", "capability", NON_BLANK),
];

/// (schema, property, item schema) of string arrays.
fn item_rules() -> [(&'static str, &'static str, Value); 8] {
    let tag = json!({"type": "string", "minLength": 1, "maxLength": 100, "pattern": NO_NUL});
    let event = json!({"type": "string", "maxLength": 100, "pattern": EVENT_TYPE});
    let capability =
        json!({"type": "string", "minLength": 1, "maxLength": 100, "pattern": NON_BLANK});
    [
        ("ClaimBody", "capabilities", capability),
        ("CreateTaskRequest", "tags", tag.clone()),
        ("PatchTaskRequest", "tags", tag.clone()),
        ("InboundTaskBody", "tags", tag.clone()),
        ("CreateInboundKeyBody", "defaultTags", tag.clone()),
        ("UpdateInboundKeyBody", "defaultTags", tag),
        ("CreateWebhookBody", "events", event.clone()),
        ("UpdateWebhookBody", "events", event),
    ]
}

/// `metadata` objects: any JSON, but no NUL in a key or a string, anywhere.
const METADATA: &[(&str, &str)] = &[
    ("CreateTaskRequest", "metadata"),
    ("PatchTaskRequest", "metadata"),
    ("InboundTaskBody", "metadata"),
    ("RegisterRequest", "metadata"),
    ("SpawnRequest", "metadata"),
    ("PatchAgentRequest", "metadata"),
];

/// The `JsonValue` component: any JSON value with no NUL in a key or a string.
fn json_value() -> Value {
    let any = json!({"$ref": "#/components/schemas/JsonValue"});
    json!({
        "description": "Any JSON value with no NUL character in a key or a string.",
        "anyOf": [
            {"type": ["null", "boolean", "number"]},
            {"type": "string", "pattern": NO_NUL},
            {"type": "array", "items": any},
            {"type": "object", "propertyNames": {"pattern": NO_NUL}, "additionalProperties": any}
        ]
    })
}

/// `PATCH` bodies that must name at least one field.
const NOT_EMPTY: &[&str] = &[
    "PatchTaskRequest",
    "PatchAgentRequest",
    "UpdateWebhookBody",
    "UpdateInboundKeyBody",
];

/// Adds the patterns, item rules, `metadata` objects and `minProperties` to the
/// component schemas of the document (as JSON: utoipa's schema types have no room for
/// `propertyNames`, and no setter for a property's pattern after the fact). Answers the
/// places a rule names that the document does not have: a bug in this file, which the
/// document's tests catch.
pub(super) fn add_rules(doc: &mut Value) -> Vec<String> {
    let mut missing = Vec::new();
    for (schema, property, pattern) in PATTERNS {
        edit(doc, &mut missing, schema, property, |p| {
            p["pattern"] = Value::from(*pattern);
        });
    }
    for (schema, property, items) in item_rules() {
        edit(doc, &mut missing, schema, property, |p| p["items"] = items);
    }
    for schema in NOT_EMPTY {
        edit(doc, &mut missing, schema, "", |s| {
            s["minProperties"] = Value::from(1);
        });
    }
    doc["components"]["schemas"]["JsonValue"] = json_value();
    for (schema, property) in METADATA {
        edit(doc, &mut missing, schema, property, |p| {
            p["propertyNames"] = json!({"pattern": NO_NUL});
            p["additionalProperties"] = json!({"$ref": "#/components/schemas/JsonValue"});
            p["description"] = Value::from("A JSON object of at most 64 KiB serialized.");
        });
    }
    missing
}

/// Rewrites one property (or, with `""`, the whole) of one component schema, or notes
/// that it is missing.
fn edit(
    doc: &mut Value,
    missing: &mut Vec<String>,
    schema: &str,
    property: &str,
    change: impl FnOnce(&mut Value),
) {
    let mut pointer = format!("/components/schemas/{schema}");
    if !property.is_empty() {
        pointer.push_str("/properties/");
        pointer.push_str(property);
    }
    match doc.pointer_mut(&pointer) {
        Some(target) => change(target),
        None => missing.push(pointer),
    }
}
