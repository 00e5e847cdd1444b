//! Entities and value objects of the domain.

mod actor;
mod agent;
mod credentials;
mod event;
mod ids;
pub mod instant;
mod organization;
mod task;
mod text;
mod user;

pub use actor::{Actor, ActorKind, KeyAccess};
pub use agent::{
    Agent, AgentCredentials, AgentHandle, AgentMode, AgentRole, AgentSecret, AgentStatus, FeePct,
    Level,
};
pub use credentials::{
    AccessGrant, AccessToken, ApiKey, ApiKeyName, ApiKeyScope, BearerSecret, LoginOutcome,
    OAuthState, RefreshToken, TokenHash, TokenPair,
};
pub use event::*;
pub use ids::{AgentId, ApiKeyId, EventId, LoginFamilyId, OrgId, RefreshTokenId, TaskId, UserId};
pub use organization::{OrgName, Organization};
pub use task::{Metadata, Tags, Task, TaskPriority, TaskStatus};
pub use text::{Description, Reason, Title};
pub use user::{Email, LoginThrottle, Password, TotpSettings, User, UserRole};
