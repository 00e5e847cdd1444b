//! Payloads of the run events (decision D-106): a run started, finished, was asked to
//! stop, and an agent's budget ran out under a run. Not one per log line or report.

use serde::Serialize;

use crate::model::{AgentId, RunUsage, TaskId};

/// `run.started`: the task's assignee started a run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RunStarted {
    /// The task attempted.
    pub task_id: TaskId,
    /// The agent running it.
    pub agent_id: AgentId,
    /// What runs it, as the agent says.
    pub adapter: Option<String>,
    /// The model, as the agent says.
    pub model: Option<String>,
    /// Credits held for it.
    pub reserved_credits: i64,
}

/// `run.finished`: a run ended (finished by its agent, or lost with its lease).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RunFinished {
    /// The task attempted.
    pub task_id: TaskId,
    /// The agent that ran it.
    pub agent_id: AgentId,
    /// `succeeded`, `failed`, `cancelled`, `stopped` or `lost`.
    pub status: &'static str,
    /// The program's exit code, when given.
    pub exit_code: Option<i32>,
    /// How long it ran, in milliseconds.
    pub duration_ms: i64,
    /// Its usage totals.
    pub usage: RunUsage,
}

/// `run.stop_requested`: a run was asked to stop.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RunStopRequested {
    /// The task attempted.
    pub task_id: TaskId,
    /// The agent running it.
    pub agent_id: AgentId,
    /// `cancelled`, `reassigned`, `budget` or `requested`.
    pub reason: &'static str,
    /// What the person or agent who asked wrote (a `requested` stop's free text), when
    /// given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// `budget.exhausted`: a run's usage cost more than its agent could still spend.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BudgetExhausted {
    /// The run whose report exhausted it.
    pub run_id: crate::model::RunId,
    /// Credits the report came to beyond what the agent could spend.
    pub unfunded_credits: i64,
    /// The agent's balance afterwards.
    pub balance_after: i64,
}
