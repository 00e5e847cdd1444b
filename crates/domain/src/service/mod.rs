//! Use cases: one method each; each loads through ports, asks rules and policy, and
//! commits its whole change (state plus audit events) as one transaction through the
//! [`UnitOfWork`](crate::ports::UnitOfWork) port.

pub mod accounts;
mod agents;
mod api_keys;
mod bootstrap;
mod error;
mod events;
pub mod guard;
mod inbound;
mod integrations;
mod locks;
mod paging;
mod projects;
mod remote;
mod routines;
mod runs;
mod scoring;
pub(crate) mod tasks;
mod treasury;
mod webhooks;

pub use accounts::{AccountPorts, AccountService};
pub mod agent_limits {
    //! The checked query values of the agent routes: budget limits, hierarchy depth, the
    //! reputation history and leaderboard sizes.
    pub use super::agents::{
        HISTORY_DEFAULT_LIMIT, HISTORY_MAX_LIMIT, LEADERBOARD_DEFAULT_LIMIT, LEADERBOARD_MAX_LIMIT,
        budget_limit, hierarchy_depth, limit_of,
    };
}
pub use agents::{
    AgentPage, AgentPatch, AgentService, AgentView, BudgetRollover, BudgetStatus, CanSpend,
    CapabilityMatch, Capacity, CreditAmount, HierarchyNode, LeaderboardEntry, LedgerPage,
    MatchQuery, NewAgent, NewChild, Registered, ReputationSummary, ScoreChange, Transfer,
    unique_capabilities,
};
pub use api_keys::{ApiKeyService, NewApiKey};
pub use bootstrap::{BootstrapRequest, BootstrapService, NewOrganization};
pub use error::{Conflict, Entity, NotFound, ServiceError, Unauthorized};
pub use events::{EventQuery, EventService};
pub use inbound::{
    InboundKeyPatch, InboundPorts, InboundService, InboundTask, IssuedKey, MAX_BATCH, NewInboundKey,
};
pub use integrations::{
    ChatCaller, ChatMessage, ChatService, ChatSettings, CodeHostPorts, CodeHostService,
    HostDelivery, IssuedConnection, NewConnection, UNMAPPED_COMPLETION,
};
pub use paging::{Page, PageRequest};
pub use projects::{
    BURN_UP_MAX_TASKS, NewProject, ProjectPage, ProjectPatch, ProjectService, ProjectView,
};
pub use remote::{NewRemoteAgent, RemoteAgentService, RemotePorts, RemoteRegistered, RemoteReport};
pub use routines::{
    FireReport, NewRoutine, RoutineFailure, RoutinePage, RoutinePatch, RoutineService,
};
pub use runs::{
    FinishRun, LogPage, NewUsage, RunPage, RunService, StartRun, UsageAnswer,
    of_task as runs_of_task,
};
pub use tasks::{
    AutoAssign, CandidateQuery, ClaimRequest, EscalationSweep, IntegrationMove, NewEscalation,
    NewTask, SweepFailure, SweepRun, TaskMove, TaskPage, TaskPatch, TaskService, TemplateOverrides,
};
pub use treasury::{TreasuryPage, TreasuryService};
pub use webhooks::{
    DeliveryService, DrainReport, GatedUnitOfWork, HookGate, NewPush, NewWebhook, TestOutcome,
    WebhookPatch, WebhookPorts, WebhookService, check_secret,
};
