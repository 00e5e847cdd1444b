//! `cargo xtask client-deps`: `muster-client` stays lean (issue 63, item 7).
//!
//! A program that only talks to a Muster server compiles the client, its wire types and
//! the signing recipe, and none of the server's machinery. The step reads the client's
//! normal (not dev, not build) dependency tree with `cargo tree` and refuses any crate of
//! the families below: password hashing, token minting, the database, the web
//! framework, the OpenAPI generator, and the server-side credential crate that pulls
//! them in.
//!
//! Then it checks that the client compiles on its own (`cargo check -p muster-client`):
//! the workspace's builds turn on `muster-wire`'s `openapi` feature for the server, so
//! only this shows that the wire types still compile without it (a bare `#[schema(...)]`
//! on a wire type would not). Both take seconds after clippy's run.

use std::process::Command;

use crate::command::{cargo, run_cargo};

/// The package whose tree is checked.
const PACKAGE: &str = "muster-client";

/// Crates the client's tree must not hold: each name refuses itself and every crate
/// named `<name>-…` or `<name>_…` (`diesel` refuses `diesel-async` and
/// `diesel_migrations`, `actix` every `actix-*`).
const REFUSED: [&str; 7] = [
    "argon2",
    "jsonwebtoken",
    "diesel",
    "actix",
    "utoipa",
    "muster-auth",
    "muster-persistence",
];

pub fn check() -> Result<(), String> {
    let args = ["tree", "-p", PACKAGE, "-e", "normal", "--prefix", "none"];
    eprintln!("xtask: cargo {}", args.join(" "));
    let output = Command::new(cargo())
        .args(args)
        .output()
        .map_err(|e| format!("cannot run `cargo tree`: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "`cargo tree -p {PACKAGE}` failed ({}): {}",
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        ));
    }
    let tree = String::from_utf8_lossy(&output.stdout);
    let found = refused_in(&tree);
    if found.is_empty() {
        eprintln!(
            "xtask: {PACKAGE} is lean: {} crates, none of {}",
            crates_in(&tree).len(),
            REFUSED.join(", ")
        );
        run_cargo(&["check", "-p", PACKAGE], &[])
    } else {
        Err(format!(
            "{PACKAGE} depends on {} (refused: {}); see `cargo tree -p {PACKAGE} -e normal -i <crate>`",
            found.join(", "),
            REFUSED.join(", ")
        ))
    }
}

/// The distinct crate names of a `cargo tree --prefix none` listing, sorted.
fn crates_in(tree: &str) -> Vec<&str> {
    let mut names: Vec<&str> = tree
        .lines()
        .filter_map(|line| line.split_whitespace().next())
        .collect();
    names.sort_unstable();
    names.dedup();
    names
}

/// The crates of `tree` that [`REFUSED`] names, sorted and distinct.
fn refused_in(tree: &str) -> Vec<&str> {
    crates_in(tree)
        .into_iter()
        .filter(|name| REFUSED.iter().any(|refused| is_of(name, refused)))
        .collect()
}

/// Whether `name` is `family` or one of its `family-…` / `family_…` crates.
fn is_of(name: &str, family: &str) -> bool {
    name.strip_prefix(family)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with(['-', '_']))
}

#[cfg(test)]
mod tests {
    use super::*;

    const LEAN: &str = "muster-client v0.1.0 (/work/crates/client)\n\
        muster-signing v0.1.0 (/work/crates/signing)\n\
        ring v0.17.14\n\
        reqwest v0.13.1\n\
        serde v1.0.228\n\
        serde v1.0.228\n\
        actixx v1.0.0\n\
        argon2id-lookalike v0.1.0\n";

    #[test]
    fn a_lean_tree_passes_and_lists_each_crate_once() {
        assert!(refused_in(LEAN).is_empty());
        assert_eq!(
            crates_in(LEAN)
                .iter()
                .filter(|name| **name == "serde")
                .count(),
            1
        );
    }

    #[test]
    fn every_refused_family_is_caught_with_its_members() {
        let tree = format!(
            "{LEAN}argon2 v0.6.0\njsonwebtoken v11.0.0\ndiesel v2.3.0\ndiesel-async v0.9.0\n\
             diesel_migrations v2.3.0\nactix-web v4.18.0\nactix-http v3.11.0\nutoipa v6.0.0\n\
             utoipa-gen v6.0.0\nmuster-auth v0.1.0 (/work/crates/auth)\n"
        );
        assert_eq!(
            refused_in(&tree),
            [
                "actix-http",
                "actix-web",
                "argon2",
                "diesel",
                "diesel-async",
                "diesel_migrations",
                "jsonwebtoken",
                "muster-auth",
                "utoipa",
                "utoipa-gen",
            ]
        );
    }

    #[test]
    fn a_family_is_a_whole_name_or_a_dashed_or_underscored_prefix() {
        assert!(is_of("actix", "actix"));
        assert!(is_of("actix-rt", "actix"));
        assert!(is_of("diesel_derives", "diesel"));
        assert!(!is_of("actixx", "actix"));
        assert!(!is_of("argon2id-lookalike", "argon2"));
        assert!(!is_of("muster-authority", "muster-auth"));
    }
}
