//! Entities and value objects of the domain.

mod actor;
mod agent;
mod event;
mod ids;
pub mod instant;
mod organization;
mod task;
mod text;
mod user;

pub use actor::{Actor, ActorKind};
pub use agent::{
    Agent, AgentCredentials, AgentHandle, AgentMode, AgentRole, AgentSecret, AgentStatus, FeePct,
    Level,
};
pub use event::*;
pub use ids::{AgentId, EventId, OrgId, TaskId, UserId};
pub use organization::{OrgName, Organization};
pub use task::{Metadata, Tags, Task, TaskPriority, TaskStatus};
pub use text::{Description, Reason, Title};
pub use user::{Email, Password, User, UserRole};
