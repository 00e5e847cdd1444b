//! `cargo xtask mutants`: mutation testing of the rules with cargo-mutants.
//!
//! Each package is mutated and tested with its OWN tests only (a rule in the domain must
//! be caught by the domain's tests, not by an HTTP test three crates away). The score is
//! caught / viable, where viable = caught + missed + timed out (a mutant that hangs the
//! tests counts as caught: the suite noticed). Exclusions live in `.cargo/mutants.toml`,
//! each with its reason. cargo-mutants is installed at a pinned version when missing.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail};
use clap::Args;

use crate::command::cargo;

/// The cargo-mutants release this task was written against.
const CARGO_MUTANTS_VERSION: &str = "27.1.0";

/// The packages measured by default.
/// (`muster-signing` is the request-signing recipe that left `muster-auth`.)
const DEFAULT_PACKAGES: [&str; 3] = ["muster-domain", "muster-auth", "muster-signing"];

/// `cargo xtask mutants` options.
#[derive(Debug, Args)]
pub struct MutantsArgs {
    /// A package to mutate (repeatable); default: muster-domain, muster-auth and
    /// muster-signing.
    #[arg(long = "package", short = 'p')]
    packages: Vec<String>,
    /// Mutate only this file (repeatable, a glob relative to the workspace root).
    #[arg(long = "file", short = 'f')]
    files: Vec<String>,
    /// Mutants built and tested at once.
    #[arg(long, short = 'j', default_value_t = 2)]
    jobs: u8,
    /// Fail when a package's score is below this percentage.
    #[arg(long, default_value_t = 95.0)]
    min_score: f64,
    /// Run one slice of the mutants, `K/N` with K from 0 to N-1 (cargo-mutants'
    /// sharding), so that a whole run at one commit can be spread over several
    /// sittings or machines. The score gate is not applied to a shard alone.
    #[arg(long, value_parser = parse_shard)]
    shard: Option<(u32, u32)>,
}

/// `K/N` with `K < N`.
fn parse_shard(value: &str) -> Result<(u32, u32), String> {
    let (k, n) = value
        .split_once('/')
        .ok_or_else(|| format!("a shard is K/N, not {value:?}"))?;
    let k: u32 = k
        .trim()
        .parse()
        .map_err(|_| format!("K of {value:?} is not a number"))?;
    let n: u32 = n
        .trim()
        .parse()
        .map_err(|_| format!("N of {value:?} is not a number"))?;
    if n == 0 || k >= n {
        return Err(format!("a shard K/N needs 0 <= K < N, not {value:?}"));
    }
    Ok((k, n))
}

/// The counts of one package's run.
#[derive(Debug, Default)]
struct Score {
    caught: Vec<String>,
    missed: Vec<String>,
    timeout: Vec<String>,
    unviable: Vec<String>,
}

impl Score {
    fn read(dir: &Path) -> anyhow::Result<Self> {
        let list = |name: &str| -> anyhow::Result<Vec<String>> {
            let path = dir.join(name);
            if !path.exists() {
                return Ok(Vec::new());
            }
            let text = std::fs::read_to_string(&path)
                .with_context(|| format!("reading {}", path.display()))?;
            Ok(text
                .lines()
                .filter(|line| !line.trim().is_empty())
                .map(str::to_owned)
                .collect())
        };
        Ok(Self {
            caught: list("caught.txt")?,
            missed: list("missed.txt")?,
            timeout: list("timeout.txt")?,
            unviable: list("unviable.txt")?,
        })
    }

    fn viable(&self) -> usize {
        self.caught.len() + self.missed.len() + self.timeout.len()
    }

    /// Caught (including timeouts) per viable mutant, in percent; 100 with none viable.
    #[allow(clippy::cast_precision_loss)] // counts are far below 2^52
    fn percent(&self) -> f64 {
        let viable = self.viable();
        if viable == 0 {
            return 100.0;
        }
        (self.caught.len() + self.timeout.len()) as f64 * 100.0 / viable as f64
    }
}

pub fn run(args: &MutantsArgs) -> anyhow::Result<bool> {
    let root = crate::bench::workspace_root();
    ensure_cargo_mutants()?;
    let packages: Vec<String> = if args.packages.is_empty() {
        DEFAULT_PACKAGES.iter().map(|p| (*p).to_owned()).collect()
    } else {
        args.packages.clone()
    };
    let mut passed = true;
    let mut summary = Vec::new();
    for package in &packages {
        let mut out = output_dir(&root, package)?;
        if let Some((k, n)) = args.shard {
            out = out.join(format!("shard-{k}-of-{n}"));
        }
        std::fs::create_dir_all(&out).with_context(|| format!("creating {}", out.display()))?;
        eprintln!("xtask: mutants of {package} (output in {})", out.display());
        let mut command = Command::new(cargo());
        command
            .current_dir(&root)
            .args(["mutants", "--package", package, "--jobs"])
            .arg(args.jobs.to_string())
            .arg("--output")
            .arg(&out);
        for file in &args.files {
            command.args(["--file", file]);
        }
        if let Some((k, n)) = args.shard {
            command.arg("--shard").arg(format!("{k}/{n}"));
        }
        // cargo-mutants exits 2 when a mutant is missed and 3 on a timeout: the score
        // below is the verdict, so only a failure to run at all stops here.
        let status = command.status().context("running cargo mutants")?;
        if !matches!(status.code(), Some(0 | 2 | 3)) {
            bail!("cargo mutants on {package} failed: {status}");
        }
        let score = Score::read(&out.join("mutants.out"))?;
        let percent = score.percent();
        if percent < args.min_score && args.shard.is_none() {
            passed = false;
        }
        summary.push((package.clone(), score));
    }
    println!();
    println!("| package | mutants | unviable | caught | timed out | missed | score |");
    println!("|---|---:|---:|---:|---:|---:|---:|");
    for (package, score) in &summary {
        println!(
            "| {package} | {} | {} | {} | {} | {} | {:.1} % |",
            score.viable() + score.unviable.len(),
            score.unviable.len(),
            score.caught.len(),
            score.timeout.len(),
            score.missed.len(),
            score.percent(),
        );
    }
    for (package, score) in &summary {
        if score.missed.is_empty() {
            continue;
        }
        println!("\nmissed in {package}:");
        for mutant in &score.missed {
            println!("  {mutant}");
        }
    }
    if let Some((k, n)) = args.shard {
        eprintln!(
            "xtask: this was shard {k}/{n}: add up the counts of all {n} shards (run at one \
             commit) for the score the {:.0} % gate applies to",
            args.min_score
        );
    }
    if !passed {
        eprintln!(
            "xtask: a package scored below {:.0} % (see the missed mutants above)",
            args.min_score
        );
    }
    Ok(passed)
}

fn output_dir(root: &Path, package: &str) -> anyhow::Result<PathBuf> {
    Ok(crate::bench::server::target_dir(root)?
        .join("mutants")
        .join(package))
}

/// Installs cargo-mutants at the pinned version unless some version answers already.
fn ensure_cargo_mutants() -> anyhow::Result<()> {
    let installed = Command::new(cargo())
        .args(["mutants", "--version"])
        .output()
        .is_ok_and(|out| out.status.success());
    if installed {
        return Ok(());
    }
    eprintln!("xtask: installing cargo-mutants {CARGO_MUTANTS_VERSION}");
    let status = Command::new(cargo())
        .args([
            "install",
            "cargo-mutants",
            "--locked",
            "--version",
            CARGO_MUTANTS_VERSION,
        ])
        .status()
        .context("running cargo install cargo-mutants")?;
    if !status.success() {
        bail!("cargo install cargo-mutants failed: {status}");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{Score, parse_shard};

    fn named(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("mutant {i}")).collect()
    }

    #[test]
    fn the_score_counts_timeouts_as_caught_and_leaves_unviable_out() {
        let score = Score {
            caught: named(90),
            missed: named(5),
            timeout: named(5),
            unviable: named(40),
        };
        assert_eq!(score.viable(), 100);
        assert!((score.percent() - 95.0).abs() < 1e-9);
        let nothing = Score::default();
        assert!((nothing.percent() - 100.0).abs() < 1e-9, "no viable mutant");
    }

    #[test]
    fn a_shard_is_k_of_n_counted_from_zero() {
        assert_eq!(parse_shard("0/3"), Ok((0, 3)));
        assert_eq!(parse_shard("2/3"), Ok((2, 3)));
        for wrong in ["3/3", "1/0", "3", "a/3", "1/b", "-1/3"] {
            assert!(parse_shard(wrong).is_err(), "{wrong}");
        }
    }
}
