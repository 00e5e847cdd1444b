//! The request and response shapes of Muster's HTTP API, and their conversions to and
//! from the domain. Field names are camelCase on the wire.
//!
//! One definition serves both ends: the server (`muster-http`) parses requests into
//! these types and answers with them, and the client (`muster-client`) sends and reads
//! the same types, so the two cannot drift apart. A conversion that rejects input fails
//! with the domain's [`muster_domain::ValidationError`], which the server answers with
//! 400 and its message.
//!
//! The OpenAPI schemas of the shapes (utoipa's `ToSchema` and `IntoParams`, and every
//! `schema(...)`/`param(...)` attribute) are behind the `openapi` feature, which the
//! server turns on: the client compiles no utoipa. Write a new one the same way,
//! `#[cfg_attr(feature = "openapi", schema(...))]`; `cargo xtask client-deps` builds the
//! client without the feature and fails on a bare one.

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
pub mod projects;
pub mod remote_agents;
pub mod routines;
pub mod routing;
pub mod runs;
pub mod task_links;
pub mod tasks;
pub mod time;
pub mod treasury;
pub mod webhooks;

/// The domain's values that appear on the wire (statuses, priorities, roles, modes…),
/// for clients building requests.
pub use muster_domain::model;

use serde::{Deserialize, Serialize};

/// `{data: ...}`, the envelope of every task and event answer (decision D-9).
#[derive(Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Data<T> {
    /// The payload.
    pub data: T,
}

/// `{data: [...], meta: {...}}` for paged lists.
#[derive(Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Paged<T, M> {
    /// The page.
    pub data: Vec<T>,
    /// Paging information.
    pub meta: M,
}
