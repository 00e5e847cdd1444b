//! Entities and value objects of the domain.

mod actor;
mod agent;
mod author;
mod capability;
mod codehost;
mod comment;
mod credentials;
mod dependency;
mod escalation;
mod event;
mod guard;
mod idempotency;
mod ids;
mod inbound;
pub mod instant;
mod integration;
mod lease;
mod ledger;
mod organization;
mod project;
mod push;
mod remote;
mod routine;
mod run;
mod task;
mod template;
mod text;
mod throttle;
mod treasury;
mod user;
mod webhook;

pub use actor::{Actor, ActorKind, KeyAccess};
pub use agent::{
    Agent, AgentCredentials, AgentHandle, AgentMode, AgentRole, AgentSecret, AgentStatus, FeePct,
    Level,
};
pub use author::Author;
pub use capability::{Capability, CapabilityName, Proficiency};
pub use codehost::{
    CodeHostConnection, CodeHostLink, InstallationId, ItemRef, LinkKind, RepositoryName,
};
pub use comment::{Comment, CommentBody};
pub use credentials::{
    AccessGrant, AccessToken, ApiKey, ApiKeyName, ApiKeyScope, BearerSecret, LoginOutcome,
    OAuthState, RefreshToken, TokenHash, TokenPair,
};
pub use dependency::TaskDependency;
pub use escalation::{Escalation, EscalationReason};
pub use event::*;
pub use guard::{Breakers, GuardSettings, Tally, TallyAdd, Threshold};
pub use idempotency::{Begun, IdempotencyKey, StoredResponse};
pub use ids::{
    AgentId, ApiKeyId, CapabilityId, CommentId, DependencyId, EscalationId, EventId, LedgerEntryId,
    LoginFamilyId, OrgId, RefreshTokenId, ReputationEventId, TaskId, TemplateId, UserId,
};
pub use ids::{CodeHostConnectionId, DeliveryAttemptId, InboundKeyId, TreasuryEntryId, WebhookId};
pub use ids::{ProjectId, RoutineId, RunId, UsageReportId};
pub use inbound::InboundKey;
pub use integration::{IntegrationAction, IntegrationAnswer};
pub use lease::Lease;
pub use ledger::{CreditKind, LedgerEntry, ReputationEvent, ReputationKind};
pub use organization::{OrgName, Organization};
pub use project::{
    BurnUpDay, Project, ProjectGoal, ProjectName, ProjectStatus, ProjectTally, TaskBrief,
};
pub use push::{
    MAX_PUSH_CONFIGS_PER_TASK, MAX_PUSH_TOKEN_CHARS, PUSH_EVENT_TYPES, PushAuth, PushConfigId,
    TaskPush, check_push_token,
};
pub use remote::{REMOTE_EVENT_TYPES, RemoteAgentLink, hands_over};
pub use routine::{CatchUp, Routine, RoutineFiring, RoutineName, RoutineTask, RoutineWork};
pub use run::{
    ClaimReservation, LogLine, LogStream, ModelUsage, NewLogLine, Run, RunStatus, RunUsage,
    StopReason, UsageReport, UsageTotals,
};
pub use task::{Metadata, Tags, Task, TaskOutcome, TaskPriority, TaskResult, TaskStatus};
pub use template::{TaskTemplate, TemplateName};
pub use text::{Description, Reason, Title};
pub use throttle::{ClientAddress, LoginThrottle, ThrottleKey};
pub use treasury::{RewardPayer, Treasury, TreasuryEntry, TreasuryKind};
pub use user::{Email, Password, TotpSettings, User, UserRole};
pub use webhook::{DeliveryAttempt, HookEvents, HookName, HookTimeout, HookType, HookUrl, Webhook};
