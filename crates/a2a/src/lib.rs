//! The Agent-to-Agent protocol (A2A, v1.0) as Muster speaks it.
//!
//! - [`types`]: the protocol's JSON shapes (the proto3 JSON of its `a2a.proto`: camel-case
//!   fields, enum names such as `TASK_STATE_WORKING`), for requests and answers.
//! - [`error`]: the protocol's errors, with their JSON-RPC codes, HTTP statuses and
//!   `google.rpc.ErrorInfo` reasons.
//! - [`mapping`]: a Muster task and its comments as an A2A task, A2A states as task
//!   filters, and an A2A message as the text of a new task.
//! - [`push`]: the body of a push notification, for the webhook delivery worker.
//! - [`remote`]: Muster as a client of remote agents: their cards, the hand-over
//!   request, their pushes read as reports.
//!
//! Nothing here does I/O: the HTTP adapter (`muster-http`) reads requests, calls the
//! domain's use cases and answers with these shapes.

pub mod error;
pub mod mapping;
pub mod push;
pub mod remote;
pub mod types;

/// The protocol version this server speaks (`Major.Minor`, as the `A2A-Version` header
/// carries it).
pub const PROTOCOL_VERSION: &str = "1.0";

pub use error::{A2aError, ErrorKind};
