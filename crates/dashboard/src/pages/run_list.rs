//! Runs as the task and agent pages list them: status, start, duration, tokens and cost
//! in US dollars and credits, each linking to its run page (decision D-106).

use maud::{Markup, html};
use muster_domain::model::{Actor, Agent, Run};
use muster_domain::ports::RunFilter;
use muster_domain::service::PageRequest;
use muster_http::AppState;

use super::agent_name;
use crate::figures::{count, duration, usd_or_unknown};
use crate::layout::when;
use crate::refusal::Refusal;

/// Runs listed on a task's or an agent's page (the newest).
pub(crate) const RUNS_LISTED: u32 = 50;

/// The newest [`RUNS_LISTED`] runs matching `filter`.
pub(crate) async fn runs_of(
    state: &AppState,
    actor: &Actor,
    filter: &RunFilter,
) -> Result<Vec<Run>, Refusal> {
    let page = PageRequest {
        cursor: None,
        limit: RUNS_LISTED,
    };
    Ok(state.runs.list(actor, filter, page).await?.items)
}

/// A run's status, with the stop it was asked for while it still runs.
pub(crate) fn run_status(run: &Run) -> String {
    match (run.status.is_open(), run.stop_requested, run.stop_reason) {
        (true, true, Some(reason)) => format!("running, asked to stop ({})", reason.as_str()),
        (true, true, None) => "running, asked to stop".to_owned(),
        _ => run.status.as_str().to_owned(),
    }
}

/// How long a finished run took; "still running" for an open one.
pub(crate) fn run_took(run: &Run) -> String {
    match run.ended_at {
        Some(ended) => duration(ended - run.started_at),
        None => "still running".to_owned(),
    }
}

/// The runs as a table, newest first; `agents` names their agents (`None`: the column is
/// left out, as on an agent's own page). A full list says that older runs are not shown.
pub(crate) fn runs_table(runs: &[Run], agents: Option<&[Agent]>) -> Markup {
    let more = runs.len() >= usize::try_from(RUNS_LISTED).unwrap_or(usize::MAX);
    html! {
        @if runs.is_empty() {
            p { "No run yet." }
        } @else {
            div.table-wrap { table.runs {
                thead { tr {
                    th scope="col" { "Started" } th scope="col" { "Status" }
                    @if agents.is_some() { th scope="col" { "Agent" } }
                    th scope="col" { "Duration" } th.num scope="col" { "Tokens" }
                    th.num scope="col" { "Cost (USD)" } th.num scope="col" { "Credits" }
                } }
                tbody {
                    @for run in runs {
                        tr data-run=(run.id) {
                            td { a href={"/ui/runs/" (run.id)} aria-label={"Run started " (when(run.started_at))} { (when(run.started_at)) } }
                            td.run-status { (run_status(run)) }
                            @if let Some(agents) = agents {
                                td { a href={"/ui/agents/" (run.agent_id)} { (agent_name(agents, run.agent_id)) } }
                            }
                            td { (run_took(run)) }
                            td.num { (count(run.usage.totals.tokens())) }
                            td.num { (usd_or_unknown(run.usage.totals.cost_microusd)) }
                            td.num {
                                (count(run.usage.totals.credits))
                                @if run.usage.totals.unfunded_credits > 0 { " (+" (count(run.usage.totals.unfunded_credits)) " unfunded)" }
                            }
                        }
                    }
                }
            } }
            @if more { p.more { "The newest " (RUNS_LISTED) " runs are shown." } }
        }
    }
}
