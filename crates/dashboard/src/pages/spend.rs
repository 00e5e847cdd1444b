//! Spend (decision D-106): what runs cost per day over the last 30 days, stacked by
//! model; the agents that cost the most; and each budgeted agent's spending this period
//! against its limit. Every chart is a server-drawn SVG ([`crate::charts`]) with a table
//! of the same numbers beside it.

use std::collections::{BTreeMap, BTreeSet};

use actix_web::HttpResponse;
use actix_web::web::Data;
use maud::{Markup, html};
use muster_domain::model::{Agent, AgentId, UsageTotals};
use muster_domain::ports::{UsageGroup, UsageGroupBy, UsageQuery};
use muster_domain::service::BudgetStatus;
use muster_http::AppState;
use time::macros::format_description;
use time::{Date, Duration, OffsetDateTime, Time};

use super::{agent_name, agents_of};
use crate::charts::{self, Gauge, Row, Series, Stack};
use crate::figures::{count, usd};
use crate::layout::{Section, page, respond_page, when};
use crate::refusal::Refusal;
use crate::session::Viewer;

/// Days the cost chart covers, today included.
const DAYS: i64 = 30;
/// Models drawn in a colour of their own; more are added up as "other models".
const MODELS_DRAWN: usize = 5;
/// Agents in the top list.
const TOP_AGENTS: usize = 10;

/// What a day cost, by model.
#[derive(Debug)]
struct Day {
    date: Date,
    models: BTreeMap<String, UsageTotals>,
}

/// Totals added up: cost in millionths of a US dollar (of what was priced), credits,
/// tokens.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct Sum {
    cost: i64,
    credits: i64,
    tokens: i64,
}

impl Sum {
    fn of<'a>(totals: impl IntoIterator<Item = &'a UsageTotals>) -> Self {
        totals.into_iter().fold(Self::default(), |sum, t| Self {
            cost: sum.cost.saturating_add(t.cost_microusd.unwrap_or(0)),
            credits: sum.credits.saturating_add(t.credits),
            tokens: sum.tokens.saturating_add(t.tokens()),
        })
    }
}

/// Everything the page shows, read before rendering.
struct Loaded {
    days: Vec<Day>,
    agents: Vec<UsageGroup>,
    budgets: Vec<BudgetStatus>,
    names: Vec<Agent>,
    since: OffsetDateTime,
}

fn usage_query(
    group_by: UsageGroupBy,
    from: OffsetDateTime,
    to: Option<OffsetDateTime>,
) -> UsageQuery {
    UsageQuery {
        group_by,
        agent: None,
        task: None,
        from: Some(from),
        to,
    }
}

fn day_key(date: Date) -> String {
    date.format(format_description!("[year]-[month]-[day]"))
        .unwrap_or_else(|_| date.to_string())
}

async fn load(state: &AppState, viewer: &Viewer) -> Result<Loaded, Refusal> {
    let actor = &viewer.actor;
    let today = OffsetDateTime::now_utc().date();
    let first = today - Duration::days(DAYS - 1);
    let since = first.with_time(Time::MIDNIGHT).assume_utc();
    // Which days saw usage (one query), then each of those by model.
    let used: BTreeSet<String> = state
        .runs
        .usage(actor, &usage_query(UsageGroupBy::Day, since, None))
        .await?
        .into_iter()
        .map(|g| g.key)
        .collect();
    let mut days = Vec::new();
    for offset in 0..DAYS {
        let date = first + Duration::days(offset);
        let mut day = Day {
            date,
            models: BTreeMap::new(),
        };
        if used.contains(&day_key(date)) {
            let from = date.with_time(Time::MIDNIGHT).assume_utc();
            let query = usage_query(UsageGroupBy::Model, from, Some(from + Duration::days(1)));
            for group in state.runs.usage(actor, &query).await? {
                day.models.insert(group.key, group.totals);
            }
        }
        days.push(day);
    }
    let mut agents = state
        .runs
        .usage(actor, &usage_query(UsageGroupBy::Agent, since, None))
        .await?;
    agents.sort_by(|a, b| {
        b.totals
            .cost_microusd
            .unwrap_or(0)
            .cmp(&a.totals.cost_microusd.unwrap_or(0))
            .then(b.totals.credits.cmp(&a.totals.credits))
            .then(a.key.cmp(&b.key))
    });
    Ok(Loaded {
        days,
        agents,
        budgets: state.agents.budgets(actor).await?,
        names: agents_of(state, actor).await?,
        since,
    })
}

/// The models to draw, costliest first, and whether the rest is added up as one.
fn series_of(days: &[Day]) -> (Vec<String>, bool) {
    let mut cost: BTreeMap<&str, i64> = BTreeMap::new();
    for day in days {
        for (model, totals) in &day.models {
            let sum = cost.entry(model.as_str()).or_default();
            *sum = sum.saturating_add(totals.cost_microusd.unwrap_or(0));
        }
    }
    let mut models: Vec<(&str, i64)> = cost.into_iter().collect();
    models.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    let rest = models.len() > MODELS_DRAWN + 1;
    let drawn = if rest { MODELS_DRAWN } else { models.len() };
    (
        models
            .into_iter()
            .take(drawn)
            .map(|(m, _)| m.to_owned())
            .collect(),
        rest,
    )
}

/// A day's cost of each drawn model, then of the rest.
fn day_costs(day: &Day, models: &[String], rest: bool) -> Vec<i64> {
    let cost = |t: &UsageTotals| t.cost_microusd.unwrap_or(0);
    let mut values: Vec<i64> = models
        .iter()
        .map(|m| day.models.get(m).map_or(0, cost))
        .collect();
    if rest {
        values.push(
            day.models
                .iter()
                .filter(|(m, _)| !models.contains(m))
                .map(|(_, t)| cost(t))
                .sum(),
        );
    }
    values
}

fn per_day(days: &[Day]) -> Markup {
    let (models, rest) = series_of(days);
    let mut series: Vec<Series> = models
        .iter()
        .enumerate()
        .map(|(i, m)| Series {
            name: m.clone(),
            colour: charts::colour(i),
        })
        .collect();
    if rest {
        series.push(Series {
            name: "other models".to_owned(),
            colour: charts::REST,
        });
    }
    let short = format_description!("[month]-[day]");
    let bars: Vec<Stack> = days
        .iter()
        .map(|day| Stack {
            label: day.date.format(short).unwrap_or_default(),
            values: day_costs(day, &models, rest),
        })
        .collect();
    let used: Vec<&Day> = days.iter().filter(|d| !d.models.is_empty()).collect();
    html! {
        figure.chart-figure aria-labelledby="per-day-h" {
            figcaption #per-day-h { "Cost per day, last " (DAYS) " days (UTC), by model" }
            @if used.is_empty() {
                p { "No usage was reported in the last " (DAYS) " days." }
            } @else {
                (charts::legend(&series))
                (charts::stacked_bars(&series, &bars, usd, 5, "Bar chart of the cost per day, stacked by model; the table below gives the numbers."))
                div.table-wrap { table.per-day {
                    caption { "Cost per day in US dollars (days without usage left out)" }
                    thead { tr {
                        th scope="col" { "Day" }
                        @for s in &series { th.num scope="col" { (s.name) } }
                        th.num scope="col" { "Total" } th.num scope="col" { "Credits" } th.num scope="col" { "Tokens" }
                    } }
                    tbody {
                        @for day in used {
                            @let total = Sum::of(day.models.values());
                            tr {
                                th scope="row" { (day_key(day.date)) }
                                @for value in day_costs(day, &models, rest) { td.num { (usd(value)) } }
                                td.num { (usd(total.cost)) }
                                td.num { (count(total.credits)) }
                                td.num { (count(total.tokens)) }
                            }
                        }
                    }
                } }
            }
        }
    }
}

fn agent_of(key: &str) -> Option<AgentId> {
    uuid::Uuid::parse_str(key).ok().map(AgentId::from_uuid)
}

fn name_of(names: &[Agent], key: &str) -> String {
    agent_of(key).map_or_else(|| key.to_owned(), |id| agent_name(names, id))
}

fn top_agents(groups: &[UsageGroup], names: &[Agent]) -> Markup {
    let top: Vec<&UsageGroup> = groups.iter().take(TOP_AGENTS).collect();
    let rows: Vec<Row> = top
        .iter()
        .map(|g| Row {
            label: name_of(names, &g.key),
            value: g.totals.cost_microusd.unwrap_or(0),
            shown: usd(g.totals.cost_microusd.unwrap_or(0)),
        })
        .collect();
    html! {
        figure.chart-figure aria-labelledby="top-h" {
            figcaption #top-h { "Top agents by cost, last " (DAYS) " days" }
            @if top.is_empty() {
                p { "No agent reported usage in the last " (DAYS) " days." }
            } @else {
                (charts::row_bars(&rows, "Bar chart of the agents that cost the most; the table below gives the numbers."))
                div.table-wrap { table.top-agents {
                    caption { "The agents that cost the most, costliest first (at most " (TOP_AGENTS) ")" }
                    thead { tr {
                        th scope="col" { "Agent" } th.num scope="col" { "Cost (USD)" } th.num scope="col" { "Credits" }
                        th.num scope="col" { "Unfunded credits" } th.num scope="col" { "Tokens" } th.num scope="col" { "Runs" }
                    } }
                    tbody {
                        @for g in &top {
                            tr {
                                th scope="row" {
                                    @match agent_of(&g.key) {
                                        Some(id) => a href={"/ui/agents/" (id)} { (agent_name(names, id)) },
                                        None => (g.key),
                                    }
                                }
                                td.num { (crate::figures::usd_or_unknown(g.totals.cost_microusd)) }
                                td.num { (count(g.totals.credits)) }
                                td.num { (count(g.totals.unfunded_credits)) }
                                td.num { (count(g.totals.tokens())) }
                                td.num { (count(g.runs)) }
                            }
                        }
                    }
                } }
            }
        }
    }
}

/// Each budgeted agent's spending this period against its limit, as one gauge.
pub(crate) fn gauge_of(status: &BudgetStatus, label: String) -> Option<Gauge> {
    status.budget_period_limit.map(|limit| Gauge {
        label,
        spent: status.budget_period_spent,
        limit,
    })
}

fn budgets(statuses: &[BudgetStatus], names: &[Agent]) -> Markup {
    let gauges: Vec<Gauge> = statuses
        .iter()
        .filter_map(|s| gauge_of(s, agent_name(names, s.agent_id)))
        .collect();
    html! {
        figure.chart-figure aria-labelledby="budgets-h" {
            figcaption #budgets-h { "Budget utilization this period" }
            @if gauges.is_empty() {
                p { "No active agent has a budget limit." }
            } @else {
                (charts::gauges(&gauges, "Bar chart of each budgeted agent's credits spent this period against its limit; the table below gives the numbers."))
                div.table-wrap { table.budgets {
                    caption { "Credits spent this period against each agent's limit, highest utilization first" }
                    thead { tr {
                        th scope="col" { "Agent" } th.num scope="col" { "Spent" } th.num scope="col" { "Limit" }
                        th.num scope="col" { "Remaining" } th.num scope="col" { "Utilization" } th scope="col" { "Period started" }
                    } }
                    tbody {
                        @for s in statuses {
                            tr {
                                th scope="row" { a href={"/ui/agents/" (s.agent_id)} { (agent_name(names, s.agent_id)) } }
                                td.num { (count(s.budget_period_spent)) }
                                td.num { @if let Some(l) = s.budget_period_limit { (count(l)) } }
                                td.num { @if let Some(r) = s.budget_remaining { (count(r)) } }
                                td.num { @if let Some(p) = s.utilization_percent { (p) " %" } }
                                td { (when(s.budget_period_start)) }
                            }
                        }
                    }
                } }
            }
        }
    }
}

/// `GET /ui/spend`.
pub(crate) async fn show(state: Data<AppState>, viewer: Viewer) -> HttpResponse {
    let loaded = match load(&state, &viewer).await {
        Ok(loaded) => loaded,
        Err(refusal) => {
            let content = html! { p { a href="/ui/board" { "Back to the board" } } };
            return respond_page(
                Some(&refusal),
                page(
                    Some(&viewer),
                    "Spend",
                    Section::Spend,
                    Some(&refusal),
                    &content,
                ),
            );
        }
    };
    let total = Sum::of(loaded.agents.iter().map(|g| &g.totals));
    let runs = loaded
        .agents
        .iter()
        .fold(0_i64, |runs, g| runs.saturating_add(g.runs));
    let content = html! {
        p.summary #spend-total {
            "Since " (when(loaded.since)) ": "
            strong { (usd(total.cost)) } " in "
            (count(runs)) " runs, " (count(total.credits)) " credits, "
            (count(total.tokens)) " tokens."
        }
        (per_day(&loaded.days))
        (top_agents(&loaded.agents, &loaded.names))
        (budgets(&loaded.budgets, &loaded.names))
    };
    respond_page(
        None,
        page(Some(&viewer), "Spend", Section::Spend, None, &content),
    )
}
