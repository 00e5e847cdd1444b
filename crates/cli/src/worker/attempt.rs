//! One claimed task, from the run's start to where the task goes next.

use muster_client::types::model::RunStatus;
use muster_client::types::paging::PageQuery;
use muster_client::types::runs::{FinishRunBody, LogBody, LogLineBody, StartRunBody};
use muster_client::types::task_links::CommentResponse;
use muster_client::types::tasks::TaskResponse;
use tokio::sync::mpsc;
use tracing::field::Empty;
use tracing::{Instrument, Span};

use super::conclude::{self, Conclusion};
use super::process::{Environment, Process};
use super::prompt::PromptInput;
use super::retry::persist;
use super::supervise::{self, Watch};
use super::{Shared, say};

/// The dependencies whose results go into the prompt, at most.
const MAX_DEPENDENCIES: usize = 20;
/// The comments read for the prompt, at most (the newest).
const MAX_COMMENTS: u32 = 100;
/// Pages of comments read to reach the newest, at most (10,000 comments).
const MAX_COMMENT_PAGES: usize = 100;

/// Works on `task`, claimed by this worker: starts a run, runs the CLI in a fresh
/// workspace, finishes the run and moves the task on. Never fails: what goes wrong is
/// told to the server (the run's log, its summary, the task's next status) and here.
/// Whether the CLI ran (`false`: no run, workspace or program could be started).
pub async fn work_on(shared: &Shared, task: TaskResponse) -> bool {
    // The run's trace: every call below carries it, so the server's spans (and the run's
    // `traceId`) belong to it.
    let span = tracing::debug_span!(
        target: "muster_worker",
        parent: None,
        "worker.run",
        muster.task.id = %task.id,
        muster.run.id = Empty,
        muster.adapter = shared.settings.adapter.name(),
        muster.run.outcome = Empty,
    );
    let ran = work_in_span(shared, task, &span)
        .instrument(span.clone())
        .await;
    span.record(
        "muster.run.outcome",
        if ran { "ran" } else { "not started" },
    );
    ran
}

async fn work_in_span(shared: &Shared, task: TaskResponse, span: &Span) -> bool {
    let settings = &shared.settings;
    let client = &shared.client;
    let start = StartRunBody {
        adapter: Some(settings.adapter.name().to_owned()),
        model: settings.model.clone(),
        reserve_credits: None,
    };
    let run = match client.start_run(task.id, &start).await {
        Ok(run) => run,
        Err(err) => {
            say(&format!("task {}: could not start a run: {err}", task.id));
            conclude::hand_back(
                shared,
                &task,
                &format!("the worker could not start a run: {err}"),
            )
            .await;
            return false;
        }
    };
    span.record("muster.run.id", run.id.to_string().as_str());
    say(&format!(
        "task {} \"{}\": run {} started",
        task.id, task.title, run.id
    ));
    if run.stop_requested {
        let conclusion = Conclusion::stopped_before_start(&run);
        conclude::conclude(shared, &task, &run, conclusion, None).await;
        return true;
    }
    let workspace = match settings.workspaces.prepare(task.id, run.id).await {
        Ok(workspace) => workspace,
        Err(err) => {
            let conclusion =
                Conclusion::failed(None, format!("could not prepare a workspace: {err:#}"));
            conclude::conclude(shared, &task, &run, conclusion, None).await;
            return false;
        }
    };
    let (comments, dependencies) = context(shared, &task).await;
    let prompt = settings.template.render(&PromptInput {
        task: &task,
        comments: &comments,
        dependencies: &dependencies,
        run_id: run.id,
        workspace: &workspace.path,
    });
    let invocation = settings
        .adapter
        .invocation(&settings.program, &prompt, &settings.args);
    let (tx, rx) = mpsc::channel(1024);
    let env = Environment {
        task_id: task.id.to_string(),
        task_title: &task.title,
        run_id: run.id.to_string(),
        workspace: &workspace.path,
        pass_credentials: settings.pass_credentials,
    };
    let process_span = tracing::debug_span!(
        target: "muster_worker",
        "worker.process",
        process.executable.name = %settings.program,
        process.exit.code = Empty,
        muster.run.stop = Empty,
        muster.usage.reports = Empty,
        muster.usage.input_tokens = Empty,
        muster.usage.output_tokens = Empty,
        muster.usage.cost_microusd = Empty,
    );
    let process = match process_span.in_scope(|| Process::start(&invocation, &env, tx)) {
        Ok(process) => process,
        Err(err) => {
            let conclusion = Conclusion::failed(None, format!("{err:#}"));
            conclude::conclude(shared, &task, &run, conclusion, Some(workspace)).await;
            return false;
        }
    };
    let mut reader = settings.adapter.reader(settings.model.as_deref());
    let watch = Watch {
        client,
        run_id: run.id,
        lease_seconds: settings.lease,
        grace: settings.grace,
    };
    let ended = supervise::watch(
        &watch,
        process,
        rx,
        reader.as_mut(),
        shared.shutdown.clone(),
    )
    .instrument(process_span.clone())
    .await;
    record_process(&process_span, &ended);
    drop(process_span);
    let conclusion = conclusion_of(&ended, reader.as_mut());
    conclude::conclude(shared, &task, &run, conclusion, Some(workspace)).await;
    true
}

/// The CLI's exit and usage, on its span.
fn record_process(span: &Span, ended: &supervise::Ended) {
    if let Some(code) = ended.exit_code {
        span.record("process.exit.code", code);
    }
    if let Some(stop) = ended.stop {
        span.record("muster.run.stop", supervise::describe(stop));
    }
    span.record(
        "muster.usage.reports",
        i64::try_from(ended.usage.reports).unwrap_or(i64::MAX),
    );
    span.record("muster.usage.input_tokens", ended.usage.input_tokens);
    span.record("muster.usage.output_tokens", ended.usage.output_tokens);
    span.record("muster.usage.cost_microusd", ended.usage.cost_microusd);
}

/// What came of a run whose CLI ended (or was stopped).
fn conclusion_of(ended: &supervise::Ended, reader: &mut dyn super::adapters::Reader) -> Conclusion {
    if let Some(stop) = ended.stop {
        Conclusion::Stopped {
            stop,
            exit_code: ended.exit_code,
        }
    } else {
        let outcome = reader.finish(ended.exit_code);
        if outcome.succeeded {
            Conclusion::Succeeded {
                exit_code: ended.exit_code,
                summary: outcome.summary,
            }
        } else {
            let failure =
                outcome
                    .failure
                    .or(outcome.summary)
                    .unwrap_or_else(|| match ended.exit_code {
                        Some(code) => format!("the program exited with {code}"),
                        None => "the program was killed by a signal".to_owned(),
                    });
            Conclusion::failed(ended.exit_code, failure)
        }
    }
}

/// The task's comments (oldest first) and the tasks it depends on, for the prompt. What
/// cannot be read is left out (and said), not a reason to give the task up.
async fn context(
    shared: &Shared,
    task: &TaskResponse,
) -> (Vec<CommentResponse>, Vec<TaskResponse>) {
    let client = &shared.client;
    let comments = newest_comments(shared, task).await;
    let mut dependencies = Vec::new();
    match client.list_dependencies(task.id).await {
        Ok(links) => {
            for link in links.iter().take(MAX_DEPENDENCIES) {
                match client.get_task(link.depends_on_id).await {
                    Ok(dependency) => dependencies.push(dependency),
                    Err(err) => say(&format!(
                        "task {}: dependency {} left out of the prompt: {err}",
                        task.id, link.depends_on_id
                    )),
                }
            }
        }
        Err(err) => say(&format!(
            "task {}: dependencies left out of the prompt: {err}",
            task.id
        )),
    }
    (comments, dependencies)
}

/// The task's newest [`MAX_COMMENTS`] comments, oldest first: the route lists oldest
/// first, so the pages are read to the end (at most [`MAX_COMMENT_PAGES`] of them).
async fn newest_comments(shared: &Shared, task: &TaskResponse) -> Vec<CommentResponse> {
    let mut newest = std::collections::VecDeque::new();
    let mut cursor = None;
    for _ in 0..MAX_COMMENT_PAGES {
        let page = PageQuery {
            limit: Some(MAX_COMMENTS),
            cursor: cursor.take(),
        };
        match shared.client.list_comments(task.id, &page).await {
            Ok(page) => {
                let last = page.data.is_empty();
                for comment in page.data {
                    if newest.len() == MAX_COMMENTS as usize {
                        newest.pop_front();
                    }
                    newest.push_back(comment);
                }
                match page.meta {
                    Some(next) if !last => cursor = Some(next.next_cursor),
                    _ => break,
                }
            }
            Err(err) => {
                say(&format!(
                    "task {}: comments left out of the prompt: {err}",
                    task.id
                ));
                break;
            }
        }
    }
    newest.into()
}

/// Appends one `system` line to the run's log (best effort).
pub async fn note(shared: &Shared, run_id: uuid::Uuid, text: String) {
    let body = LogBody {
        lines: vec![LogLineBody {
            stream: "system".to_owned(),
            text,
        }],
    };
    if let Err(err) = shared.client.append_run_log(run_id, &body).await {
        say(&format!("run {run_id}: could not write to its log: {err}"));
    }
}

/// Finishes the run (best effort: a run already closed stays as it is).
pub async fn finish(
    shared: &Shared,
    run_id: uuid::Uuid,
    status: RunStatus,
    exit_code: Option<i32>,
    summary: Option<String>,
) {
    let body = FinishRunBody {
        status: status.as_str().to_owned(),
        exit_code,
        summary,
    };
    if let Err(err) = persist(|| shared.client.finish_run(run_id, &body)).await {
        say(&format!("run {run_id}: could not be finished: {err}"));
    }
}
