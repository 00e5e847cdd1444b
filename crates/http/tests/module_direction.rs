//! The direction between the crate's top-level modules, read from its source: the REST
//! API (`routes`), `mcp` and `a2a` import neither one another nor `openapi` (which
//! assembles the document from their operations), and the modules they share import
//! none of those four. The root (`lib.rs`, its `tests` and `fuzzing`) wires them all,
//! and no import leads back to where it started.
//!
//! An import is any `crate::<module>` in a file, comments included (an intra-doc link
//! is a dependency too). Outside the root, every `crate::` path must name a module, not
//! an item the root re-exports, so that each import shows where it leads.

#![allow(clippy::expect_used, clippy::panic)]

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// The modules that answer requests; none imports another, nor [`ASSEMBLER`].
const ADAPTERS: [&str; 3] = ["routes", "mcp", "a2a"];
/// The document's assembler: it may import the adapters.
const ASSEMBLER: &str = "openapi";
/// Parts of the root: they may import anything.
const ROOT_PARTS: [&str; 2] = ["tests", "fuzzing"];
/// `crate::dto` is the `muster-wire` crate, re-exported under that name.
const EXTERNAL_ALIASES: [&str; 1] = ["dto"];

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// The top-level modules `lib.rs` declares (`mod x;`, with any visibility).
fn declared_modules() -> BTreeSet<String> {
    let lib = fs::read_to_string(src().join("lib.rs")).expect("lib.rs is readable");
    lib.lines()
        .filter_map(|line| {
            let line = line.trim();
            let rest = line
                .strip_prefix("pub mod ")
                .or_else(|| line.strip_prefix("pub(crate) mod "))
                .or_else(|| line.strip_prefix("mod "))?;
            let name = rest.strip_suffix(';')?;
            Some(name.to_owned())
        })
        .collect()
}

/// Every `.rs` file under `dir`.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).expect("the source folder is readable") {
        let path = entry.expect("a folder entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The top-level module a file belongs to (`routes` for `src/routes/tasks.rs`), or
/// `None` for `lib.rs`.
fn owner(file: &Path) -> Option<String> {
    let relative = file.strip_prefix(src()).expect("a file under src");
    let first = relative.components().next()?.as_os_str().to_str()?;
    let name = first.strip_suffix(".rs").unwrap_or(first);
    (name != "lib").then(|| name.to_owned())
}

/// The first segment of each path that follows `crate::`: `a` and `b` in
/// `crate::a::x` and `crate::{a::x, b}`.
fn crate_paths(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("crate::") {
        let preceded_by_word = rest[..at]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$');
        rest = &rest[at + "crate::".len()..];
        if preceded_by_word {
            continue;
        }
        if let Some(group) = rest.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            for item in group[..end].split(',') {
                let head: String = item
                    .trim()
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                if !head.is_empty() {
                    found.push(head);
                }
            }
        } else {
            let head: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if !head.is_empty() {
                found.push(head);
            }
        }
    }
    found
}

/// Module → the other top-level modules its files name, and what is wrong besides.
fn imports() -> (BTreeMap<String, BTreeSet<String>>, Vec<String>) {
    let modules = declared_modules();
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    files.sort();
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut problems = Vec::new();
    for file in files {
        let Some(module) = owner(&file) else {
            continue;
        };
        let text = fs::read_to_string(&file).expect("a readable source file");
        let shown = file.strip_prefix(src()).unwrap_or(&file).display();
        if text.contains("super::super") {
            problems.push(format!(
                "{shown}: `super::super` hides where it leads; use `crate::`"
            ));
        }
        for head in crate_paths(&text) {
            if EXTERNAL_ALIASES.contains(&head.as_str()) || head == module {
                continue;
            }
            if modules.contains(&head) {
                graph.entry(module.clone()).or_default().insert(head);
            } else if !ROOT_PARTS.contains(&module.as_str()) {
                problems.push(format!(
                    "{shown}: `crate::{head}` is not a module; name the module it lives in"
                ));
            }
        }
    }
    (graph, problems)
}

#[test]
fn the_classified_modules_exist() {
    let modules = declared_modules();
    for name in ADAPTERS.iter().chain(&[ASSEMBLER]).chain(&ROOT_PARTS) {
        assert!(modules.contains(*name), "lib.rs declares no `mod {name}`");
    }
}

#[test]
fn adapters_import_neither_one_another_nor_the_assembler() {
    let (graph, _) = imports();
    let mut wrong = Vec::new();
    for adapter in ADAPTERS {
        for target in graph.get(adapter).into_iter().flatten() {
            if ADAPTERS.contains(&target.as_str()) || target == ASSEMBLER {
                wrong.push(format!("{adapter} -> {target}"));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "adapters importing what they must not: {wrong:?}"
    );
}

#[test]
fn shared_modules_import_no_adapter_nor_the_assembler() {
    let (graph, _) = imports();
    let mut wrong = Vec::new();
    for (module, targets) in &graph {
        let shared = !ADAPTERS.contains(&module.as_str())
            && module != ASSEMBLER
            && !ROOT_PARTS.contains(&module.as_str());
        if !shared {
            continue;
        }
        for target in targets {
            if ADAPTERS.contains(&target.as_str()) || target == ASSEMBLER {
                wrong.push(format!("{module} -> {target}"));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "shared modules importing an adapter or the assembler: {wrong:?}"
    );
}

/// A cycle through `module`, if the search from it finds one (`a -> b -> a`).
fn cycle_from<'a>(
    module: &'a str,
    graph: &'a BTreeMap<String, BTreeSet<String>>,
    path: &mut Vec<&'a str>,
    done: &mut BTreeSet<&'a str>,
) -> Option<Vec<&'a str>> {
    if let Some(at) = path.iter().position(|m| *m == module) {
        let mut cycle = path[at..].to_vec();
        cycle.push(module);
        return Some(cycle);
    }
    if done.contains(module) {
        return None;
    }
    path.push(module);
    for next in graph.get(module).into_iter().flatten() {
        if let Some(cycle) = cycle_from(next, graph, path, done) {
            return Some(cycle);
        }
    }
    path.pop();
    done.insert(module);
    None
}

/// Every import leads one way: the top-level modules form no cycle.
#[test]
fn the_modules_form_no_cycle() {
    let (graph, _) = imports();
    let mut done = BTreeSet::new();
    for module in graph.keys() {
        if let Some(cycle) = cycle_from(module, &graph, &mut Vec::new(), &mut done) {
            panic!("the modules import one another: {}", cycle.join(" -> "));
        }
    }
}

#[test]
fn every_import_names_its_module() {
    let (_, problems) = imports();
    assert!(problems.is_empty(), "{problems:#?}");
}

#[test]
fn the_reader_finds_imports() {
    assert_eq!(
        crate_paths("use crate::a::b; x(crate::c::d); use crate::{e::f, g};"),
        ["a", "c", "e", "g"]
    );
    assert_eq!(
        crate_paths("muster_crate::a; $crate::b"),
        Vec::<String>::new()
    );
    let (graph, _) = imports();
    assert!(
        graph.get(ASSEMBLER).is_some_and(|t| t.contains("routes")),
        "the assembler is expected to import routes: {graph:?}"
    );
}
