//! Answers that the REST API and the MCP tools build alike from a use case's result, so
//! the two say the same thing.

use muster_domain::model::Escalation;
use muster_domain::ports::EventPage;
use muster_domain::service::EventQuery;

use crate::dto::Paged;
use crate::dto::events::{EventListMeta, EventResponse};
use crate::dto::task_links::{DataWithMessage, EscalationResponse};

/// The answer to an escalation: it, and a message naming the agent it went to.
pub(crate) fn escalated(escalation: Escalation) -> DataWithMessage<EscalationResponse> {
    let message = match escalation.to_agent_id {
        Some(agent) => format!("Task escalated to agent {agent}"),
        None => "Task escalated".to_owned(),
    };
    DataWithMessage {
        data: escalation.into(),
        message,
    }
}

/// A page of the audit log, with the total and the page asked for.
pub(crate) fn events(found: EventPage, page: EventQuery) -> Paged<EventResponse, EventListMeta> {
    Paged {
        data: found.events.into_iter().map(EventResponse::from).collect(),
        meta: EventListMeta {
            total: found.total,
            page: page.page,
            limit: page.limit,
        },
    }
}
