//! One agent: its fields, budget and utilization, its spend this period against its
//! budget (by model), its runs, credit history, capabilities, children, and suspend /
//! unsuspend / revoke / activate / reject for those allowed.

use actix_web::HttpResponse;
use actix_web::web::{Data, Path};
use maud::{Markup, html};
use muster_domain::model::{AgentId, AgentStatus, LedgerEntry};
use muster_domain::policy;
use muster_domain::ports::{RunFilter, UsageGroup, UsageGroupBy, UsageQuery};
use muster_domain::service::AgentView;
use muster_domain::service::BudgetStatus;
use muster_domain::service::PageRequest;
use muster_http::AppState;

use super::agents::agent_line;
use super::run_list::{runs_of, runs_table};
use super::spend::gauge_of;
use super::{agent_name, agents_of, uuid_of};
use crate::charts;
use crate::csrf::{Nothing, Posted};
use crate::figures::{count, usd, usd_or_unknown};
use crate::layout::{Section, action_button, not_shown, page, respond_page, see_other, when};
use crate::refusal::Refusal;
use crate::session::Viewer;

/// Ledger lines shown.
const LEDGER_SHOWN: u32 = 50;

fn agent_id(raw: &str) -> Result<AgentId, Refusal> {
    uuid_of("agent id", raw).map(AgentId::from_uuid)
}

fn budget(status: &BudgetStatus) -> Markup {
    html! {
        dl.fields {
            dt { "Balance" } dd { (status.current_balance) " credits" }
            dt { "Period limit" } dd { @match status.budget_period_limit { Some(l) => (l), None => "none" } }
            dt { "Spent this period" } dd { (status.budget_period_spent) }
            dt { "Remaining" } dd { @match status.budget_remaining { Some(r) => (r), None => "unlimited" } }
            dt { "Utilization" } dd {
                @match status.utilization_percent {
                    Some(p) => { meter min="0" max="100" value=(p) aria-label="Budget utilization" {} " " (p) " %" },
                    None => "—",
                }
            }
            dt { "Period started" } dd { (when(status.budget_period_start)) }
        }
    }
}

/// Credits spent this period against the limit, and what the agent's runs used and
/// cost since the period started, by model.
fn spend(name: &str, status: &BudgetStatus, usage: &[UsageGroup]) -> Markup {
    let cost: i64 = usage.iter().fold(0, |sum, g| {
        sum.saturating_add(g.totals.cost_microusd.unwrap_or(0))
    });
    html! {
        p #period-spend {
            "Since " (when(status.budget_period_start)) ": " strong { (count(status.budget_period_spent)) " credits spent" }
            @match status.budget_period_limit {
                Some(limit) => { " of a limit of " (count(limit)) " (" (status.utilization_percent.unwrap_or(0)) " %)." },
                None => { ", with no limit." },
            }
            " The usage its runs reported this period cost " (usd(cost)) "."
        }
        @if let Some(gauge) = gauge_of(status, name.to_owned()) {
            (charts::gauges(&[gauge], "Bar of the credits spent this period against the budget limit, as the sentence above says."))
        }
        @if !usage.is_empty() {
            div.table-wrap { table.usage {
                caption { "Usage this period by model" }
                thead { tr {
                    th scope="col" { "Model" } th.num scope="col" { "Tokens" } th.num scope="col" { "Cost (USD)" }
                    th.num scope="col" { "Credits" } th.num scope="col" { "Unfunded credits" } th.num scope="col" { "Runs" }
                } }
                tbody {
                    @for g in usage {
                        tr {
                            th scope="row" { (g.key) }
                            td.num { (count(g.totals.tokens())) }
                            td.num { (usd_or_unknown(g.totals.cost_microusd)) }
                            td.num { (count(g.totals.credits)) }
                            td.num { (count(g.totals.unfunded_credits)) }
                            td.num { (count(g.runs)) }
                        }
                    }
                }
            } }
        }
    }
}

fn ledger(entries: &[LedgerEntry], names: &[muster_domain::model::Agent]) -> Markup {
    html! {
        @if entries.is_empty() { p { "No credit movement yet." } }
        @else {
            div.table-wrap { table {
                thead { tr { th { "When" } th { "Kind" } th { "Amount" } th { "Balance after" } th { "Counterparty" } th { "Reason" } } }
                tbody {
                    @for e in entries {
                        tr {
                            td { (when(e.created_at)) }
                            td { (e.kind.as_str()) }
                            td { (e.amount) }
                            td { (e.balance_after) }
                            td { @if let Some(other) = e.counterparty_id { (agent_name(names, other)) } }
                            td {
                                @if let Some(reason) = &e.reason { (reason) }
                                @if let Some(task) = e.task_id { " " a href={"/ui/tasks/" (task)} { "task" } }
                            }
                        }
                    }
                }
            } }
        }
    }
}

fn controls(viewer: &Viewer, view: &AgentView) -> Markup {
    let agent = &view.agent;
    let base = format!("/ui/agents/{}", agent.id);
    let admin = policy::may_administer_agents(&viewer.actor).is_ok();
    let writable = policy::may_write(&viewer.actor).is_ok();
    html! {
        div.actions {
            @if agent.status == AgentStatus::Pending && writable {
                (action_button(viewer, &format!("{base}/activate"), "Activate"))
                (action_button(viewer, &format!("{base}/reject"), "Reject"))
            }
            @if admin && agent.status == AgentStatus::Active {
                (action_button(viewer, &format!("{base}/suspend"), "Suspend"))
            }
            @if admin && agent.status == AgentStatus::Suspended {
                (action_button(viewer, &format!("{base}/unsuspend"), "Unsuspend"))
            }
            @if admin && agent.status != AgentStatus::Revoked && agent.status != AgentStatus::Pending {
                form.inline method="post" action={(base) "/revoke"} data-confirm="Revoke this agent for good? It can never sign a request again." {
                    (crate::layout::csrf_field(viewer))
                    button.danger type="submit" { "Revoke" }
                }
            }
        }
    }
}

async fn agent_page(
    state: &AppState,
    viewer: &Viewer,
    id: AgentId,
    notice: Option<&Refusal>,
) -> HttpResponse {
    let actor = &viewer.actor;
    let loaded = async {
        let view = state.agents.get(actor, id).await?;
        let status = state.agents.budget(actor, id).await?;
        let entries = state
            .agents
            .history(
                actor,
                id,
                PageRequest {
                    cursor: None,
                    limit: LEDGER_SHOWN,
                },
            )
            .await?
            .items;
        let agents = agents_of(state, actor).await?;
        let usage = UsageQuery {
            group_by: UsageGroupBy::Model,
            agent: Some(id),
            task: None,
            from: Some(status.budget_period_start),
            to: None,
        };
        let usage = state.runs.usage(actor, &usage).await?;
        let filter = RunFilter {
            agent: Some(id),
            ..RunFilter::default()
        };
        let runs = runs_of(state, actor, &filter).await?;
        Ok::<_, Refusal>((view, status, entries, agents, usage, runs))
    };
    let (view, status, entries, agents, usage, runs) = match loaded.await {
        Ok(loaded) => loaded,
        // The action's refusal, when there was one, says more than the reload's.
        Err(refusal) => return missing(viewer, notice.unwrap_or(&refusal)),
    };
    let agent = &view.agent;
    let children: Vec<_> = agents
        .iter()
        .filter(|a| a.parent_id == Some(agent.id))
        .collect();
    let content = html! {
        p { a href="/ui/agents" { "← Agents" } }
        p.summary { (agent_line(agent)) }
        (controls(viewer, &view))
        dl.fields {
            dt { "Agent id" } dd { code { (agent.handle.as_str()) } }
            dt { "Role" } dd { (agent.role.as_str()) }
            dt { "Mode" } dd { (agent.mode.as_str()) }
            dt { "Level" } dd { (agent.level.get()) }
            dt { "Reputation" } dd { (agent.reputation_score) }
            dt { "Parent" } dd {
                @match agent.parent_id {
                    Some(p) => a href={"/ui/agents/" (p)} { (agent_name(&agents, p)) },
                    None => "none",
                }
            }
            @if let Some(model) = &agent.model { dt { "Model" } dd { (model) } }
            dt { "Registered" } dd { (when(agent.created_at)) }
        }
        section aria-labelledby="budget-h" { h2 #budget-h { "Budget" } (budget(&status)) }
        section aria-labelledby="spend-h" { h2 #spend-h { "Spend this period" } (spend(&agent.name, &status, &usage)) }
        section aria-labelledby="runs-h" { h2 #runs-h { "Runs" } (runs_table(&runs, None)) }
        section aria-labelledby="caps-h" {
            h2 #caps-h { "Capabilities" }
            @if view.capabilities.is_empty() { p { "None declared." } }
            ul { @for c in &view.capabilities { li { (c.name.as_str()) " — " (c.proficiency.as_str()) } } }
        }
        @if !children.is_empty() {
            section aria-labelledby="children-h" {
                h2 #children-h { "Children" }
                ul { @for child in children { li { (agent_line(child)) } } }
            }
        }
        section aria-labelledby="ledger-h" { h2 #ledger-h { "Credit history" } (ledger(&entries, &agents)) }
    };
    respond_page(
        notice,
        page(Some(viewer), &agent.name, Section::Agents, notice, &content),
    )
}

/// The page for an agent that cannot be shown (a malformed id, or none of the org's).
fn missing(viewer: &Viewer, refusal: &Refusal) -> HttpResponse {
    let back = ("/ui/agents", "Back to the agents");
    not_shown(viewer, "Agent", Section::Agents, back, refusal)
}

/// `GET /ui/agents/{id}`.
pub(crate) async fn show(state: Data<AppState>, viewer: Viewer, raw: Path<String>) -> HttpResponse {
    match agent_id(&raw) {
        Ok(id) => agent_page(&state, &viewer, id, None).await,
        Err(refusal) => missing(&viewer, &refusal),
    }
}

/// What the agent buttons do.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Change {
    Suspend,
    Unsuspend,
    Revoke,
    Activate,
    Reject,
}

async fn change(state: &AppState, viewer: &Viewer, raw: &str, change: Change) -> HttpResponse {
    let id = match agent_id(raw) {
        Ok(id) => id,
        Err(refusal) => return missing(viewer, &refusal),
    };
    let actor = &viewer.actor;
    let done = match change {
        Change::Suspend => state.agents.suspend(actor, id).await.map(drop),
        Change::Unsuspend => state.agents.unsuspend(actor, id).await.map(drop),
        Change::Revoke => state.agents.revoke(actor, id).await.map(drop),
        Change::Activate => state.agents.activate(actor, id).await.map(drop),
        Change::Reject => state.agents.reject(actor, id, None).await.map(drop),
    };
    match (done, change) {
        // A rejected spawn is deleted: back to the list.
        (Ok(()), Change::Reject) => see_other("/ui/agents"),
        (Ok(()), _) => see_other(&format!("/ui/agents/{id}")),
        (Err(err), _) => agent_page(state, viewer, id, Some(&Refusal::from(err))).await,
    }
}

macro_rules! change_route {
    ($name:ident, $change:expr) => {
        pub(crate) async fn $name(
            state: Data<AppState>,
            viewer: Viewer,
            raw: Path<String>,
            _: Posted<Nothing>,
        ) -> HttpResponse {
            change(&state, &viewer, &raw, $change).await
        }
    };
}

change_route!(suspend, Change::Suspend);
change_route!(unsuspend, Change::Unsuspend);
change_route!(revoke, Change::Revoke);
change_route!(activate, Change::Activate);
change_route!(reject, Change::Reject);
