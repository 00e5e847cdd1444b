//! Every `MUSTER_*` variable the code reads is in `docs/configuration.md`, and the page
//! names none that the code no longer reads.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The `MUSTER_*` names in `text`.
fn names(text: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    let mut rest = text;
    while let Some(at) = rest.find("MUSTER_") {
        let tail = &rest[at..];
        let end = tail
            .find(|c: char| !(c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_'))
            .unwrap_or(tail.len());
        let name = tail[..end].trim_end_matches('_');
        if name.len() > "MUSTER_".len() {
            found.insert(name.to_owned());
        }
        rest = &tail[end..];
    }
    found
}

/// The `.rs` files under `dir`, recursively.
fn sources(dir: &Path, into: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, into);
        } else if path.extension().is_some_and(|e| e == "rs") {
            into.push(path);
        }
    }
}

#[test]
fn every_setting_the_code_reads_is_documented_and_no_other() {
    let root = workspace();
    let mut files = Vec::new();
    sources(&root.join("xtask/src"), &mut files);
    for krate in std::fs::read_dir(root.join("crates")).unwrap() {
        let src = krate.unwrap().path().join("src");
        if src.is_dir() {
            sources(&src, &mut files);
        }
    }
    let mut read = BTreeSet::new();
    for file in &files {
        read.extend(names(&std::fs::read_to_string(file).unwrap()));
    }
    assert!(
        read.contains("MUSTER_DATABASE_URL"),
        "the scan found nothing"
    );
    let page = std::fs::read_to_string(root.join("docs/configuration.md")).unwrap();
    let documented = names(&page);
    let undocumented: Vec<_> = read.difference(&documented).collect();
    assert!(
        undocumented.is_empty(),
        "read by the code but missing from docs/configuration.md: {undocumented:?}"
    );
    let stale: Vec<_> = documented.difference(&read).collect();
    assert!(
        stale.is_empty(),
        "in docs/configuration.md but read nowhere: {stale:?}"
    );
}
