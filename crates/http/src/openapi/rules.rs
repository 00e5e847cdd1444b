//! The rules a DTO's derived schema does not say, added in one place: string patterns
//! (each the domain's check written as a regular expression valid in ECMA-262 and Python
//! alike), the items of string arrays, `metadata` objects, and the `PATCH` bodies that
//! must name a field.
//! A client generated from the document, or a fuzzer, then refuses what the server
//! refuses and nothing more.

use serde_json::{Value, json};

/// The whitespace the server trims (Rust's `char::is_whitespace`), as a class body.
const WHITESPACE: &str =
    "\\t\\n\\v\\f\\r \\u0085\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000";

/// A string the server trims and then requires 1 to `longest` characters of, with no
/// NUL: whitespace, then a core that starts and ends with something else and holds at
/// most `longest` characters, then whitespace. (A `maxLength` would count the
/// whitespace around the core, which the server does not.)
pub(crate) fn trimmed(longest: usize) -> String {
    let middle = longest.saturating_sub(2);
    format!(
        "^[{WHITESPACE}]*[^{WHITESPACE}\\x00](?:[^\\x00]{{0,{middle}}}[^{WHITESPACE}\\x00])?[{WHITESPACE}]*$"
    )
}

/// The characters that leave nothing to see (the domain's `is_invisible`, within the
/// Basic Multilingual Plane): white space, control characters, the default-ignorable
/// code points and the Braille blank, as a class body.
const INVISIBLE: &str = "\\x00-\\x1f\\x7f-\\x9f\\u00ad\\u034f\\u061c\\u115f\\u1160\\u17b4\\u17b5\\u180b-\\u180f\\u200b-\\u200f\\u202a-\\u202e\\u2060-\\u206f\\u2800\\u3164\\ufe00-\\ufe0f\\ufeff\\uffa0\\ufff0-\\ufff8";

/// [`trimmed`] for a title or a name shown to people: it must also hold a visible
/// character and no bidirectional control (U+202A to U+202E, U+2066 to U+2069).
pub(crate) fn displayable(longest: usize) -> String {
    let trimmed = trimmed(longest);
    let rest = trimmed.strip_prefix('^').unwrap_or(&trimmed);
    format!(
        "^(?![^\\x00]*[\\u202a-\\u202e\\u2066-\\u2069])(?=[^\\x00]*[^{WHITESPACE}{INVISIBLE}]){rest}"
    )
}

/// At least one character other than the whitespace the server trims, and no NUL:
/// comment bodies and reasons, whose length counts the whitespace.
pub(crate) const NON_BLANK: &str = "^[^\\x00]*[^\\x00\\t\\n\\v\\f\\r \\u0085\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000][^\\x00]*$";

/// No NUL (PostgreSQL cannot store it): descriptions, reasons.
pub(crate) const NO_NUL: &str = "^[^\\x00]*$";

/// An agent handle travels in a header: visible ASCII only.
pub(crate) const VISIBLE_ASCII: &str = "^[!-~]+$";

/// `owner/name`: no blank (Rust's whitespace) and no control character.
pub(crate) const REPOSITORY: &str = "^[^/\\x00-\\x20\\x7f-\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]+/[^/\\x00-\\x20\\x7f-\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]+$";

/// A cron expression's shape: five or six fields of the characters cron fields use. (The
/// values' ranges and the steps are checked by the server, 400 with the parser's words.)
pub(crate) const CRON: &str = "^[ \\t]*[0-9A-Za-z*/,#?-]+([ \\t]+[0-9A-Za-z*/,#?-]+){4,5}[ \\t]*$";

/// An IANA time zone name's shape, such as `Europe/Berlin` or `UTC`.
pub(crate) const TIME_ZONE: &str = "^[ \\t]*[A-Za-z][A-Za-z0-9_+/-]*[ \\t]*$";

/// A webhook subscription: `*` or an event type such as `task.created`.
pub(crate) const EVENT_TYPE: &str = "^(\\*|[a-z0-9_]([a-z0-9_.]*[a-z0-9_])?)$";

/// (schema, property, longest) of the strings the server trims, then requires 1 to
/// `longest` characters of, with no NUL: see [`trimmed`].
const TRIMMED: &[(&str, &str, usize)] = &[
    ("CreateTaskRequest", "title", 255),
    ("PatchTaskRequest", "title", 255),
    ("InboundTaskBody", "title", 500),
    ("InstantiateRequest", "title", 255),
    ("CreateTemplateRequest", "name", 255),
    ("RegisterRequest", "name", 255),
    ("SpawnRequest", "name", 255),
    ("PatchAgentRequest", "name", 255),
    ("CreateWebhookBody", "name", 255),
    ("UpdateWebhookBody", "name", 255),
    ("CreateInboundKeyBody", "name", 255),
    ("UpdateInboundKeyBody", "name", 255),
    ("CreateConnectionBody", "name", 255),
    ("CreateApiKeyBody", "name", 255),
    ("RegisterBody", "name", 255),
    ("ProfileBody", "name", 255),
    ("CapabilityInput", "capability", 100),
    ("AddCapabilityRequest", "capability", 100),
    ("CreateProjectRequest", "name", 255),
    ("PatchProjectRequest", "name", 255),
    ("CreateRoutineRequest", "name", 255),
    ("PatchRoutineRequest", "name", 255),
    ("RoutineTaskBody", "title", 255),
];

/// Of [`TRIMMED`], the titles and names the server also requires to be displayable
/// (see [`displayable`]).
const DISPLAYED: &[(&str, &str, usize)] = &[
    ("CreateTaskRequest", "title", 255),
    ("PatchTaskRequest", "title", 255),
    ("InboundTaskBody", "title", 500),
    ("InstantiateRequest", "title", 255),
    ("RegisterRequest", "name", 255),
    ("SpawnRequest", "name", 255),
    ("PatchAgentRequest", "name", 255),
    ("RegisterBody", "name", 255),
    ("CreateProjectRequest", "name", 255),
    ("PatchProjectRequest", "name", 255),
    ("CreateRoutineRequest", "name", 255),
    ("PatchRoutineRequest", "name", 255),
    ("RoutineTaskBody", "title", 255),
];

/// (schema, property, pattern) of single strings.
const PATTERNS: &[(&str, &str, &str)] = &[
    ("CreateTaskRequest", "description", NO_NUL),
    ("PatchTaskRequest", "description", NO_NUL),
    ("InboundTaskBody", "description", NO_NUL),
    ("TransitionRequest", "reason", NO_NUL),
    ("TransitionRequest", "result", NON_BLANK),
    ("EscalateRequest", "notes", NO_NUL),
    ("CreateWebhookBody", "secret", NO_NUL),
    ("UpdateWebhookBody", "secret", NO_NUL),
    ("CommentRequest", "body", NON_BLANK),
    ("RegisterRequest", "agentId", VISIBLE_ASCII),
    ("SpawnRequest", "agentId", VISIBLE_ASCII),
    ("CreateConnectionBody", "repository", REPOSITORY),
    ("ScoreRequest", "reason", NON_BLANK),
    ("CreateProjectRequest", "goal", NON_BLANK),
    ("PatchProjectRequest", "goal", NON_BLANK),
    ("CreateProjectRequest", "description", NO_NUL),
    ("PatchProjectRequest", "description", NO_NUL),
    ("RoutineTaskBody", "description", NO_NUL),
    ("CreateRoutineRequest", "schedule", CRON),
    ("PatchRoutineRequest", "schedule", CRON),
    ("CreateRoutineRequest", "timezone", TIME_ZONE),
    ("PatchRoutineRequest", "timezone", TIME_ZONE),
];

/// (schema, property, item schema) of string arrays.
fn item_rules() -> [(&'static str, &'static str, Value); 9] {
    let tag = json!({"type": "string", "minLength": 1, "maxLength": 100, "pattern": NO_NUL});
    let event = json!({"type": "string", "maxLength": 100, "pattern": EVENT_TYPE});
    let capability = json!({"type": "string", "pattern": trimmed(100)});
    [
        ("ClaimBody", "capabilities", capability),
        ("CreateTaskRequest", "tags", tag.clone()),
        ("PatchTaskRequest", "tags", tag.clone()),
        ("InboundTaskBody", "tags", tag.clone()),
        ("RoutineTaskBody", "tags", tag.clone()),
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
    ("RoutineTaskBody", "metadata"),
];

/// A `metadata` object as code generators can read it: an object with any properties
/// (`additionalProperties: true`) and NUL-free top-level keys. The NUL rule for nested
/// values needs a recursive schema, which generators such as openapi-python-client cannot
/// build (they dropped every operation whose body held one), so it is said in words.
fn metadata(property: &mut Value) {
    property["propertyNames"] = json!({"pattern": NO_NUL});
    property["additionalProperties"] = Value::Bool(true);
    property["description"] = Value::from(
        "Any JSON object of at most 64 KiB serialized, with no NUL character (U+0000) in a key or a string at any depth.",
    );
}

/// `PATCH` bodies that must name at least one field.
const NOT_EMPTY: &[&str] = &[
    "PatchTaskRequest",
    "PatchAgentRequest",
    "UpdateWebhookBody",
    "UpdateInboundKeyBody",
    "PatchProjectRequest",
    "PatchRoutineRequest",
];

/// Adds the patterns, item rules, `metadata` objects and `minProperties` to the
/// component schemas of the document (as JSON: utoipa's schema types have no room for
/// `propertyNames`, and no setter for a property's pattern after the fact). Answers the
/// places a rule names that the document does not have: a bug in this file, which the
/// document's tests catch.
pub(super) fn add_rules(doc: &mut Value) -> Vec<String> {
    let mut missing = Vec::new();
    for (schema, property, longest) in TRIMMED {
        edit(doc, &mut missing, schema, property, |p| {
            p["pattern"] = Value::from(trimmed(*longest));
            if let Some(fields) = p.as_object_mut() {
                fields.remove("maxLength");
                fields.remove("minLength");
            }
        });
    }
    for (schema, property, longest) in DISPLAYED {
        edit(doc, &mut missing, schema, property, |p| {
            p["pattern"] = Value::from(displayable(*longest));
        });
    }
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
    optional_bodies_are_objects(doc);
    // JSON-RPC answers a missing or malformed body with its own parse error, HTTP 200
    // (D-104): the body is the protocol's to judge, not the transport's.
    match doc.pointer_mut("/paths/~1a2a~1jsonrpc/post/requestBody") {
        Some(body) => body["required"] = Value::Bool(false),
        None => missing.push("/a2a/jsonrpc requestBody".to_owned()),
    }
    parameters_are_never_null(doc);
    match doc.pointer_mut(CODEHOST_PAYLOAD) {
        Some(schema) => *schema = codehost_payload(),
        None => missing.push(CODEHOST_PAYLOAD.to_owned()),
    }
    for (schema, property) in METADATA {
        edit(doc, &mut missing, schema, property, metadata);
    }
    missing
}

/// Where the code-host event's body schema is.
const CODEHOST_PAYLOAD: &str = "/paths/~1api~1v1~1integrations~1codehost~1webhook/post/requestBody/content/application~1json/schema";

/// What every code-host payload needs before anything else is read: the installation,
/// as `installation.id` or else `repository.owner.id` (other fields depend on the event).
fn codehost_payload() -> Value {
    let id = json!({"type": "object", "required": ["id"], "properties": {
        "id": {"type": "integer", "format": "int64", "minimum": 1, "maximum": i64::MAX}
    }});
    json!({
        "type": "object",
        "description": "The code host's event payload, exactly as signed; fields this service does not read are ignored.",
        "anyOf": [
            {"required": ["installation"], "properties": {"installation": id}},
            {"required": ["repository"], "properties": {"repository": {
                "type": "object", "required": ["owner"], "properties": {"owner": id}
            }}}
        ]
    })
}

/// utoipa writes an optional body (`Option<T>`) as "T or null". The body may be left
/// out, but `null` is a JSON value of the wrong type, refused like any other: the
/// schema is T, and `required: false` says it may be absent.
fn optional_bodies_are_objects(doc: &mut Value) {
    let Some(paths) = doc.get_mut("paths").and_then(Value::as_object_mut) else {
        return;
    };
    for operation in paths
        .values_mut()
        .filter_map(Value::as_object_mut)
        .flat_map(|item| item.values_mut())
    {
        let Some(contents) = operation
            .pointer_mut("/requestBody/content")
            .and_then(Value::as_object_mut)
        else {
            continue;
        };
        for content in contents.values_mut() {
            let Some(choices) = content.pointer("/schema/oneOf").and_then(Value::as_array) else {
                continue;
            };
            let mut not_null = choices
                .iter()
                .filter(|c| c.get("type") != Some(&json!("null")));
            if let (Some(only), None) = (not_null.next(), not_null.next())
                && choices.len() == 2
            {
                content["schema"] = only.clone();
            }
        }
    }
}

/// utoipa writes an optional parameter (`Option<T>`) as "T or null"; a query value or a
/// header is absent or a string, never JSON `null`.
fn parameters_are_never_null(doc: &mut Value) {
    let Some(paths) = doc.get_mut("paths").and_then(Value::as_object_mut) else {
        return;
    };
    let operations = paths
        .values_mut()
        .filter_map(Value::as_object_mut)
        .flat_map(|item| item.values_mut());
    for operation in operations {
        let Some(parameters) = operation
            .get_mut("parameters")
            .and_then(Value::as_array_mut)
        else {
            continue;
        };
        for schema in parameters.iter_mut().filter_map(|p| p.get_mut("schema")) {
            if let Some(types) = schema.get_mut("type").and_then(Value::as_array_mut) {
                types.retain(|t| t != "null");
                if let [only] = types.as_slice() {
                    schema["type"] = only.clone();
                }
            }
        }
    }
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
