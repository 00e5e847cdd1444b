//! The document against the code: the committed copy, the domain's limits and the
//! credential each family of routes takes (the crate's root holds it to the route
//! table).

use std::collections::BTreeSet;

use muster_domain::model::{
    AgentMode, AgentRole, AgentStatus, CommentBody, CreditKind, Description, Reason, Tags,
    TaskPriority, TaskStatus, Title, TreasuryKind,
};
use muster_domain::rules::reward::MAX_REWARD;
use muster_domain::service::{CandidateQuery, CreditAmount, EventQuery, PageRequest};
use serde_json::Value;

fn doc() -> Value {
    serde_json::from_str(super::json()).expect("the document is JSON")
}

/// A JSON pointer into the document, which must exist.
fn at(doc: &Value, pointer: &str) -> Value {
    doc.pointer(pointer)
        .unwrap_or_else(|| panic!("{pointer} is not in the document"))
        .clone()
}

#[test]
fn committed_copy_is_current() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/openapi.json");
    let committed = std::fs::read_to_string(path).expect("docs/openapi.json exists");
    assert!(
        committed == super::json(),
        "docs/openapi.json is stale: run `cargo xtask openapi` and commit the result"
    );
}

#[test]
fn is_openapi_3_1_with_version_and_title() {
    let doc = doc();
    assert_eq!(at(&doc, "/openapi"), "3.1.0");
    assert_eq!(at(&doc, "/info/title"), "Muster API");
    assert_eq!(at(&doc, "/info/version"), env!("CARGO_PKG_VERSION"));
}

#[test]
fn operation_ids_are_unique_and_every_operation_has_a_summary_and_tag() {
    let doc = doc();
    let mut ids = BTreeSet::new();
    for (path, item) in at(&doc, "/paths").as_object().expect("paths") {
        for (method, operation) in item.as_object().expect("path item") {
            let id = operation["operationId"].as_str().expect("operationId");
            assert!(ids.insert(id.to_owned()), "{id} is used twice");
            assert!(
                operation["summary"].as_str().is_some_and(|s| !s.is_empty()),
                "{method} {path} has no summary"
            );
            assert!(
                operation["tags"][0].is_string(),
                "{method} {path} has no tag"
            );
            assert!(
                operation["responses"]["500"].is_object(),
                "{method} {path} does not document 500"
            );
        }
    }
}

#[test]
fn limits_are_the_domains() {
    let doc = doc();
    let schema = |name: &str, field: &str, key: &str| {
        at(
            &doc,
            &format!("/components/schemas/{name}/properties/{field}/{key}"),
        )
    };
    let displayed = |longest| serde_json::Value::from(super::rules::displayable(longest));
    assert_eq!(
        schema("CreateTaskRequest", "title", "pattern"),
        displayed(Title::MAX_CHARS)
    );
    assert_eq!(
        schema("CreateTaskRequest", "description", "maxLength"),
        Description::MAX_CHARS
    );
    assert_eq!(
        schema("CreateTaskRequest", "tags", "maxItems"),
        Tags::MAX_COUNT
    );
    assert_eq!(
        schema("PatchTaskRequest", "title", "pattern"),
        displayed(Title::MAX_CHARS)
    );
    assert_eq!(
        schema("TransitionRequest", "reason", "maxLength"),
        Reason::MAX_CHARS
    );
    assert_eq!(
        schema("CommentRequest", "body", "maxLength"),
        CommentBody::MAX_CHARS
    );
    assert_eq!(
        schema("StopRunBody", "reason", "maxLength"),
        muster_domain::rules::runs::MAX_STOP_NOTE_CHARS
    );
    assert_eq!(
        schema("InboundTaskBody", "title", "pattern"),
        displayed(Title::INBOUND_MAX_CHARS)
    );
    assert_eq!(
        schema("InboundBatchBody", "tasks", "maxItems"),
        muster_domain::service::MAX_BATCH
    );
    assert_eq!(
        schema("AmountRequest", "amount", "maximum"),
        CreditAmount::MAX
    );
    assert_eq!(
        schema("TransferRequest", "amount", "maximum"),
        CreditAmount::MAX
    );
    for body in ["CreateTaskRequest", "PatchTaskRequest"] {
        assert_eq!(schema(body, "reward", "minimum"), 0, "{body}");
        assert_eq!(schema(body, "reward", "maximum"), MAX_REWARD, "{body}");
    }
    let param = |path: &str, name: &str| {
        let params = at(&doc, &format!("/paths/{path}/get/parameters"));
        params
            .as_array()
            .expect("parameters")
            .iter()
            .find(|p| p["name"] == name)
            .unwrap_or_else(|| panic!("{path} has no {name}"))["schema"]["maximum"]
            .clone()
    };
    assert_eq!(param("~1tasks", "limit"), PageRequest::<()>::MAX_LIMIT);
    assert_eq!(param("~1events", "limit"), EventQuery::MAX_LIMIT);
    assert_eq!(
        param("~1tasks~1{id}~1candidates", "maxResults"),
        CandidateQuery::MAX_RESULTS
    );
}

#[test]
fn enums_list_exactly_their_wire_values() {
    fn wire<T: serde::Serialize>(all: &[T]) -> Value {
        serde_json::to_value(all).expect("serializable")
    }
    let doc = doc();
    let listed = |name: &str| at(&doc, &format!("/components/schemas/{name}/enum"));
    assert_eq!(listed("TaskStatus"), wire(&TaskStatus::ALL));
    assert_eq!(listed("TaskPriority"), wire(&TaskPriority::ALL));
    assert_eq!(listed("AgentStatus"), wire(AgentStatus::ALL));
    assert_eq!(listed("AgentMode"), wire(AgentMode::ALL));
    assert_eq!(listed("AgentRole"), wire(AgentRole::ALL));
    assert_eq!(listed("CreditKind"), wire(&CreditKind::ALL));
    assert_eq!(listed("TreasuryKind"), wire(&TreasuryKind::ALL));
    assert_eq!(
        listed("RewardPayerKind"),
        serde_json::json!(["agent", "treasury"])
    );
}

#[test]
fn credentials_follow_the_route_family() {
    let doc = doc();
    let security = |path: &str, method: &str| {
        at(&doc, &format!("/paths/{path}/{method}/security")).to_string()
    };
    let agent_or_bearer = security("~1tasks", "post");
    for scheme in [
        "agentId",
        "agentTimestamp",
        "agentNonce",
        "agentSignature",
        "userToken",
        "apiKey",
    ] {
        assert!(
            agent_or_bearer.contains(scheme),
            "POST /tasks lacks {scheme}"
        );
    }
    let users_only = security("~1api-keys", "post");
    assert!(users_only.contains("userToken"));
    assert!(!users_only.contains("agentId") && !users_only.contains("apiKey"));
    assert_eq!(security("~1auth~1login", "post"), "[{}]");
    assert!(security("~1metrics", "get").contains("metricsToken"));
    let schemes = at(&doc, "/components/securitySchemes");
    assert_eq!(schemes["agentSignature"]["name"], "X-Signature");
    assert_eq!(schemes["agentSignature"]["in"], "header");
    assert_eq!(schemes["userToken"]["scheme"], "bearer");
}

#[test]
fn every_added_rule_finds_its_schema() {
    let mut raw = serde_json::to_value(super::paths::all()).expect("serializable");
    let mut missing = super::rules::add_rules(&mut raw);
    missing.extend(super::a2a::add_bodies(&mut raw));
    assert!(
        missing.is_empty(),
        "rules for missing properties: {missing:?}"
    );
    let served = doc();
    assert_eq!(
        at(
            &served,
            "/components/schemas/CreateTaskRequest/properties/title/pattern"
        ),
        super::rules::displayable(Title::MAX_CHARS)
    );
    assert_eq!(
        at(
            &served,
            "/components/schemas/PatchTaskRequest/minProperties"
        ),
        1
    );
}

/// What schemathesis found the document allowing and the server refusing (or the other
/// way round), each fixed in the document: kept true here.
#[test]
fn schemathesis_findings_stay_fixed() {
    let doc = doc();
    let param = |path: &str, method: &str, name: &str| {
        at(&doc, &format!("/paths/{path}/{method}/parameters"))
            .as_array()
            .expect("parameters")
            .iter()
            .find(|p| p["name"] == name)
            .cloned()
    };
    // A cursor is the id of the last item of the previous page.
    for path in ["~1tasks", "~1agents", "~1tasks~1templates"] {
        let cursor = param(path, "get", "cursor").expect("a cursor");
        assert_eq!(cursor["schema"]["format"], "uuid", "{path}");
    }
    // At least one capability name in the comma-separated list.
    let capabilities = param("~1agents~1capabilities~1match", "get", "capabilities").unwrap();
    assert_eq!(
        capabilities["schema"]["pattern"],
        "^[^\\x00]*[^,\\s\\x00][^\\x00]*$"
    );
    // A stream is not paged.
    for name in ["page", "limit"] {
        assert!(param("~1events~1stream", "get", name).is_none(), "{name}");
    }
    assert!(param("~1events~1stream", "get", "startDate").is_some());
    // PATCH bodies name a field; the e-mail of a login and `enabled` of a connection
    // update are required.
    for schema in [
        "PatchTaskRequest",
        "PatchAgentRequest",
        "UpdateWebhookBody",
        "UpdateInboundKeyBody",
    ] {
        assert_eq!(
            at(&doc, &format!("/components/schemas/{schema}/minProperties")),
            1
        );
    }
    assert!(
        at(&doc, "/components/schemas/LoginBody/required")
            .as_array()
            .unwrap()
            .contains(&"email".into())
    );
    assert_eq!(
        at(&doc, "/components/schemas/UpdateConnectionBody/required"),
        serde_json::json!(["enabled"])
    );
    // An id in a body that names nothing is 404; a spent refresh token is 401.
    assert!(at(&doc, "/paths/~1tasks/post/responses/404").is_object());
    assert!(
        at(
            &doc,
            "/paths/~1api~1v1~1inbound-webhooks/post/responses/404"
        )
        .is_object()
    );
    assert!(at(&doc, "/paths/~1auth~1refresh/post/responses/401").is_object());
    // Strings the server trims and refuses when blank, and NUL-free metadata.
    assert_eq!(
        at(
            &doc,
            "/components/schemas/CreateTaskRequest/properties/title/pattern"
        ),
        super::rules::displayable(Title::MAX_CHARS)
    );
    assert_eq!(
        at(
            &doc,
            "/components/schemas/CreateTaskRequest/properties/metadata/propertyNames/pattern"
        ),
        super::rules::NO_NUL
    );
    assert_eq!(
        at(
            &doc,
            "/components/schemas/ClaimBody/properties/capabilities/items/pattern"
        ),
        super::rules::trimmed(100)
    );
    // An optional body may be left out, but is never `null`.
    let claim = at(&doc, "/paths/~1tasks~1claim/post/requestBody");
    assert_eq!(
        claim["content"]["application/json"]["schema"]["$ref"],
        "#/components/schemas/ClaimBody"
    );
    assert_ne!(claim["required"], true);
    for (path, item) in at(&doc, "/paths").as_object().expect("paths") {
        for (method, operation) in item.as_object().expect("path item") {
            let body = operation["requestBody"]["content"].to_string();
            assert!(
                !body.contains(r#"{"type":"null"}"#),
                "{method} {path} allows null"
            );
        }
    }
}

/// Code generators build a schema that contains itself only as a class that refers to
/// itself (an object with named properties, such as a node with `children`), not as a
/// union or a bare array or map: openapi-python-client dropped every operation whose
/// body held the recursive `JsonValue` union that `metadata` once was. Free-form JSON is
/// a plain object with any properties instead.
#[test]
fn only_object_models_refer_to_themselves() {
    let doc = doc();
    let schemas = at(&doc, "/components/schemas");
    let schemas = schemas.as_object().expect("component schemas");
    for (name, schema) in schemas {
        let mut seen = BTreeSet::new();
        let mut todo = vec![name.clone()];
        let mut recursive = false;
        while let Some(current) = todo.pop() {
            let mut refs = Vec::new();
            component_refs(&schemas[&current], &mut refs);
            recursive |= refs.contains(name);
            todo.extend(refs.into_iter().filter(|r| seen.insert(r.clone())));
        }
        let object_model = schema["type"] == "object"
            && schema["properties"].is_object()
            && ["anyOf", "oneOf", "allOf"]
                .iter()
                .all(|union| schema.get(union).is_none());
        assert!(
            !recursive || object_model,
            "{name} refers to itself but is not an object with properties: {schema}"
        );
    }
    for schema in [
        "CreateTaskRequest",
        "PatchTaskRequest",
        "InboundTaskBody",
        "RegisterRequest",
        "SpawnRequest",
        "PatchAgentRequest",
    ] {
        let metadata = at(
            &doc,
            &format!("/components/schemas/{schema}/properties/metadata"),
        );
        assert_eq!(metadata["additionalProperties"], true, "{schema}");
    }
}

/// The component schemas `value` names with `$ref`, at any depth.
fn component_refs(value: &Value, refs: &mut Vec<String>) {
    match value {
        Value::Object(fields) => {
            for (key, field) in fields {
                match (key.as_str(), field.as_str()) {
                    ("$ref", Some(target)) => {
                        if let Some(name) = target.strip_prefix("#/components/schemas/") {
                            refs.push(name.to_owned());
                        }
                    }
                    _ => component_refs(field, refs),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|item| component_refs(item, refs)),
        _ => {}
    }
}

/// The A2A HTTP+JSON binding's bodies and query values, which schemathesis found
/// described too loosely (any object, any string), written out with the server's rules.
#[test]
fn a2a_bodies_and_queries_say_what_the_server_reads() {
    let doc = doc();
    let body = |path: &str| {
        at(
            &doc,
            &format!("/paths/{path}/post/requestBody/content/application~1json/schema/$ref"),
        )
    };
    assert_eq!(
        body("~1a2a~1rest~1message:send"),
        "#/components/schemas/A2aSendMessageRequest"
    );
    assert_eq!(
        body("~1a2a~1rest~1tasks~1{target}"),
        "#/components/schemas/A2aCancelTaskRequest"
    );
    let message = at(&doc, "/components/schemas/A2aMessage");
    assert_eq!(
        message["properties"]["messageId"]["maxLength"],
        muster_a2a::mapping::MAX_MESSAGE_ID_CHARS
    );
    assert_eq!(
        message["properties"]["role"]["enum"],
        serde_json::json!(["ROLE_USER", "ROLE_AGENT"])
    );
    // Exactly one content per part; `raw` never.
    let part = at(&doc, "/components/schemas/A2aPart");
    assert_eq!(part["oneOf"].as_array().map(Vec::len), Some(3));
    let query = |path: &str, name: &str| {
        at(&doc, &format!("/paths/{path}/get/parameters"))
            .as_array()
            .expect("parameters")
            .iter()
            .find(|p| p["name"] == name)
            .map(|p| p["schema"].clone())
            .expect("the parameter")
    };
    let states = query("~1a2a~1rest~1tasks", "status");
    assert!(
        states["enum"].as_array().is_some_and(
            |all| all.contains(&"TASK_STATE_WORKING".into()) && all.contains(&"".into())
        ),
        "{states}"
    );
    let token = query(
        "~1a2a~1rest~1tasks~1{target}~1pushNotificationConfigs",
        "pageToken",
    );
    assert_eq!(token["maxLength"], 0);
}
