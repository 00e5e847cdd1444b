//! [`Transaction`](crate::ports::Transaction) on a private copy of the store's state: the
//! copy becomes the store when the unit of work commits, and is dropped when it rolls back.
//! Units of work run one at a time, so every read holds what it read until the commit
//! whatever its [`Lock`].

use std::collections::{BTreeSet, VecDeque};

use async_trait::async_trait;
use time::OffsetDateTime;
use uuid::Uuid;

use super::state::{AgentRecord, HookRecord, Outbox, RecoveryCode, State};
use super::table::Table;
use crate::model::{
    Agent, AgentCredentials, AgentId, AgentMode, AgentStatus, ApiKey, ApiKeyId, Capability,
    CapabilityId, CodeHostConnection, CodeHostConnectionId, CodeHostLink, Comment, CommentId,
    DeliveryAttempt, DependencyId, Email, Escalation, Event, EventId, GuardSettings, HookType,
    InboundKey, InboundKeyId, IntegrationAnswer, ItemRef, LedgerEntry, Level, LoginFamilyId,
    LoginThrottle, OAuthState, OrgId, Organization, RefreshToken, RefreshTokenId, ReputationEvent,
    Tally, TallyAdd, Task, TaskDependency, TaskId, TaskStatus, TaskTemplate, ThrottleKey,
    TokenHash, Treasury, TreasuryEntry, User, UserId, Webhook, WebhookId,
};
use crate::ports::{
    AgentsTx, GuardTx, IntegrationsTx, KeysTx, LedgerTx, Lock, OrganizationsTx, RepositoryError,
    SessionsTx, TasksTx, UniqueKey, WebhooksTx,
};
use crate::rules::claimable::{CLAIMABLE, claim_key};
use crate::rules::guard;
use crate::rules::hearing::{self, Listener};

/// One unit of work's view of the store.
pub(super) struct MemoryTransaction {
    state: State,
    written: Vec<Event>,
}

impl MemoryTransaction {
    pub(super) fn new(state: State) -> Self {
        Self {
            state,
            written: Vec::new(),
        }
    }

    pub(super) fn into_state(self) -> State {
        self.state
    }
}

fn duplicate(key: UniqueKey) -> Result<(), RepositoryError> {
    Err(RepositoryError::Duplicate(key))
}

/// A value the databases' CHECK constraints refuse.
fn check(holds: bool, constraint: &'static str) -> Result<(), RepositoryError> {
    if holds {
        Ok(())
    } else {
        Err(RepositoryError::internal(format!(
            "check constraint violated: {constraint}"
        )))
    }
}

/// The agents table's constraints on money and reputation.
fn check_agent(agent: &Agent) -> Result<(), RepositoryError> {
    check(agent.current_balance >= 0, "current_balance >= 0")?;
    check(agent.budget_period_spent >= 0, "budget_period_spent >= 0")?;
    check(
        agent.budget_period_limit.is_none_or(|limit| limit >= 0),
        "budget_period_limit >= 0",
    )?;
    check(
        (0..=100).contains(&agent.reputation_score),
        "reputation_score BETWEEN 0 AND 100",
    )
}

/// Stores a row under a key that must be new (the table's primary key).
fn insert_new<K: Ord + Clone, V: Clone>(
    table: &mut Table<K, V>,
    key: K,
    row: V,
    name: &str,
) -> Result<(), RepositoryError> {
    if table.contains_key(&key) {
        return Err(primary_key(name));
    }
    table.put(key, row);
    Ok(())
}

/// Inserts each of `rows` under its `key`, as [`insert_new`] does one.
fn insert_each<V: Clone>(
    table: &mut Table<Uuid, V>,
    rows: &[V],
    key: impl Fn(&V) -> Uuid,
    name: &str,
) -> Result<(), RepositoryError> {
    rows.iter()
        .try_for_each(|row| insert_new(table, key(row), row.clone(), name))
}

fn primary_key(table: &str) -> RepositoryError {
    RepositoryError::Duplicate(UniqueKey::Other(format!("{table}_pkey")))
}

/// The stream key of a code-host item.
pub(super) fn item_slot(
    connection: CodeHostConnectionId,
    item: &ItemRef,
) -> super::state::ItemSlot {
    (
        connection.as_uuid(),
        item.repository.clone(),
        item.kind.as_str(),
        item.number,
    )
}

/// Whether `task` of `state` can be claimed, by the rule ([`CLAIMABLE`]): its blocking
/// dependencies are looked up here.
pub(super) fn claimable(state: &State, task: &Task) -> bool {
    let blockers = state
        .dependencies
        .values()
        .filter(|d| d.task_id == task.id && d.blocking)
        .map(|d| {
            state
                .tasks
                .get(&d.depends_on_id.as_uuid())
                .map(|b| b.status)
        });
    CLAIMABLE.admits(task.status, task.assignee_id, blockers)
}

impl State {
    /// Stores `events` and queues the deliveries the hearing rule answers for them.
    fn appended(&mut self, events: &[Event]) {
        let listeners: Vec<Listener> = self
            .webhooks
            .values()
            .map(|r| Listener::of(&r.hook))
            .collect();
        let queued = hearing::deliveries(events, &listeners, |task| {
            self.tasks.get(&task).and_then(|t| t.assignee_id)
        });
        for event in events {
            let place = self.next_event_place();
            self.events.put(place, event.clone());
            self.event_places.put(event.id.as_uuid(), place);
        }
        for delivery in queued {
            let key = (delivery.hook.as_uuid(), delivery.event.as_uuid());
            if !self.outbox.contains_key(&key) {
                self.outbox.put(
                    key,
                    Outbox {
                        event_at: delivery.at,
                        attempts: 0,
                        next_at: delivery.at,
                    },
                );
            }
        }
    }
}

#[async_trait]
impl OrganizationsTx for MemoryTransaction {
    async fn any_organization(&mut self) -> Result<bool, RepositoryError> {
        Ok(!self.state.organizations.is_empty())
    }

    async fn insert_organization(&mut self, org: &Organization) -> Result<(), RepositoryError> {
        if self.state.organizations.contains_key(&org.id.as_uuid()) {
            return Err(primary_key("organizations"));
        }
        if org.is_default && self.state.organizations.values().any(|o| o.is_default) {
            return duplicate(UniqueKey::DefaultOrganization);
        }
        self.state.organizations.put(org.id.as_uuid(), org.clone());
        Ok(())
    }

    async fn insert_user(&mut self, user: &User) -> Result<(), RepositoryError> {
        if self.state.users.contains_key(&user.id.as_uuid()) {
            return Err(primary_key("users"));
        }
        let taken = self
            .state
            .users
            .values()
            .any(|u| u.org_id == user.org_id && u.email == user.email);
        if taken {
            return duplicate(UniqueKey::UserEmail);
        }
        self.state.users.put(user.id.as_uuid(), user.clone());
        Ok(())
    }

    async fn default_organization(&mut self) -> Result<Option<Organization>, RepositoryError> {
        Ok(self
            .state
            .organizations
            .values()
            .find(|o| o.is_default)
            .cloned())
    }

    async fn user(
        &mut self,
        org: OrgId,
        id: UserId,
        _lock: Lock,
    ) -> Result<Option<User>, RepositoryError> {
        Ok(self.state.users.in_org(&id.as_uuid(), org).cloned())
    }

    async fn user_by_email(
        &mut self,
        org: OrgId,
        email: &Email,
        _lock: Lock,
    ) -> Result<Option<User>, RepositoryError> {
        Ok(self
            .state
            .users
            .values()
            .find(|u| u.org_id == org && u.email == *email)
            .cloned())
    }

    async fn update_user(
        &mut self,
        user: &User,
        _at: OffsetDateTime,
    ) -> Result<bool, RepositoryError> {
        if self
            .state
            .users
            .in_org(&user.id.as_uuid(), user.org_id)
            .is_none()
        {
            return Ok(false);
        }
        let taken = self
            .state
            .users
            .values()
            .any(|u| u.org_id == user.org_id && u.id != user.id && u.email == user.email);
        if taken {
            duplicate(UniqueKey::UserEmail)?;
        }
        if let Some(stored) = self.state.users.row_mut(&user.id.as_uuid()) {
            let created_at = stored.created_at;
            *stored = User {
                created_at,
                ..user.clone()
            };
        }
        Ok(true)
    }
}

#[async_trait]
impl SessionsTx for MemoryTransaction {
    async fn insert_refresh_token(&mut self, token: &RefreshToken) -> Result<(), RepositoryError> {
        insert_new(
            &mut self.state.refresh_tokens,
            token.id.as_uuid(),
            token.clone(),
            "refresh_tokens",
        )
    }

    async fn refresh_token_by_hash(
        &mut self,
        hash: &TokenHash,
        _lock: Lock,
    ) -> Result<Option<RefreshToken>, RepositoryError> {
        Ok(self
            .state
            .refresh_tokens
            .values()
            .find(|t| t.token_hash == *hash)
            .cloned())
    }

    async fn mark_refresh_token_replaced(
        &mut self,
        id: RefreshTokenId,
        at: OffsetDateTime,
    ) -> Result<(), RepositoryError> {
        if let Some(token) = self.state.refresh_tokens.row_mut(&id.as_uuid()) {
            token.replaced_at = Some(at);
        }
        Ok(())
    }

    async fn revoke_login_family(
        &mut self,
        family: LoginFamilyId,
        at: OffsetDateTime,
    ) -> Result<u64, RepositoryError> {
        Ok(revoke(&mut self.state, at, |t| t.family_id == family))
    }

    async fn revoke_user_refresh_tokens(
        &mut self,
        user: UserId,
        at: OffsetDateTime,
    ) -> Result<u64, RepositoryError> {
        Ok(revoke(&mut self.state, at, |t| t.user_id == user))
    }

    async fn replace_recovery_codes(
        &mut self,
        user: UserId,
        hashes: &[TokenHash],
    ) -> Result<(), RepositoryError> {
        let codes = hashes
            .iter()
            .map(|h| RecoveryCode {
                hash: h.0,
                used_at: None,
            })
            .collect::<Vec<_>>();
        if codes.is_empty() {
            self.state.recovery_codes.take(&user.as_uuid());
        } else {
            self.state.recovery_codes.put(user.as_uuid(), codes);
        }
        Ok(())
    }

    async fn use_recovery_code(
        &mut self,
        user: UserId,
        hash: &TokenHash,
        at: OffsetDateTime,
    ) -> Result<bool, RepositoryError> {
        let unused = self
            .state
            .recovery_codes
            .get(&user.as_uuid())
            .and_then(|codes| {
                codes
                    .iter()
                    .position(|c| c.hash == hash.0 && c.used_at.is_none())
            });
        let Some(index) = unused else {
            return Ok(false);
        };
        if let Some(codes) = self.state.recovery_codes.row_mut(&user.as_uuid()) {
            codes[index].used_at = Some(at);
        }
        Ok(true)
    }

    async fn insert_oauth_state(&mut self, state: &OAuthState) -> Result<(), RepositoryError> {
        insert_new(
            &mut self.state.oauth_states,
            state.state_hash.0,
            state.clone(),
            "oauth_states",
        )
    }

    async fn take_oauth_state(
        &mut self,
        hash: &TokenHash,
    ) -> Result<Option<OAuthState>, RepositoryError> {
        Ok(self.state.oauth_states.take(&hash.0))
    }

    async fn login_throttle(
        &mut self,
        key: &ThrottleKey,
        now: OffsetDateTime,
    ) -> Result<LoginThrottle, RepositoryError> {
        if let Some(streak) = self.state.login_throttles.get(&key.0) {
            return Ok(*streak);
        }
        // Stored empty first, stamped `now`, as the databases do.
        let empty = LoginThrottle {
            failures: 0,
            last_failure_at: Some(now),
        };
        self.state.login_throttles.put(key.0, empty);
        Ok(empty)
    }

    async fn save_login_throttle(
        &mut self,
        key: &ThrottleKey,
        throttle: &LoginThrottle,
    ) -> Result<(), RepositoryError> {
        self.state.login_throttles.put(key.0, *throttle);
        Ok(())
    }

    async fn clear_login_throttle(&mut self, key: &ThrottleKey) -> Result<(), RepositoryError> {
        self.state.login_throttles.take(&key.0);
        Ok(())
    }
}

#[async_trait]
impl KeysTx for MemoryTransaction {
    async fn insert_api_key(&mut self, key: &ApiKey) -> Result<(), RepositoryError> {
        let taken = self.state.api_keys.contains_key(&key.id.as_uuid())
            || self
                .state
                .api_keys
                .values()
                .any(|k| k.key_hash == key.key_hash);
        if taken {
            return Err(primary_key("api_keys"));
        }
        self.state.api_keys.put(key.id.as_uuid(), key.clone());
        Ok(())
    }

    async fn delete_api_key(
        &mut self,
        org: OrgId,
        user: UserId,
        id: ApiKeyId,
    ) -> Result<Option<ApiKey>, RepositoryError> {
        let owned = self
            .state
            .api_keys
            .get(&id.as_uuid())
            .is_some_and(|k| k.org_id == org && k.user_id == user);
        Ok(if owned {
            self.state.api_keys.take(&id.as_uuid())
        } else {
            None
        })
    }

    async fn inbound_key(
        &mut self,
        org: OrgId,
        id: InboundKeyId,
        _lock: Lock,
    ) -> Result<Option<InboundKey>, RepositoryError> {
        Ok(self.state.inbound_keys.in_org(&id.as_uuid(), org).cloned())
    }

    async fn insert_inbound_key(&mut self, key: &InboundKey) -> Result<(), RepositoryError> {
        let taken = self.state.inbound_keys.contains_key(&key.id.as_uuid())
            || self.state.inbound_keys.values().any(|k| k.key == key.key);
        if taken {
            return Err(primary_key("inbound_keys"));
        }
        self.state.inbound_keys.put(key.id.as_uuid(), key.clone());
        Ok(())
    }

    async fn update_inbound_key(&mut self, key: &InboundKey) -> Result<bool, RepositoryError> {
        let stored = self
            .state
            .inbound_keys
            .row_in_org(&key.id.as_uuid(), key.org_id);
        Ok(stored.map(|k| *k = key.clone()).is_some())
    }

    async fn delete_inbound_key(
        &mut self,
        org: OrgId,
        id: InboundKeyId,
    ) -> Result<bool, RepositoryError> {
        Ok(self
            .state
            .inbound_keys
            .take_in_org(&id.as_uuid(), org)
            .is_some())
    }

    async fn touch_inbound_key(
        &mut self,
        id: InboundKeyId,
        at: OffsetDateTime,
    ) -> Result<(), RepositoryError> {
        if let Some(key) = self.state.inbound_keys.row_mut(&id.as_uuid()) {
            key.last_used_at = Some(at);
        }
        Ok(())
    }
}

#[async_trait]
impl AgentsTx for MemoryTransaction {
    async fn agent(
        &mut self,
        org: OrgId,
        id: AgentId,
        _lock: Lock,
    ) -> Result<Option<Agent>, RepositoryError> {
        Ok(self
            .state
            .agents
            .in_org(&id.as_uuid(), org)
            .map(|r| r.credentials.agent.clone()))
    }

    async fn insert_agent(&mut self, agent: &AgentCredentials) -> Result<(), RepositoryError> {
        check_agent(&agent.agent)?;
        let id = agent.agent.id.as_uuid();
        if self.state.agents.contains_key(&id) {
            return Err(primary_key("agents"));
        }
        // Unique regardless of case, as the databases' index on lower(agent_id) is.
        let key = agent.agent.handle.key();
        let taken = self
            .state
            .agents
            .values()
            .any(|r| r.credentials.agent.handle.key() == key);
        if taken {
            return duplicate(UniqueKey::AgentHandle);
        }
        self.state.agents.put(
            id,
            AgentRecord {
                credentials: agent.clone(),
                tally: Tally {
                    actions: 0,
                    actions_since: None,
                    credits: 0,
                    credits_since: None,
                },
            },
        );
        Ok(())
    }

    async fn update_agent(
        &mut self,
        agent: &Agent,
        _at: OffsetDateTime,
    ) -> Result<bool, RepositoryError> {
        check_agent(agent)?;
        let Some(record) = self
            .state
            .agents
            .row_in_org(&agent.id.as_uuid(), agent.org_id)
        else {
            return Ok(false);
        };
        let stored = &record.credentials.agent;
        let (handle, created_at) = (stored.handle.clone(), stored.created_at);
        record.credentials.agent = Agent {
            handle,
            created_at,
            ..agent.clone()
        };
        Ok(true)
    }

    async fn delete_agent(&mut self, org: OrgId, id: AgentId) -> Result<bool, RepositoryError> {
        if self.state.agents.take_in_org(&id.as_uuid(), org).is_none() {
            return Ok(false);
        }
        self.state.capabilities.retain(|_, c| c.agent_id != id);
        Ok(true)
    }

    async fn live_children(&mut self, org: OrgId, parent: AgentId) -> Result<u32, RepositoryError> {
        let live = self
            .state
            .agents
            .values()
            .map(|r| &r.credentials.agent)
            .filter(|a| {
                a.org_id == org
                    && a.parent_id == Some(parent)
                    && matches!(a.status, AgentStatus::Active | AgentStatus::Pending)
            })
            .count();
        Ok(u32::try_from(live).unwrap_or(u32::MAX))
    }

    async fn capability(
        &mut self,
        org: OrgId,
        id: CapabilityId,
        _lock: Lock,
    ) -> Result<Option<Capability>, RepositoryError> {
        Ok(self.state.capabilities.in_org(&id.as_uuid(), org).cloned())
    }

    async fn insert_capabilities(
        &mut self,
        capabilities: &[Capability],
    ) -> Result<(), RepositoryError> {
        for capability in capabilities {
            if self
                .state
                .capabilities
                .contains_key(&capability.id.as_uuid())
            {
                return Err(primary_key("agent_capabilities"));
            }
            let taken = self
                .state
                .capabilities
                .values()
                .any(|c| c.agent_id == capability.agent_id && c.name == capability.name);
            if taken {
                return duplicate(UniqueKey::Capability);
            }
            self.state
                .capabilities
                .put(capability.id.as_uuid(), capability.clone());
        }
        Ok(())
    }

    async fn update_capability(
        &mut self,
        capability: &Capability,
    ) -> Result<bool, RepositoryError> {
        let stored = self
            .state
            .capabilities
            .row_in_org(&capability.id.as_uuid(), capability.org_id);
        Ok(stored
            .map(|c| c.proficiency = capability.proficiency)
            .is_some())
    }

    async fn delete_capability(
        &mut self,
        org: OrgId,
        id: CapabilityId,
    ) -> Result<bool, RepositoryError> {
        Ok(self
            .state
            .capabilities
            .take_in_org(&id.as_uuid(), org)
            .is_some())
    }

    async fn roll_budget_periods(&mut self, start: OffsetDateTime) -> Result<u64, RepositoryError> {
        let due: Vec<Uuid> = self
            .state
            .agents
            .iter()
            .filter(|(_, r)| r.credentials.agent.budget_period_start < start)
            .map(|(id, _)| *id)
            .collect();
        for id in &due {
            if let Some(record) = self.state.agents.row_mut(id) {
                record.credentials.agent.budget_period_spent = 0;
                record.credentials.agent.budget_period_start = start;
            }
        }
        Ok(u64::try_from(due.len()).unwrap_or(u64::MAX))
    }

    async fn senior_agent_above(
        &mut self,
        org: OrgId,
        level: Option<Level>,
    ) -> Result<Option<Agent>, RepositoryError> {
        let floor = level.map_or(0, Level::get);
        Ok(self
            .state
            .agents
            .values()
            .map(|r| &r.credentials.agent)
            .filter(|a| {
                a.org_id == org
                    && a.status == AgentStatus::Active
                    && a.mode == AgentMode::Worker
                    && a.level.get() > floor
            })
            .min_by(|a, b| {
                b.level
                    .cmp(&a.level)
                    .then(a.created_at.cmp(&b.created_at))
                    .then(a.id.cmp(&b.id))
            })
            .cloned())
    }
}

#[async_trait]
impl GuardTx for MemoryTransaction {
    async fn tally_agent(
        &mut self,
        org: OrgId,
        actor: Uuid,
        add: &TallyAdd,
    ) -> Result<Option<Tally>, RepositoryError> {
        let Some(record) = self.state.agents.row_in_org(&actor, org) else {
            return Ok(None);
        };
        record.tally = guard::count(record.tally, *add);
        Ok(Some(record.tally))
    }

    async fn reset_tally(&mut self, org: OrgId, id: AgentId) -> Result<(), RepositoryError> {
        if let Some(record) = self.state.agents.row_in_org(&id.as_uuid(), org) {
            record.tally = Tally {
                actions: 0,
                actions_since: None,
                credits: 0,
                credits_since: None,
            };
        }
        Ok(())
    }

    async fn guard_settings(&mut self, org: OrgId) -> Result<GuardSettings, RepositoryError> {
        Ok(self
            .state
            .guard_settings
            .get(&org.as_uuid())
            .copied()
            .unwrap_or_default())
    }

    async fn set_guard_settings(
        &mut self,
        org: OrgId,
        settings: &GuardSettings,
    ) -> Result<(), RepositoryError> {
        if self.state.organizations.contains_key(&org.as_uuid()) {
            self.state.guard_settings.put(org.as_uuid(), *settings);
        }
        Ok(())
    }
}

#[async_trait]
impl TasksTx for MemoryTransaction {
    async fn task(
        &mut self,
        org: OrgId,
        id: TaskId,
        _lock: Lock,
    ) -> Result<Option<Task>, RepositoryError> {
        Ok(self.state.tasks.in_org(&id.as_uuid(), org).cloned())
    }

    async fn insert_task(&mut self, task: &Task) -> Result<(), RepositoryError> {
        insert_new(
            &mut self.state.tasks,
            task.id.as_uuid(),
            task.clone(),
            "tasks",
        )
    }

    async fn update_task(
        &mut self,
        task: &Task,
        expected_version: i64,
    ) -> Result<bool, RepositoryError> {
        let stored = self
            .state
            .tasks
            .row_mut(&task.id.as_uuid())
            .filter(|t| t.org_id == task.org_id && t.version == expected_version);
        Ok(stored.map(|t| *t = task.clone()).is_some())
    }

    async fn touch_task(
        &mut self,
        org: OrgId,
        id: TaskId,
        at: OffsetDateTime,
    ) -> Result<(), RepositoryError> {
        if let Some(task) = self.state.tasks.row_in_org(&id.as_uuid(), org) {
            task.last_activity_at = at;
        }
        Ok(())
    }

    async fn lock_dependency_graph(&mut self, _org: OrgId) -> Result<(), RepositoryError> {
        // Units of work run one at a time: the graph cannot change under this one.
        Ok(())
    }

    async fn depends_transitively(
        &mut self,
        org: OrgId,
        from: TaskId,
        to: TaskId,
    ) -> Result<bool, RepositoryError> {
        let mut seen = BTreeSet::new();
        let mut queue = VecDeque::from([from]);
        while let Some(task) = queue.pop_front() {
            for d in self.state.dependencies.values() {
                if d.org_id == org && d.task_id == task && seen.insert(d.depends_on_id) {
                    if d.depends_on_id == to {
                        return Ok(true);
                    }
                    queue.push_back(d.depends_on_id);
                }
            }
        }
        Ok(false)
    }

    async fn insert_dependency(
        &mut self,
        dependency: &TaskDependency,
    ) -> Result<(), RepositoryError> {
        check(
            dependency.task_id != dependency.depends_on_id,
            "task_id <> depends_on_id",
        )?;
        if self
            .state
            .dependencies
            .contains_key(&dependency.id.as_uuid())
        {
            return Err(primary_key("task_dependencies"));
        }
        let taken = self.state.dependencies.values().any(|d| {
            d.task_id == dependency.task_id && d.depends_on_id == dependency.depends_on_id
        });
        if taken {
            return duplicate(UniqueKey::Dependency);
        }
        self.state
            .dependencies
            .put(dependency.id.as_uuid(), dependency.clone());
        Ok(())
    }

    async fn delete_dependency(
        &mut self,
        org: OrgId,
        task: TaskId,
        id: DependencyId,
    ) -> Result<Option<TaskDependency>, RepositoryError> {
        let ours = self
            .state
            .dependencies
            .get(&id.as_uuid())
            .is_some_and(|d| d.org_id == org && d.task_id == task);
        Ok(if ours {
            self.state.dependencies.take(&id.as_uuid())
        } else {
            None
        })
    }

    async fn open_blocking_dependencies(
        &mut self,
        org: OrgId,
        task: TaskId,
    ) -> Result<Vec<TaskId>, RepositoryError> {
        let state = &self.state;
        Ok(state
            .dependencies
            .values()
            .filter(|d| d.org_id == org && d.task_id == task && d.blocking)
            .filter(|d| {
                state
                    .tasks
                    .get(&d.depends_on_id.as_uuid())
                    .is_some_and(|t| t.status != TaskStatus::Done)
            })
            .map(|d| d.depends_on_id)
            .collect())
    }

    async fn comment(
        &mut self,
        org: OrgId,
        task: TaskId,
        id: CommentId,
    ) -> Result<Option<Comment>, RepositoryError> {
        Ok(self
            .state
            .comments
            .get(&id.as_uuid())
            .filter(|c| c.org_id == org && c.task_id == task)
            .cloned())
    }

    async fn insert_comment(&mut self, comment: &Comment) -> Result<(), RepositoryError> {
        insert_new(
            &mut self.state.comments,
            comment.id.as_uuid(),
            comment.clone(),
            "task_comments",
        )
    }

    async fn insert_escalation(
        &mut self,
        escalation: &Escalation,
    ) -> Result<bool, RepositoryError> {
        if self
            .state
            .escalations
            .contains_key(&escalation.id.as_uuid())
        {
            return Err(primary_key("escalations"));
        }
        let repeated = escalation.automatic
            && self.state.escalations.values().any(|e| {
                e.automatic && e.task_id == escalation.task_id && e.reason == escalation.reason
            });
        if repeated {
            return Ok(false);
        }
        self.state
            .escalations
            .put(escalation.id.as_uuid(), escalation.clone());
        Ok(true)
    }

    async fn insert_template(&mut self, template: &TaskTemplate) -> Result<(), RepositoryError> {
        if self.state.templates.contains_key(&template.id.as_uuid()) {
            return Err(primary_key("task_templates"));
        }
        let key = template.name.key();
        let taken = self
            .state
            .templates
            .values()
            .any(|t| t.org_id == template.org_id && t.name.key() == key);
        if taken {
            return duplicate(UniqueKey::TemplateName);
        }
        self.state
            .templates
            .put(template.id.as_uuid(), template.clone());
        Ok(())
    }

    async fn claim_candidates(
        &mut self,
        org: OrgId,
        offset: u32,
        limit: u32,
    ) -> Result<Vec<Task>, RepositoryError> {
        let state = &self.state;
        let mut tasks: Vec<&Task> = state
            .tasks
            .values()
            .filter(|t| t.org_id == org && claimable(state, t))
            .collect();
        tasks.sort_by_key(|t| claim_key(t.priority, t.created_at, t.id));
        Ok(tasks
            .into_iter()
            .skip(usize::try_from(offset).unwrap_or(usize::MAX))
            .take(usize::try_from(limit).unwrap_or(usize::MAX))
            .cloned()
            .collect())
    }

    async fn try_lock_first_claimable(
        &mut self,
        org: OrgId,
        ids: &[TaskId],
    ) -> Result<Option<TaskId>, RepositoryError> {
        // One transaction at a time: nothing is held by another.
        Ok(ids.iter().copied().find(|id| {
            self.state
                .tasks
                .get(&id.as_uuid())
                .is_some_and(|t| t.org_id == org && CLAIMABLE.open(t.status, t.assignee_id))
        }))
    }
}

#[async_trait]
impl LedgerTx for MemoryTransaction {
    async fn insert_ledger_entries(
        &mut self,
        entries: &[LedgerEntry],
    ) -> Result<(), RepositoryError> {
        insert_each(
            &mut self.state.ledger,
            entries,
            |row| row.id.as_uuid(),
            "credit_ledger",
        )
    }

    async fn treasury(&mut self, org: OrgId, lock: Lock) -> Result<Treasury, RepositoryError> {
        let treasury = self
            .state
            .treasuries
            .get(&org.as_uuid())
            .cloned()
            .unwrap_or_else(|| Treasury::empty(org));
        // Locking creates the row, as the SQL adapters do.
        if lock == Lock::Update {
            self.state.treasuries.put(org.as_uuid(), treasury.clone());
        }
        Ok(treasury)
    }

    async fn update_treasury(&mut self, treasury: &Treasury) -> Result<(), RepositoryError> {
        self.state
            .treasuries
            .put(treasury.org_id.as_uuid(), treasury.clone());
        Ok(())
    }

    async fn insert_treasury_entries(
        &mut self,
        entries: &[TreasuryEntry],
    ) -> Result<(), RepositoryError> {
        insert_each(
            &mut self.state.treasury_entries,
            entries,
            |row| row.id.as_uuid(),
            "treasury_entries",
        )
    }

    async fn insert_reputation_events(
        &mut self,
        events: &[ReputationEvent],
    ) -> Result<(), RepositoryError> {
        insert_each(
            &mut self.state.reputation,
            events,
            |row| row.id.as_uuid(),
            "reputation_events",
        )
    }
}

#[async_trait]
impl WebhooksTx for MemoryTransaction {
    async fn append_events(&mut self, events: &[Event]) -> Result<(), RepositoryError> {
        let mut ids = BTreeSet::new();
        for event in events {
            if self.state.event_places.contains_key(&event.id.as_uuid()) || !ids.insert(event.id) {
                return Err(primary_key("events"));
            }
        }
        self.state.appended(events);
        self.written.extend_from_slice(events);
        Ok(())
    }

    fn written_events(&self) -> Vec<Event> {
        self.written.clone()
    }

    async fn webhook(
        &mut self,
        org: OrgId,
        id: WebhookId,
        _lock: Lock,
    ) -> Result<Option<Webhook>, RepositoryError> {
        Ok(self
            .state
            .webhooks
            .in_org(&id.as_uuid(), org)
            .map(|r| r.hook.clone()))
    }

    async fn pre_hooks(&mut self, org: OrgId) -> Result<Vec<Webhook>, RepositoryError> {
        let mut hooks: Vec<Webhook> = self
            .state
            .webhooks
            .values()
            .map(|r| &r.hook)
            .filter(|h| h.org_id == org && h.enabled && h.hook_type == HookType::Pre)
            .cloned()
            .collect();
        hooks.sort_by(|a, b| b.created_at.cmp(&a.created_at).then(b.id.cmp(&a.id)));
        Ok(hooks)
    }

    async fn push_configs(
        &mut self,
        org: OrgId,
        task: TaskId,
    ) -> Result<Vec<Webhook>, RepositoryError> {
        Ok(push_configs_of(&self.state, org, task))
    }

    async fn insert_webhook(&mut self, hook: &Webhook) -> Result<(), RepositoryError> {
        let record = HookRecord {
            hook: hook.clone(),
            lease: None,
        };
        insert_new(
            &mut self.state.webhooks,
            hook.id.as_uuid(),
            record,
            "webhooks",
        )
    }

    async fn update_webhook(&mut self, hook: &Webhook) -> Result<bool, RepositoryError> {
        let stored = self
            .state
            .webhooks
            .row_in_org(&hook.id.as_uuid(), hook.org_id);
        Ok(stored
            .map(|r| {
                let created_at = r.hook.created_at;
                r.hook = Webhook {
                    created_at,
                    ..hook.clone()
                };
            })
            .is_some())
    }

    async fn update_webhook_health(&mut self, hook: &Webhook) -> Result<bool, RepositoryError> {
        let stored = self
            .state
            .webhooks
            .row_in_org(&hook.id.as_uuid(), hook.org_id);
        Ok(stored
            .map(|r| {
                r.hook.enabled = hook.enabled;
                r.hook.consecutive_failures = hook.consecutive_failures;
                r.hook.last_error.clone_from(&hook.last_error);
                r.hook.updated_at = hook.updated_at;
            })
            .is_some())
    }

    async fn delete_webhook(&mut self, org: OrgId, id: WebhookId) -> Result<bool, RepositoryError> {
        if self
            .state
            .webhooks
            .take_in_org(&id.as_uuid(), org)
            .is_none()
        {
            return Ok(false);
        }
        self.state
            .outbox
            .retain(|(hook, _), _| *hook != id.as_uuid());
        self.state.attempts.retain(|_, a| a.webhook_id != id);
        Ok(true)
    }

    async fn insert_delivery_attempts(
        &mut self,
        attempts: &[DeliveryAttempt],
    ) -> Result<(), RepositoryError> {
        for attempt in attempts {
            insert_new(
                &mut self.state.attempts,
                attempt.id.as_uuid(),
                attempt.clone(),
                "webhook_attempts",
            )?;
        }
        Ok(())
    }

    async fn reschedule_delivery(
        &mut self,
        hook: WebhookId,
        event: EventId,
        attempts: u32,
        next_at: OffsetDateTime,
    ) -> Result<(), RepositoryError> {
        if let Some(row) = self
            .state
            .outbox
            .row_mut(&(hook.as_uuid(), event.as_uuid()))
        {
            row.attempts = attempts;
            row.next_at = next_at;
        }
        Ok(())
    }

    async fn finish_deliveries(
        &mut self,
        hook: WebhookId,
        events: &[EventId],
    ) -> Result<(), RepositoryError> {
        for event in events {
            self.state.outbox.take(&(hook.as_uuid(), event.as_uuid()));
        }
        Ok(())
    }
}

#[async_trait]
impl IntegrationsTx for MemoryTransaction {
    async fn codehost_connection(
        &mut self,
        org: OrgId,
        id: CodeHostConnectionId,
        _lock: Lock,
    ) -> Result<Option<CodeHostConnection>, RepositoryError> {
        Ok(self.state.codehost.in_org(&id.as_uuid(), org).cloned())
    }

    async fn insert_codehost_connection(
        &mut self,
        connection: &CodeHostConnection,
    ) -> Result<(), RepositoryError> {
        if self.state.codehost.contains_key(&connection.id.as_uuid()) {
            return Err(primary_key("codehost_connections"));
        }
        let taken = self.state.codehost.values().any(|c| {
            c.org_id == connection.org_id && c.installation_id == connection.installation_id
        });
        if taken {
            return duplicate(UniqueKey::Installation);
        }
        self.state
            .codehost
            .put(connection.id.as_uuid(), connection.clone());
        Ok(())
    }

    async fn update_codehost_connection(
        &mut self,
        connection: &CodeHostConnection,
    ) -> Result<bool, RepositoryError> {
        let taken = self.state.codehost.values().any(|c| {
            c.id != connection.id
                && c.org_id == connection.org_id
                && c.installation_id == connection.installation_id
        });
        if taken {
            duplicate(UniqueKey::Installation)?;
        }
        let stored = self
            .state
            .codehost
            .row_in_org(&connection.id.as_uuid(), connection.org_id);
        Ok(stored.map(|c| *c = connection.clone()).is_some())
    }

    async fn delete_codehost_connection(
        &mut self,
        org: OrgId,
        id: CodeHostConnectionId,
    ) -> Result<bool, RepositoryError> {
        if self
            .state
            .codehost
            .take_in_org(&id.as_uuid(), org)
            .is_none()
        {
            return Ok(false);
        }
        self.state
            .codehost_links
            .retain(|(connection, ..), _| *connection != id.as_uuid());
        self.state
            .codehost_deliveries
            .retain(|(connection, _), _| *connection != id.as_uuid());
        Ok(true)
    }

    async fn claim_codehost_delivery(
        &mut self,
        connection: CodeHostConnectionId,
        delivery: &str,
        _at: OffsetDateTime,
    ) -> Result<bool, RepositoryError> {
        let key = (connection.as_uuid(), delivery.to_owned());
        if self.state.codehost_deliveries.contains_key(&key) {
            return Ok(false);
        }
        self.state.codehost_deliveries.put(key, None);
        Ok(true)
    }

    async fn codehost_answer(
        &mut self,
        connection: CodeHostConnectionId,
        delivery: &str,
    ) -> Result<Option<IntegrationAnswer>, RepositoryError> {
        Ok(self
            .state
            .codehost_deliveries
            .get(&(connection.as_uuid(), delivery.to_owned()))
            .and_then(Clone::clone))
    }

    async fn record_codehost_answer(
        &mut self,
        connection: CodeHostConnectionId,
        delivery: &str,
        answer: &IntegrationAnswer,
    ) -> Result<(), RepositoryError> {
        if let Some(row) = self
            .state
            .codehost_deliveries
            .row_mut(&(connection.as_uuid(), delivery.to_owned()))
        {
            *row = Some(answer.clone());
        }
        Ok(())
    }

    async fn codehost_link(
        &mut self,
        connection: CodeHostConnectionId,
        item: &ItemRef,
    ) -> Result<Option<CodeHostLink>, RepositoryError> {
        Ok(self
            .state
            .codehost_links
            .get(&item_slot(connection, item))
            .cloned())
    }

    async fn link_codehost_item(
        &mut self,
        link: &CodeHostLink,
        _at: OffsetDateTime,
    ) -> Result<(), RepositoryError> {
        self.state
            .codehost_links
            .put(item_slot(link.connection_id, &link.item), link.clone());
        Ok(())
    }
}

/// Revokes the not yet revoked refresh tokens `which` selects; how many.
fn revoke(state: &mut State, at: OffsetDateTime, which: impl Fn(&RefreshToken) -> bool) -> u64 {
    let ids: Vec<Uuid> = state
        .refresh_tokens
        .iter()
        .filter(|(_, t)| t.revoked_at.is_none() && which(t))
        .map(|(id, _)| *id)
        .collect();
    for id in &ids {
        if let Some(token) = state.refresh_tokens.row_mut(id) {
            token.revoked_at = Some(at);
        }
    }
    u64::try_from(ids.len()).unwrap_or(u64::MAX)
}

/// The push configs of `task`, oldest first.
pub(super) fn push_configs_of(state: &State, org: OrgId, task: TaskId) -> Vec<Webhook> {
    let mut hooks: Vec<Webhook> = state
        .webhooks
        .values()
        .map(|r| &r.hook)
        .filter(|h| h.org_id == org && h.push.as_ref().is_some_and(|p| p.task_id == task))
        .cloned()
        .collect();
    hooks.sort_by(|a, b| a.created_at.cmp(&b.created_at).then(a.id.cmp(&b.id)));
    hooks
}
