//! The commands' arguments (clap).

use clap::{Args, Subcommand};
use muster_client::types::model::{
    AgentMode, AgentRole, AgentStatus, CatchUp, Proficiency, ProjectStatus, RunStatus, TaskOutcome,
    TaskPriority, TaskStatus,
};
use muster_client::types::runs::UsageGrouping;
use serde::de::DeserializeOwned;
use uuid::Uuid;

/// Where the server is and who to be; shared by every client command.
#[derive(Debug, Args)]
pub struct Connection {
    /// The server's base URL (default: the profile's, else `http://127.0.0.1:8080`).
    #[arg(long, env = "MUSTER_SERVER", global = true)]
    pub server: Option<String>,
    /// The profile of the config file to use (default: its `default`, else "default").
    #[arg(long, env = "MUSTER_PROFILE", global = true)]
    pub profile: Option<String>,
    /// The config file (default: `$XDG_CONFIG_HOME/muster/config.toml` or
    /// `~/.config/muster/config.toml`).
    #[arg(long, env = "MUSTER_CONFIG", global = true)]
    pub config: Option<std::path::PathBuf>,
    /// Print the API's JSON instead of a table.
    #[arg(long, global = true)]
    pub json: bool,
}

/// `muster task …`.
#[derive(Debug, Args)]
pub struct TaskArgs {
    #[command(flatten)]
    pub connection: Connection,
    #[command(subcommand)]
    pub command: TaskCommand,
}

/// What to do with tasks.
#[derive(Debug, Subcommand)]
pub enum TaskCommand {
    /// List tasks, newest first.
    List {
        /// Only tasks in this status (`todo`, `in_progress`, `review`, `done`, …).
        #[arg(long, value_parser = wire::<TaskStatus>)]
        status: Option<TaskStatus>,
        /// Only tasks assigned to this agent (UUID).
        #[arg(long)]
        assignee: Option<Uuid>,
        /// Only tasks of this project (UUID).
        #[arg(long)]
        project: Option<Uuid>,
        /// How many (1-500; default 50).
        #[arg(long)]
        limit: Option<u32>,
        /// The next page: the cursor the previous one ended with.
        #[arg(long)]
        cursor: Option<String>,
    },
    /// Show one task.
    Show {
        /// The task's id.
        id: Uuid,
    },
    /// Create a task.
    Create {
        /// Its title.
        title: String,
        /// A longer description.
        #[arg(long)]
        description: Option<String>,
        /// urgent, high, normal (default) or low.
        #[arg(long, value_parser = wire::<TaskPriority>)]
        priority: Option<TaskPriority>,
        /// Assign it to this agent (UUID).
        #[arg(long)]
        assignee: Option<Uuid>,
        /// A tag (repeat for more).
        #[arg(long = "tag")]
        tags: Vec<String>,
        /// Credits for whoever finishes it, escrowed from your balance (an agent) or the
        /// organization's treasury (0 to 1,000,000,000; default: the organization's
        /// default reward, when the payer can fund it).
        #[arg(long, value_parser = clap::value_parser!(i64).range(0..=1_000_000_000))]
        reward: Option<i64>,
        /// Put it in this project (UUID; an active one).
        #[arg(long)]
        project: Option<Uuid>,
    },
    /// Move a task to another status.
    Move {
        /// The task's id.
        id: Uuid,
        /// The new status.
        #[arg(value_parser = wire::<TaskStatus>)]
        status: TaskStatus,
        /// Why (kept in the audit log).
        #[arg(long)]
        reason: Option<String>,
        /// What came of the task (replaces its result).
        #[arg(long)]
        result: Option<String>,
        /// How a cancelled task ended: failed or rejected (with `cancelled` only).
        #[arg(long, value_parser = wire::<TaskOutcome>)]
        outcome: Option<TaskOutcome>,
    },
    /// Comment on a task.
    Comment {
        /// The task's id.
        id: Uuid,
        /// The comment.
        body: String,
    },
    /// Claim the next task this agent may take (agents only).
    Claim {
        /// Only tasks needing this capability (repeat for more).
        #[arg(long = "capability")]
        capabilities: Vec<String>,
        /// How long the lease lasts, in seconds.
        #[arg(long)]
        lease_seconds: Option<i64>,
        /// Credits to hold for the task: its first run takes them over, and they go
        /// back if the task leaves this agent without one.
        #[arg(long = "reserve", value_name = "CREDITS")]
        reserve_credits: Option<i64>,
        /// Only a task of this project (UUID).
        #[arg(long)]
        project: Option<Uuid>,
    },
}

/// `muster agent …`.
#[derive(Debug, Args)]
pub struct AgentArgs {
    #[command(flatten)]
    pub connection: Connection,
    #[command(subcommand)]
    pub command: AgentCommand,
}

/// What to do with agents.
#[derive(Debug, Subcommand)]
pub enum AgentCommand {
    /// List the organization's agents.
    List {
        /// Only agents in this status (active, pending, suspended, revoked).
        #[arg(long, value_parser = wire::<AgentStatus>)]
        status: Option<AgentStatus>,
        /// How many (default 50).
        #[arg(long)]
        limit: Option<u32>,
        /// The next page: the cursor the previous one ended with.
        #[arg(long)]
        cursor: Option<String>,
    },
    /// Show one agent.
    Show {
        /// The agent's id (UUID).
        id: Uuid,
    },
    /// Register an agent (an HR agent or an admin); prints its secret once.
    Register {
        #[command(flatten)]
        agent: NewAgentArgs,
        /// Its role (worker, manager, hr, …).
        #[arg(long, value_parser = wire::<AgentRole>)]
        role: Option<AgentRole>,
    },
    /// Spawn a child of the calling agent; prints its secret once.
    Spawn {
        #[command(flatten)]
        agent: NewAgentArgs,
    },
}

/// What a new agent is.
#[derive(Debug, Args)]
pub struct NewAgentArgs {
    /// Its handle (`X-Agent-ID`), e.g. builder-2.
    pub agent_id: String,
    /// Its display name.
    pub name: String,
    /// Its level (1-10).
    #[arg(long)]
    pub level: Option<i64>,
    /// The model it runs on.
    #[arg(long)]
    pub model: Option<String>,
    /// worker or orchestrator.
    #[arg(long, value_parser = wire::<AgentMode>)]
    pub mode: Option<AgentMode>,
    /// A capability, as `name` or `name:proficiency` (basic, standard, expert); repeat
    /// for more.
    #[arg(long = "capability", value_parser = capability)]
    pub capabilities: Vec<(String, Option<Proficiency>)>,
}

/// `muster events …`.
#[derive(Debug, Args)]
pub struct EventsArgs {
    #[command(flatten)]
    pub connection: Connection,
    #[command(subcommand)]
    pub command: EventsCommand,
}

/// What to do with the audit log.
#[derive(Debug, Subcommand)]
pub enum EventsCommand {
    /// Print events as they happen, until interrupted.
    Tail {
        /// Only this event type (e.g. task.created).
        #[arg(long = "type")]
        event_type: Option<String>,
        /// Only events about this entity (UUID).
        #[arg(long)]
        entity_id: Option<Uuid>,
        /// Start right after this event instead of now.
        #[arg(long)]
        after: Option<Uuid>,
    },
}

/// `muster project …`.
#[derive(Debug, Args)]
pub struct ProjectArgs {
    #[command(flatten)]
    pub connection: Connection,
    #[command(subcommand)]
    pub command: ProjectCommand,
}

/// What to do with projects: tasks grouped under a goal.
#[derive(Debug, Subcommand)]
pub enum ProjectCommand {
    /// List the organization's projects, newest first.
    List {
        /// Only projects in this status (active, archived).
        #[arg(long, value_parser = wire::<ProjectStatus>)]
        status: Option<ProjectStatus>,
        /// How many (1-500; default 100).
        #[arg(long)]
        limit: Option<u32>,
        /// The next page: the cursor the previous one ended with.
        #[arg(long)]
        cursor: Option<String>,
    },
    /// Show a project with its progress.
    Show {
        /// The project's id.
        id: Uuid,
    },
    /// Create a project.
    Create {
        /// Its name.
        name: String,
        /// What it is for.
        #[arg(long)]
        goal: Option<String>,
        /// A longer description.
        #[arg(long)]
        description: Option<String>,
        /// When it should be done (ISO 8601, or a date).
        #[arg(long)]
        due: Option<String>,
    },
    /// Change a project's name, goal, description or due date.
    Update {
        /// The project's id.
        id: Uuid,
        /// A new name.
        #[arg(long)]
        name: Option<String>,
        /// A new goal.
        #[arg(long)]
        goal: Option<String>,
        /// A new description.
        #[arg(long)]
        description: Option<String>,
        /// A new due date (ISO 8601, or a date).
        #[arg(long)]
        due: Option<String>,
    },
    /// Archive a project: its tasks stay, no task joins it any more.
    Archive {
        /// The project's id.
        id: Uuid,
    },
}

/// `muster routine …`.
#[derive(Debug, Args)]
pub struct RoutineArgs {
    #[command(flatten)]
    pub connection: Connection,
    #[command(subcommand)]
    pub command: RoutineCommand,
}

/// What to do with routines: work that recurs on a cron schedule.
#[derive(Debug, Subcommand)]
pub enum RoutineCommand {
    /// List the organization's routines, newest first.
    List {
        /// How many (1-500; default 100).
        #[arg(long)]
        limit: Option<u32>,
        /// The next page: the cursor the previous one ended with.
        #[arg(long)]
        cursor: Option<String>,
    },
    /// Show one routine.
    Show {
        /// The routine's id.
        id: Uuid,
    },
    /// Create a routine that creates a task at each due time of a cron schedule.
    Create {
        /// Its name.
        name: String,
        /// A cron expression: five fields, or six with seconds first (quote it).
        #[arg(long)]
        schedule: String,
        /// An IANA time zone (default UTC).
        #[arg(long)]
        timezone: Option<String>,
        /// The title of the task it creates (or give --template).
        #[arg(long)]
        title: Option<String>,
        /// The task's description.
        #[arg(long)]
        description: Option<String>,
        /// The task's priority.
        #[arg(long, value_parser = wire::<TaskPriority>)]
        priority: Option<TaskPriority>,
        /// The project each task joins (UUID).
        #[arg(long)]
        project: Option<Uuid>,
        /// A template to make each task from (UUID), instead of --title.
        #[arg(long)]
        template: Option<Uuid>,
        /// What the due times missed while the service was down get: skip, one, all.
        #[arg(long, value_parser = wire::<CatchUp>)]
        catch_up: Option<CatchUp>,
        /// Create it switched off.
        #[arg(long)]
        disabled: bool,
    },
    /// Switch a routine on (clears why it was paused).
    Enable {
        /// The routine's id.
        id: Uuid,
    },
    /// Switch a routine off.
    Disable {
        /// The routine's id.
        id: Uuid,
    },
    /// Run a routine once, now: prints the task it created.
    Run {
        /// The routine's id.
        id: Uuid,
    },
    /// Delete a routine (the tasks it created stay).
    Delete {
        /// The routine's id.
        id: Uuid,
    },
}

/// `muster run …`.
#[derive(Debug, Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub connection: Connection,
    #[command(subcommand)]
    pub command: RunCommand,
}

/// What to do with runs: one attempt at a task by its assignee, with its log and usage.
#[derive(Debug, Subcommand)]
pub enum RunCommand {
    /// Start a run of a task this agent holds in progress (agents only).
    Start {
        /// The task's id.
        task: Uuid,
        /// What runs it: claude-code, codex, gemini, a command…
        #[arg(long)]
        adapter: Option<String>,
        /// The model it uses.
        #[arg(long)]
        model: Option<String>,
        /// Credits to hold for the run's usage, released at finish (0 to 1,000,000,000).
        #[arg(long, value_parser = clap::value_parser!(i64).range(0..=1_000_000_000))]
        reserve: Option<i64>,
    },
    /// Show one run.
    Get {
        /// The run's id.
        id: Uuid,
    },
    /// List runs, newest first.
    List {
        /// Only this task's runs (UUID).
        #[arg(long)]
        task: Option<Uuid>,
        /// Only this agent's runs (UUID).
        #[arg(long)]
        agent: Option<Uuid>,
        /// Only runs in this status (running, succeeded, failed, cancelled, stopped, lost).
        #[arg(long, value_parser = wire::<RunStatus>)]
        status: Option<RunStatus>,
        /// How many (1-500; default 100).
        #[arg(long)]
        limit: Option<u32>,
        /// The next page: the cursor the previous one ended with.
        #[arg(long)]
        cursor: Option<String>,
    },
    /// Print a run's log, one `stream text` line each.
    Log {
        /// The run's id.
        id: Uuid,
        /// Keep printing new lines as they are appended (a live stream that resumes
        /// by itself after a dropped connection) until the run ends.
        #[arg(long, short)]
        follow: bool,
    },
    /// Finish a running run (its agent only).
    Finish {
        /// The run's id.
        id: Uuid,
        /// How it ended: succeeded, failed, cancelled or stopped.
        #[arg(long, value_parser = finishing_status)]
        status: RunStatus,
        /// The exit code of what ran.
        #[arg(long, allow_negative_numbers = true)]
        exit_code: Option<i32>,
        /// What came of it (at most 10,000 characters).
        #[arg(long)]
        summary: Option<String>,
    },
    /// Ask a run's agent to stop it (someone who oversees the agent).
    Stop {
        /// The run's id.
        id: Uuid,
        /// Why (for people; the run's stop reason is `requested`).
        #[arg(long)]
        reason: Option<String>,
    },
}

/// `muster usage`: token usage, cost and credits, grouped.
#[derive(Debug, Args)]
pub struct UsageArgs {
    #[command(flatten)]
    pub connection: Connection,
    /// Group by agent (default), model, task or day.
    #[arg(long, value_parser = wire::<UsageGrouping>)]
    pub group_by: Option<UsageGrouping>,
    /// Only reports from this instant (ISO 8601; a plain date is its start, UTC).
    #[arg(long)]
    pub from: Option<String>,
    /// Only reports before this instant (ISO 8601; a plain date counts whole).
    #[arg(long)]
    pub to: Option<String>,
    /// Only this agent's usage (UUID).
    #[arg(long)]
    pub agent: Option<Uuid>,
    /// Only this task's usage (UUID).
    #[arg(long)]
    pub task: Option<Uuid>,
}

/// A value of one of the API's enums, spelled as on the wire.
fn wire<T: DeserializeOwned>(value: &str) -> Result<T, String> {
    serde_json::from_value(serde_json::Value::String(value.to_owned()))
        .map_err(|err| err.to_string())
}

/// A status a run may be finished with.
fn finishing_status(value: &str) -> Result<RunStatus, String> {
    RunStatus::parse(value)
        .filter(|s| s.may_finish_with())
        .ok_or_else(|| "expected one of succeeded, failed, cancelled, stopped".to_owned())
}

/// `name` or `name:proficiency`.
fn capability(value: &str) -> Result<(String, Option<Proficiency>), String> {
    match value.split_once(':') {
        None => Ok((value.to_owned(), None)),
        Some((name, level)) => Ok((name.to_owned(), Some(wire(level)?))),
    }
}
