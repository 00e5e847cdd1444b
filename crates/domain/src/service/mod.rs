//! Use cases: one method each; each loads through ports, asks rules and policy, and
//! commits its whole change (state plus audit events) as one transaction through the
//! [`UnitOfWork`](crate::ports::UnitOfWork) port.

pub mod accounts;
mod api_keys;
mod bootstrap;
mod error;
mod events;
mod paging;
mod tasks;

pub use accounts::{AccountPorts, AccountService};
pub use api_keys::{ApiKeyService, NewApiKey};
pub use bootstrap::{BootstrapRequest, BootstrapService, NewOrganization};
pub use error::{Conflict, Entity, NotFound, ServiceError, Unauthorized};
pub use events::{EventQuery, EventService};
pub use paging::{Page, PageRequest};
pub use tasks::{
    AutoAssign, CandidateQuery, EscalationSweep, NewEscalation, NewTask, SweepFailure, SweepRun,
    TaskPage, TaskPatch, TaskService, TemplateOverrides,
};
