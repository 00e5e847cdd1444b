//! Request and response shapes of the HTTP contract, and their conversions to and from
//! the domain. Field names are camelCase on the wire.

pub mod agent_money;
pub mod agent_skills;
pub mod agents;
pub mod auth;
pub mod chat;
pub mod claims;
pub mod events;
pub mod guard;
pub mod inbound_webhooks;
pub mod integrations;
pub mod nullable;
pub mod paging;
pub mod routing;
pub mod task_links;
pub mod tasks;
pub mod time;

use serde::Serialize;

/// `{data: ...}`, the envelope of every task and event answer (decision D-9).
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct Data<T> {
    /// The payload.
    pub data: T,
}

/// `{data: [...], meta: {...}}` for paged lists.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct Paged<T, M> {
    /// The page.
    pub data: Vec<T>,
    /// Paging information.
    pub meta: M,
}

/// Parses a UUID from a path segment or query value, naming the field on failure.
pub fn parse_uuid(field: &str, value: &str) -> Result<uuid::Uuid, crate::ApiError> {
    uuid::Uuid::parse_str(value)
        .map_err(|_| crate::ApiError::bad_request(format!("{field} must be a UUID")))
}
pub mod webhooks;
