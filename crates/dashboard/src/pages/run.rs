//! One run (decision D-106): its facts, its usage (totals and by model), its log — which
//! follows the run live while it runs — and the Stop button for whoever oversees its
//! agent. The log's live part is htmx polling `/ui/runs/{id}/log` (runs write no event
//! per line); without JavaScript the page shows the log as it was when loaded.

use actix_web::HttpResponse;
use actix_web::http::StatusCode;
use actix_web::web::{Data, Path, Query};
use maud::{Markup, html};
use muster_domain::model::{Agent, LogLine, Run, RunId, RunUsage, UsageTotals};
use muster_domain::policy;
use muster_domain::rules::runs::MAX_LOG_PAGE;
use muster_domain::service::LogPage;
use muster_http::AppState;
use serde::Deserialize;

use super::run_list::{run_status, run_took};
use super::uuid_of;
use crate::csrf::{Nothing, Posted};
use crate::figures::{count, usd_or_unknown};
use crate::layout::{Section, csrf_field, not_shown, page, respond, respond_page, see_other, when};
use crate::refusal::Refusal;
use crate::session::Viewer;

/// Log lines shown at once, and read per poll.
const LOG_SHOWN: u32 = MAX_LOG_PAGE;

/// How often a running run's page asks for new lines.
const POLL_EVERY: &str = "every 2s";

/// The query of the run page and of its log's polls.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct LogQuery {
    /// Lines after this number (the page: its tail when absent).
    #[serde(default)]
    after: Option<String>,
    /// The number of the first line the page shows (a poll's: to say the range again).
    #[serde(default)]
    from: Option<String>,
    /// What the page last showed of the run's facts ([`seen`]).
    #[serde(default)]
    seen: Option<String>,
}

impl LogQuery {
    fn after(&self) -> Result<Option<i64>, Refusal> {
        line_number("after", self.after.as_deref())
    }

    fn from(&self) -> Result<Option<i64>, Refusal> {
        line_number("from", self.from.as_deref())
    }
}

/// A line number from the query: absent, or a whole number, 0 or more.
fn line_number(field: &str, typed: Option<&str>) -> Result<Option<i64>, Refusal> {
    match typed.map(str::trim) {
        None | Some("") => Ok(None),
        Some(typed) => typed
            .parse::<i64>()
            .ok()
            .filter(|n| *n >= 0)
            .map(Some)
            .ok_or_else(|| {
                Refusal::bad_request(format!("{field} must be a whole number, 0 or more"))
            }),
    }
}

fn run_id(raw: &str) -> Result<RunId, Refusal> {
    uuid_of("run id", raw).map(RunId::from_uuid)
}

/// What changes the run's facts (everything but its log): the page asks for them again
/// only when this differs from what it shows, so a focused link is not swapped away.
fn seen(run: &Run) -> String {
    format!(
        "{}.{}.{}",
        run.status.as_str(),
        u8::from(run.stop_requested),
        run.usage.totals.reports
    )
}

/// What the run page shows besides its log.
struct Facts {
    run: Run,
    task: Option<String>,
    agent: Option<Agent>,
    /// Where its trace is seen, when the operator named a trace viewer.
    trace_link: Option<String>,
}

impl Facts {
    async fn load(state: &AppState, viewer: &Viewer, id: RunId) -> Result<Self, Refusal> {
        let actor = &viewer.actor;
        let run = state.runs.get(actor, id).await?;
        let task = state
            .tasks
            .get(actor, run.task_id)
            .await
            .ok()
            .map(|t| t.title.as_str().to_owned());
        let agent = state
            .agents
            .get(actor, run.agent_id)
            .await
            .ok()
            .map(|v| v.agent);
        let trace_link = trace_link(state.trace_url.as_deref(), run.trace_id.as_deref());
        Ok(Self {
            run,
            task,
            agent,
            trace_link,
        })
    }

    /// Whether the viewer may ask the run to stop, and there is something to ask: the
    /// service decides again when asked.
    fn stoppable(&self, viewer: &Viewer) -> bool {
        self.run.status.is_open()
            && !self.run.stop_requested
            && self
                .agent
                .as_ref()
                .is_some_and(|agent| policy::may_stop_run(&viewer.actor, agent).is_ok())
    }
}

fn totals_cells(totals: &UsageTotals) -> Markup {
    html! {
        td.num { (count(totals.input_tokens)) }
        td.num { (count(totals.output_tokens)) }
        td.num { (count(totals.cache_read_tokens)) }
        td.num { (count(totals.cache_write_tokens)) }
        td.num { (usd_or_unknown(totals.cost_microusd)) }
        td.num { (count(totals.credits)) }
        td.num { (count(totals.unfunded_credits)) }
        td.num { (count(totals.unpriced_tokens)) }
        td.num { (count(totals.reports)) }
    }
}

fn usage_table(usage: &RunUsage) -> Markup {
    html! {
        @if usage.totals.reports == 0 {
            p { "No usage reported yet." }
        } @else {
            div.table-wrap { table.usage {
                caption { "Tokens, cost in US dollars and credits, by model" }
                thead { tr {
                    th scope="col" { "Model" } th.num scope="col" { "Input" } th.num scope="col" { "Output" }
                    th.num scope="col" { "Cache read" } th.num scope="col" { "Cache write" }
                    th.num scope="col" { "Cost (USD)" } th.num scope="col" { "Credits" }
                    th.num scope="col" { "Unfunded credits" } th.num scope="col" { "Unpriced tokens" }
                    th.num scope="col" { "Reports" }
                } }
                tbody {
                    @for model in &usage.by_model {
                        tr { th scope="row" { (model.model) } (totals_cells(&model.totals)) }
                    }
                }
                tfoot { tr { th scope="row" { "Total" } (totals_cells(&usage.totals)) } }
            } }
        }
    }
}

/// The link to a run's trace: the operator's template with the id in it (an id of 32 hex
/// digits, as runs keep them).
fn trace_link(template: Option<&str>, trace_id: Option<&str>) -> Option<String> {
    let (template, trace_id) = (template?, trace_id?);
    trace_id
        .bytes()
        .all(|b| b.is_ascii_hexdigit())
        .then(|| template.replace("{traceId}", trace_id))
}

/// The run's facts and usage; `oob` when a poll swaps them in.
fn facts_markup(facts: &Facts, oob: bool) -> Markup {
    let run = &facts.run;
    html! {
        div #run-facts data-seen=(seen(run)) hx-swap-oob=[oob.then_some("true")] {
            dl.fields {
                dt { "Status" } dd.run-status { (run_status(run)) }
                dt { "Task" } dd { a href={"/ui/tasks/" (run.task_id)} { (facts.task.clone().unwrap_or_else(|| run.task_id.to_string())) } }
                dt { "Agent" } dd {
                    a href={"/ui/agents/" (run.agent_id)} {
                        (facts.agent.as_ref().map_or_else(|| run.agent_id.to_string(), |a| a.name.clone()))
                    }
                }
                dt { "Adapter" } dd { (run.adapter.as_deref().unwrap_or("—")) }
                dt { "Model" } dd { (run.model.as_deref().unwrap_or("—")) }
                dt { "Started" } dd { (when(run.started_at)) }
                @if let Some(ended) = run.ended_at { dt { "Ended" } dd { (when(ended)) } }
                dt { "Duration" } dd { (run_took(run)) }
                @if let Some(code) = run.exit_code { dt { "Exit code" } dd { (code) } }
                @if let Some(summary) = &run.summary { dt { "Summary" } dd.description { (summary) } }
                dt { "Stop requested" } dd.stop {
                    @match (run.stop_requested, run.stop_reason) {
                        (true, Some(reason)) => { "yes (" (reason.as_str()) ")" },
                        (true, None) => "yes",
                        (false, _) => "no",
                    }
                }
                dt { "Cost" } dd.cost {
                    (usd_or_unknown(run.usage.totals.cost_microusd)) " · "
                    (count(run.usage.totals.credits)) " credits"
                    @if run.usage.totals.unfunded_credits > 0 { " (" (count(run.usage.totals.unfunded_credits)) " unfunded)" }
                    " · " (count(run.usage.totals.tokens())) " tokens"
                }
                @if run.reserved_credits > 0 { dt { "Reserved" } dd { (count(run.reserved_credits)) " credits" } }
                @if let Some(trace) = &run.trace_id {
                    dt { "Trace" } dd.trace {
                        @if let Some(link) = &facts.trace_link { a href=(link) { code { (trace) } } }
                        @else { code { (trace) } }
                    }
                }
            }
            h2 { "Usage" }
            (usage_table(&run.usage))
        }
    }
}

/// The Stop button, when the viewer may use it.
fn stop_control(viewer: &Viewer, facts: &Facts, oob: bool) -> Markup {
    html! {
        div #run-stop.actions hx-swap-oob=[oob.then_some("true")] {
            @if facts.stoppable(viewer) {
                form.inline method="post" action={"/ui/runs/" (facts.run.id) "/stop"}
                    data-confirm="Ask this run to stop? Its agent stops its program at its next report." {
                    (csrf_field(viewer))
                    button.danger type="submit" { "Stop" }
                }
            }
        }
    }
}

fn lines(lines: &[LogLine]) -> Markup {
    html! {
        @for line in lines {
            li class=(line.stream.as_str()) value=(line.seq) { (line.text) }
        }
    }
}

/// What follows the log: the poll for new lines while the run runs (or has lines not
/// yet read), otherwise how the run ended.
fn follower(run: &Run, from: i64, page: &LogPage) -> Markup {
    let more = page.lines.len() >= usize::try_from(LOG_SHOWN).unwrap_or(usize::MAX);
    html! {
        @if run.status.is_open() || more {
            p #log-follow.more
                hx-get={"/ui/runs/" (run.id) "/log?from=" (from) "&after=" (page.last) "&seen=" (seen(run))}
                hx-trigger=(POLL_EVERY) hx-swap="outerHTML" {
                "Following the log: new lines appear as the run prints them (without JavaScript, reload the page)."
            }
        } @else {
            p #log-follow.more { "The run has ended (" (run.status.as_str()) "): its log is complete." }
        }
    }
}

/// Which lines the page shows, from line `from` to the page's last; `oob` when a poll
/// says it again.
fn range(run: &Run, from: i64, page: &LogPage, oob: bool) -> Markup {
    // The run was read before its log: lines may have come in between.
    let total = run.log_lines.max(page.last);
    html! {
        p #log-range.more hx-swap-oob=[oob.then_some("true")] {
            @if total == 0 { "Nothing printed yet." }
            @else if page.last >= from {
                "Lines " (count(from)) "–" (count(page.last)) " of " (count(total)) "."
            } @else { "No lines after line " (count(page.last)) " of " (count(total)) "." }
            @if page.truncated { " The log reached its limit and was cut." }
        }
    }
}

fn log_section(run: &Run, after: i64, page: &LogPage, following: bool) -> Markup {
    let base = format!("/ui/runs/{}", run.id);
    let shown = i64::from(LOG_SHOWN);
    html! {
        section aria-labelledby="log-h" {
            h2 #log-h { "Log" }
            (range(run, after + 1, page, false))
            @if after > 0 || !following {
                nav.log-pages aria-label="Log pages" {
                    @if after > 0 {
                        a href={(base) "?after=0"} { "From the start" } " · "
                        a href={(base) "?after=" ((after - shown).max(0))} { "Earlier lines" }
                    }
                    @if !following && page.last < run.log_lines {
                        @if after > 0 { " · " }
                        a href={(base) "?after=" (page.last)} { "Later lines" } " · "
                        a href=(base) { "Latest lines" }
                    }
                }
            }
            div role="log" aria-label="Run log" {
                ol #log-lines.log { (lines(&page.lines)) }
            }
            @if following { (follower(run, after + 1, page)) }
        }
    }
}

async fn run_page(
    state: &AppState,
    viewer: &Viewer,
    id: RunId,
    after: Option<i64>,
    notice: Option<&Refusal>,
) -> HttpResponse {
    let loaded = async {
        let facts = Facts::load(state, viewer, id).await?;
        let after = after.unwrap_or((facts.run.log_lines - i64::from(LOG_SHOWN)).max(0));
        let log = state.runs.log(&viewer.actor, id, after, LOG_SHOWN).await?;
        Ok::<_, Refusal>((facts, after, log))
    };
    let (facts, after, log) = match loaded.await {
        Ok(loaded) => loaded,
        // The action's refusal, when there was one, says more than the reload's.
        Err(refusal) => return missing(viewer, notice.unwrap_or(&refusal)),
    };
    let run = &facts.run;
    let at_end = log.lines.len() < usize::try_from(LOG_SHOWN).unwrap_or(usize::MAX)
        || log.last >= run.log_lines;
    let following = at_end && (run.status.is_open() || log.last < run.log_lines);
    let title = format!("Run of {}", facts.task.as_deref().unwrap_or("a task"));
    let content = html! {
        p { a href={"/ui/tasks/" (run.task_id)} { "← Task" } }
        (stop_control(viewer, &facts, false))
        (facts_markup(&facts, false))
        (log_section(run, after, &log, following))
    };
    respond_page(
        notice,
        page(Some(viewer), &title, Section::Board, notice, &content),
    )
}

/// The page for a run that cannot be shown (a malformed id, or none of the org's).
fn missing(viewer: &Viewer, refusal: &Refusal) -> HttpResponse {
    let back = ("/ui/board", "Back to the board");
    not_shown(viewer, "Run", Section::Board, back, refusal)
}

/// `GET /ui/runs/{id}`.
pub(crate) async fn show(
    state: Data<AppState>,
    viewer: Viewer,
    raw: Path<String>,
    query: Query<LogQuery>,
) -> HttpResponse {
    let asked = run_id(&raw).and_then(|id| Ok((id, query.after()?)));
    match asked {
        Ok((id, after)) => run_page(&state, &viewer, id, after, None).await,
        Err(refusal) => missing(&viewer, &refusal),
    }
}

/// `GET /ui/runs/{id}/log?from=F&after=N&seen=S`: what a running run's page polls for.
/// The lines after `N`, appended to the log, and the range of lines shown from `F`
/// said again; the facts again when they are no longer `S`;
/// the Stop button gone once there is nothing to stop; and the next poll, or none once
/// the run ended and its log was read.
pub(crate) async fn follow(
    state: Data<AppState>,
    viewer: Viewer,
    raw: Path<String>,
    query: Query<LogQuery>,
) -> HttpResponse {
    let answer = async {
        let id = run_id(&raw)?;
        let after = query.after()?.unwrap_or(0);
        let from = query.from()?.unwrap_or(after + 1);
        let facts = Facts::load(&state, &viewer, id).await?;
        let log = state.runs.log(&viewer.actor, id, after, LOG_SHOWN).await?;
        Ok::<_, Refusal>((facts, from, log))
    };
    let (facts, from, log) = match answer.await {
        Ok(answer) => answer,
        Err(refusal) => return refusal.into_text(),
    };
    let changed = query.seen.as_deref() != Some(seen(&facts.run).as_str());
    let markup = html! {
        @if !log.lines.is_empty() {
            ol hx-swap-oob="beforeend:#log-lines" { (lines(&log.lines)) }
            (range(&facts.run, from, &log, true))
        }
        @if changed {
            (facts_markup(&facts, true))
            @if !facts.stoppable(&viewer) { (stop_control(&viewer, &facts, true)) }
        }
        (follower(&facts.run, from, &log))
    };
    respond(StatusCode::OK, markup)
}

/// `POST /ui/runs/{id}/stop`: asks the run to stop as the signed-in user; the service
/// decides whether they oversee its agent.
pub(crate) async fn stop(
    state: Data<AppState>,
    viewer: Viewer,
    raw: Path<String>,
    _: Posted<Nothing>,
) -> HttpResponse {
    let id = match run_id(&raw) {
        Ok(id) => id,
        Err(refusal) => return missing(&viewer, &refusal),
    };
    match state.runs.stop(&viewer.actor, id).await {
        Ok(_) => see_other(&format!("/ui/runs/{id}")),
        Err(err) => run_page(&state, &viewer, id, None, Some(&Refusal::from(err))).await,
    }
}

#[cfg(test)]
mod tests {
    use muster_domain::model::{AgentId, OrgId, RunStatus, RunUsage, TaskId};
    use time::OffsetDateTime;
    use uuid::Uuid;

    use super::*;

    fn facts(trace_id: Option<&str>, template: Option<&str>) -> Facts {
        let run = Run {
            id: RunId::from_uuid(Uuid::from_u128(5)),
            org_id: OrgId::from_uuid(Uuid::from_u128(1)),
            task_id: TaskId::from_uuid(Uuid::from_u128(9)),
            agent_id: AgentId::from_uuid(Uuid::from_u128(2)),
            status: RunStatus::Running,
            adapter: None,
            model: None,
            started_at: OffsetDateTime::UNIX_EPOCH,
            ended_at: None,
            exit_code: None,
            summary: None,
            stop_requested: false,
            stop_reason: None,
            usage: RunUsage::default(),
            log_bytes: 0,
            log_lines: 0,
            log_truncated: false,
            reserved_credits: 0,
            credits_per_usd: 1_000,
            trace_id: trace_id.map(str::to_owned),
        };
        Facts {
            trace_link: trace_link(template, trace_id),
            run,
            task: None,
            agent: None,
        }
    }

    const TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";

    #[test]
    fn a_run_links_to_its_trace_when_a_viewer_is_named() {
        let shown = facts_markup(
            &facts(Some(TRACE), Some("https://jaeger.test/trace/{traceId}")),
            false,
        )
        .into_string();
        assert!(
            shown.contains(&format!(
                r#"<a href="https://jaeger.test/trace/{TRACE}"><code>{TRACE}</code></a>"#
            )),
            "{shown}"
        );
        let unlinked = facts_markup(&facts(Some(TRACE), None), false).into_string();
        assert!(unlinked.contains(&format!("<code>{TRACE}</code>")));
        assert!(!unlinked.contains("jaeger"));
        let untraced = facts_markup(&facts(None, Some("https://j/{traceId}")), false).into_string();
        assert!(!untraced.contains("Trace"));
    }

    #[test]
    fn only_a_hex_trace_id_goes_into_the_link() {
        assert_eq!(
            trace_link(Some("https://j/{traceId}"), Some("\"><script>")),
            None
        );
        assert_eq!(
            trace_link(Some("https://j/{traceId}"), Some(TRACE)),
            Some(format!("https://j/{TRACE}"))
        );
    }
}
