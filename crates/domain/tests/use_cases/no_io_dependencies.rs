//! The domain crate stays free of runtimes, web frameworks and database drivers: none of
//! them may appear among its normal (non-dev, non-build) dependencies, with or without
//! its optional features.

use std::process::Command;

const FORBIDDEN: [&str; 9] = [
    "actix-web",
    "actix-http",
    "tokio",
    "diesel",
    "diesel-async",
    "hyper",
    "reqwest",
    "deadpool",
    "mio",
];

/// The output of `cargo tree` for this crate's normal dependencies, one crate a line.
fn dependency_tree(extra: &[&str]) -> String {
    let output = Command::new(env!("CARGO"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args([
            "tree",
            "-p",
            "muster-domain",
            "-e",
            "normal",
            "--prefix",
            "none",
        ])
        .args(extra)
        .output()
        .expect("cargo tree could not be started");
    assert!(
        output.status.success(),
        "cargo tree {extra:?} failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).expect("cargo tree printed invalid UTF-8")
}

/// Lines of `tree` naming a forbidden crate (`name vX.Y.Z ...`).
fn offending_lines(tree: &str) -> Vec<&str> {
    tree.lines()
        .filter(|line| {
            line.split_whitespace()
                .next()
                .is_some_and(|name| FORBIDDEN.contains(&name))
        })
        .collect()
}

fn assert_no_io_dependencies(extra: &[&str]) {
    let tree = dependency_tree(extra);
    assert!(
        tree.lines().any(|line| line.starts_with("muster-domain v")),
        "unexpected cargo tree {extra:?} output:\n{tree}"
    );
    let offending = offending_lines(&tree);
    assert!(
        offending.is_empty(),
        "muster-domain must not depend on I/O crates, but `cargo tree {extra:?}` lists:\n  {}",
        offending.join("\n  ")
    );
}

#[test]
fn default_features_pull_no_io_crates() {
    assert_no_io_dependencies(&[]);
}

#[test]
fn all_features_pull_no_io_crates() {
    assert_no_io_dependencies(&["--all-features"]);
}

#[test]
fn the_check_recognizes_forbidden_crates() {
    let tree = "muster-domain v0.1.0 (/x)\ntokio v1.54.0 (*)\ntokio-util v0.7.0\nserde v1.0.0";
    assert_eq!(offending_lines(tree), ["tokio v1.54.0 (*)"]);
}
