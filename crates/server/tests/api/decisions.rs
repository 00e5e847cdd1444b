//! Every decision number the code cites (`D-81`) is written down in docs/decisions.md,
//! so a reader can look it up.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

/// Every `D-<n>` (and `D-<n>a`) in `text`, as written.
fn cited(text: &str) -> BTreeSet<String> {
    let bytes = text.as_bytes();
    let mut found = BTreeSet::new();
    let mut at = 0;
    while let Some(offset) = text[at..].find("D-") {
        let start = at + offset;
        at = start + 2;
        // A word boundary before it: not part of `XD-1` or an identifier.
        if start > 0 && (bytes[start - 1].is_ascii_alphanumeric() || bytes[start - 1] == b'_') {
            continue;
        }
        let digits = text[at..].bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            continue;
        }
        let mut end = at + digits;
        if bytes.get(end) == Some(&b'a') {
            end += 1;
        }
        // `D-105b` or `D-7x` is some other word, not a citation.
        if bytes
            .get(end)
            .is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'_')
        {
            continue;
        }
        found.insert(text[start..end].to_owned());
    }
    found
}

fn rust_files(dir: &Path, into: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if path.is_dir() {
            if name != "target" && !name.starts_with('.') && name != "node_modules" {
                rust_files(&path, into);
            }
        } else if path.extension().is_some_and(|e| e == "rs") {
            into.push(path);
        }
    }
}

/// The numbers `docs/decisions.md` defines: each entry starts `- **D-n `.
fn defined(doc: &str) -> BTreeSet<String> {
    doc.lines()
        .filter_map(|line| line.trim_start().strip_prefix("- **"))
        .flat_map(|rest| cited(rest.split("**").next().unwrap_or("")))
        .collect()
}

#[test]
fn every_cited_decision_is_in_the_decisions_doc() {
    let root = workspace();
    let doc = std::fs::read_to_string(root.join("docs/decisions.md")).unwrap();
    let defined = defined(&doc);
    assert!(
        defined.len() > 50,
        "the doc defines {} decisions",
        defined.len()
    );
    let mut files = Vec::new();
    for dir in ["crates", "xtask", "fuzz"] {
        if root.join(dir).is_dir() {
            rust_files(&root.join(dir), &mut files);
        }
    }
    assert!(files.len() > 100, "found {} Rust files", files.len());
    let mut missing = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        for number in cited(&text) {
            if !defined.contains(&number) {
                missing.push(format!(
                    "{number} in {}",
                    file.strip_prefix(&root).unwrap().display()
                ));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "cited but not in docs/decisions.md:\n{}",
        missing.join("\n")
    );
}

#[test]
fn citations_are_read_as_written() {
    assert_eq!(
        cited("see D-81, D-10a and (D-7); not XD-3, D-x or D-105b"),
        ["D-10a", "D-7", "D-81"]
            .into_iter()
            .map(String::from)
            .collect()
    );
    assert_eq!(
        defined("- **D-1 Title.** text D-2\n  - **D-3 Other** x\n- D-4 plain"),
        ["D-1", "D-3"].into_iter().map(String::from).collect()
    );
}
