//! The audit log with the API's filters (type, actor, entity, severity, dates), a
//! page at a time; and the events table the task and agent pages reuse.

use actix_web::HttpResponse;
use actix_web::web::{Data, Query};
use maud::{Markup, html};
use muster_domain::model::{Agent, AgentId, Event, EventSeverity};
use muster_domain::ports::EventFilter;
use muster_domain::service::EventQuery;
use muster_http::AppState;
use serde::Deserialize;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use super::{agent_name, agents_of, uuid_of};
use crate::layout::{Section, page, respond_page, when};
use crate::refusal::Refusal;
use crate::session::Viewer;

/// Events a page shows.
const PAGE_SIZE: u32 = 50;

/// Who did it, by name when it was one of the org's agents.
fn actor_of(agents: &[Agent], event: &Event) -> String {
    match event.actor_id {
        Some(id) if agents.iter().any(|a| a.id.as_uuid() == id) => {
            agent_name(agents, AgentId::from_uuid(id))
        }
        Some(id) => id.to_string(),
        None => "system".to_owned(),
    }
}

/// Events, newest first.
pub(crate) fn events_table(events: &[Event], agents: &[Agent]) -> Markup {
    html! {
        @if events.is_empty() {
            p { "No events." }
        } @else {
            div.table-wrap { table.events {
                thead { tr { th { "When" } th { "Type" } th { "Actor" } th { "Entity" } th { "Severity" } th { "Details" } } }
                tbody {
                    @for event in events {
                        tr {
                            td { (when(event.created_at)) }
                            td { code { (event.event_type) } }
                            td { (actor_of(agents, event)) }
                            td {
                                @if event.entity_type == "task" {
                                    a href={"/ui/tasks/" (event.entity_id)} { "task" }
                                } @else if event.entity_type == "agent" {
                                    a href={"/ui/agents/" (event.entity_id)} { "agent" }
                                } @else {
                                    (event.entity_type)
                                }
                            }
                            td { (event.severity.as_str()) }
                            td { code.payload { (event.payload.to_string()) } }
                        }
                    }
                }
            } }
        }
    }
}

/// The filters, as the query string carries them (the API's names).
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Filters {
    #[serde(default, rename = "type")]
    event_type: String,
    #[serde(default)]
    actor_id: String,
    #[serde(default)]
    entity_type: String,
    #[serde(default)]
    entity_id: String,
    #[serde(default)]
    severity: String,
    #[serde(default)]
    start_date: String,
    #[serde(default)]
    end_date: String,
    #[serde(default)]
    page: String,
}

fn date_of(field: &str, typed: &str) -> Result<Option<OffsetDateTime>, Refusal> {
    match typed.trim() {
        "" => Ok(None),
        typed => OffsetDateTime::parse(typed, &Rfc3339)
            .map(Some)
            .map_err(|_| Refusal::bad_request(format!("{field} must be an RFC 3339 date-time"))),
    }
}

fn some(typed: &str) -> Option<String> {
    Some(typed.trim().to_owned()).filter(|t| !t.is_empty())
}

impl Filters {
    fn filter(&self) -> Result<EventFilter, Refusal> {
        let uuid = |field: &str, typed: &str| match typed.trim() {
            "" => Ok(None),
            typed => uuid_of(field, typed).map(Some),
        };
        let severity = match self.severity.trim() {
            "" => None,
            typed => Some(EventSeverity::parse(typed).ok_or_else(|| {
                Refusal::bad_request("severity must be one of info, warning, critical")
            })?),
        };
        Ok(EventFilter {
            event_type: some(&self.event_type),
            actor_id: uuid("actorId", &self.actor_id)?,
            entity_type: some(&self.entity_type),
            entity_id: uuid("entityId", &self.entity_id)?,
            severity,
            start_date: date_of("startDate", &self.start_date)?,
            end_date: date_of("endDate", &self.end_date)?,
            project_id: None,
        })
    }

    fn page(&self) -> Result<u32, Refusal> {
        match self.page.trim() {
            "" => Ok(1),
            typed => typed
                .parse::<u32>()
                .ok()
                .filter(|p| *p >= 1)
                .ok_or_else(|| Refusal::bad_request("page must be a whole number from 1")),
        }
    }

    fn query_for(&self, page: u32) -> String {
        let pairs = [
            ("type", self.event_type.as_str()),
            ("actorId", self.actor_id.as_str()),
            ("entityType", self.entity_type.as_str()),
            ("entityId", self.entity_id.as_str()),
            ("severity", self.severity.as_str()),
            ("startDate", self.start_date.as_str()),
            ("endDate", self.end_date.as_str()),
        ];
        let mut kept: Vec<(&str, String)> = pairs
            .into_iter()
            .filter(|(_, v)| !v.trim().is_empty())
            .map(|(k, v)| (k, v.trim().to_owned()))
            .collect();
        kept.push(("page", page.to_string()));
        serde_urlencoded::to_string(kept).unwrap_or_default()
    }
}

fn filters_form(filters: &Filters) -> Markup {
    let field = |id: &str, label: &str, value: &str, hint: &str| {
        html! {
            div {
                label for=(id) { (label) }
                input id=(id) type="text" name=(id) value=(value) placeholder=(hint);
            }
        }
    };
    html! {
        form.filters method="get" action="/ui/audit" role="search" {
            (field("type", "Type", &filters.event_type, "task.created"))
            (field("actorId", "Actor id", &filters.actor_id, "UUID"))
            (field("entityType", "Entity type", &filters.entity_type, "task, agent, ..."))
            (field("entityId", "Entity id", &filters.entity_id, "UUID"))
            div {
                label for="severity" { "Severity" }
                select #severity name="severity" {
                    option value="" { "any" }
                    @for s in ["info", "warning", "critical"] {
                        option value=(s) selected[filters.severity == s] { (s) }
                    }
                }
            }
            (field("startDate", "From", &filters.start_date, "2026-11-01T00:00:00Z"))
            (field("endDate", "To", &filters.end_date, "2026-12-01T00:00:00Z"))
            button type="submit" { "Filter" }
        }
    }
}

/// `GET /ui/audit`.
pub(crate) async fn show(
    state: Data<AppState>,
    viewer: Viewer,
    filters: Query<Filters>,
) -> HttpResponse {
    let loaded = async {
        let current = filters.page()?;
        let filter = filters.filter()?;
        let agents = agents_of(&state, &viewer.actor).await?;
        let query = EventQuery {
            page: current,
            limit: PAGE_SIZE,
        };
        let page = state.events.list(&viewer.actor, &filter, query).await?;
        Ok::<_, Refusal>((current, agents, page))
    };
    let (content, notice) = match loaded.await {
        Ok((current, agents, found)) => {
            let pages = found.total.div_ceil(u64::from(PAGE_SIZE)).max(1);
            let content = html! {
                (filters_form(&filters))
                p { (found.total) " events; page " (current) " of " (pages) "." }
                (events_table(&found.events, &agents))
                nav.pager aria-label="Pages" {
                    @if current > 1 { a href={"/ui/audit?" (filters.query_for(current - 1))} rel="prev" { "Newer" } " " }
                    @if u64::from(current) < pages { a href={"/ui/audit?" (filters.query_for(current + 1))} rel="next" { "Older" } }
                }
            };
            (content, None)
        }
        Err(refusal) => (filters_form(&filters), Some(refusal)),
    };
    respond_page(
        notice.as_ref(),
        page(
            Some(&viewer),
            "Audit log",
            Section::Audit,
            notice.as_ref(),
            &content,
        ),
    )
}
