//! Everything the in-memory store holds: one [`Table`] per kind of row, keyed like the
//! database's primary keys, so that "newest first" is a reverse walk over time-ordered
//! ids exactly as the SQL adapters order by id.

use time::OffsetDateTime;
use uuid::Uuid;

use super::table::Table;
use crate::model::{
    AgentCredentials, ApiKey, Capability, CodeHostConnection, CodeHostLink, Comment,
    DeliveryAttempt, Escalation, Event, GuardSettings, InboundKey, IntegrationAnswer, LedgerEntry,
    LoginThrottle, OAuthState, Organization, RefreshToken, ReputationEvent, StoredResponse, Tally,
    Task, TaskDependency, TaskTemplate, Treasury, TreasuryEntry, User, Webhook,
};

/// An agent as stored: with its sealed secret and its runaway-guard windows.
#[derive(Debug, Clone)]
pub(super) struct AgentRecord {
    pub(super) credentials: AgentCredentials,
    pub(super) tally: Tally,
}

/// An outbound webhook as stored: with the delivery worker's lease.
#[derive(Debug, Clone)]
pub(super) struct HookRecord {
    pub(super) hook: Webhook,
    pub(super) lease: Option<(Uuid, OffsetDateTime)>,
}

impl super::table::Owned for AgentRecord {
    fn org(&self) -> crate::model::OrgId {
        self.credentials.agent.org_id
    }
}

impl super::table::Owned for HookRecord {
    fn org(&self) -> crate::model::OrgId {
        self.hook.org_id
    }
}

/// A post-hook delivery waiting in the outbox.
#[derive(Debug, Clone)]
pub(super) struct Outbox {
    pub(super) event_at: OffsetDateTime,
    pub(super) attempts: u32,
    pub(super) next_at: OffsetDateTime,
}

/// A recovery code of a user.
#[derive(Debug, Clone)]
pub(super) struct RecoveryCode {
    pub(super) hash: [u8; 32],
    pub(super) used_at: Option<OffsetDateTime>,
}

/// A claimed `Idempotency-Key`.
#[derive(Debug, Clone)]
pub(super) struct IdempotencyRecord {
    pub(super) fingerprint: Vec<u8>,
    pub(super) created_at: OffsetDateTime,
    pub(super) response: Option<StoredResponse>,
}

/// The key of an `Idempotency-Key`: scope, method, path, key.
pub(super) type IdempotencySlot = (String, String, String, String);

/// The key of a code-host item: connection, repository, kind, number.
pub(super) type ItemSlot = (Uuid, String, &'static str, i64);

/// The whole store. Cloning it is cheap (an `Arc` per table); a transaction works on a
/// clone and, when it commits, the clone becomes the store.
#[derive(Debug, Clone, Default)]
pub(super) struct State {
    pub(super) organizations: Table<Uuid, Organization>,
    pub(super) guard_settings: Table<Uuid, GuardSettings>,
    pub(super) users: Table<Uuid, User>,
    pub(super) refresh_tokens: Table<Uuid, RefreshToken>,
    pub(super) recovery_codes: Table<Uuid, Vec<RecoveryCode>>,
    pub(super) api_keys: Table<Uuid, ApiKey>,
    pub(super) oauth_states: Table<[u8; 32], OAuthState>,
    /// Login-throttle streaks by their key.
    pub(super) login_throttles: Table<[u8; 32], LoginThrottle>,
    pub(super) agents: Table<Uuid, AgentRecord>,
    pub(super) capabilities: Table<Uuid, Capability>,
    pub(super) tasks: Table<Uuid, Task>,
    pub(super) dependencies: Table<Uuid, TaskDependency>,
    pub(super) comments: Table<Uuid, Comment>,
    pub(super) escalations: Table<Uuid, Escalation>,
    pub(super) templates: Table<Uuid, TaskTemplate>,
    pub(super) ledger: Table<Uuid, LedgerEntry>,
    /// Treasuries by organization (decision D-101).
    pub(super) treasuries: Table<Uuid, Treasury>,
    pub(super) treasury_entries: Table<Uuid, TreasuryEntry>,
    pub(super) reputation: Table<Uuid, ReputationEvent>,
    /// Events by their place in the log (the stream's order).
    pub(super) events: Table<i64, Event>,
    /// Each event's place in `events`.
    pub(super) event_places: Table<Uuid, i64>,
    pub(super) webhooks: Table<Uuid, HookRecord>,
    /// The outbox, by (hook, event).
    pub(super) outbox: Table<(Uuid, Uuid), Outbox>,
    pub(super) attempts: Table<Uuid, DeliveryAttempt>,
    pub(super) inbound_keys: Table<Uuid, InboundKey>,
    pub(super) codehost: Table<Uuid, CodeHostConnection>,
    /// Claimed code-host deliveries and, once recorded, what each came to.
    pub(super) codehost_deliveries: Table<(Uuid, String), Option<IntegrationAnswer>>,
    pub(super) codehost_links: Table<ItemSlot, CodeHostLink>,
    /// Nonces by (agent, nonce): when each expires.
    pub(super) nonces: Table<(Uuid, String), OffsetDateTime>,
    pub(super) idempotency: Table<IdempotencySlot, IdempotencyRecord>,
    /// The place of the last event ever appended (places are never reused).
    pub(super) last_event_place: i64,
}

impl State {
    /// Takes the place of the next appended event.
    pub(super) fn next_event_place(&mut self) -> i64 {
        self.last_event_place += 1;
        self.last_event_place
    }
}
