//! The wiring against the document and the route table: what the root registers is
//! what the document lists, and every MCP tool stands for an operation of it.

use std::collections::BTreeSet;

use serde_json::{Value, json};

use crate::route_table::{Table, split};

fn doc() -> Value {
    serde_json::from_str(crate::openapi::json()).expect("the document is JSON")
}

#[test]
fn documents_exactly_the_registered_routes() {
    let registered: BTreeSet<(String, String)> = crate::operations()
        .into_iter()
        .map(|(method, path)| (method.to_lowercase(), path.replace(":.*}", "}")))
        .collect();
    let doc = doc();
    let mut documented = BTreeSet::new();
    for (path, item) in doc["paths"].as_object().expect("paths") {
        for method in item.as_object().expect("path item").keys() {
            documented.insert((method.clone(), path.clone()));
        }
    }
    let undocumented: Vec<_> = registered.difference(&documented).collect();
    let unserved: Vec<_> = documented.difference(&registered).collect();
    assert!(
        undocumented.is_empty(),
        "registered, not documented: {undocumented:?}"
    );
    assert!(
        unserved.is_empty(),
        "documented, not registered: {unserved:?}"
    );
    assert!(registered.len() > 100, "{} operations", registered.len());
}

/// Grouping keeps each path's meaning only while no group's prefix is a pattern that
/// could match another group's requests.
#[test]
fn every_first_segment_is_literal() {
    for (method, path) in crate::operations() {
        let (prefix, _) = split(path);
        assert!(
            !prefix.contains('{'),
            "{method} {path} starts with a pattern"
        );
    }
}

/// A family's `register`: adds its routes to the table.
type Register = fn(&mut Table<'_>);

/// The first segments of the paths `register` adds.
fn prefixes(register: Register) -> BTreeSet<&'static str> {
    let mut seen = Vec::new();
    drop(actix_web::App::new().configure(|cfg| {
        let mut table = Table::new(cfg, &mut seen);
        register(&mut table);
        table.finish(crate::fallback::not_found);
    }));
    seen.into_iter().map(|(_, path)| split(path).0).collect()
}

/// The table groups paths by first segment in registration order, so the order in which
/// the families register changes no answer only while no two share a first segment.
#[test]
fn no_two_families_share_a_first_segment() {
    let families: [(&str, Register); 4] = [
        ("routes", crate::routes::register),
        ("mcp", crate::mcp::register),
        ("a2a", crate::a2a::register),
        ("openapi", crate::openapi::register),
    ];
    let all: Vec<_> = families
        .iter()
        .map(|(name, register)| (*name, prefixes(*register)))
        .collect();
    for (i, (one, its)) in all.iter().enumerate() {
        assert!(!its.is_empty(), "{one} registers nothing");
        for (other, theirs) in &all[i + 1..] {
            let shared: Vec<_> = its.intersection(theirs).collect();
            assert!(shared.is_empty(), "{one} and {other} share {shared:?}");
        }
    }
}

#[test]
fn every_tool_stands_for_an_operation_of_the_document() {
    let unmatched = crate::mcp::unmatched(&doc());
    assert!(
        unmatched.is_empty(),
        "tools without an operation: {unmatched:?}"
    );
}

#[test]
fn tool_schemas_come_from_the_document() {
    let schemas = crate::tool_schemas();
    let balance = schemas.input_schema("getAgentBalance");
    assert!(balance["properties"]["id"].is_object(), "{balance:?}");
    assert!(balance.get("required").is_none(), "{balance:?}");
    let task = schemas.input_schema("getTask");
    assert_eq!(task["required"], json!(["id"]), "{task:?}");
}
