//! `muster run …`.

use muster_client::Client;
use muster_client::types::paging::PageResponse;
use muster_client::types::runs::{
    FinishRunBody, ListRunsQuery, LogLineResponse, LogQuery, RunResponse, StartRunBody, StopRunBody,
};
use muster_client::types::time::format;

use crate::args::RunCommand;
use crate::output::{self, clip, or_dash, usd, wire};

pub async fn run(client: &Client, command: RunCommand, json: bool) -> anyhow::Result<()> {
    match command {
        RunCommand::Start {
            task,
            adapter,
            model,
            reserve,
        } => {
            let body = StartRunBody {
                adapter,
                model,
                reserve_credits: reserve,
            };
            show(&client.start_run(task, &body).await?, json)
        }
        RunCommand::Get { id } => show(&client.get_run(id).await?, json),
        RunCommand::List {
            task,
            agent,
            status,
            limit,
            cursor,
        } => {
            let query = ListRunsQuery {
                agent_id: agent,
                task_id: task,
                status,
                limit,
                cursor,
                ..ListRunsQuery::default()
            };
            list(&client.list_runs(&query).await?, json)
        }
        RunCommand::Log { id, follow } => log(client, id, follow, json).await,
        RunCommand::Finish {
            id,
            status,
            exit_code,
            summary,
        } => {
            let body = FinishRunBody {
                status: status.as_str().to_owned(),
                exit_code,
                summary,
            };
            show(&client.finish_run(id, &body).await?, json)
        }
        RunCommand::Stop { id, reason } => {
            show(&client.stop_run(id, &StopRunBody { reason }).await?, json)
        }
    }
}

/// `muster run log`: every line so far; with `follow`, then each new one as it is
/// appended (the server's live log, resumed by itself after a dropped connection),
/// until the run is no longer running and its log is drained.
async fn log(client: &Client, id: uuid::Uuid, follow: bool, json: bool) -> anyhow::Result<()> {
    if !follow {
        drain(client, id, 0, json).await?;
        return Ok(());
    }
    let mut stream = client.follow_run_log(id, 0);
    while let Some(line) = stream.next().await? {
        print_line(&line, json)?;
    }
    if !json && let Some(run) = stream.end() {
        // For people only, and not on stdout: what the log ends with stays the log.
        eprintln!("run {}: {}", run.id, wire(&run.status));
    }
    Ok(())
}

/// One line on stdout: `stream text`, or its JSON.
fn print_line(line: &LogLineResponse, json: bool) -> anyhow::Result<()> {
    if json {
        println!("{}", serde_json::to_string(line)?);
    } else {
        println!("{}", log_line(line));
    }
    Ok(())
}

/// Prints the lines after `after`, page by page; answers the last one's number.
async fn drain(client: &Client, id: uuid::Uuid, mut after: i64, json: bool) -> anyhow::Result<i64> {
    loop {
        let query = LogQuery {
            after: Some(after),
            limit: None,
        };
        let page = client.run_log(id, &query).await?;
        for line in &page.data {
            print_line(line, json)?;
        }
        if page.data.is_empty() || page.last <= after {
            return Ok(after);
        }
        after = page.last;
    }
}

/// One log line for people: `stream text`.
pub(crate) fn log_line(line: &LogLineResponse) -> String {
    format!("{} {}", wire(&line.stream), line.text)
}

/// `muster run list`: one page, as a table or JSON.
fn list(page: &PageResponse<RunResponse>, json: bool) -> anyhow::Result<()> {
    if json {
        return output::json(page);
    }
    output::table(
        &[
            "ID", "TASK", "AGENT", "STATUS", "MODEL", "STARTED", "COST", "CREDITS",
        ],
        &rows(&page.data),
    );
    output::more(page.meta.as_ref());
    Ok(())
}

/// The table rows of `runs`.
pub(crate) fn rows(runs: &[RunResponse]) -> Vec<Vec<String>> {
    runs.iter()
        .map(|r| {
            vec![
                r.id.to_string(),
                r.task_id.to_string(),
                r.agent_id.to_string(),
                wire(&r.status),
                clip(r.model.as_deref().unwrap_or("-"), 30),
                format(r.started_at),
                usd(r.usage.totals.cost_microusd),
                r.usage.totals.credits.to_string(),
            ]
        })
        .collect()
}

fn show(run: &RunResponse, json: bool) -> anyhow::Result<()> {
    if json {
        return output::json(run);
    }
    output::fields(&fields(run));
    Ok(())
}

/// The `key: value` lines of one run.
pub(crate) fn fields(run: &RunResponse) -> Vec<(&'static str, String)> {
    let totals = &run.usage.totals;
    let mut pairs = vec![
        ("id", run.id.to_string()),
        ("task", run.task_id.to_string()),
        ("agent", run.agent_id.to_string()),
        ("status", wire(&run.status)),
        ("adapter", or_dash(run.adapter.as_deref())),
        ("model", or_dash(run.model.as_deref())),
        ("started", format(run.started_at)),
        ("ended", or_dash(run.ended_at.map(format))),
        ("exit code", or_dash(run.exit_code)),
    ];
    if run.stop_requested {
        let reason = run.stop_reason.as_ref().map(wire);
        pairs.push(("stop requested", or_dash(reason)));
    }
    pairs.extend([
        (
            "tokens",
            format!(
                "{} in, {} out, {} cache read, {} cache write",
                totals.input_tokens,
                totals.output_tokens,
                totals.cache_read_tokens,
                totals.cache_write_tokens
            ),
        ),
        ("cost", cost(totals.cost_microusd, totals.unpriced_tokens)),
        ("credits", credits(totals.credits, totals.unfunded_credits)),
        ("reserved", run.reserved_credits.to_string()),
        (
            "log",
            format!(
                "{} lines, {} bytes{}",
                run.log_lines,
                run.log_bytes,
                if run.log_truncated {
                    " (truncated)"
                } else {
                    ""
                }
            ),
        ),
    ]);
    for model in &run.usage.by_model {
        let t = &model.totals;
        pairs.push((
            "by model",
            format!(
                "{}: {} in, {} out, {}, {} credits",
                model.model,
                t.input_tokens,
                t.output_tokens,
                cost(t.cost_microusd, t.unpriced_tokens),
                t.credits
            ),
        ));
    }
    if let Some(summary) = &run.summary {
        pairs.push(("summary", summary.clone()));
    }
    pairs
}

/// A cost, and how many tokens it leaves out.
pub(crate) fn cost(microusd: Option<i64>, unpriced_tokens: i64) -> String {
    if unpriced_tokens > 0 {
        format!("{} ({unpriced_tokens} tokens unpriced)", usd(microusd))
    } else {
        usd(microusd)
    }
}

/// Credits spent, and what went beyond the agent's means.
fn credits(credits: i64, unfunded: i64) -> String {
    if unfunded > 0 {
        format!("{credits} ({unfunded} unfunded)")
    } else {
        credits.to_string()
    }
}
