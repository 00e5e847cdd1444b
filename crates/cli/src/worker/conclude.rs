//! After the CLI: the run finished with what came of it, the result posted on the task
//! as a comment, the task moved on (success: `--on-success`; failure: back to `todo`,
//! or `blocked` after `--max-attempts`), and the workspace removed or kept.

use muster_client::types::claims::ReleaseBody;
use muster_client::types::model::TaskStatus;
use muster_client::types::model::{RunStatus, StopReason};
use muster_client::types::paging::PageQuery;
use muster_client::types::runs::RunResponse;
use muster_client::types::task_links::CommentRequest;
use muster_client::types::tasks::{TaskResponse, TransitionRequest};

use super::attempt::{finish, note};
use super::retry::persist;
use super::supervise::{Stop, describe};
use super::workspace::Workspace;
use super::{Shared, say};

/// A run's summary, at most (characters; the finish route takes 10,000).
const MAX_SUMMARY_CHARS: usize = 10_000;
/// A comment or a task's result, at most (characters; the routes take 20,000).
const MAX_RESULT_CHARS: usize = 20_000;
/// A transition's reason, at most (characters; the route takes 2,000).
const MAX_REASON_CHARS: usize = 2_000;

/// How a run came out.
#[derive(Debug)]
pub enum Conclusion {
    /// The CLI did the work.
    Succeeded {
        exit_code: Option<i32>,
        summary: Option<String>,
    },
    /// It did not (or could not be started).
    Failed {
        exit_code: Option<i32>,
        failure: String,
    },
    /// It was stopped before it ended.
    Stopped { stop: Stop, exit_code: Option<i32> },
}

impl Conclusion {
    pub fn failed(exit_code: Option<i32>, failure: String) -> Self {
        Self::Failed { exit_code, failure }
    }

    /// A run whose start already said `stopRequested` (the budget ran out meanwhile).
    pub fn stopped_before_start(run: &RunResponse) -> Self {
        Self::Stopped {
            stop: Stop::Asked(run.stop_reason.unwrap_or(StopReason::Requested)),
            exit_code: None,
        }
    }
}

/// Finishes `run` of `task` as `conclusion` says, and moves the task on.
pub async fn conclude(
    shared: &Shared,
    task: &TaskResponse,
    run: &RunResponse,
    conclusion: Conclusion,
    workspace: Option<Workspace>,
) {
    let kept = match (&conclusion, workspace) {
        (Conclusion::Succeeded { .. }, Some(workspace)) => {
            let path = workspace.path.clone();
            if let Err(err) = workspace.remove().await {
                say(&format!(
                    "run {}: workspace {} not removed: {err:#}",
                    run.id,
                    path.display()
                ));
            }
            None
        }
        (_, Some(workspace)) => Some(workspace.keep()),
        (_, None) => None,
    };
    if let Some(path) = &kept
        && !matches!(
            conclusion,
            Conclusion::Stopped {
                stop: Stop::Lost,
                ..
            }
        )
    {
        note(
            shared,
            run.id,
            format!("[muster worker] workspace kept at {}", path.display()),
        )
        .await;
    }
    match conclusion {
        Conclusion::Succeeded { exit_code, summary } => {
            succeeded(shared, task, run, exit_code, summary).await;
        }
        Conclusion::Failed { exit_code, failure } => {
            failed(shared, task, run, exit_code, &failure, kept.as_deref()).await;
        }
        Conclusion::Stopped { stop, exit_code } => {
            stopped(shared, task, run, stop, exit_code).await;
        }
    }
}

async fn succeeded(
    shared: &Shared,
    task: &TaskResponse,
    run: &RunResponse,
    exit_code: Option<i32>,
    summary: Option<String>,
) {
    let summary = summary.filter(|s| !s.trim().is_empty());
    let clipped = summary.as_deref().map(|s| clip(s, MAX_SUMMARY_CHARS));
    finish(shared, run.id, RunStatus::Succeeded, exit_code, clipped).await;
    let text = match &summary {
        Some(summary) => format!("Run {} succeeded:\n\n{summary}", run.id),
        None => format!("Run {} succeeded.", run.id),
    };
    comment(shared, task, &text).await;
    let to = shared.settings.on_success.status();
    say(&format!(
        "task {}: run {} succeeded, task to {to}",
        task.id, run.id
    ));
    succeed(shared, task, summary).await;
}

async fn failed(
    shared: &Shared,
    task: &TaskResponse,
    run: &RunResponse,
    exit_code: Option<i32>,
    failure: &str,
    kept: Option<&std::path::Path>,
) {
    finish(
        shared,
        run.id,
        RunStatus::Failed,
        exit_code,
        Some(clip(failure, MAX_SUMMARY_CHARS)),
    )
    .await;
    let failures = failures(shared, task).await;
    let max = shared.settings.max_attempts;
    let mut text = format!(
        "Run {} failed (attempt {failures} of {max}): {failure}",
        run.id
    );
    if let Some(path) = kept {
        text = format!("{text}\n\nIts workspace is kept at {}.", path.display());
    }
    comment(shared, task, &text).await;
    if failures >= u64::from(max) {
        say(&format!(
            "task {}: run {} failed, attempt {failures} of {max}: task blocked",
            task.id, run.id
        ));
        let reason = format!("failed {failures} times; last: {failure}");
        transition(shared, task, TaskStatus::Blocked, &reason, None).await;
    } else {
        say(&format!(
            "task {}: run {} failed, attempt {failures} of {max}: task back to todo",
            task.id, run.id
        ));
        let reason = format!("run failed (attempt {failures} of {max}): {failure}");
        release(shared, task, &reason).await;
    }
}

async fn stopped(
    shared: &Shared,
    task: &TaskResponse,
    run: &RunResponse,
    stop: Stop,
    exit_code: Option<i32>,
) {
    say(&format!(
        "task {}: run {} {}",
        task.id,
        run.id,
        describe(stop)
    ));
    let status = match stop {
        Stop::Asked(StopReason::Cancelled) => RunStatus::Cancelled,
        Stop::Lost => return,
        _ => RunStatus::Stopped,
    };
    finish(
        shared,
        run.id,
        status,
        exit_code,
        Some(describe(stop).to_owned()),
    )
    .await;
    match stop {
        // Someone asked: a person decides what comes next.
        Stop::Asked(StopReason::Requested) => {
            comment(
                shared,
                task,
                &format!("Run {} was stopped on request.", run.id),
            )
            .await;
            transition(
                shared,
                task,
                TaskStatus::Blocked,
                "its run was stopped on request",
                None,
            )
            .await;
        }
        // Another agent (or this one, once funded) may take it.
        Stop::Asked(StopReason::Budget) => {
            release(shared, task, "the agent's budget is exhausted").await;
        }
        Stop::Shutdown => {
            release(shared, task, "the worker shut down").await;
        }
        // Cancelled or given to someone else: no longer this worker's.
        _ => {}
    }
}

/// Gives a claimed task back when no run could be started for it.
pub async fn hand_back(shared: &Shared, task: &TaskResponse, reason: &str) {
    release(shared, task, reason).await;
}

/// Gives the task back to the pool (`POST /tasks/:id/release`): `todo`, unassigned,
/// claimable by any worker of any agent, this one included.
async fn release(shared: &Shared, task: &TaskResponse, reason: &str) {
    let body = ReleaseBody {
        reason: Some(clip(reason, MAX_REASON_CHARS)),
    };
    if let Err(err) = persist(|| shared.client.release_task(task.id, &body)).await {
        say(&format!("task {}: could not give it back: {err}", task.id));
    }
}

/// Moves a task whose run succeeded to `--on-success`, with the summary as its result;
/// `done` becomes `review` for a task that needs approval.
async fn succeed(shared: &Shared, task: &TaskResponse, summary: Option<String>) {
    let result = summary.map(|s| clip(&s, MAX_RESULT_CHARS));
    let to = match shared.settings.on_success {
        super::args::OnSuccess::Done if !task.approval_required => TaskStatus::Done,
        _ => TaskStatus::Review,
    };
    transition(shared, task, to, "its run succeeded", result).await;
}

/// The task's failed (and lost) runs: the attempts made so far.
async fn failures(shared: &Shared, task: &TaskResponse) -> u64 {
    let mut count = 0;
    let mut cursor = None;
    loop {
        let page = PageQuery {
            limit: Some(500),
            cursor: cursor.take(),
        };
        match shared.client.list_task_runs(task.id, &page).await {
            Ok(page) => {
                count += page
                    .data
                    .iter()
                    .filter(|run| matches!(run.status, RunStatus::Failed | RunStatus::Lost))
                    .count() as u64;
                match page.meta {
                    Some(next) if !page.data.is_empty() => cursor = Some(next.next_cursor),
                    _ => return count.max(1),
                }
            }
            Err(err) => {
                say(&format!(
                    "task {}: its runs could not be counted: {err}",
                    task.id
                ));
                return count.max(1);
            }
        }
    }
}

async fn comment(shared: &Shared, task: &TaskResponse, text: &str) {
    let body = CommentRequest {
        body: clip(text, MAX_RESULT_CHARS),
        parent_comment_id: None,
    };
    if let Err(err) = persist(|| shared.client.comment_on_task(task.id, &body)).await {
        say(&format!("task {}: could not comment: {err}", task.id));
    }
}

async fn transition(
    shared: &Shared,
    task: &TaskResponse,
    to: TaskStatus,
    reason: &str,
    result: Option<String>,
) {
    let body = TransitionRequest {
        status: to,
        reason: Some(clip(reason, MAX_REASON_CHARS)),
        result,
        outcome: None,
    };
    if let Err(err) = persist(|| shared.client.transition_task(task.id, &body)).await {
        say(&format!(
            "task {}: could not move it to {}: {err}",
            task.id,
            to.as_str()
        ));
    }
}

/// `text` cut to at most `max` characters (an ellipsis says so).
fn clip(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let mut out: String = text.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}
