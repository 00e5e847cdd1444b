//! `cargo xtask domain`: the checks that keep `muster-domain` good to embed.
//!
//! - its documentation, and that of the in-memory adapter `muster-memory` embedders test
//!   it with, builds with rustdoc warnings denied, with its features (both crates deny
//!   missing docs, so an undocumented public item already fails the build);
//! - its examples run (`crates/domain/examples/`), and `muster-memory`'s
//!   (`crates/memory/examples/`);
//! - its public API is compared with the previous tagged release (`v*` before HEAD)
//!   by cargo-semver-checks, installed at a pinned version when missing. Before the
//!   first tagged release there is nothing to compare with, and the step says so.

use std::process::Command;

use crate::command::{self, cargo};

/// The cargo-semver-checks release this task was written against.
const SEMVER_CHECKS_VERSION: &str = "0.51.0";

/// The package this task checks.
const PACKAGE: &str = "muster-domain";

/// The in-memory adapter of its ports, whose docs and example are checked with it.
const MEMORY: &str = "muster-memory";

/// The examples, by package, each run to completion.
const EXAMPLES: [(&str, &str); 2] = [(MEMORY, "embedded"), (PACKAGE, "mocked_rule")];

pub fn check() -> Result<(), String> {
    run(Command::new(cargo())
        .args([
            "doc",
            "--package",
            PACKAGE,
            "--package",
            MEMORY,
            "--no-deps",
            "--all-features",
        ])
        .env("RUSTDOCFLAGS", "-D warnings"))?;
    // Each example is run as the workspace's build made it (no `--package`: the
    // workspace's features, so `cargo xtask ci` finds it built): run with `--package`,
    // cargo resolved that package's features alone and compiled it and a good part of
    // its dependencies again (52 s of a cold run). Whether each crate compiles with its
    // own features alone is what the docs above show.
    for (package, example) in EXAMPLES {
        eprintln!("xtask: {package}'s example {example}");
        run(Command::new(cargo()).args([
            "run",
            "--quiet",
            "--all-features",
            "--example",
            example,
        ]))?;
    }
    semver()
}

/// Compares the public API with the previous tagged release, when there is one.
fn semver() -> Result<(), String> {
    let Some(baseline) = previous_release() else {
        eprintln!("xtask: no tagged release (v*) before HEAD yet: no API to compare with");
        return Ok(());
    };
    ensure_semver_checks()?;
    run(Command::new(cargo()).args([
        "semver-checks",
        "check-release",
        "--package",
        PACKAGE,
        "--baseline-rev",
        &baseline,
    ]))
}

/// The newest `v*` tag reachable from HEAD's parent: the release before this commit,
/// even when HEAD is itself tagged.
fn previous_release() -> Option<String> {
    let output = Command::new("git")
        .args(["describe", "--tags", "--abbrev=0", "--match", "v*", "HEAD^"])
        .output()
        .ok()?;
    let tag = String::from_utf8(output.stdout).ok()?.trim().to_owned();
    (output.status.success() && !tag.is_empty()).then_some(tag)
}

fn ensure_semver_checks() -> Result<(), String> {
    let installed = Command::new(cargo())
        .args(["semver-checks", "--version"])
        .output()
        .is_ok_and(|output| output.status.success());
    if installed {
        return Ok(());
    }
    eprintln!("xtask: installing cargo-semver-checks {SEMVER_CHECKS_VERSION}");
    run(Command::new(cargo()).args([
        "install",
        "cargo-semver-checks",
        "--version",
        SEMVER_CHECKS_VERSION,
        "--locked",
    ]))
}

/// Runs `command`, announced as cargo would show it.
fn run(command: &mut Command) -> Result<(), String> {
    let shown = format!("{command:?}");
    command::run(command, &shown)
}
