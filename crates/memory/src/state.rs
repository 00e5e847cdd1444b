//! Everything the in-memory store holds: one [`Table`] per kind of row, keyed like the
//! database's primary keys, so that "newest first" is a reverse walk over time-ordered
//! ids exactly as the SQL adapters order by id.

use muster_domain::model::{
    AgentCredentials, ApiKey, Capability, ClaimReservation, CodeHostConnection, CodeHostLink,
    Comment, DeliveryAttempt, Escalation, Event, GuardSettings, InboundKey, IntegrationAnswer,
    LedgerEntry, LogLine, LoginThrottle, OAuthState, Organization, Project, RefreshToken,
    ReputationEvent, Routine, RoutineFiring, Run, StoredResponse, Tally, Task, TaskDependency,
    TaskTemplate, Treasury, TreasuryEntry, UsageReport, User, Webhook,
};
use time::OffsetDateTime;
use uuid::Uuid;

use crate::table::Table;

/// An agent as stored: with its sealed secret and its runaway-guard windows.
#[derive(Debug, Clone)]
pub(crate) struct AgentRecord {
    pub(crate) credentials: AgentCredentials,
    pub(crate) tally: Tally,
}

/// An outbound webhook as stored: with the delivery worker's lease.
#[derive(Debug, Clone)]
pub(crate) struct HookRecord {
    pub(crate) hook: Webhook,
    pub(crate) lease: Option<(Uuid, OffsetDateTime)>,
}

impl crate::table::Owned for AgentRecord {
    fn org(&self) -> muster_domain::model::OrgId {
        self.credentials.agent.org_id
    }
}

impl crate::table::Owned for HookRecord {
    fn org(&self) -> muster_domain::model::OrgId {
        self.hook.org_id
    }
}

/// A post-hook delivery waiting in the outbox.
#[derive(Debug, Clone)]
pub(crate) struct Outbox {
    pub(crate) event_at: OffsetDateTime,
    pub(crate) attempts: u32,
    pub(crate) next_at: OffsetDateTime,
}

/// A recovery code of a user.
#[derive(Debug, Clone)]
pub(crate) struct RecoveryCode {
    pub(crate) hash: [u8; 32],
    pub(crate) used_at: Option<OffsetDateTime>,
}

/// A claimed `Idempotency-Key`.
#[derive(Debug, Clone)]
pub(crate) struct IdempotencyRecord {
    pub(crate) fingerprint: Vec<u8>,
    pub(crate) created_at: OffsetDateTime,
    pub(crate) response: Option<StoredResponse>,
}

/// The key of an `Idempotency-Key`: scope, method, path, key.
pub(crate) type IdempotencySlot = (String, String, String, String);

/// The key of a code-host item: connection, repository, kind, number.
pub(crate) type ItemSlot = (Uuid, String, &'static str, i64);

/// The whole store. Cloning it is cheap (an `Arc` per table); a transaction works on a
/// clone and, when it commits, the clone becomes the store.
#[derive(Debug, Clone, Default)]
pub(crate) struct State {
    pub(crate) organizations: Table<Uuid, Organization>,
    pub(crate) guard_settings: Table<Uuid, GuardSettings>,
    pub(crate) users: Table<Uuid, User>,
    pub(crate) refresh_tokens: Table<Uuid, RefreshToken>,
    pub(crate) recovery_codes: Table<Uuid, Vec<RecoveryCode>>,
    pub(crate) api_keys: Table<Uuid, ApiKey>,
    pub(crate) oauth_states: Table<[u8; 32], OAuthState>,
    /// Login-throttle streaks by their key.
    pub(crate) login_throttles: Table<[u8; 32], LoginThrottle>,
    pub(crate) agents: Table<Uuid, AgentRecord>,
    pub(crate) capabilities: Table<Uuid, Capability>,
    pub(crate) tasks: Table<Uuid, Task>,
    pub(crate) dependencies: Table<Uuid, TaskDependency>,
    pub(crate) comments: Table<Uuid, Comment>,
    pub(crate) escalations: Table<Uuid, Escalation>,
    pub(crate) templates: Table<Uuid, TaskTemplate>,
    pub(crate) ledger: Table<Uuid, LedgerEntry>,
    /// Treasuries by organization (decision D-101).
    pub(crate) treasuries: Table<Uuid, Treasury>,
    pub(crate) treasury_entries: Table<Uuid, TreasuryEntry>,
    pub(crate) reputation: Table<Uuid, ReputationEvent>,
    /// Events by their place in the log (the stream's order).
    pub(crate) events: Table<i64, Event>,
    /// Each event's place in `events`.
    pub(crate) event_places: Table<Uuid, i64>,
    pub(crate) webhooks: Table<Uuid, HookRecord>,
    /// The outbox, by (hook, event).
    pub(crate) outbox: Table<(Uuid, Uuid), Outbox>,
    pub(crate) attempts: Table<Uuid, DeliveryAttempt>,
    pub(crate) inbound_keys: Table<Uuid, InboundKey>,
    pub(crate) codehost: Table<Uuid, CodeHostConnection>,
    /// Claimed code-host deliveries and, once recorded, what each came to.
    pub(crate) codehost_deliveries: Table<(Uuid, String), Option<IntegrationAnswer>>,
    pub(crate) codehost_links: Table<ItemSlot, CodeHostLink>,
    /// Nonces by (agent, nonce): when each expires.
    pub(crate) nonces: Table<(Uuid, String), OffsetDateTime>,
    pub(crate) idempotency: Table<IdempotencySlot, IdempotencyRecord>,
    /// Runs (decision D-106).
    pub(crate) runs: Table<Uuid, Run>,
    /// Run log lines by (run, seq).
    pub(crate) run_log_lines: Table<(Uuid, i64), LogLine>,
    pub(crate) usage_reports: Table<Uuid, UsageReport>,
    /// Credits claims reserved, by task (decision D-106).
    pub(crate) claim_reservations: Table<Uuid, ClaimReservation>,
    /// Projects (issue 66).
    pub(crate) projects: Table<Uuid, Project>,
    /// Routines (decision D-108).
    pub(crate) routines: Table<Uuid, Routine>,
    /// The due times routines fired for, by (routine, due time in milliseconds).
    pub(crate) routine_firings: Table<(Uuid, i128), RoutineFiring>,
    /// The place of the last event ever appended (places are never reused).
    pub(crate) last_event_place: i64,
}

impl State {
    /// Takes the place of the next appended event.
    pub(crate) fn next_event_place(&mut self) -> i64 {
        self.last_event_place += 1;
        self.last_event_place
    }
}
