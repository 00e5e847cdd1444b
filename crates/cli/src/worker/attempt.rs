//! One claimed task, from the run's start to where the task goes next.

use muster_client::types::model::RunStatus;
use muster_client::types::paging::PageQuery;
use muster_client::types::runs::{FinishRunBody, LogBody, LogLineBody, StartRunBody};
use muster_client::types::task_links::CommentResponse;
use muster_client::types::tasks::TaskResponse;
use tokio::sync::mpsc;

use super::conclude::{self, Conclusion};
use super::process::{Environment, Process};
use super::prompt::PromptInput;
use super::supervise::{self, Watch};
use super::{Shared, say};

/// The dependencies whose results go into the prompt, at most.
const MAX_DEPENDENCIES: usize = 20;
/// The comments read for the prompt, at most (the newest).
const MAX_COMMENTS: u32 = 100;

/// Works on `task`, claimed by this worker: starts a run, runs the CLI in a fresh
/// workspace, finishes the run and moves the task on. Never fails: what goes wrong is
/// told to the server (the run's log, its summary, the task's next status) and here.
pub async fn work_on(shared: &Shared, task: TaskResponse) {
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
            return;
        }
    };
    say(&format!(
        "task {} \"{}\": run {} started",
        task.id, task.title, run.id
    ));
    if run.stop_requested {
        let conclusion = Conclusion::stopped_before_start(&run);
        conclude::conclude(shared, &task, &run, conclusion, None).await;
        return;
    }
    let workspace = match settings.workspaces.prepare(task.id, run.id).await {
        Ok(workspace) => workspace,
        Err(err) => {
            let conclusion =
                Conclusion::failed(None, format!("could not prepare a workspace: {err:#}"));
            conclude::conclude(shared, &task, &run, conclusion, None).await;
            return;
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
    };
    let process = match Process::start(&invocation, &env, tx) {
        Ok(process) => process,
        Err(err) => {
            let conclusion = Conclusion::failed(None, format!("{err:#}"));
            conclude::conclude(shared, &task, &run, conclusion, Some(workspace)).await;
            return;
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
    .await;
    let conclusion = conclusion_of(&ended, reader.as_mut());
    conclude::conclude(shared, &task, &run, conclusion, Some(workspace)).await;
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
    let page = PageQuery {
        limit: Some(MAX_COMMENTS),
        ..PageQuery::default()
    };
    let comments = match client.list_comments(task.id, &page).await {
        Ok(page) => page.data,
        Err(err) => {
            say(&format!(
                "task {}: comments left out of the prompt: {err}",
                task.id
            ));
            Vec::new()
        }
    };
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
    if let Err(err) = shared.client.finish_run(run_id, &body).await {
        say(&format!("run {run_id}: could not be finished: {err}"));
    }
}
