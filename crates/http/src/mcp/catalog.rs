//! The tools: what each is called, what it does, who may see it, and the operation of
//! the OpenAPI document it stands for (its input schema is built from it, in `schema`).

use muster_domain::model::{Actor, ApiKeyScope, TaskStatus};
use muster_domain::policy;
use rmcp::model::Tool;

use super::schema::ToolSchemas;

/// Who may see a tool (and call it: the use case checks again, as on the API).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Access {
    /// Anyone who may read the organization's tasks and events.
    Read,
    /// Anyone who may change tasks (not a read-only API key).
    Write,
    /// An agent that may start work: it claims and keeps leases.
    Worker,
    /// An agent that may write: it spawns children.
    Parent,
}

impl Access {
    fn allows(self, actor: &Actor) -> bool {
        match self {
            Self::Read => policy::has_scope(actor, ApiKeyScope::Read).is_ok(),
            Self::Write => policy::may_write(actor).is_ok(),
            Self::Worker => {
                policy::acting_agent(actor).is_ok()
                    && policy::may_transition(actor, TaskStatus::InProgress).is_ok()
            }
            Self::Parent => policy::acting_agent(actor).is_ok() && policy::may_write(actor).is_ok(),
        }
    }
}

/// One tool and the API operation it stands for.
#[derive(Debug, Clone, Copy)]
pub(super) struct Spec {
    pub name: &'static str,
    pub description: &'static str,
    /// The `operationId` whose parameters and body make the input schema.
    pub operation: &'static str,
    pub access: Access,
    /// Whether the `id` argument (an agent) may be left out to mean the calling agent.
    pub own_id: bool,
}

/// Every tool, in the order an agent's loop meets them.
pub(super) const TOOLS: &[Spec] = &[
    Spec {
        name: "claim_task",
        description: "Claim the next task you may take (only one of a project with projectId): it is assigned to you, moved to in_progress and leased to you (keep it with heartbeat_task). With reserveCredits, that many of your credits are held for the task's first run (an error budget_exhausted when they cannot be). Answers {data: task}, or {data: null} when there is nothing to claim.",
        operation: "claimTask",
        access: Access::Worker,
        own_id: false,
    },
    Spec {
        name: "heartbeat_task",
        description: "Extend your lease on a task you claimed.",
        operation: "heartbeatTask",
        access: Access::Worker,
        own_id: false,
    },
    Spec {
        name: "release_task",
        description: "Give back a task assigned to you and in_progress (after a failed attempt, or when you stop): it goes to todo, unassigned, for any agent to claim again; what your claim reserved is given back, and an open run of it is asked to stop. An optional reason is recorded with the move. Answers {data: task}.",
        operation: "releaseTask",
        access: Access::Worker,
        own_id: false,
    },
    Spec {
        name: "start_run",
        description: "Start your run of a task assigned to you and in_progress (id is the task's): one running run per task. Optionally name the adapter and model, and reserve credits for its usage. Answers {data: run}; every run answer carries stopRequested and stopReason: when stopRequested is true, stop and finish the run.",
        operation: "startRun",
        access: Access::Worker,
        own_id: false,
    },
    Spec {
        name: "append_run_log",
        description: "Append lines (stream stdout, stderr or system, and text) to your running run's log (id is the run's); at most 10,000 lines a call. A log keeps 10 MiB, then one marker line. Answers {data: run}.",
        operation: "appendRunLog",
        access: Access::Worker,
        own_id: false,
    },
    Spec {
        name: "report_usage",
        description: "Report the tokens your running run used with one model (id is the run's), and their cost in millionths of a US dollar when you know it (else the operator's price table prices it). The cost is paid from your credits at once; past your budget the run is asked to stop (stopReason budget). A repeated reportId counts once (report is then null). Answers {data: run, report}.",
        operation: "reportRunUsage",
        access: Access::Worker,
        own_id: false,
    },
    Spec {
        name: "finish_run",
        description: "Finish your running run (id is the run's) with status succeeded, failed, cancelled or stopped, an optional exit code and summary; what it reserved is released. Finish the task itself with transition_task. Answers {data: run}.",
        operation: "finishRun",
        access: Access::Worker,
        own_id: false,
    },
    Spec {
        name: "get_run",
        description: "Read one run: its status, usage (totals and by model), log size and whether it was asked to stop.",
        operation: "getRun",
        access: Access::Read,
        own_id: false,
    },
    Spec {
        name: "list_tasks",
        description: "List the organization's tasks, filtered by status, assignee, creator, parent, project, priority, tag or text (q), newest first, a page at a time (pass meta.nextCursor as cursor).",
        operation: "listTasks",
        access: Access::Read,
        own_id: false,
    },
    Spec {
        name: "get_task",
        description: "Read one task.",
        operation: "getTask",
        access: Access::Read,
        own_id: false,
    },
    Spec {
        name: "create_task",
        description: "Create a task. Its reward (credits for whoever finishes it) is escrowed from your balance when you are an agent, else from the organization's treasury: an explicit reward the payer cannot fund is refused; left out, the organization's default reward is escrowed when it can be, else the task carries none.",
        operation: "createTask",
        access: Access::Write,
        own_id: false,
    },
    Spec {
        name: "update_task",
        description: "Change a task's title, description, priority, due date, tags, metadata, project or reward; only the fields given change, null clears description and dueAt. Only the reward's payer may change it: raising it escrows the difference, lowering it returns the difference.",
        operation: "updateTask",
        access: Access::Write,
        own_id: false,
    },
    Spec {
        name: "transition_task",
        description: "Move a task to another status (todo, in_progress, review, blocked, done, cancelled, backlog), with an optional reason, an optional result (what came of it) and, for cancelled only, an outcome (failed or rejected).",
        operation: "transitionTask",
        access: Access::Write,
        own_id: false,
    },
    Spec {
        name: "comment_on_task",
        description: "Comment on a task (optionally in reply to a comment).",
        operation: "commentOnTask",
        access: Access::Write,
        own_id: false,
    },
    Spec {
        name: "add_dependency",
        description: "Make a task wait for another (blocking by default).",
        operation: "addTaskDependency",
        access: Access::Write,
        own_id: false,
    },
    Spec {
        name: "escalate_task",
        description: "Escalate a task (to a given agent, or up the hierarchy) with a reason.",
        operation: "escalateTask",
        access: Access::Write,
        own_id: false,
    },
    Spec {
        name: "find_candidates",
        description: "The agents best suited to a task, ranked by capability coverage, reputation and load.",
        operation: "listTaskCandidates",
        access: Access::Read,
        own_id: false,
    },
    Spec {
        name: "list_events",
        description: "Read the organization's audit log, filtered by type, actor, entity, severity or dates, a page at a time.",
        operation: "listEvents",
        access: Access::Read,
        own_id: false,
    },
    Spec {
        name: "list_projects",
        description: "List the organization's projects (tasks grouped under a goal), newest first, optionally only active or archived ones, a page at a time (pass meta.nextCursor as cursor).",
        operation: "listProjects",
        access: Access::Read,
        own_id: false,
    },
    Spec {
        name: "get_project",
        description: "Read one project with its progress: its tasks by status, the share done (of those not cancelled), the open tasks past due and the blocked ones, and what its tasks' runs cost.",
        operation: "getProject",
        access: Access::Read,
        own_id: false,
    },
    Spec {
        name: "create_project",
        description: "Create a project (name, optional goal, description and due date). Tasks join it with projectId on create_task or update_task; a sub-task joins its parent's.",
        operation: "createProject",
        access: Access::Write,
        own_id: false,
    },
    Spec {
        name: "update_project",
        description: "Change a project's name, goal, description or due date; only the fields given change, null clears goal, description and dueAt. An archived project takes no edits.",
        operation: "updateProject",
        access: Access::Write,
        own_id: false,
    },
    Spec {
        name: "archive_project",
        description: "Archive a project: its tasks stay in it, but no task joins it any more.",
        operation: "archiveProject",
        access: Access::Write,
        own_id: false,
    },
    Spec {
        name: "list_routines",
        description: "List the organization's routines (work that recurs on a cron schedule), newest first, a page at a time.",
        operation: "listRoutines",
        access: Access::Read,
        own_id: false,
    },
    Spec {
        name: "get_routine",
        description: "Read one routine: its schedule and time zone, the task it creates, whether it is on, when it fires next and what its last firing did.",
        operation: "getRoutine",
        access: Access::Read,
        own_id: false,
    },
    Spec {
        name: "create_routine",
        description: "Create a routine: a cron schedule (five fields, or six with seconds first) in an IANA time zone (default UTC), and a task (or a templateId) to create at each due time, as you would create it, its reward paid by the treasury. catchUp (skip, one, all) says what the times missed while the service was down get.",
        operation: "createRoutine",
        access: Access::Write,
        own_id: false,
    },
    Spec {
        name: "update_routine",
        description: "Change a routine you own (or any, as an admin user): name, schedule, time zone, task or template, enabled, catchUp. You become its owner.",
        operation: "updateRoutine",
        access: Access::Write,
        own_id: false,
    },
    Spec {
        name: "delete_routine",
        description: "Delete a routine you own (or any, as an admin user); the tasks it created stay. Answers {deleted: true}.",
        operation: "deleteRoutine",
        access: Access::Write,
        own_id: false,
    },
    Spec {
        name: "run_routine",
        description: "Run a routine you own (or any, as an admin user) once, now: answers {data: task}, the task it created. Its schedule is unchanged.",
        operation: "runRoutine",
        access: Access::Write,
        own_id: false,
    },
    Spec {
        name: "get_balance",
        description: "Read an agent's credit balance (yours when id is left out).",
        operation: "getAgentBalance",
        access: Access::Read,
        own_id: true,
    },
    Spec {
        name: "get_budget",
        description: "Read an agent's period budget: limit, spent, remaining and utilization (yours when id is left out).",
        operation: "getAgentBudget",
        access: Access::Read,
        own_id: true,
    },
    Spec {
        name: "get_reputation",
        description: "Read an agent's reputation score and task counts (yours when id is left out).",
        operation: "getAgentReputation",
        access: Access::Read,
        own_id: true,
    },
    Spec {
        name: "spawn_agent",
        description: "Spawn a child agent below you (level lower than yours). Answers the child and its signing secret, shown only once; the child stays pending until activated.",
        operation: "spawnAgent",
        access: Access::Parent,
        own_id: false,
    },
];

/// The tools `actor` may use, with their schemas.
pub(super) fn visible_to(actor: &Actor, schemas: &ToolSchemas) -> Vec<Tool> {
    TOOLS
        .iter()
        .filter(|spec| spec.access.allows(actor))
        .map(|spec| {
            Tool::new(
                spec.name,
                spec.description,
                schemas.input_schema(spec.operation),
            )
        })
        .collect()
}

/// Whether a tool of that name exists at all (for a clearer refusal).
pub(super) fn exists(name: &str) -> bool {
    TOOLS.iter().any(|spec| spec.name == name)
}
