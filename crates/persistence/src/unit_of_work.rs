//! The domain's [`UnitOfWork`] port: a use case runs as one transaction on whichever engine
//! is configured, through a [`Transaction`](muster_domain::ports::Transaction) whose methods
//! are the query pieces of [`crate::queries`] on one connection.

use std::future::Future;
use std::pin::Pin;

use async_trait::async_trait;
use diesel_async::{AsyncConnection, AsyncPgConnection};
use muster_domain::model::{
    Agent, AgentCredentials, AgentId, ApiKey, ApiKeyId, Capability, CapabilityId,
    CodeHostConnection, CodeHostConnectionId, CodeHostLink, Comment, CommentId, DeliveryAttempt,
    DependencyId, Email, Escalation, Event, EventId, GuardSettings, InboundKey, InboundKeyId,
    IntegrationAnswer, ItemRef, LedgerEntry, Level, LoginFamilyId, OAuthState, OrgId, Organization,
    RefreshToken, RefreshTokenId, ReputationEvent, Tally, TallyAdd, Task, TaskDependency, TaskId,
    TaskTemplate, Threshold, TokenHash, Treasury, TreasuryEntry, User, UserId, Webhook, WebhookId,
};
use muster_domain::ports::{
    AgentsTx, GuardTx, IntegrationsTx, KeysTx, LedgerTx, Lock, OrganizationsTx, RepositoryError,
    SessionsTx, TasksTx, UnitOfWork, WebhooksTx, Work, WorkOutput,
};
use muster_domain::service::ServiceError;
use time::OffsetDateTime;
use tracing::Instrument;

use crate::Database;
use crate::conn::{Conn, PooledConn};
use crate::error::from_diesel;
use crate::queries::{
    agents, api_keys, capabilities, codehost, comments, deliveries, dependencies, escalations,
    events, inbound_keys, ledger, oauth_states, organizations, recovery_codes, refresh_tokens,
    tasks, templates, treasuries, users, webhooks,
};
use crate::rows::{
    AgentChanges, AgentRow, ApiKeyRow, AttemptRow, CapabilityRow, CommentRow, ConnectionRow,
    DependencyRow, EscalationRow, EventRow, HostDeliveryRow, InboundKeyRow, LedgerRow,
    OAuthStateRow, OrganizationRow, RefreshTokenRow, ReputationRow, SubscriptionRow, TaskRow,
    TemplateRow, TreasuryEntryRow, TreasuryRow, UserChanges, UserRow, WebhookRow,
};

/// Why a transaction ended without a commit: the store failed, or the work refused.
enum Abort {
    Store(diesel::result::Error),
    Work(ServiceError),
}

impl From<diesel::result::Error> for Abort {
    fn from(err: diesel::result::Error) -> Self {
        Self::Store(err)
    }
}

#[async_trait]
impl UnitOfWork for Database {
    /// Runs `work` in one transaction on its own task, so that a caller that goes away
    /// (a client disconnecting) never leaves a transaction half-driven on a pooled
    /// connection. On SQLite, units of work queue for the one writer connection and run
    /// in groups (see [`crate::group_commit`]): each in its own savepoint of a
    /// transaction begun with `BEGIN IMMEDIATE` (the file's write lock taken up front,
    /// so that a read-then-write never fails on lock upgrade), committed together.
    #[tracing::instrument(level = "debug", name = "db.transaction", skip_all, fields(otel.kind = "client"))]
    async fn run(&self, work: Work) -> Result<WorkOutput, ServiceError> {
        if let Some(group) = self.group_commit() {
            return group.run(work).await;
        }
        let db = self.clone();
        // The task carries this span, so the statements' spans nest under it in traces.
        let task = tokio::spawn(
            async move {
                let mut pooled = db.pooled_for_write().await?;
                let outcome = match &mut *pooled {
                    PooledConn::Pg(conn) => on_postgres(conn, work).await,
                    PooledConn::Sqlite(_) => Err(Abort::Work(ServiceError::internal(
                        "SQLite units of work run in groups",
                    ))),
                };
                outcome.map_err(|abort| match abort {
                    Abort::Store(err) => ServiceError::from(from_diesel(err)),
                    Abort::Work(err) => err,
                })
            }
            .in_current_span(),
        );
        task.await
            .map_err(|err| ServiceError::internal(format!("unit of work task failed: {err}")))?
    }
}

/// A boxed, `Send` future: naming the type here lets the compiler check `Send` once
/// the connection's lifetime is known (it cannot through the transaction's
/// higher-ranked closure).
type Running<'c> = Pin<Box<dyn Future<Output = Result<WorkOutput, Abort>> + Send + 'c>>;

fn on_postgres(conn: &mut AsyncPgConnection, work: Work) -> Running<'_> {
    Box::pin(conn.transaction(async move |c| {
        let mut tx = DbTransaction(Conn::Pg(c), Vec::new());
        work(&mut tx).await.map_err(Abort::Work)
    }))
}

/// One open transaction: each method is one query piece on its connection. The second
/// field keeps the events appended so far, for the pre-hooks asked about them.
pub(crate) struct DbTransaction<'c>(Conn<'c>, Vec<Event>);

impl<'c> DbTransaction<'c> {
    /// A transaction (or a savepoint in one) already begun on `conn`.
    pub(crate) fn new(conn: Conn<'c>) -> Self {
        Self(conn, Vec::new())
    }
}

#[async_trait]
impl OrganizationsTx for DbTransaction<'_> {
    #[tracing::instrument(level = "debug", name = "db.tx.any_organization", skip_all, fields(otel.kind = "client"))]
    async fn any_organization(&mut self) -> Result<bool, RepositoryError> {
        organizations::any(&mut self.0).await.map_err(from_diesel)
    }

    #[tracing::instrument(level = "debug", name = "db.tx.insert_organization", skip_all, fields(otel.kind = "client"))]
    async fn insert_organization(&mut self, org: &Organization) -> Result<(), RepositoryError> {
        organizations::insert(&mut self.0, &OrganizationRow::from(org))
            .await
            .map_err(from_diesel)
    }

    #[tracing::instrument(level = "debug", name = "db.tx.insert_user", skip_all, fields(otel.kind = "client"))]
    async fn insert_user(&mut self, user: &User) -> Result<(), RepositoryError> {
        users::insert(&mut self.0, &UserRow::from(user))
            .await
            .map_err(from_diesel)
    }

    #[tracing::instrument(level = "debug", name = "db.tx.default_organization", skip_all, fields(otel.kind = "client"))]
    async fn default_organization(&mut self) -> Result<Option<Organization>, RepositoryError> {
        let row = organizations::find_default(&mut self.0)
            .await
            .map_err(from_diesel)?;
        row.map(Organization::try_from).transpose()
    }

    #[tracing::instrument(level = "debug", name = "db.tx.user", skip_all, fields(otel.kind = "client"))]
    async fn user(
        &mut self,
        org: OrgId,
        id: UserId,
        lock: Lock,
    ) -> Result<Option<User>, RepositoryError> {
        let row = users::find(&mut self.0, org, id, Some(lock))
            .await
            .map_err(from_diesel)?;
        row.map(User::try_from).transpose()
    }

    #[tracing::instrument(level = "debug", name = "db.tx.user_by_email", skip_all, fields(otel.kind = "client"))]
    async fn user_by_email(
        &mut self,
        org: OrgId,
        email: &Email,
        lock: Lock,
    ) -> Result<Option<User>, RepositoryError> {
        let row = users::find_by_email(&mut self.0, org, email, Some(lock))
            .await
            .map_err(from_diesel)?;
        row.map(User::try_from).transpose()
    }

    #[tracing::instrument(level = "debug", name = "db.tx.update_user", skip_all, fields(otel.kind = "client"))]
    async fn update_user(
        &mut self,
        user: &User,
        at: OffsetDateTime,
    ) -> Result<bool, RepositoryError> {
        let changes = UserChanges::new(user, at);
        users::update(&mut self.0, user.org_id, user.id, &changes)
            .await
            .map_err(from_diesel)
    }
}

#[async_trait]
impl SessionsTx for DbTransaction<'_> {
    #[tracing::instrument(level = "debug", name = "db.tx.insert_refresh_token", skip_all, fields(otel.kind = "client"))]
    async fn insert_refresh_token(&mut self, token: &RefreshToken) -> Result<(), RepositoryError> {
        refresh_tokens::insert(&mut self.0, &RefreshTokenRow::from(token))
            .await
            .map_err(from_diesel)
    }

    #[tracing::instrument(level = "debug", name = "db.tx.refresh_token_by_hash", skip_all, fields(otel.kind = "client"))]
    async fn refresh_token_by_hash(
        &mut self,
        hash: &TokenHash,
        lock: Lock,
    ) -> Result<Option<RefreshToken>, RepositoryError> {
        let row = refresh_tokens::find_by_hash(&mut self.0, hash, Some(lock))
            .await
            .map_err(from_diesel)?;
        row.map(RefreshToken::try_from).transpose()
    }

    #[tracing::instrument(level = "debug", name = "db.tx.mark_refresh_token_replaced", skip_all, fields(otel.kind = "client"))]
    async fn mark_refresh_token_replaced(
        &mut self,
        id: RefreshTokenId,
        at: OffsetDateTime,
    ) -> Result<(), RepositoryError> {
        refresh_tokens::mark_replaced(&mut self.0, id, at)
            .await
            .map_err(from_diesel)
    }

    #[tracing::instrument(level = "debug", name = "db.tx.revoke_login_family", skip_all, fields(otel.kind = "client"))]
    async fn revoke_login_family(
        &mut self,
        family: LoginFamilyId,
        at: OffsetDateTime,
    ) -> Result<u64, RepositoryError> {
        let revoked = refresh_tokens::revoke_family(&mut self.0, family, at)
            .await
            .map_err(from_diesel)?;
        Ok(revoked as u64)
    }

    #[tracing::instrument(level = "debug", name = "db.tx.revoke_user_refresh_tokens", skip_all, fields(otel.kind = "client"))]
    async fn revoke_user_refresh_tokens(
        &mut self,
        user: UserId,
        at: OffsetDateTime,
    ) -> Result<u64, RepositoryError> {
        let revoked = refresh_tokens::revoke_of_user(&mut self.0, user, at)
            .await
            .map_err(from_diesel)?;
        Ok(revoked as u64)
    }

    #[tracing::instrument(level = "debug", name = "db.tx.replace_recovery_codes", skip_all, fields(otel.kind = "client"))]
    async fn replace_recovery_codes(
        &mut self,
        user: UserId,
        hashes: &[TokenHash],
    ) -> Result<(), RepositoryError> {
        recovery_codes::replace(&mut self.0, user, hashes)
            .await
            .map_err(from_diesel)
    }

    #[tracing::instrument(level = "debug", name = "db.tx.use_recovery_code", skip_all, fields(otel.kind = "client"))]
    async fn use_recovery_code(
        &mut self,
        user: UserId,
        hash: &TokenHash,
        at: OffsetDateTime,
    ) -> Result<bool, RepositoryError> {
        recovery_codes::use_once(&mut self.0, user, hash, at)
            .await
            .map_err(from_diesel)
    }

    #[tracing::instrument(level = "debug", name = "db.tx.insert_oauth_state", skip_all, fields(otel.kind = "client"))]
    async fn insert_oauth_state(&mut self, state: &OAuthState) -> Result<(), RepositoryError> {
        oauth_states::insert(&mut self.0, &OAuthStateRow::from(state))
            .await
            .map_err(from_diesel)
    }

    #[tracing::instrument(level = "debug", name = "db.tx.take_oauth_state", skip_all, fields(otel.kind = "client"))]
    async fn take_oauth_state(
        &mut self,
        hash: &TokenHash,
    ) -> Result<Option<OAuthState>, RepositoryError> {
        let row = oauth_states::take(&mut self.0, hash)
            .await
            .map_err(from_diesel)?;
        row.map(OAuthState::try_from).transpose()
    }

    #[tracing::instrument(level = "debug", name = "db.tx.login_throttle", skip_all, fields(otel.kind = "client"))]
    async fn login_throttle(
        &mut self,
        key: &muster_domain::model::ThrottleKey,
        now: OffsetDateTime,
    ) -> Result<muster_domain::model::LoginThrottle, RepositoryError> {
        let row = crate::queries::login_throttles::lock(&mut self.0, key, now)
            .await
            .map_err(from_diesel)?;
        muster_domain::model::LoginThrottle::try_from(row)
    }

    #[tracing::instrument(level = "debug", name = "db.tx.save_login_throttle", skip_all, fields(otel.kind = "client"))]
    async fn save_login_throttle(
        &mut self,
        key: &muster_domain::model::ThrottleKey,
        throttle: &muster_domain::model::LoginThrottle,
    ) -> Result<(), RepositoryError> {
        let row = crate::rows::LoginThrottleRow::new(key, throttle);
        crate::queries::login_throttles::save(&mut self.0, row)
            .await
            .map_err(from_diesel)
    }

    #[tracing::instrument(level = "debug", name = "db.tx.clear_login_throttle", skip_all, fields(otel.kind = "client"))]
    async fn clear_login_throttle(
        &mut self,
        key: &muster_domain::model::ThrottleKey,
    ) -> Result<(), RepositoryError> {
        crate::queries::login_throttles::clear(&mut self.0, key)
            .await
            .map_err(from_diesel)
    }
}

#[async_trait]
impl KeysTx for DbTransaction<'_> {
    #[tracing::instrument(level = "debug", name = "db.tx.insert_api_key", skip_all, fields(otel.kind = "client"))]
    async fn insert_api_key(&mut self, key: &ApiKey) -> Result<(), RepositoryError> {
        api_keys::insert(&mut self.0, &ApiKeyRow::from(key))
            .await
            .map_err(from_diesel)
    }

    #[tracing::instrument(level = "debug", name = "db.tx.delete_api_key", skip_all, fields(otel.kind = "client"))]
    async fn delete_api_key(
        &mut self,
        org: OrgId,
        user: UserId,
        id: ApiKeyId,
    ) -> Result<Option<ApiKey>, RepositoryError> {
        let row = api_keys::delete(&mut self.0, org, user, id)
            .await
            .map_err(from_diesel)?;
        row.map(ApiKey::try_from).transpose()
    }

    #[tracing::instrument(level = "debug", name = "db.tx.inbound_key", skip_all, fields(otel.kind = "client"))]
    async fn inbound_key(
        &mut self,
        org: OrgId,
        id: InboundKeyId,
        lock: Lock,
    ) -> Result<Option<InboundKey>, RepositoryError> {
        let row = inbound_keys::find(&mut self.0, org, id, Some(lock))
            .await
            .map_err(from_diesel)?;
        row.map(InboundKey::try_from).transpose()
    }

    #[tracing::instrument(level = "debug", name = "db.tx.insert_inbound_key", skip_all, fields(otel.kind = "client"))]
    async fn insert_inbound_key(&mut self, key: &InboundKey) -> Result<(), RepositoryError> {
        inbound_keys::insert(&mut self.0, &InboundKeyRow::from(key))
            .await
            .map_err(from_diesel)
    }

    #[tracing::instrument(level = "debug", name = "db.tx.update_inbound_key", skip_all, fields(otel.kind = "client"))]
    async fn update_inbound_key(&mut self, key: &InboundKey) -> Result<bool, RepositoryError> {
        inbound_keys::update(&mut self.0, &InboundKeyRow::from(key))
            .await
            .map_err(from_diesel)
    }

    #[tracing::instrument(level = "debug", name = "db.tx.delete_inbound_key", skip_all, fields(otel.kind = "client"))]
    async fn delete_inbound_key(
        &mut self,
        org: OrgId,
        id: InboundKeyId,
    ) -> Result<bool, RepositoryError> {
        inbound_keys::delete(&mut self.0, org, id)
            .await
            .map_err(from_diesel)
    }

    #[tracing::instrument(level = "debug", name = "db.tx.touch_inbound_key", skip_all, fields(otel.kind = "client"))]
    async fn touch_inbound_key(
        &mut self,
        id: InboundKeyId,
        at: OffsetDateTime,
    ) -> Result<(), RepositoryError> {
        inbound_keys::touch(&mut self.0, id, at)
            .await
            .map_err(from_diesel)
    }
}

#[async_trait]
impl AgentsTx for DbTransaction<'_> {
    #[tracing::instrument(level = "debug", name = "db.tx.agent", skip_all, fields(otel.kind = "client"))]
    async fn agent(
        &mut self,
        org: OrgId,
        id: AgentId,
        lock: Lock,
    ) -> Result<Option<Agent>, RepositoryError> {
        let row = agents::find(&mut self.0, org, id, Some(lock))
            .await
            .map_err(from_diesel)?;
        row.map(|r| AgentCredentials::try_from(r).map(|c| c.agent))
            .transpose()
    }

    #[tracing::instrument(level = "debug", name = "db.tx.insert_agent", skip_all, fields(otel.kind = "client"))]
    async fn insert_agent(&mut self, agent: &AgentCredentials) -> Result<(), RepositoryError> {
        agents::insert(&mut self.0, &AgentRow::from(agent))
            .await
            .map_err(from_diesel)
    }

    #[tracing::instrument(level = "debug", name = "db.tx.update_agent", skip_all, fields(otel.kind = "client"))]
    async fn update_agent(
        &mut self,
        agent: &Agent,
        at: OffsetDateTime,
    ) -> Result<bool, RepositoryError> {
        agents::update(
            &mut self.0,
            agent.org_id,
            agent.id,
            &AgentChanges::new(agent, at),
        )
        .await
        .map_err(from_diesel)
    }

    #[tracing::instrument(level = "debug", name = "db.tx.delete_agent", skip_all, fields(otel.kind = "client"))]
    async fn delete_agent(&mut self, org: OrgId, id: AgentId) -> Result<bool, RepositoryError> {
        agents::delete(&mut self.0, org, id)
            .await
            .map_err(from_diesel)
    }

    #[tracing::instrument(level = "debug", name = "db.tx.live_children", skip_all, fields(otel.kind = "client"))]
    async fn live_children(&mut self, org: OrgId, parent: AgentId) -> Result<u32, RepositoryError> {
        let n = agents::live_children(&mut self.0, org, parent)
            .await
            .map_err(from_diesel)?;
        Ok(u32::try_from(n).unwrap_or(u32::MAX))
    }

    #[tracing::instrument(level = "debug", name = "db.tx.capability", skip_all, fields(otel.kind = "client"))]
    async fn capability(
        &mut self,
        org: OrgId,
        id: CapabilityId,
        lock: Lock,
    ) -> Result<Option<Capability>, RepositoryError> {
        let row = capabilities::find(&mut self.0, org, id, Some(lock))
            .await
            .map_err(from_diesel)?;
        row.map(Capability::try_from).transpose()
    }

    #[tracing::instrument(level = "debug", name = "db.tx.insert_capabilities", skip_all, fields(otel.kind = "client"))]
    async fn insert_capabilities(&mut self, rows: &[Capability]) -> Result<(), RepositoryError> {
        let rows: Vec<CapabilityRow> = rows.iter().map(CapabilityRow::from).collect();
        capabilities::insert(&mut self.0, &rows)
            .await
            .map_err(from_diesel)
    }

    #[tracing::instrument(level = "debug", name = "db.tx.update_capability", skip_all, fields(otel.kind = "client"))]
    async fn update_capability(
        &mut self,
        capability: &Capability,
    ) -> Result<bool, RepositoryError> {
        capabilities::set_proficiency(
            &mut self.0,
            capability.org_id,
            capability.id,
            capability.proficiency.as_str(),
        )
        .await
        .map_err(from_diesel)
    }

    #[tracing::instrument(level = "debug", name = "db.tx.delete_capability", skip_all, fields(otel.kind = "client"))]
    async fn delete_capability(
        &mut self,
        org: OrgId,
        id: CapabilityId,
    ) -> Result<bool, RepositoryError> {
        capabilities::delete(&mut self.0, org, id)
            .await
            .map_err(from_diesel)
    }

    #[tracing::instrument(level = "debug", name = "db.tx.roll_budget_periods", skip_all, fields(otel.kind = "client"))]
    async fn roll_budget_periods(&mut self, start: OffsetDateTime) -> Result<u64, RepositoryError> {
        let n = agents::roll_budget_periods(&mut self.0, start)
            .await
            .map_err(from_diesel)?;
        Ok(u64::try_from(n).unwrap_or(u64::MAX))
    }

    #[tracing::instrument(level = "debug", name = "db.tx.senior_agent_above", skip_all, fields(otel.kind = "client"))]
    async fn senior_agent_above(
        &mut self,
        org: OrgId,
        level: Option<Level>,
    ) -> Result<Option<Agent>, RepositoryError> {
        let row = agents::senior_above(&mut self.0, org, level)
            .await
            .map_err(from_diesel)?;
        row.map(|r| AgentCredentials::try_from(r).map(|c| c.agent))
            .transpose()
    }
}

#[async_trait]
impl GuardTx for DbTransaction<'_> {
    #[tracing::instrument(level = "debug", name = "db.tx.tally_agent", skip_all, fields(otel.kind = "client"))]
    async fn tally_agent(
        &mut self,
        org: OrgId,
        actor: uuid::Uuid,
        add: &TallyAdd,
    ) -> Result<Option<Tally>, RepositoryError> {
        let row = agents::tally(&mut self.0, org, actor, add)
            .await
            .map_err(from_diesel)?;
        Ok(
            row.map(|(actions, actions_since, credits, credits_since)| Tally {
                actions: i64::from(actions),
                actions_since: actions_since.map(|t| t.0),
                credits,
                credits_since: credits_since.map(|t| t.0),
            }),
        )
    }

    #[tracing::instrument(level = "debug", name = "db.tx.reset_tally", skip_all, fields(otel.kind = "client"))]
    async fn reset_tally(&mut self, org: OrgId, id: AgentId) -> Result<(), RepositoryError> {
        agents::reset_tally(&mut self.0, org, id)
            .await
            .map_err(from_diesel)
    }

    #[tracing::instrument(level = "debug", name = "db.tx.guard_settings", skip_all, fields(otel.kind = "client"))]
    async fn guard_settings(&mut self, org: OrgId) -> Result<GuardSettings, RepositoryError> {
        let stored = organizations::guard_settings(&mut self.0, org)
            .await
            .map_err(from_diesel)?;
        let (actions, credits) = stored.unwrap_or_default();
        Ok(GuardSettings {
            actions_per_minute: actions.map(|n| Threshold::from_stored(i64::from(n))),
            credits_per_hour: credits.map(Threshold::from_stored),
        })
    }

    #[tracing::instrument(level = "debug", name = "db.tx.set_guard_settings", skip_all, fields(otel.kind = "client"))]
    async fn set_guard_settings(
        &mut self,
        org: OrgId,
        settings: &GuardSettings,
    ) -> Result<(), RepositoryError> {
        let actions = settings
            .actions_per_minute
            .map(|t| i32::try_from(t.get()).unwrap_or(i32::MAX));
        let credits = settings.credits_per_hour.map(Threshold::get);
        organizations::set_guard_settings(&mut self.0, org, actions, credits)
            .await
            .map_err(from_diesel)
    }
}

#[async_trait]
impl TasksTx for DbTransaction<'_> {
    #[tracing::instrument(level = "debug", name = "db.tx.task", skip_all, fields(otel.kind = "client"))]
    async fn task(
        &mut self,
        org: OrgId,
        id: TaskId,
        lock: Lock,
    ) -> Result<Option<Task>, RepositoryError> {
        let row = tasks::find(&mut self.0, org, id, Some(lock))
            .await
            .map_err(from_diesel)?;
        row.map(Task::try_from).transpose()
    }

    #[tracing::instrument(level = "debug", name = "db.tx.insert_task", skip_all, fields(otel.kind = "client"))]
    async fn insert_task(&mut self, task: &Task) -> Result<(), RepositoryError> {
        tasks::insert(&mut self.0, &TaskRow::from(task))
            .await
            .map_err(from_diesel)
    }

    #[tracing::instrument(level = "debug", name = "db.tx.update_task", skip_all, fields(otel.kind = "client"))]
    async fn update_task(
        &mut self,
        task: &Task,
        expected_version: i64,
    ) -> Result<bool, RepositoryError> {
        tasks::update(&mut self.0, &TaskRow::from(task), expected_version)
            .await
            .map_err(from_diesel)
    }

    #[tracing::instrument(level = "debug", name = "db.tx.touch_task", skip_all, fields(otel.kind = "client"))]
    async fn touch_task(
        &mut self,
        org: OrgId,
        id: TaskId,
        at: OffsetDateTime,
    ) -> Result<(), RepositoryError> {
        tasks::touch(&mut self.0, org, id, at)
            .await
            .map_err(from_diesel)
    }

    #[tracing::instrument(level = "debug", name = "db.tx.lock_dependency_graph", skip_all, fields(otel.kind = "client"))]
    async fn lock_dependency_graph(&mut self, org: OrgId) -> Result<(), RepositoryError> {
        dependencies::lock_graph(&mut self.0, org)
            .await
            .map_err(from_diesel)
    }

    #[tracing::instrument(level = "debug", name = "db.tx.depends_transitively", skip_all, fields(otel.kind = "client"))]
    async fn depends_transitively(
        &mut self,
        org: OrgId,
        from: TaskId,
        to: TaskId,
    ) -> Result<bool, RepositoryError> {
        dependencies::reaches(&mut self.0, org, from, to)
            .await
            .map_err(from_diesel)
    }

    #[tracing::instrument(level = "debug", name = "db.tx.insert_dependency", skip_all, fields(otel.kind = "client"))]
    async fn insert_dependency(
        &mut self,
        dependency: &TaskDependency,
    ) -> Result<(), RepositoryError> {
        dependencies::insert(&mut self.0, &DependencyRow::from(dependency))
            .await
            .map_err(from_diesel)
    }

    #[tracing::instrument(level = "debug", name = "db.tx.delete_dependency", skip_all, fields(otel.kind = "client"))]
    async fn delete_dependency(
        &mut self,
        org: OrgId,
        task: TaskId,
        id: DependencyId,
    ) -> Result<Option<TaskDependency>, RepositoryError> {
        let row = dependencies::delete(&mut self.0, org, task, id)
            .await
            .map_err(from_diesel)?;
        Ok(row.map(TaskDependency::from))
    }

    #[tracing::instrument(level = "debug", name = "db.tx.open_blocking_dependencies", skip_all, fields(otel.kind = "client"))]
    async fn open_blocking_dependencies(
        &mut self,
        org: OrgId,
        task: TaskId,
    ) -> Result<Vec<TaskId>, RepositoryError> {
        let ids = dependencies::open_blocking(&mut self.0, org, task)
            .await
            .map_err(from_diesel)?;
        Ok(ids.into_iter().map(|id| TaskId::from_uuid(id.0)).collect())
    }

    #[tracing::instrument(level = "debug", name = "db.tx.comment", skip_all, fields(otel.kind = "client"))]
    async fn comment(
        &mut self,
        org: OrgId,
        task: TaskId,
        id: CommentId,
    ) -> Result<Option<Comment>, RepositoryError> {
        let row = comments::find(&mut self.0, org, task, id)
            .await
            .map_err(from_diesel)?;
        row.map(Comment::try_from).transpose()
    }

    #[tracing::instrument(level = "debug", name = "db.tx.insert_comment", skip_all, fields(otel.kind = "client"))]
    async fn insert_comment(&mut self, comment: &Comment) -> Result<(), RepositoryError> {
        comments::insert(&mut self.0, &CommentRow::from(comment))
            .await
            .map_err(from_diesel)
    }

    #[tracing::instrument(level = "debug", name = "db.tx.insert_escalation", skip_all, fields(otel.kind = "client"))]
    async fn insert_escalation(
        &mut self,
        escalation: &Escalation,
    ) -> Result<bool, RepositoryError> {
        escalations::insert(&mut self.0, &EscalationRow::from(escalation))
            .await
            .map_err(from_diesel)
    }

    #[tracing::instrument(level = "debug", name = "db.tx.insert_template", skip_all, fields(otel.kind = "client"))]
    async fn insert_template(&mut self, template: &TaskTemplate) -> Result<(), RepositoryError> {
        templates::insert(&mut self.0, &TemplateRow::from(template))
            .await
            .map_err(from_diesel)
    }

    #[tracing::instrument(level = "debug", name = "db.tx.claim_candidates", skip_all, fields(otel.kind = "client"))]
    async fn claim_candidates(
        &mut self,
        org: OrgId,
        offset: u32,
        limit: u32,
    ) -> Result<Vec<Task>, RepositoryError> {
        let rows = crate::queries::claims::candidates(&mut self.0, org, offset, limit)
            .await
            .map_err(from_diesel)?;
        rows.into_iter().map(Task::try_from).collect()
    }

    #[tracing::instrument(level = "debug", name = "db.tx.try_lock_first_claimable", skip_all, fields(otel.kind = "client"))]
    async fn try_lock_first_claimable(
        &mut self,
        org: OrgId,
        ids: &[TaskId],
    ) -> Result<Option<TaskId>, RepositoryError> {
        crate::queries::claims::try_lock_first(&mut self.0, org, ids)
            .await
            .map_err(from_diesel)
    }
}

#[async_trait]
impl LedgerTx for DbTransaction<'_> {
    #[tracing::instrument(level = "debug", name = "db.tx.insert_ledger_entries", skip_all, fields(otel.kind = "client"))]
    async fn insert_ledger_entries(
        &mut self,
        entries: &[LedgerEntry],
    ) -> Result<(), RepositoryError> {
        let rows: Vec<LedgerRow> = entries.iter().map(LedgerRow::from).collect();
        ledger::insert_entries(&mut self.0, &rows)
            .await
            .map_err(from_diesel)
    }

    /// With [`Lock::Update`] a missing row is created at 0 and locked (see
    /// [`treasuries::lock`]); otherwise a missing row reads as the empty treasury.
    #[tracing::instrument(level = "debug", name = "db.tx.treasury", skip_all, fields(otel.kind = "client"))]
    async fn treasury(&mut self, org: OrgId, lock: Lock) -> Result<Treasury, RepositoryError> {
        if lock == Lock::Update {
            let row = treasuries::lock(&mut self.0, org)
                .await
                .map_err(from_diesel)?;
            return Ok(Treasury::from(row));
        }
        let row = treasuries::find(&mut self.0, org, Some(lock))
            .await
            .map_err(from_diesel)?;
        Ok(row.map_or_else(|| Treasury::empty(org), Treasury::from))
    }

    #[tracing::instrument(level = "debug", name = "db.tx.update_treasury", skip_all, fields(otel.kind = "client"))]
    async fn update_treasury(&mut self, treasury: &Treasury) -> Result<(), RepositoryError> {
        treasuries::save(&mut self.0, TreasuryRow::from(treasury))
            .await
            .map_err(from_diesel)
    }

    #[tracing::instrument(level = "debug", name = "db.tx.insert_treasury_entries", skip_all, fields(otel.kind = "client"))]
    async fn insert_treasury_entries(
        &mut self,
        entries: &[TreasuryEntry],
    ) -> Result<(), RepositoryError> {
        let rows: Vec<TreasuryEntryRow> = entries.iter().map(TreasuryEntryRow::from).collect();
        treasuries::insert_entries(&mut self.0, &rows)
            .await
            .map_err(from_diesel)
    }

    #[tracing::instrument(level = "debug", name = "db.tx.insert_reputation_events", skip_all, fields(otel.kind = "client"))]
    async fn insert_reputation_events(
        &mut self,
        changes: &[ReputationEvent],
    ) -> Result<(), RepositoryError> {
        let rows: Vec<ReputationRow> = changes.iter().map(ReputationRow::from).collect();
        ledger::insert_reputation(&mut self.0, &rows)
            .await
            .map_err(from_diesel)
    }
}

#[async_trait]
impl WebhooksTx for DbTransaction<'_> {
    /// Appends the events and, in the same transaction, queues their post-hook
    /// deliveries: the audit log is the outbox.
    #[tracing::instrument(level = "debug", name = "db.tx.append_events", skip_all, fields(otel.kind = "client"))]
    async fn append_events(&mut self, batch: &[Event]) -> Result<(), RepositoryError> {
        let rows: Vec<EventRow> = batch.iter().map(EventRow::from).collect();
        events::append(&mut self.0, &rows)
            .await
            .map_err(from_diesel)?;
        deliveries::enqueue(&mut self.0, batch)
            .await
            .map_err(from_diesel)?;
        self.1.extend_from_slice(batch);
        Ok(())
    }

    fn written_events(&self) -> Vec<Event> {
        self.1.clone()
    }

    #[tracing::instrument(level = "debug", name = "db.tx.webhook", skip_all, fields(otel.kind = "client"))]
    async fn webhook(
        &mut self,
        org: OrgId,
        id: WebhookId,
        lock: Lock,
    ) -> Result<Option<Webhook>, RepositoryError> {
        let row = webhooks::find(&mut self.0, org, id, Some(lock))
            .await
            .map_err(from_diesel)?;
        row.map(Webhook::try_from).transpose()
    }

    #[tracing::instrument(level = "debug", name = "db.tx.pre_hooks", skip_all, fields(otel.kind = "client"))]
    async fn pre_hooks(&mut self, org: OrgId) -> Result<Vec<Webhook>, RepositoryError> {
        let rows = webhooks::list(&mut self.0, org, true)
            .await
            .map_err(from_diesel)?;
        rows.into_iter().map(Webhook::try_from).collect()
    }

    #[tracing::instrument(level = "debug", name = "db.tx.push_configs", skip_all, fields(otel.kind = "client"))]
    async fn push_configs(
        &mut self,
        org: OrgId,
        task: TaskId,
    ) -> Result<Vec<Webhook>, RepositoryError> {
        let rows = webhooks::push_configs(&mut self.0, org, task)
            .await
            .map_err(from_diesel)?;
        rows.into_iter().map(Webhook::try_from).collect()
    }

    #[tracing::instrument(level = "debug", name = "db.tx.insert_webhook", skip_all, fields(otel.kind = "client"))]
    async fn insert_webhook(&mut self, hook: &Webhook) -> Result<(), RepositoryError> {
        webhooks::insert(
            &mut self.0,
            &WebhookRow::from(hook),
            &SubscriptionRow::of(hook),
        )
        .await
        .map_err(from_diesel)
    }

    #[tracing::instrument(level = "debug", name = "db.tx.update_webhook", skip_all, fields(otel.kind = "client"))]
    async fn update_webhook(&mut self, hook: &Webhook) -> Result<bool, RepositoryError> {
        webhooks::update(
            &mut self.0,
            &WebhookRow::from(hook),
            &SubscriptionRow::of(hook),
        )
        .await
        .map_err(from_diesel)
    }

    #[tracing::instrument(level = "debug", name = "db.tx.update_webhook_health", skip_all, fields(otel.kind = "client"))]
    async fn update_webhook_health(&mut self, hook: &Webhook) -> Result<bool, RepositoryError> {
        webhooks::update_health(&mut self.0, &WebhookRow::from(hook))
            .await
            .map_err(from_diesel)
    }

    #[tracing::instrument(level = "debug", name = "db.tx.delete_webhook", skip_all, fields(otel.kind = "client"))]
    async fn delete_webhook(&mut self, org: OrgId, id: WebhookId) -> Result<bool, RepositoryError> {
        webhooks::delete(&mut self.0, org, id)
            .await
            .map_err(from_diesel)
    }

    #[tracing::instrument(level = "debug", name = "db.tx.insert_delivery_attempts", skip_all, fields(otel.kind = "client"))]
    async fn insert_delivery_attempts(
        &mut self,
        attempts: &[DeliveryAttempt],
    ) -> Result<(), RepositoryError> {
        let rows: Vec<AttemptRow> = attempts.iter().map(AttemptRow::from).collect();
        webhooks::insert_attempts(&mut self.0, &rows)
            .await
            .map_err(from_diesel)
    }

    #[tracing::instrument(level = "debug", name = "db.tx.reschedule_delivery", skip_all, fields(otel.kind = "client"))]
    async fn reschedule_delivery(
        &mut self,
        hook: WebhookId,
        event: EventId,
        attempts: u32,
        next_at: OffsetDateTime,
    ) -> Result<(), RepositoryError> {
        let attempts = i32::try_from(attempts).unwrap_or(i32::MAX);
        deliveries::reschedule(&mut self.0, hook, event, attempts, next_at)
            .await
            .map_err(from_diesel)
    }

    #[tracing::instrument(level = "debug", name = "db.tx.finish_deliveries", skip_all, fields(otel.kind = "client"))]
    async fn finish_deliveries(
        &mut self,
        hook: WebhookId,
        events: &[EventId],
    ) -> Result<(), RepositoryError> {
        deliveries::finish(&mut self.0, hook, events)
            .await
            .map_err(from_diesel)
    }
}

#[async_trait]
impl IntegrationsTx for DbTransaction<'_> {
    #[tracing::instrument(level = "debug", name = "db.tx.codehost_connection", skip_all, fields(otel.kind = "client"))]
    async fn codehost_connection(
        &mut self,
        org: OrgId,
        id: CodeHostConnectionId,
        lock: Lock,
    ) -> Result<Option<CodeHostConnection>, RepositoryError> {
        let row = codehost::find(&mut self.0, org, id, Some(lock))
            .await
            .map_err(from_diesel)?;
        row.map(CodeHostConnection::try_from).transpose()
    }

    #[tracing::instrument(level = "debug", name = "db.tx.insert_codehost_connection", skip_all, fields(otel.kind = "client"))]
    async fn insert_codehost_connection(
        &mut self,
        connection: &CodeHostConnection,
    ) -> Result<(), RepositoryError> {
        codehost::insert(&mut self.0, &ConnectionRow::from(connection))
            .await
            .map_err(from_diesel)
    }

    #[tracing::instrument(level = "debug", name = "db.tx.update_codehost_connection", skip_all, fields(otel.kind = "client"))]
    async fn update_codehost_connection(
        &mut self,
        connection: &CodeHostConnection,
    ) -> Result<bool, RepositoryError> {
        codehost::update(&mut self.0, &ConnectionRow::from(connection))
            .await
            .map_err(from_diesel)
    }

    #[tracing::instrument(level = "debug", name = "db.tx.delete_codehost_connection", skip_all, fields(otel.kind = "client"))]
    async fn delete_codehost_connection(
        &mut self,
        org: OrgId,
        id: CodeHostConnectionId,
    ) -> Result<bool, RepositoryError> {
        codehost::delete(&mut self.0, org, id)
            .await
            .map_err(from_diesel)
    }

    #[tracing::instrument(level = "debug", name = "db.tx.claim_codehost_delivery", skip_all, fields(otel.kind = "client"))]
    async fn claim_codehost_delivery(
        &mut self,
        connection: CodeHostConnectionId,
        delivery: &str,
        at: OffsetDateTime,
    ) -> Result<bool, RepositoryError> {
        codehost::claim_delivery(&mut self.0, connection, delivery, at)
            .await
            .map_err(from_diesel)
    }

    #[tracing::instrument(level = "debug", name = "db.tx.codehost_answer", skip_all, fields(otel.kind = "client"))]
    async fn codehost_answer(
        &mut self,
        connection: CodeHostConnectionId,
        delivery: &str,
    ) -> Result<Option<IntegrationAnswer>, RepositoryError> {
        let row = codehost::find_delivery(&mut self.0, connection, delivery)
            .await
            .map_err(from_diesel)?;
        Ok(row.map(HostDeliveryRow::answer).transpose()?.flatten())
    }

    #[tracing::instrument(level = "debug", name = "db.tx.record_codehost_answer", skip_all, fields(otel.kind = "client"))]
    async fn record_codehost_answer(
        &mut self,
        connection: CodeHostConnectionId,
        delivery: &str,
        answer: &IntegrationAnswer,
    ) -> Result<(), RepositoryError> {
        codehost::record_answer(&mut self.0, connection, delivery, answer)
            .await
            .map_err(from_diesel)
    }

    #[tracing::instrument(level = "debug", name = "db.tx.codehost_link", skip_all, fields(otel.kind = "client"))]
    async fn codehost_link(
        &mut self,
        connection: CodeHostConnectionId,
        item: &ItemRef,
    ) -> Result<Option<CodeHostLink>, RepositoryError> {
        let row = codehost::find_link(&mut self.0, connection, item)
            .await
            .map_err(from_diesel)?;
        row.map(CodeHostLink::try_from).transpose()
    }

    #[tracing::instrument(level = "debug", name = "db.tx.link_codehost_item", skip_all, fields(otel.kind = "client"))]
    async fn link_codehost_item(
        &mut self,
        link: &CodeHostLink,
        at: OffsetDateTime,
    ) -> Result<(), RepositoryError> {
        codehost::upsert_link(&mut self.0, link, at)
            .await
            .map_err(from_diesel)
    }
}
