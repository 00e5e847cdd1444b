//! `muster task …`, `muster agent …`, `muster project …`, `muster run …`, `muster usage` and
//! `muster events tail`: the API from a shell.
//!
//! Credentials and the server come from the environment or from a profile of
//! `~/.config/muster/config.toml` (see [`config`]); output is a table for people or,
//! with `--json`, the API's own JSON for scripts. A refusal prints the API's message
//! and the command exits non-zero.

mod agent;
pub mod args;
pub mod config;
mod events;
mod mcp;
mod output;
mod projects;
mod routines;
mod runs;
mod task;
#[cfg(test)]
mod tests;
mod usage;
pub mod worker;

pub use args::{
    AgentArgs, Connection, EventsArgs, ProjectArgs, RoutineArgs, RunArgs, TaskArgs, UsageArgs,
};
pub use worker::WorkerArgs;

/// Runs `muster task …`.
pub async fn task(args: TaskArgs) -> anyhow::Result<()> {
    let client = config::connect(&args.connection).await?;
    task::run(&client, args.command, args.connection.json).await
}

/// Runs `muster agent …`.
pub async fn agent(args: AgentArgs) -> anyhow::Result<()> {
    let client = config::connect(&args.connection).await?;
    agent::run(&client, args.command, args.connection.json).await
}

/// Runs `muster project …`.
pub async fn project(args: ProjectArgs) -> anyhow::Result<()> {
    let client = config::connect(&args.connection).await?;
    projects::run(&client, args.command, args.connection.json).await
}

/// Runs `muster routine …`.
pub async fn routine(args: RoutineArgs) -> anyhow::Result<()> {
    let client = config::connect(&args.connection).await?;
    routines::run(&client, args.command, args.connection.json).await
}

/// Runs `muster run …`.
pub async fn runs(args: RunArgs) -> anyhow::Result<()> {
    let client = config::connect(&args.connection).await?;
    runs::run(&client, args.command, args.connection.json).await
}

/// Runs `muster usage`.
pub async fn usage(args: UsageArgs) -> anyhow::Result<()> {
    let client = config::connect(&args.connection).await?;
    usage::run(&client, args).await
}

/// Runs `muster mcp`: an MCP server on stdin/stdout for a local agent, relaying each
/// message to the server's `/mcp` with the credentials of the environment or profile.
pub async fn mcp(connection: Connection) -> anyhow::Result<()> {
    let client = config::connect(&connection).await?;
    mcp::relay(&client).await
}

/// Runs `muster events …`.
pub async fn events(args: EventsArgs) -> anyhow::Result<()> {
    let client = config::connect(&args.connection).await?;
    events::run(&client, args.command, args.connection.json).await
}

/// Runs `muster worker`: claims tasks and runs an agent CLI on each (see [`worker`]).
pub async fn worker(args: WorkerArgs) -> anyhow::Result<()> {
    worker::run(args).await
}
