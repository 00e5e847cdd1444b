//! The Rust client's run methods (decision D-106) against a live server: a run from
//! start to finish with its log, usage and heartbeat; the usage summaries; a stop asked
//! by an overseer; and the refusals, with the API's codes.

use muster_client::types::claims::{ClaimBody, HeartbeatBody};
use muster_client::types::model::{LogStream, RunStatus, StopReason, TaskStatus};
use muster_client::types::paging::PageQuery;
use muster_client::types::runs::{
    FinishRunBody, ListRunsQuery, LogBody, LogLineBody, LogLineResponse, LogQuery, StartRunBody,
    StopRunBody, UsageBody, UsageGrouping, UsageQueryParams,
};
use muster_client::types::tasks::CreateTaskRequest;
use muster_client::{Client, Error, RunLogStream, login_body};
use uuid::Uuid;

use crate::helpers::{ADMIN_PASSWORD, Agent, TestApp};

api_tests!(
    the_client_runs_a_task_from_start_to_finish,
    the_client_reads_usage_summaries,
    the_client_stops_a_run_and_reads_the_refusals
);

/// Streams that live a second and a half, so that a follow outlives one and resumes.
mod short_lived {
    use super::the_client_follows_a_run_log_across_reconnections;

    api_tests!(with muster_http::StreamOptions {
        lifetime: std::time::Duration::from_millis(1500),
        ..crate::events_stream::quick()
    };
        the_client_follows_a_run_log_across_reconnections,
    );
}

/// A client signing as `agent`.
fn agent_client(app: &TestApp, agent: &Agent) -> Client {
    Client::agent(&app.base, &agent.handle, &agent.secret).unwrap()
}

/// A task created and claimed by `client` (in progress, assigned to it): its id.
async fn claimed_task(client: &Client, title: &str) -> Uuid {
    let created = client
        .create_task(&CreateTaskRequest {
            title: title.to_owned(),
            ..CreateTaskRequest::default()
        })
        .await
        .unwrap();
    let claimed = client
        .claim_task(&ClaimBody::default())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(claimed.id, created.id);
    assert_eq!(claimed.status, TaskStatus::InProgress);
    created.id
}

fn lines(lines: &[(&str, &str)]) -> LogBody {
    LogBody {
        lines: lines
            .iter()
            .map(|(stream, text)| LogLineBody {
                stream: (*stream).to_owned(),
                text: (*text).to_owned(),
            })
            .collect(),
    }
}

/// Unpriced usage of `model` (the test server has no price table and no cost is
/// given, so nothing is charged).
fn usage_of(model: &str, input: i64, output: i64, report_id: Option<&str>) -> UsageBody {
    UsageBody {
        model: model.to_owned(),
        provider: Some("anthropic".to_owned()),
        input_tokens: input,
        output_tokens: output,
        cache_read_tokens: Some(10),
        cache_write_tokens: None,
        cost_microusd: None,
        report_id: report_id.map(str::to_owned),
    }
}

fn finish(status: RunStatus) -> FinishRunBody {
    FinishRunBody {
        status: status.as_str().to_owned(),
        exit_code: Some(0),
        summary: Some("all green".to_owned()),
    }
}

async fn the_client_runs_a_task_from_start_to_finish(app: &TestApp) {
    let worker = app.worker(&app.org).await;
    let client = agent_client(app, &worker);
    let task = claimed_task(&client, "Run the suite").await;

    let run = client
        .start_run(
            task,
            &StartRunBody {
                adapter: Some("claude-code".to_owned()),
                model: Some("claude-sonnet-4-5".to_owned()),
                reserve_credits: None,
            },
        )
        .await
        .unwrap();
    assert_eq!(
        (run.task_id, run.agent_id, run.status),
        (task, worker.uuid, RunStatus::Running)
    );
    assert_eq!(run.adapter.as_deref(), Some("claude-code"));
    assert_eq!(run.model.as_deref(), Some("claude-sonnet-4-5"));
    assert!(!run.stop_requested);
    assert_eq!(run.ended_at, None);
    assert_eq!(client.get_run(run.id).await.unwrap().id, run.id);

    // Listed for its task, and among the organization's running runs.
    let of_task = client
        .list_task_runs(task, &PageQuery::default())
        .await
        .unwrap();
    assert_eq!(
        of_task.data.iter().map(|r| r.id).collect::<Vec<_>>(),
        [run.id]
    );
    let running = client
        .list_runs(&ListRunsQuery {
            status: Some(RunStatus::Running),
            agent_id: Some(worker.uuid),
            ..ListRunsQuery::default()
        })
        .await
        .unwrap();
    assert!(running.data.iter().any(|r| r.id == run.id), "{running:?}");

    log_round_trip(&client, run.id).await;
    usage_counts_once(&client, run.id).await;

    let kept = client
        .heartbeat_run(run.id, &HeartbeatBody::default())
        .await
        .unwrap();
    assert_eq!(kept.status, RunStatus::Running);
    finishes(&client, task, run.id).await;
}

/// Lines appended to run `id`, read back page by page.
async fn log_round_trip(client: &Client, id: Uuid) {
    let logged = client
        .append_run_log(
            id,
            &lines(&[
                ("stdout", "running 3 tests"),
                ("stderr", "warning: unused"),
                ("system", "worker: tests done"),
            ]),
        )
        .await
        .unwrap();
    assert_eq!(logged.log_lines, 3);
    assert!(!logged.log_truncated);
    let page = client.run_log(id, &LogQuery::default()).await.unwrap();
    assert_eq!(page.last, 3);
    assert!(!page.truncated);
    assert_eq!(
        page.data
            .iter()
            .map(|l| (l.seq, l.stream, l.text.as_str()))
            .collect::<Vec<_>>(),
        [
            (1, LogStream::Stdout, "running 3 tests"),
            (2, LogStream::Stderr, "warning: unused"),
            (3, LogStream::System, "worker: tests done"),
        ]
    );
    let rest = client
        .run_log(
            id,
            &LogQuery {
                after: Some(2),
                limit: Some(10),
            },
        )
        .await
        .unwrap();
    assert_eq!(rest.data.iter().map(|l| l.seq).collect::<Vec<_>>(), [3]);
    let none = client
        .run_log(
            id,
            &LogQuery {
                after: Some(3),
                limit: None,
            },
        )
        .await
        .unwrap();
    assert!(none.data.is_empty(), "{none:?}");
    assert_eq!(none.last, 3);
}

/// A usage report of run `id` counts once however often it is sent.
async fn usage_counts_once(client: &Client, id: Uuid) {
    let answer = client
        .report_usage(
            id,
            &usage_of("claude-sonnet-4-5", 1_000, 200, Some("turn-1")),
        )
        .await
        .unwrap();
    let report = answer.report.unwrap();
    assert_eq!(report.model, "claude-sonnet-4-5");
    assert_eq!(report.provider.as_deref(), Some("anthropic"));
    assert_eq!((report.input_tokens, report.output_tokens), (1_000, 200));
    assert_eq!(report.cost_microusd, None);
    assert_eq!(report.credits, 0);
    assert_eq!(report.report_id.as_deref(), Some("turn-1"));
    assert_eq!(answer.data.usage.totals.reports, 1);
    let again = client
        .report_usage(
            id,
            &usage_of("claude-sonnet-4-5", 1_000, 200, Some("turn-1")),
        )
        .await
        .unwrap();
    assert!(again.report.is_none(), "{again:?}");
    assert_eq!(again.data.usage.totals.reports, 1);
    let totals = &again.data.usage.totals;
    assert_eq!(
        (
            totals.input_tokens,
            totals.output_tokens,
            totals.cache_read_tokens
        ),
        (1_000, 200, 10)
    );
    assert_eq!(totals.cost_microusd, None);
    assert_eq!(totals.unpriced_tokens, 1_210);
    assert_eq!(again.data.usage.by_model.len(), 1);
    assert_eq!(again.data.usage.by_model[0].model, "claude-sonnet-4-5");
}

/// Run `id` of `task` finished: read back and listed as succeeded.
async fn finishes(client: &Client, task: Uuid, id: Uuid) {
    let done = client
        .finish_run(id, &finish(RunStatus::Succeeded))
        .await
        .unwrap();
    assert_eq!(done.status, RunStatus::Succeeded);
    assert_eq!(done.exit_code, Some(0));
    assert_eq!(done.summary.as_deref(), Some("all green"));
    assert!(done.ended_at.is_some());
    assert_eq!(done.usage.totals.reports, 1);
    let read = client.get_run(id).await.unwrap();
    assert_eq!(read.status, RunStatus::Succeeded);
    assert_eq!(read.log_lines, 3);
    let succeeded = client
        .list_runs(&ListRunsQuery {
            task_id: Some(task),
            status: Some(RunStatus::Succeeded),
            ..ListRunsQuery::default()
        })
        .await
        .unwrap();
    assert_eq!(
        succeeded.data.iter().map(|r| r.id).collect::<Vec<_>>(),
        [id]
    );
    // The log stays readable once the run is over.
    let page = client.run_log(id, &LogQuery::default()).await.unwrap();
    assert_eq!(page.data.len(), 3);
}

async fn the_client_reads_usage_summaries(app: &TestApp) {
    let worker = app.worker(&app.org).await;
    let client = agent_client(app, &worker);
    let task = claimed_task(&client, "Count the tokens").await;
    let run = client
        .start_run(task, &StartRunBody::default())
        .await
        .unwrap();
    client
        .report_usage(run.id, &usage_of("model-a", 100, 10, None))
        .await
        .unwrap();
    client
        .report_usage(run.id, &usage_of("model-b", 50, 5, Some("b-1")))
        .await
        .unwrap();
    client
        .report_usage(run.id, &usage_of("model-a", 1, 1, None))
        .await
        .unwrap();

    // By model, ordered by key.
    let by_model = client
        .usage(&UsageQueryParams {
            group_by: Some(UsageGrouping::Model),
            task_id: Some(task),
            ..UsageQueryParams::default()
        })
        .await
        .unwrap();
    let summary: Vec<_> = by_model
        .iter()
        .map(|g| {
            (
                g.key.as_str(),
                g.totals.input_tokens,
                g.totals.output_tokens,
                g.totals.reports,
                g.runs,
            )
        })
        .collect();
    assert_eq!(
        summary,
        [("model-a", 101, 11, 2, 1), ("model-b", 50, 5, 1, 1)]
    );
    assert!(by_model.iter().all(|g| g.totals.cost_microusd.is_none()));

    // By agent (the default for /usage): this worker's key is its UUID.
    let by_agent = client
        .usage(&UsageQueryParams {
            agent_id: Some(worker.uuid),
            from: Some("2020-01-01".to_owned()),
            ..UsageQueryParams::default()
        })
        .await
        .unwrap();
    assert_eq!(by_agent.len(), 1, "{by_agent:?}");
    assert_eq!(by_agent[0].key, worker.uuid.to_string());
    assert_eq!(by_agent[0].totals.reports, 3);

    other_groupings(&client, worker.uuid, task).await;
}

/// The summaries of `worker`'s usage of `task` by task, by day, per agent, and before
/// anything was reported.
async fn other_groupings(client: &Client, worker: Uuid, task: Uuid) {
    let by_task = client
        .usage(&UsageQueryParams {
            group_by: Some(UsageGrouping::Task),
            agent_id: Some(worker),
            ..UsageQueryParams::default()
        })
        .await
        .unwrap();
    assert_eq!(
        by_task.iter().map(|g| g.key.clone()).collect::<Vec<_>>(),
        [task.to_string()]
    );
    let by_day = client
        .usage(&UsageQueryParams {
            group_by: Some(UsageGrouping::Day),
            agent_id: Some(worker),
            ..UsageQueryParams::default()
        })
        .await
        .unwrap();
    assert_eq!(by_day.len(), 1, "{by_day:?}");
    assert_eq!(by_day[0].key.len(), "YYYY-MM-DD".len(), "{by_day:?}");

    // One agent's usage: by model unless told otherwise.
    let agent_usage = client
        .agent_usage(worker, &UsageQueryParams::default())
        .await
        .unwrap();
    assert_eq!(
        agent_usage
            .iter()
            .map(|g| g.key.as_str())
            .collect::<Vec<_>>(),
        ["model-a", "model-b"]
    );
    let agent_by_day = client
        .agent_usage(
            worker,
            &UsageQueryParams {
                group_by: Some(UsageGrouping::Day),
                ..UsageQueryParams::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(agent_by_day.len(), 1, "{agent_by_day:?}");
    assert_eq!(agent_by_day[0].totals.reports, 3);

    // Nothing before the reports were made.
    let before = client
        .usage(&UsageQueryParams {
            agent_id: Some(worker),
            to: Some("2020-01-01".to_owned()),
            ..UsageQueryParams::default()
        })
        .await
        .unwrap();
    assert!(before.is_empty(), "{before:?}");
}

async fn the_client_stops_a_run_and_reads_the_refusals(app: &TestApp) {
    let worker = app.worker(&app.org).await;
    let client = agent_client(app, &worker);
    let task = claimed_task(&client, "Stop me").await;
    let run = client
        .start_run(task, &StartRunBody::default())
        .await
        .unwrap();

    // One running run per task.
    let err = client
        .start_run(task, &StartRunBody::default())
        .await
        .unwrap_err();
    assert_refused(&err, 409, "run_already_open");

    // The organization's admin asks the run to stop; its agent learns it and finishes.
    let mut body = login_body(&app.org.admin_email, ADMIN_PASSWORD);
    body.org_id = Some(app.org.id);
    let admin = Client::login(&app.base, &body).await.unwrap();
    let asked = admin
        .stop_run(
            run.id,
            &StopRunBody {
                reason: Some("over budget".to_owned()),
            },
        )
        .await
        .unwrap();
    assert!(asked.stop_requested);
    assert_eq!(asked.stop_reason, Some(StopReason::Requested));
    assert_eq!(asked.status, RunStatus::Running);
    let seen = client
        .heartbeat_run(run.id, &HeartbeatBody::default())
        .await
        .unwrap();
    assert!(seen.stop_requested);
    let stopped = client
        .finish_run(run.id, &finish(RunStatus::Stopped))
        .await
        .unwrap();
    assert_eq!(stopped.status, RunStatus::Stopped);

    closed_runs_refuse(&client, run.id).await;
    refusals(app, &client).await;
}

/// A finished run takes no more log, usage or finish.
async fn closed_runs_refuse(client: &Client, id: Uuid) {
    let err = client
        .append_run_log(id, &lines(&[("stdout", "late")]))
        .await
        .unwrap_err();
    assert_refused(&err, 409, "run_closed");
    let err = client
        .report_usage(id, &usage_of("model-a", 1, 1, None))
        .await
        .unwrap_err();
    assert_refused(&err, 409, "run_closed");
    let err = client
        .finish_run(id, &finish(RunStatus::Succeeded))
        .await
        .unwrap_err();
    assert_refused(&err, 409, "run_closed");
}

/// What the server refuses: a final status a run cannot be given, another agent's
/// writes, unknown runs, agents and tasks, another organization's run.
async fn refusals(app: &TestApp, client: &Client) {
    // A status a run cannot be finished with is refused by the server too.
    let task = claimed_task(client, "Lose me").await;
    let open = client
        .start_run(task, &StartRunBody::default())
        .await
        .unwrap();
    let err = client
        .finish_run(open.id, &finish(RunStatus::Lost))
        .await
        .unwrap_err();
    assert_refused(&err, 400, "validation_failed");

    // Only the run's agent writes to it.
    let other = agent_client(app, &app.worker(&app.org).await);
    let err = other
        .append_run_log(open.id, &lines(&[("stdout", "not mine")]))
        .await
        .unwrap_err();
    assert_refused(&err, 403, "run_agent_required");

    // Unknown runs and agents, and another organization's run, are not found.
    let err = client.get_run(Uuid::now_v7()).await.unwrap_err();
    assert_refused(&err, 404, "run_not_found");
    let outsider = agent_client(app, &app.other.hr);
    let err = outsider.get_run(open.id).await.unwrap_err();
    assert_refused(&err, 404, "run_not_found");
    let err = outsider
        .run_log(open.id, &LogQuery::default())
        .await
        .unwrap_err();
    assert_refused(&err, 404, "run_not_found");
    let err = client
        .agent_usage(Uuid::now_v7(), &UsageQueryParams::default())
        .await
        .unwrap_err();
    assert_refused(&err, 404, "agent_not_found");
    let err = client
        .list_task_runs(Uuid::now_v7(), &PageQuery::default())
        .await
        .unwrap_err();
    assert_refused(&err, 404, "task_not_found");
}

fn assert_refused(err: &Error, status: u16, code: &str) {
    assert_eq!(
        (err.status(), err.code()),
        (Some(status), Some(code)),
        "{err:?}"
    );
}

/// The next line of `follow`, within 10 s.
async fn next_line(follow: &mut RunLogStream) -> LogLineResponse {
    tokio::time::timeout(std::time::Duration::from_secs(10), follow.next())
        .await
        .expect("a line in time")
        .unwrap()
        .expect("a line, not the end")
}

/// Whether `follow` ends (within 10 s).
async fn ends(follow: &mut RunLogStream) -> bool {
    tokio::time::timeout(std::time::Duration::from_secs(10), follow.next())
        .await
        .expect("an answer in time")
        .unwrap()
        .is_none()
}

async fn the_client_follows_a_run_log_across_reconnections(app: &TestApp) {
    let worker = app.worker(&app.org).await;
    let client = agent_client(app, &worker);
    let task = claimed_task(&client, "Follow me").await;
    let run = client
        .start_run(task, &StartRunBody::default())
        .await
        .unwrap();
    client
        .append_run_log(run.id, &lines(&[("stdout", "one"), ("stderr", "two")]))
        .await
        .unwrap();
    // Anyone of the organization follows it.
    let reader = agent_client(app, &app.org.hr);
    let mut follow = reader.follow_run_log(run.id, 0);
    let first = next_line(&mut follow).await;
    assert_eq!(
        (first.seq, first.stream, first.text.as_str()),
        (1, LogStream::Stdout, "one")
    );
    assert_eq!(next_line(&mut follow).await.text, "two");
    assert_eq!(follow.last(), 2);
    // Longer than a stream lives: the server ends it, and the client resumes after
    // line 2 by itself.
    tokio::time::sleep(std::time::Duration::from_secs(2)).await;
    client
        .append_run_log(run.id, &lines(&[("stdout", "three")]))
        .await
        .unwrap();
    let third = next_line(&mut follow).await;
    assert_eq!((third.seq, third.text.as_str()), (3, "three"), "none twice");
    client
        .finish_run(run.id, &finish(RunStatus::Succeeded))
        .await
        .unwrap();
    assert!(ends(&mut follow).await);
    let end = follow.end().unwrap();
    assert_eq!(
        (end.id, end.status, end.log_lines),
        (run.id, RunStatus::Succeeded, 3)
    );
    assert!(ends(&mut follow).await, "and on every call after");

    // From a line on, of a finished run: the rest, then the end.
    let mut rest = reader.follow_run_log(run.id, 2);
    assert_eq!(next_line(&mut rest).await.seq, 3);
    assert!(ends(&mut rest).await);
    assert_eq!(rest.last(), 3);

    // Another organization's run is not found.
    let theirs = agent_client(app, &app.other.hr);
    let err = theirs.follow_run_log(run.id, 0).next().await.unwrap_err();
    assert_refused(&err, 404, "run_not_found");
}
