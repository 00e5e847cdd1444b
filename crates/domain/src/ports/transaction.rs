//! One use case, one transaction: the [`UnitOfWork`] port runs a piece of work against a
//! [`Transaction`] and commits everything it wrote, or nothing.

use std::any::Any;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};

use async_trait::async_trait;
use time::OffsetDateTime;

use super::RepositoryError;
use crate::model::{
    Agent, AgentCredentials, AgentId, ApiKey, ApiKeyId, Capability, CapabilityId,
    CodeHostConnection, CodeHostConnectionId, CodeHostLink, Comment, CommentId, DeliveryAttempt,
    DependencyId, Email, Escalation, Event, EventId, GuardSettings, InboundKey, InboundKeyId,
    IntegrationAnswer, ItemRef, LedgerEntry, Level, LoginFamilyId, OAuthState, OrgId, Organization,
    RefreshToken, RefreshTokenId, ReputationEvent, Tally, TallyAdd, Task, TaskDependency, TaskId,
    TaskTemplate, TokenHash, Treasury, TreasuryEntry, User, UserId, Webhook, WebhookId,
};
use crate::service::ServiceError;

/// A boxed future borrowing the transaction for `'t`.
pub type TxFuture<'t, T> = Pin<Box<dyn Future<Output = T> + Send + 't>>;

/// The value a piece of work hands back, type-erased so that [`UnitOfWork`] stays
/// object-safe; [`transact`] restores the type.
pub type WorkOutput = Box<dyn Any + Send>;

/// A piece of work to run in one transaction. It may be run more than once, each time
/// from the start in a transaction of its own, of which at most one commits: the
/// pre-hook gate runs it to learn what it would write, and again once the hooks have
/// answered. So it has no effect outside its transaction, and each run decides anew
/// from what it reads (with the clock and ids of the first run, see [`Clock::now`]).
///
/// [`Clock::now`]: super::Clock::now
pub type Work = Arc<
    dyn for<'t> Fn(&'t mut dyn Transaction) -> TxFuture<'t, Result<WorkOutput, ServiceError>>
        + Send
        + Sync,
>;

/// Makes `run` a [`Work`] (giving the closure its higher-ranked signature).
pub fn work<F>(run: F) -> Work
where
    F: for<'t> Fn(&'t mut dyn Transaction) -> TxFuture<'t, Result<WorkOutput, ServiceError>>
        + Send
        + Sync
        + 'static,
{
    Arc::new(run)
}

/// How a read inside a transaction holds the row it read until the commit, so that the
/// rule decided on it still holds when the change is written. (SQLite needs neither:
/// its write transactions run one at a time.)
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lock {
    /// Others may read the row, nobody may change it (PostgreSQL `FOR SHARE`).
    Share,
    /// The caller will change the row (never its key); concurrent lockers wait
    /// (PostgreSQL `FOR NO KEY UPDATE`, which lets foreign-key checks through).
    Update,
    /// A plain read that holds nothing, for facts that never change (an agent's parent)
    /// read before the rows that must be locked in order.
    Nothing,
}

/// Runs work as ONE database transaction on whichever engine is configured: reads that
/// lock what a rule depends on, writes to several aggregates, and the audit events, all
/// committed together when the work returns `Ok`, all rolled back when it returns `Err`
/// or the store fails. Adapters run the work to completion even when the caller goes
/// away, so a change is never left half-driven.
#[async_trait]
pub trait UnitOfWork: Send + Sync {
    /// Runs `work` in a new transaction. Use [`transact`] for a typed result.
    async fn run(&self, work: Work) -> Result<WorkOutput, ServiceError>;
}

/// Runs `work` through `uow` in one transaction and returns its value. The closure is
/// cloned for each run of the work (see [`Work`]), so what it captures must be `Clone`.
///
/// ```
/// use muster_domain::model::{OrgId, TaskId};
/// use muster_domain::ports::{Lock, UnitOfWork, transact};
/// use muster_domain::service::{Entity, NotFound, ServiceError};
///
/// /// Reads a task's title inside a transaction, holding the row until the commit.
/// async fn title_of(uow: &dyn UnitOfWork, org: OrgId, id: TaskId) -> Result<String, ServiceError> {
///     transact(uow, move |tx| {
///         Box::pin(async move {
///             let task = tx
///                 .task(org, id, Lock::Share)
///                 .await?
///                 .ok_or(NotFound::new(Entity::Task, id))?;
///             Ok(task.title.as_str().to_owned())
///         })
///     })
///     .await
/// }
/// ```
pub async fn transact<T, F>(uow: &dyn UnitOfWork, work: F) -> Result<T, ServiceError>
where
    T: Send + 'static,
    F: for<'t> FnOnce(&'t mut dyn Transaction) -> TxFuture<'t, Result<T, ServiceError>>
        + Clone
        + Send
        + 'static,
{
    // Behind a lock only to be shared between threads without asking `F: Sync`.
    let once = Mutex::new(work);
    let output = uow
        .run(self::work(move |tx| {
            let run = once.lock().unwrap_or_else(PoisonError::into_inner).clone();
            Box::pin(async move { run(tx).await.map(|value| Box::new(value) as WorkOutput) })
        }))
        .await?;
    output
        .downcast::<T>()
        .map(|value| *value)
        .map_err(|_| ServiceError::internal("a unit of work returned a value of another type"))
}

/// What a use case may read and write inside its transaction. Every method is scoped
/// to one organization except where it says otherwise; a row of another organization
/// is a missing row.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait Transaction: Send {
    /// Whether any organization exists yet (across the deployment).
    async fn any_organization(&mut self) -> Result<bool, RepositoryError>;

    /// Stores a new organization.
    async fn insert_organization(&mut self, org: &Organization) -> Result<(), RepositoryError>;

    /// Stores a new user; a taken e-mail in the organization is
    /// [`UniqueKey::UserEmail`](super::UniqueKey::UserEmail).
    async fn insert_user(&mut self, user: &User) -> Result<(), RepositoryError>;

    /// The deployment's default organization (decision D-14), if any.
    async fn default_organization(&mut self) -> Result<Option<Organization>, RepositoryError>;

    /// The user with `id` in `org`, held with `lock` until the end of the transaction.
    async fn user(
        &mut self,
        org: OrgId,
        id: UserId,
        lock: Lock,
    ) -> Result<Option<User>, RepositoryError>;

    /// The user of `org` with that (normalized) e-mail, held with `lock`.
    async fn user_by_email(
        &mut self,
        org: OrgId,
        email: &Email,
        lock: Lock,
    ) -> Result<Option<User>, RepositoryError>;

    /// Replaces the stored user's mutable fields (e-mail, name, role, password hash,
    /// `email_verified`, second factor, throttle, last login) with those of `user`,
    /// stamped `at`. `false` when no such user exists in its organization; a taken e-mail
    /// is [`UniqueKey::UserEmail`](super::UniqueKey::UserEmail).
    async fn update_user(
        &mut self,
        user: &User,
        at: OffsetDateTime,
    ) -> Result<bool, RepositoryError>;

    /// Stores a new refresh token.
    async fn insert_refresh_token(&mut self, token: &RefreshToken) -> Result<(), RepositoryError>;

    /// The refresh token whose hash is `hash`, held with `lock`. Found by its secret, so
    /// not scoped to an organization.
    async fn refresh_token_by_hash(
        &mut self,
        hash: &TokenHash,
        lock: Lock,
    ) -> Result<Option<RefreshToken>, RepositoryError>;

    /// Marks the refresh token `id` as replaced by a successor at `at`.
    async fn mark_refresh_token_replaced(
        &mut self,
        id: RefreshTokenId,
        at: OffsetDateTime,
    ) -> Result<(), RepositoryError>;

    /// Revokes every not yet revoked token of the login `family`; how many.
    async fn revoke_login_family(
        &mut self,
        family: LoginFamilyId,
        at: OffsetDateTime,
    ) -> Result<u64, RepositoryError>;

    /// Revokes every not yet revoked refresh token of `user`; how many.
    async fn revoke_user_refresh_tokens(
        &mut self,
        user: UserId,
        at: OffsetDateTime,
    ) -> Result<u64, RepositoryError>;

    /// Replaces all recovery codes of `user` with `hashes` (none removes them).
    async fn replace_recovery_codes(
        &mut self,
        user: UserId,
        hashes: &[TokenHash],
    ) -> Result<(), RepositoryError>;

    /// Uses up the unused recovery code `hash` of `user` at `at`; `false` when the user
    /// has no such unused code.
    async fn use_recovery_code(
        &mut self,
        user: UserId,
        hash: &TokenHash,
        at: OffsetDateTime,
    ) -> Result<bool, RepositoryError>;

    /// Stores a new API key.
    async fn insert_api_key(&mut self, key: &ApiKey) -> Result<(), RepositoryError>;

    /// Deletes the key `id` if `user` of `org` owns it; the deleted key, or `None`.
    async fn delete_api_key(
        &mut self,
        org: OrgId,
        user: UserId,
        id: ApiKeyId,
    ) -> Result<Option<ApiKey>, RepositoryError>;

    /// Stores a started identity-provider sign-in.
    async fn insert_oauth_state(&mut self, state: &OAuthState) -> Result<(), RepositoryError>;

    /// Removes and answers the started sign-in whose state hashes to `hash`, so each
    /// state is accepted once.
    async fn take_oauth_state(
        &mut self,
        hash: &TokenHash,
    ) -> Result<Option<OAuthState>, RepositoryError>;

    /// The login-throttle streak stored under `key` (empty when none), held until the
    /// end of the transaction so that concurrent attempts are counted one after the
    /// other. A missing streak is stored empty first (stamped `now`), so that even the
    /// first attempts of a streak queue behind each other.
    async fn login_throttle(
        &mut self,
        key: &crate::model::ThrottleKey,
        now: OffsetDateTime,
    ) -> Result<crate::model::LoginThrottle, RepositoryError>;

    /// Stores `throttle` as the streak under `key`.
    async fn save_login_throttle(
        &mut self,
        key: &crate::model::ThrottleKey,
        throttle: &crate::model::LoginThrottle,
    ) -> Result<(), RepositoryError>;

    /// Forgets the streak under `key`, if any.
    async fn clear_login_throttle(
        &mut self,
        key: &crate::model::ThrottleKey,
    ) -> Result<(), RepositoryError>;

    /// The agent with `id` in `org`, held with `lock` until the end of the transaction.
    async fn agent(
        &mut self,
        org: OrgId,
        id: AgentId,
        lock: Lock,
    ) -> Result<Option<Agent>, RepositoryError>;

    /// Stores a new agent with its sealed secret; a taken handle, in any case (compared
    /// by [`AgentHandle::key`](crate::model::AgentHandle::key)), is
    /// [`UniqueKey::AgentHandle`](super::UniqueKey::AgentHandle).
    async fn insert_agent(&mut self, agent: &AgentCredentials) -> Result<(), RepositoryError>;

    /// Replaces the stored agent's mutable fields with those of `agent`, stamped `at`.
    /// Returns `false` when no such agent exists in its organization.
    async fn update_agent(
        &mut self,
        agent: &Agent,
        at: OffsetDateTime,
    ) -> Result<bool, RepositoryError>;

    /// Deletes the agent `id` of `org` (a rejected pending agent, decision D-53) with its
    /// capabilities; whether it existed.
    async fn delete_agent(&mut self, org: OrgId, id: AgentId) -> Result<bool, RepositoryError>;

    /// Counts `add` on the runaway-guard windows of the agent whose UUID is `actor`, in
    /// one statement that also locks its row until the commit (so parallel changes of
    /// one agent count one after the other), exactly as
    /// [`rules::guard::count`](crate::rules::guard::count) says; the windows after it.
    /// `None` when `actor` is no agent of `org` (a user, say).
    async fn tally_agent(
        &mut self,
        org: OrgId,
        actor: uuid::Uuid,
        add: &TallyAdd,
    ) -> Result<Option<Tally>, RepositoryError>;

    /// Empties both runaway-guard windows of the agent `id` (when it is unsuspended).
    async fn reset_tally(&mut self, org: OrgId, id: AgentId) -> Result<(), RepositoryError>;

    /// The organization's own runaway-guard thresholds.
    async fn guard_settings(&mut self, org: OrgId) -> Result<GuardSettings, RepositoryError>;

    /// Replaces the organization's own runaway-guard thresholds.
    async fn set_guard_settings(
        &mut self,
        org: OrgId,
        settings: &GuardSettings,
    ) -> Result<(), RepositoryError>;

    /// How many children of `parent` are `active` or `pending` (decision D-51).
    async fn live_children(&mut self, org: OrgId, parent: AgentId) -> Result<u32, RepositoryError>;

    /// The capability `id` of `org`, held with `lock`.
    async fn capability(
        &mut self,
        org: OrgId,
        id: CapabilityId,
        lock: Lock,
    ) -> Result<Option<Capability>, RepositoryError>;

    /// Stores new capabilities; a name the agent already has is
    /// [`UniqueKey::Capability`](super::UniqueKey::Capability).
    async fn insert_capabilities(
        &mut self,
        capabilities: &[Capability],
    ) -> Result<(), RepositoryError>;

    /// Writes the proficiency of `capability`; whether it exists.
    async fn update_capability(&mut self, capability: &Capability)
    -> Result<bool, RepositoryError>;

    /// Deletes the capability `id` of `org`; whether it existed.
    async fn delete_capability(
        &mut self,
        org: OrgId,
        id: CapabilityId,
    ) -> Result<bool, RepositoryError>;

    /// Starts a new budget period at `start` for every agent (of every organization)
    /// whose period began before it: nothing spent yet. How many agents rolled over.
    /// Running it again for the same `start` changes nothing, so instances may race.
    async fn roll_budget_periods(&mut self, start: OffsetDateTime) -> Result<u64, RepositoryError>;

    /// The task with `id` in `org`, held with `lock` until the end of the transaction.
    async fn task(
        &mut self,
        org: OrgId,
        id: TaskId,
        lock: Lock,
    ) -> Result<Option<Task>, RepositoryError>;

    /// Stores a new task.
    async fn insert_task(&mut self, task: &Task) -> Result<(), RepositoryError>;

    /// Replaces the stored task with `task` (whose `version` is already bumped) only if
    /// the stored version is still `expected_version`; `false` when it is not (or the
    /// task is gone).
    async fn update_task(
        &mut self,
        task: &Task,
        expected_version: i64,
    ) -> Result<bool, RepositoryError>;

    /// Marks that something happened to the task (a comment) at `at`, without changing
    /// it: the stale-task sweep looks at this.
    async fn touch_task(
        &mut self,
        org: OrgId,
        id: TaskId,
        at: OffsetDateTime,
    ) -> Result<(), RepositoryError>;

    /// Serializes changes to the dependency graph of `org` until the end of the
    /// transaction, so that two concurrent additions cannot close a cycle that neither
    /// saw (PostgreSQL: a transaction-scoped advisory lock; SQLite: its one writer).
    async fn lock_dependency_graph(&mut self, org: OrgId) -> Result<(), RepositoryError>;

    /// Whether `to` is reachable from `from` by following "depends on" edges of `org`,
    /// in one query however long the chain.
    async fn depends_transitively(
        &mut self,
        org: OrgId,
        from: TaskId,
        to: TaskId,
    ) -> Result<bool, RepositoryError>;

    /// Stores a new dependency; an existing one between the same two tasks is
    /// [`UniqueKey::Dependency`](super::UniqueKey::Dependency).
    async fn insert_dependency(
        &mut self,
        dependency: &TaskDependency,
    ) -> Result<(), RepositoryError>;

    /// Deletes the dependency `id` of `task`; the deleted dependency, or `None`.
    async fn delete_dependency(
        &mut self,
        org: OrgId,
        task: TaskId,
        id: DependencyId,
    ) -> Result<Option<TaskDependency>, RepositoryError>;

    /// The tasks `task` depends on through blocking dependencies that are not `done`,
    /// oldest dependency first.
    async fn open_blocking_dependencies(
        &mut self,
        org: OrgId,
        task: TaskId,
    ) -> Result<Vec<TaskId>, RepositoryError>;

    /// The comment `id` of `task`.
    async fn comment(
        &mut self,
        org: OrgId,
        task: TaskId,
        id: CommentId,
    ) -> Result<Option<Comment>, RepositoryError>;

    /// Stores a new comment.
    async fn insert_comment(&mut self, comment: &Comment) -> Result<(), RepositoryError>;

    /// Stores an escalation. An automatic one is stored at most once per task and reason:
    /// `false` when it was already there (nothing stored).
    async fn insert_escalation(&mut self, escalation: &Escalation)
    -> Result<bool, RepositoryError>;

    /// The most senior agent of `org` that can take work above `level`: active,
    /// executing, the highest level strictly above it, the earliest created among equals.
    async fn senior_agent_above(
        &mut self,
        org: OrgId,
        level: Option<Level>,
    ) -> Result<Option<Agent>, RepositoryError>;

    /// Stores a new template; a taken name is
    /// [`UniqueKey::TemplateName`](super::UniqueKey::TemplateName).
    async fn insert_template(&mut self, template: &TaskTemplate) -> Result<(), RepositoryError>;

    /// Appends movements of credits.
    async fn insert_ledger_entries(
        &mut self,
        entries: &[LedgerEntry],
    ) -> Result<(), RepositoryError>;

    /// The organization's treasury (decision D-101). With [`Lock::Update`] its row is
    /// created at 0 when missing and locked until the commit (after any task and agent
    /// rows: the treasury is always locked last); otherwise a missing row reads as 0.
    async fn treasury(&mut self, org: OrgId, lock: Lock) -> Result<Treasury, RepositoryError>;

    /// Stores the treasury's new balance (its row was locked with [`Lock::Update`]).
    async fn update_treasury(&mut self, treasury: &Treasury) -> Result<(), RepositoryError>;

    /// Appends movements of the treasury.
    async fn insert_treasury_entries(
        &mut self,
        entries: &[TreasuryEntry],
    ) -> Result<(), RepositoryError>;

    /// Appends changes of reputation.
    async fn insert_reputation_events(
        &mut self,
        events: &[ReputationEvent],
    ) -> Result<(), RepositoryError>;

    /// Appends audit events, in order, in one statement.
    async fn append_events(&mut self, events: &[Event]) -> Result<(), RepositoryError>;

    /// The events appended so far in this transaction, in order: the would-be events a
    /// pre-hook is asked about (decision D-84).
    fn written_events(&self) -> Vec<Event>;

    /// The outbound webhook, if it is in `org`.
    async fn webhook(
        &mut self,
        org: OrgId,
        id: WebhookId,
        lock: Lock,
    ) -> Result<Option<Webhook>, RepositoryError>;

    /// The organization's enabled pre-hooks (read in the transaction whose events they
    /// would be asked about).
    async fn pre_hooks(&mut self, org: OrgId) -> Result<Vec<Webhook>, RepositoryError>;

    /// The A2A push notification configs of `task` (webhooks scoped to it), oldest
    /// first.
    async fn push_configs(
        &mut self,
        org: OrgId,
        task: TaskId,
    ) -> Result<Vec<Webhook>, RepositoryError>;

    /// Registers a webhook.
    async fn insert_webhook(&mut self, hook: &Webhook) -> Result<(), RepositoryError>;

    /// Stores every field of a webhook; `false` when it is gone.
    async fn update_webhook(&mut self, hook: &Webhook) -> Result<bool, RepositoryError>;

    /// Stores only what a delivery changes on a hook (enabled, failures, last error,
    /// updated at); `false` when it is gone.
    async fn update_webhook_health(&mut self, hook: &Webhook) -> Result<bool, RepositoryError>;

    /// Deletes a webhook with its pending deliveries and log; `false` when it is gone.
    async fn delete_webhook(&mut self, org: OrgId, id: WebhookId) -> Result<bool, RepositoryError>;

    /// Records calls of hooks in their delivery logs.
    async fn insert_delivery_attempts(
        &mut self,
        attempts: &[DeliveryAttempt],
    ) -> Result<(), RepositoryError>;

    /// After a failed attempt at `event` for `hook`: `attempts` made so far, the next
    /// one at `next_at`.
    async fn reschedule_delivery(
        &mut self,
        hook: WebhookId,
        event: EventId,
        attempts: u32,
        next_at: OffsetDateTime,
    ) -> Result<(), RepositoryError>;

    /// The inbound webhook key record, if it is in `org`.
    async fn inbound_key(
        &mut self,
        org: OrgId,
        id: InboundKeyId,
        lock: Lock,
    ) -> Result<Option<InboundKey>, RepositoryError>;

    /// Stores a new inbound webhook key.
    async fn insert_inbound_key(&mut self, key: &InboundKey) -> Result<(), RepositoryError>;

    /// Stores every field of an inbound webhook key; `false` when it is gone.
    async fn update_inbound_key(&mut self, key: &InboundKey) -> Result<bool, RepositoryError>;

    /// Deletes an inbound webhook key; `false` when it is gone.
    async fn delete_inbound_key(
        &mut self,
        org: OrgId,
        id: InboundKeyId,
    ) -> Result<bool, RepositoryError>;

    /// Notes that the key created tasks at `at`.
    async fn touch_inbound_key(
        &mut self,
        id: InboundKeyId,
        at: OffsetDateTime,
    ) -> Result<(), RepositoryError>;

    /// Takes deliveries of `hook` out of the outbox: delivered, or out of attempts.
    async fn finish_deliveries(
        &mut self,
        hook: WebhookId,
        events: &[EventId],
    ) -> Result<(), RepositoryError>;

    /// The code-host connection `id`, if it is in `org`.
    async fn codehost_connection(
        &mut self,
        org: OrgId,
        id: CodeHostConnectionId,
        lock: Lock,
    ) -> Result<Option<CodeHostConnection>, RepositoryError>;

    /// Stores a new code-host connection (its installation id is unique within its
    /// organization: [`UniqueKey::Installation`](super::UniqueKey::Installation)).
    async fn insert_codehost_connection(
        &mut self,
        connection: &CodeHostConnection,
    ) -> Result<(), RepositoryError>;

    /// Stores every field of a connection; `false` when it is gone.
    async fn update_codehost_connection(
        &mut self,
        connection: &CodeHostConnection,
    ) -> Result<bool, RepositoryError>;

    /// Deletes a connection with its links and remembered deliveries; `false` when it
    /// is gone.
    async fn delete_codehost_connection(
        &mut self,
        org: OrgId,
        id: CodeHostConnectionId,
    ) -> Result<bool, RepositoryError>;

    /// Claims the code host's delivery `delivery` of `connection` for this transaction:
    /// `true` when it is new. A concurrent claim of the same delivery waits until this
    /// transaction ends, and is then `false` (or `true`, if this one rolled back).
    async fn claim_codehost_delivery(
        &mut self,
        connection: CodeHostConnectionId,
        delivery: &str,
        at: OffsetDateTime,
    ) -> Result<bool, RepositoryError>;

    /// What a claimed delivery came to, once recorded.
    async fn codehost_answer(
        &mut self,
        connection: CodeHostConnectionId,
        delivery: &str,
    ) -> Result<Option<IntegrationAnswer>, RepositoryError>;

    /// Records what a claimed delivery came to, for its redeliveries.
    async fn record_codehost_answer(
        &mut self,
        connection: CodeHostConnectionId,
        delivery: &str,
        answer: &IntegrationAnswer,
    ) -> Result<(), RepositoryError>;

    /// The task `item` of `connection` is linked to, locked against a concurrent link.
    async fn codehost_link(
        &mut self,
        connection: CodeHostConnectionId,
        item: &ItemRef,
    ) -> Result<Option<CodeHostLink>, RepositoryError>;

    /// Links the item to the task, replacing an earlier link of the item.
    async fn link_codehost_item(
        &mut self,
        link: &CodeHostLink,
        at: OffsetDateTime,
    ) -> Result<(), RepositoryError>;

    /// Claimable tasks of `org`: `todo`, unassigned, with every blocking dependency
    /// done; by priority (urgent first), then oldest first; `limit` of them from
    /// `offset`.
    async fn claim_candidates(
        &mut self,
        org: OrgId,
        offset: u32,
        limit: u32,
    ) -> Result<Vec<Task>, RepositoryError>;

    /// Locks, until the commit, the first task of `ids` (in their order) that is still
    /// claimable in `org` and that no other transaction holds, without waiting for the
    /// holders of the others: its id, or `None` when none is. One statement on
    /// PostgreSQL, however many of them other claimers hold.
    async fn try_lock_first_claimable(
        &mut self,
        org: OrgId,
        ids: &[TaskId],
    ) -> Result<Option<TaskId>, RepositoryError>;
}

#[cfg(any(test, feature = "mocks"))]
pub use scripted::{MockUnitOfWork, Outcome};

#[cfg(any(test, feature = "mocks"))]
mod scripted {
    use std::sync::{Mutex, PoisonError};

    use async_trait::async_trait;

    use super::{MockTransaction, UnitOfWork, Work, WorkOutput};
    use crate::service::ServiceError;

    /// How a run of [`MockUnitOfWork`] ended.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum Outcome {
        /// The work returned `Ok`: an adapter would commit.
        Committed,
        /// The work returned `Err`: an adapter would roll back.
        RolledBack,
    }

    /// A [`UnitOfWork`] for unit tests: runs the work against one [`MockTransaction`]
    /// (whose expectations describe the reads and writes the use case must make) and
    /// records whether each run would have committed.
    #[derive(Debug)]
    pub struct MockUnitOfWork {
        tx: Mutex<Option<MockTransaction>>,
        outcomes: Mutex<Vec<Outcome>>,
    }

    impl MockUnitOfWork {
        /// Runs every unit of work against `tx`.
        pub fn new(tx: MockTransaction) -> Self {
            Self {
                tx: Mutex::new(Some(tx)),
                outcomes: Mutex::default(),
            }
        }

        /// How each run ended, in order.
        pub fn outcomes(&self) -> Vec<Outcome> {
            self.outcomes
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .clone()
        }
    }

    #[async_trait]
    impl UnitOfWork for MockUnitOfWork {
        async fn run(&self, work: Work) -> Result<WorkOutput, ServiceError> {
            let taken = self
                .tx
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .take();
            let Some(mut tx) = taken else {
                return Err(ServiceError::internal(
                    "MockUnitOfWork runs one unit of work at a time",
                ));
            };
            let result = work(&mut tx).await;
            *self.tx.lock().unwrap_or_else(PoisonError::into_inner) = Some(tx);
            let outcome = if result.is_ok() {
                Outcome::Committed
            } else {
                Outcome::RolledBack
            };
            self.outcomes
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(outcome);
            result
        }
    }
}
