//! `muster worker`'s arguments.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use super::adapters::AdapterKind;
use crate::args::Connection;

/// `muster worker --adapter claude-code|codex|gemini|command [options] [-- ARGS…]`.
#[derive(Debug, Args)]
pub struct WorkerArgs {
    #[command(flatten)]
    pub connection: Connection,
    /// The agent CLI to run on each task.
    #[arg(long, value_enum)]
    pub adapter: AdapterKind,
    /// The program to run (default: `claude`, `codex` or `gemini` on `PATH`; required
    /// with `--adapter command`).
    #[arg(long = "command", value_name = "PATH")]
    pub program: Option<String>,
    /// How many tasks to work on at once (1-64).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=64))]
    pub concurrency: u16,
    /// Claim only tasks this capability covers (repeatable).
    #[arg(long = "capability", value_name = "NAME")]
    pub capabilities: Vec<String>,
    /// Claim only tasks of this project (its UUID).
    #[arg(long, value_name = "ID")]
    pub project: Option<uuid::Uuid>,
    /// The claim's lease in seconds (1-86400); the worker heartbeats at a third of it.
    #[arg(long, default_value_t = 300, value_parser = clap::value_parser!(u32).range(1..=86_400))]
    pub lease: u32,
    /// Credits to reserve for each task when claiming it (held for its run).
    #[arg(long, value_name = "CREDITS", value_parser = clap::value_parser!(i64).range(0..=1_000_000_000))]
    pub reserve: Option<i64>,
    /// Where a task goes when its run succeeds.
    #[arg(long, value_enum, default_value_t = OnSuccess::Review)]
    pub on_success: OnSuccess,
    /// Failed runs of a task before it is moved to `blocked` (1-100).
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=100))]
    pub max_attempts: u32,
    /// Where each run's workspace is made (default: `~/.cache/muster/worker`).
    #[arg(long, value_name = "DIR")]
    pub workspace_root: Option<PathBuf>,
    /// Run each task in its own git worktree of this repository, on branch
    /// `muster/<task id>`.
    #[arg(long, value_name = "PATH")]
    pub repo: Option<PathBuf>,
    /// A prompt template file (placeholders such as `{{title}}`; see docs/worker.md).
    #[arg(long, value_name = "FILE")]
    pub prompt_template: Option<PathBuf>,
    /// Seconds between two claims while there is no work (1-3600).
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..=3600))]
    pub poll: u32,
    /// Seconds a CLI gets to exit after SIGTERM before SIGKILL, and running CLIs get to
    /// finish when the worker is told to stop (0-3600).
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(0..=3600))]
    pub grace: u32,
    /// Work on one task, then exit (at once when none is claimable).
    #[arg(long)]
    pub once: bool,
    /// Pass the worker's Muster credentials (`MUSTER_AGENT_SECRET`, `MUSTER_API_KEY`,
    /// `MUSTER_PASSWORD`, `MUSTER_TOTP_CODE`) on to the CLI, for a CLI that calls
    /// Muster itself as the agent (through `muster mcp`). Off: the CLI never sees them.
    #[arg(long)]
    pub pass_credentials: bool,
    /// Arguments passed on to the CLI, after `--`.
    #[arg(last = true, value_name = "ARGS")]
    pub args: Vec<String>,
}

/// Where a task goes when its run succeeds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OnSuccess {
    /// To `review`: a person (or another agent) approves the work.
    Review,
    /// Straight to `done` (to `review` when the task requires approval).
    Done,
}

impl OnSuccess {
    /// The status's wire name.
    pub fn status(self) -> &'static str {
        match self {
            Self::Review => "review",
            Self::Done => "done",
        }
    }
}

/// The model named in the CLI's arguments (`--model X`, `--model=X`, `-m X`), if any:
/// usage is reported under it when the CLI's output does not name one.
pub fn model_in(args: &[String]) -> Option<&str> {
    let mut iter = args.iter();
    while let Some(arg) = iter.next() {
        if arg == "--model" || arg == "-m" {
            return iter.next().map(String::as_str);
        }
        if let Some(model) = arg.strip_prefix("--model=") {
            return Some(model);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::model_in;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn the_model_is_read_from_every_spelling() {
        assert_eq!(model_in(&args(&["--model", "gpt-5"])), Some("gpt-5"));
        assert_eq!(model_in(&args(&["-x", "--model=o3"])), Some("o3"));
        assert_eq!(model_in(&args(&["-m", "opus"])), Some("opus"));
        assert_eq!(model_in(&args(&["--model"])), None);
        assert_eq!(model_in(&args(&["--verbose"])), None);
    }
}
