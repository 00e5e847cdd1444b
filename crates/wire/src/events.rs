//! `/events` shapes.

use muster_domain::model::{Event, EventSeverity};
use muster_domain::ports::EventFilter;
use muster_domain::service::EventQuery;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use time::OffsetDateTime;
use uuid::Uuid;

use super::time::{DayEdge, parse};
use muster_domain::ValidationError;

/// Query of `GET /events`.
#[derive(Debug, Default, Deserialize, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::IntoParams))]
#[cfg_attr(feature = "openapi", into_params(parameter_in = Query))]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ListEventsQuery {
    #[serde(rename = "type")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub event_type: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub actor_id: Option<Uuid>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub entity_type: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub entity_id: Option<Uuid>,
    /// Only events about this project or about one of its tasks.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub project_id: Option<Uuid>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub severity: Option<EventSeverity>,
    #[cfg_attr(feature = "openapi", param(format = DateTime))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start_date: Option<String>,
    #[cfg_attr(feature = "openapi", param(format = DateTime))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub end_date: Option<String>,
    // A u32: utoipa would say int32, whose maximum is half of it.
    #[cfg_attr(feature = "openapi", param(minimum = 1, maximum = 4_294_967_295_u64, format = Int64))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub page: Option<u32>,
    #[cfg_attr(feature = "openapi", param(minimum = 1, maximum = 200))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limit: Option<u32>,
}

impl ListEventsQuery {
    /// The filter, with dates checked.
    pub fn filter(&self) -> Result<EventFilter, ValidationError> {
        let start_date = self
            .start_date
            .as_deref()
            .map(|v| parse("startDate", v, DayEdge::Start))
            .transpose()?;
        let end_date = self
            .end_date
            .as_deref()
            .map(|v| parse("endDate", v, DayEdge::End))
            .transpose()?;
        if let (Some(start), Some(end)) = (start_date, end_date)
            && start > end
        {
            return Err(ValidationError::new("startDate must not be after endDate"));
        }
        Ok(EventFilter {
            event_type: self.event_type.clone(),
            actor_id: self.actor_id,
            entity_type: self.entity_type.clone(),
            entity_id: self.entity_id,
            project_id: self
                .project_id
                .map(muster_domain::model::ProjectId::from_uuid),
            severity: self.severity,
            start_date,
            end_date,
        })
    }

    /// Whether the query asks for a page (which a stream has no use for).
    pub fn pages(&self) -> bool {
        self.page.is_some() || self.limit.is_some()
    }

    /// Page and limit with their defaults (1 and 50); ranges are checked by the use case.
    pub fn page(&self) -> EventQuery {
        EventQuery {
            page: self.page.unwrap_or(1),
            limit: self.limit.unwrap_or(EventQuery::DEFAULT_LIMIT),
        }
    }
}

/// Paging information of `GET /events`.
#[derive(Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct EventListMeta {
    /// Events matching the filter, over all pages.
    pub total: u64,
    /// This page's number, from 1.
    pub page: u32,
    /// Page size.
    pub limit: u32,
}

/// An audit event on the wire.
#[derive(Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct EventResponse {
    pub id: Uuid,
    pub org_id: Uuid,
    #[serde(rename = "type")]
    pub event_type: String,
    pub actor_id: Option<Uuid>,
    pub entity_type: String,
    pub entity_id: Uuid,
    pub severity: EventSeverity,
    pub payload: Value,
    #[serde(with = "super::time::rfc3339")]
    pub created_at: OffsetDateTime,
}

impl EventResponse {
    /// The event's id.
    pub fn id(&self) -> Uuid {
        self.id
    }
}

impl From<Event> for EventResponse {
    fn from(event: Event) -> Self {
        Self {
            id: event.id.as_uuid(),
            org_id: event.org_id.as_uuid(),
            event_type: event.event_type,
            actor_id: event.actor_id,
            entity_type: event.entity_type,
            entity_id: event.entity_id,
            severity: event.severity,
            payload: event.payload,
            created_at: event.created_at,
        }
    }
}
