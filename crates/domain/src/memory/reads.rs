//! The read ports on the last committed state: tasks, agents, users, organizations,
//! webhooks, inbound keys and code-host connections. "Newest first" walks the
//! time-ordered ids backwards, as the SQL adapters order by id.

use std::collections::{BTreeMap, BTreeSet};

use async_trait::async_trait;
use time::OffsetDateTime;
use uuid::Uuid;

use super::MemoryStore;
use super::state::State;
use crate::model::{
    Agent, AgentCredentials, AgentHandle, AgentId, AgentStatus, ApiKey, ApiKeyId, Capability,
    CapabilityName, CodeHostConnection, CodeHostConnectionId, Comment, CommentId, DeliveryAttempt,
    Escalation, EscalationId, InboundKey, InboundKeyId, InstallationId, LedgerEntry, LedgerEntryId,
    OrgId, Organization, ReputationEvent, ReputationKind, Task, TaskDependency, TaskId, TaskStatus,
    TaskTemplate, TemplateId, TokenHash, Treasury, TreasuryEntry, TreasuryEntryId, User, UserId,
    Webhook, WebhookId,
};
use crate::ports::{
    AgentFilter, AgentRepository, CodeHostRepository, InboundKeyRepository, OrganizationRepository,
    Overdue, RepositoryError, TaskFilter, TaskRepository, TreasuryRepository, UserRepository,
    WebhookRepository,
};
use crate::rules::candidates::RosterEntry;
use crate::rules::claimable::lease_expired;

/// At most `limit` of `rows`.
fn first<T>(rows: impl Iterator<Item = T>, limit: u32) -> Vec<T> {
    rows.take(usize::try_from(limit).unwrap_or(usize::MAX))
        .collect()
}

/// `rows` after skipping `offset`, at most `limit`.
fn page<T>(rows: impl Iterator<Item = T>, offset: u64, limit: u32) -> Vec<T> {
    first(
        rows.skip(usize::try_from(offset).unwrap_or(usize::MAX)),
        limit,
    )
}

fn count(n: usize) -> u64 {
    u64::try_from(n).unwrap_or(u64::MAX)
}

/// The rows of `table` newer than nothing and older than `before`, newest first.
fn newest_first<V>(table: &BTreeMap<Uuid, V>, before: Option<Uuid>) -> impl Iterator<Item = &V> {
    let upper = before.map_or(std::ops::Bound::Unbounded, std::ops::Bound::Excluded);
    table
        .range((std::ops::Bound::Unbounded, upper))
        .rev()
        .map(|(_, v)| v)
}

/// The rows of `table` strictly newer than `after`, oldest first.
fn oldest_first<V>(table: &BTreeMap<Uuid, V>, after: Option<Uuid>) -> impl Iterator<Item = &V> {
    let lower = after.map_or(std::ops::Bound::Unbounded, std::ops::Bound::Excluded);
    table
        .range((lower, std::ops::Bound::Unbounded))
        .map(|(_, v)| v)
}

fn agents_of(state: &State) -> impl DoubleEndedIterator<Item = &Agent> {
    state.agents.values().map(|r| &r.credentials.agent)
}

/// Every agent of `org` (only the active ones when `active_only`) with its capabilities
/// and its number of open tasks, by id.
fn roster(state: &State, org: OrgId, active_only: bool) -> Vec<RosterEntry> {
    let mut open: BTreeMap<AgentId, u32> = BTreeMap::new();
    for task in state.tasks.values() {
        if let Some(assignee) = task.assignee_id
            && task.org_id == org
            && !task.status.is_terminal()
        {
            *open.entry(assignee).or_default() += 1;
        }
    }
    agents_of(state)
        .filter(|a| a.org_id == org && (!active_only || a.status == AgentStatus::Active))
        .map(|agent| RosterEntry {
            capabilities: state
                .capabilities
                .values()
                .filter(|c| c.agent_id == agent.id)
                .map(|c| (c.name.clone(), c.proficiency))
                .collect(),
            open_tasks: open.get(&agent.id).copied().unwrap_or(0),
            agent: agent.clone(),
        })
        .collect()
}

/// The capabilities of `agent` of `org`, by name.
fn capabilities_of(state: &State, org: OrgId, agent: AgentId) -> Vec<Capability> {
    let mut found: Vec<Capability> = state
        .capabilities
        .values()
        .filter(|c| c.org_id == org && c.agent_id == agent)
        .cloned()
        .collect();
    found.sort_by(|a, b| a.name.cmp(&b.name));
    found
}

/// Whether `task` is still open (not done or cancelled).
const fn open(task: &Task) -> bool {
    !task.status.is_terminal()
}

#[async_trait]
impl TaskRepository for MemoryStore {
    async fn get(&self, org: OrgId, id: TaskId) -> Result<Option<Task>, RepositoryError> {
        let state = self.snapshot();
        Ok(state.tasks.in_org(&id.as_uuid(), org).cloned())
    }

    async fn open_titles(
        &self,
        org: OrgId,
        limit: u32,
    ) -> Result<Vec<(TaskId, String)>, RepositoryError> {
        let state = self.snapshot();
        let titles = newest_first(&state.tasks, None)
            .filter(|t| t.org_id == org && open(t))
            .map(|t| (t.id, t.title.as_str().to_owned()));
        Ok(first(titles, limit))
    }

    async fn list(
        &self,
        org: OrgId,
        filter: &TaskFilter,
        before: Option<TaskId>,
        limit: u32,
    ) -> Result<Vec<Task>, RepositoryError> {
        let state = self.snapshot();
        let tasks = newest_first(&state.tasks, before.map(TaskId::as_uuid))
            .filter(|t| t.org_id == org && filter.matches(t))
            .cloned();
        Ok(first(tasks, limit))
    }

    async fn count(&self, org: OrgId, filter: &TaskFilter) -> Result<u64, RepositoryError> {
        let state = self.snapshot();
        let matching = state
            .tasks
            .values()
            .filter(|t| t.org_id == org && filter.matches(t));
        Ok(matching.count() as u64)
    }

    async fn dependencies(
        &self,
        org: OrgId,
        task: TaskId,
    ) -> Result<Vec<TaskDependency>, RepositoryError> {
        let state = self.snapshot();
        Ok(state
            .dependencies
            .values()
            .filter(|d| d.org_id == org && d.task_id == task)
            .cloned()
            .collect())
    }

    async fn comments(
        &self,
        org: OrgId,
        task: TaskId,
        after: Option<CommentId>,
        limit: u32,
    ) -> Result<Vec<Comment>, RepositoryError> {
        let state = self.snapshot();
        let comments = oldest_first(&state.comments, after.map(CommentId::as_uuid))
            .filter(|c| c.org_id == org && c.task_id == task)
            .cloned();
        Ok(first(comments, limit))
    }

    async fn escalations(
        &self,
        org: OrgId,
        task: TaskId,
        before: Option<EscalationId>,
        limit: u32,
    ) -> Result<Vec<Escalation>, RepositoryError> {
        let state = self.snapshot();
        let escalations = newest_first(&state.escalations, before.map(EscalationId::as_uuid))
            .filter(|e| e.org_id == org && e.task_id == task)
            .cloned();
        Ok(first(escalations, limit))
    }

    async fn templates(
        &self,
        org: OrgId,
        before: Option<TemplateId>,
        limit: u32,
    ) -> Result<Vec<TaskTemplate>, RepositoryError> {
        let state = self.snapshot();
        let templates = newest_first(&state.templates, before.map(TemplateId::as_uuid))
            .filter(|t| t.org_id == org)
            .cloned();
        Ok(first(templates, limit))
    }

    async fn template(
        &self,
        org: OrgId,
        id: TemplateId,
    ) -> Result<Option<TaskTemplate>, RepositoryError> {
        let state = self.snapshot();
        Ok(state.templates.in_org(&id.as_uuid(), org).cloned())
    }

    async fn roster(&self, org: OrgId) -> Result<Vec<RosterEntry>, RepositoryError> {
        Ok(roster(&self.snapshot(), org, true))
    }

    async fn overdue(
        &self,
        query: Overdue,
        limit: u32,
    ) -> Result<Vec<(OrgId, TaskId)>, RepositoryError> {
        let state = self.snapshot();
        let reason = query.reason();
        let escalated: BTreeSet<TaskId> = state
            .escalations
            .values()
            .filter(|e| e.automatic && e.reason == reason)
            .map(|e| e.task_id)
            .collect();
        let inactive = |agent: Option<AgentId>| {
            agent
                .and_then(|a| state.agents.get(&a.as_uuid()))
                .is_some_and(|r| {
                    matches!(
                        r.credentials.agent.status,
                        AgentStatus::Suspended | AgentStatus::Revoked
                    )
                })
        };
        let found = state
            .tasks
            .values()
            .filter(|t| !escalated.contains(&t.id))
            .filter(|t| match query {
                Overdue::BlockedSince { priority, since } => {
                    t.status == TaskStatus::Blocked
                        && t.priority == priority
                        && t.status_changed_at < since
                }
                Overdue::IdleSince { since } => {
                    t.status == TaskStatus::InProgress && t.last_activity_at < since
                }
                Overdue::PastDue { now } => open(t) && t.due_at.is_some_and(|due| due < now),
                Overdue::AssigneeInactive => open(t) && inactive(t.assignee_id),
            })
            .map(|t| (t.org_id, t.id));
        Ok(first(found, limit))
    }

    async fn claimer_capabilities(
        &self,
        org: OrgId,
        agent: AgentId,
    ) -> Result<Vec<Capability>, RepositoryError> {
        Ok(capabilities_of(&self.snapshot(), org, agent))
    }

    async fn expired_leases(
        &self,
        org: Option<OrgId>,
        now: OffsetDateTime,
        limit: u32,
    ) -> Result<Vec<(OrgId, TaskId)>, RepositoryError> {
        let state = self.snapshot();
        let mut expired: Vec<(OffsetDateTime, &Task)> = state
            .tasks
            .values()
            .filter(|t| org.is_none_or(|o| t.org_id == o))
            .filter(|t| lease_expired(t.status, t.lease_expires_at, now))
            .filter_map(|t| t.lease_expires_at.map(|at| (at, t)))
            .collect();
        expired.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.id.cmp(&b.1.id)));
        Ok(first(
            expired.into_iter().map(|(_, t)| (t.org_id, t.id)),
            limit,
        ))
    }
}

#[async_trait]
impl AgentRepository for MemoryStore {
    async fn get(&self, org: OrgId, id: AgentId) -> Result<Option<Agent>, RepositoryError> {
        let state = self.snapshot();
        Ok(state
            .agents
            .in_org(&id.as_uuid(), org)
            .map(|r| r.credentials.agent.clone()))
    }

    async fn anywhere(&self, id: AgentId) -> Result<Option<Agent>, RepositoryError> {
        let state = self.snapshot();
        Ok(state
            .agents
            .get(&id.as_uuid())
            .map(|r| r.credentials.agent.clone()))
    }

    async fn find_credentials(
        &self,
        handle: &AgentHandle,
    ) -> Result<Option<AgentCredentials>, RepositoryError> {
        let state = self.snapshot();
        Ok(state
            .agents
            .values()
            .find(|r| r.credentials.agent.handle == *handle)
            .map(|r| r.credentials.clone()))
    }

    async fn list(
        &self,
        org: OrgId,
        filter: &AgentFilter,
        before: Option<AgentId>,
        limit: u32,
    ) -> Result<Vec<Agent>, RepositoryError> {
        let state = self.snapshot();
        let agents = newest_first(&state.agents, before.map(AgentId::as_uuid))
            .map(|r| &r.credentials.agent)
            .filter(|a| a.org_id == org)
            .filter(|a| filter.status.is_none_or(|s| a.status == s))
            .filter(|a| filter.role.is_none_or(|r| a.role == r))
            .filter(|a| filter.mode.is_none_or(|m| a.mode == m))
            .filter(|a| filter.parent_id.is_none_or(|p| a.parent_id == Some(p)))
            .cloned();
        Ok(first(agents, limit))
    }

    async fn capabilities(
        &self,
        org: OrgId,
        agent: AgentId,
    ) -> Result<Vec<Capability>, RepositoryError> {
        Ok(capabilities_of(&self.snapshot(), org, agent))
    }

    async fn capability_names(&self, org: OrgId) -> Result<Vec<CapabilityName>, RepositoryError> {
        let state = self.snapshot();
        let names: BTreeSet<CapabilityName> = state
            .capabilities
            .values()
            .filter(|c| c.org_id == org)
            .map(|c| c.name.clone())
            .collect();
        Ok(names.into_iter().collect())
    }

    async fn roster(
        &self,
        org: OrgId,
        active_only: bool,
    ) -> Result<Vec<RosterEntry>, RepositoryError> {
        Ok(roster(&self.snapshot(), org, active_only))
    }

    async fn pending(
        &self,
        org: OrgId,
        parent: Option<AgentId>,
    ) -> Result<Vec<Agent>, RepositoryError> {
        let state = self.snapshot();
        Ok(agents_of(&state)
            .rev()
            .filter(|a| a.org_id == org && a.status == AgentStatus::Pending)
            .filter(|a| parent.is_none_or(|p| a.parent_id == Some(p)))
            .cloned()
            .collect())
    }

    async fn children(
        &self,
        org: OrgId,
        parents: &[AgentId],
    ) -> Result<Vec<Agent>, RepositoryError> {
        let state = self.snapshot();
        Ok(agents_of(&state)
            .filter(|a| a.org_id == org && a.parent_id.is_some_and(|p| parents.contains(&p)))
            .cloned()
            .collect())
    }

    async fn limited(&self, org: OrgId) -> Result<Vec<Agent>, RepositoryError> {
        let state = self.snapshot();
        Ok(agents_of(&state)
            .filter(|a| a.org_id == org && a.status == AgentStatus::Active)
            .filter(|a| a.budget_period_limit.is_some_and(|limit| limit > 0))
            .cloned()
            .collect())
    }

    async fn ledger(
        &self,
        org: OrgId,
        agent: AgentId,
        before: Option<LedgerEntryId>,
        limit: u32,
    ) -> Result<Vec<LedgerEntry>, RepositoryError> {
        let state = self.snapshot();
        let entries = newest_first(&state.ledger, before.map(LedgerEntryId::as_uuid))
            .filter(|e| e.org_id == org && e.agent_id == agent)
            .cloned();
        Ok(first(entries, limit))
    }

    async fn reputation_history(
        &self,
        org: OrgId,
        agent: AgentId,
        limit: u32,
        offset: u64,
    ) -> Result<(Vec<ReputationEvent>, u64), RepositoryError> {
        let state = self.snapshot();
        let of_agent = || {
            newest_first(&state.reputation, None).filter(|e| e.org_id == org && e.agent_id == agent)
        };
        Ok((
            page(of_agent().cloned(), offset, limit),
            count(of_agent().count()),
        ))
    }

    async fn leaderboard(
        &self,
        org: OrgId,
        limit: u32,
    ) -> Result<Vec<(Agent, u64)>, RepositoryError> {
        let state = self.snapshot();
        let mut top: Vec<&Agent> = agents_of(&state)
            .filter(|a| a.org_id == org && a.status == AgentStatus::Active)
            .collect();
        top.sort_by(|a, b| {
            b.reputation_score
                .cmp(&a.reputation_score)
                .then(a.handle.as_str().cmp(b.handle.as_str()))
        });
        let completed = |agent: &Agent| {
            count(
                state
                    .reputation
                    .values()
                    .filter(|e| {
                        e.org_id == org
                            && e.agent_id == agent.id
                            && e.kind == ReputationKind::TaskCompleted
                    })
                    .count(),
            )
        };
        Ok(first(
            top.into_iter().map(|a| (a.clone(), completed(a))),
            limit,
        ))
    }
}

#[async_trait]
impl OrganizationRepository for MemoryStore {
    async fn get(&self, id: OrgId) -> Result<Option<Organization>, RepositoryError> {
        Ok(self.snapshot().organizations.get(&id.as_uuid()).cloned())
    }

    async fn default_organization(&self) -> Result<Option<Organization>, RepositoryError> {
        let state = self.snapshot();
        Ok(state.organizations.values().find(|o| o.is_default).cloned())
    }

    async fn any_exists(&self) -> Result<bool, RepositoryError> {
        Ok(!self.snapshot().organizations.is_empty())
    }
}

#[async_trait]
impl TreasuryRepository for MemoryStore {
    async fn treasury(&self, org: OrgId) -> Result<Treasury, RepositoryError> {
        Ok(self
            .snapshot()
            .treasuries
            .get(&org.as_uuid())
            .cloned()
            .unwrap_or_else(|| Treasury::empty(org)))
    }

    async fn history(
        &self,
        org: OrgId,
        before: Option<TreasuryEntryId>,
        limit: u32,
    ) -> Result<Vec<TreasuryEntry>, RepositoryError> {
        let state = self.snapshot();
        let entries = newest_first(
            &state.treasury_entries,
            before.map(TreasuryEntryId::as_uuid),
        )
        .filter(|e| e.org_id == org)
        .cloned();
        Ok(first(entries, limit))
    }
}

#[async_trait]
impl UserRepository for MemoryStore {
    async fn user(&self, org: OrgId, id: UserId) -> Result<Option<User>, RepositoryError> {
        let state = self.snapshot();
        Ok(state.users.in_org(&id.as_uuid(), org).cloned())
    }

    async fn user_by_email(
        &self,
        org: OrgId,
        email: &crate::model::Email,
    ) -> Result<Option<User>, RepositoryError> {
        let state = self.snapshot();
        Ok(state
            .users
            .values()
            .find(|u| u.org_id == org && u.email == *email)
            .cloned())
    }

    async fn api_key_by_hash(
        &self,
        hash: &TokenHash,
    ) -> Result<Option<(ApiKey, User)>, RepositoryError> {
        let state = self.snapshot();
        Ok(state
            .api_keys
            .values()
            .find(|k| k.key_hash == *hash)
            .and_then(|k| {
                let owner = state.users.get(&k.user_id.as_uuid())?;
                Some((k.clone(), owner.clone()))
            }))
    }

    async fn api_keys_of(&self, org: OrgId, user: UserId) -> Result<Vec<ApiKey>, RepositoryError> {
        let state = self.snapshot();
        Ok(newest_first(&state.api_keys, None)
            .filter(|k| k.org_id == org && k.user_id == user)
            .cloned()
            .collect())
    }

    async fn api_key(
        &self,
        org: OrgId,
        user: UserId,
        id: ApiKeyId,
    ) -> Result<Option<ApiKey>, RepositoryError> {
        let state = self.snapshot();
        Ok(state
            .api_keys
            .get(&id.as_uuid())
            .filter(|k| k.org_id == org && k.user_id == user)
            .cloned())
    }

    async fn touch_api_key(
        &self,
        id: ApiKeyId,
        at: OffsetDateTime,
        unless_since: OffsetDateTime,
    ) -> Result<(), RepositoryError> {
        self.change(|state| {
            if let Some(key) = state.api_keys.row_mut(&id.as_uuid())
                && key.last_used_at.is_none_or(|last| last < unless_since)
            {
                key.last_used_at = Some(at);
            }
        })
        .await;
        Ok(())
    }

    async fn purge_expired_sign_ins(&self, now: OffsetDateTime) -> Result<u64, RepositoryError> {
        Ok(self
            .change(|state| state.oauth_states.retain(|_, s| s.expires_at >= now))
            .await)
    }

    async fn purge_login_throttles(&self, before: OffsetDateTime) -> Result<u64, RepositoryError> {
        Ok(self
            .change(|state| {
                state
                    .login_throttles
                    .retain(|_, s| s.last_failure_at.is_some_and(|last| last >= before))
            })
            .await)
    }
}

/// `rows` of `org`, newest first by creation time, then by id.
fn newest_created<T: Clone>(
    rows: impl Iterator<Item = T>,
    created: impl Fn(&T) -> (OffsetDateTime, Uuid),
) -> Vec<T> {
    let mut rows: Vec<T> = rows.collect();
    rows.sort_by_key(|row| std::cmp::Reverse(created(row)));
    rows
}

#[async_trait]
impl WebhookRepository for MemoryStore {
    async fn list(&self, org: OrgId) -> Result<Vec<Webhook>, RepositoryError> {
        let state = self.snapshot();
        Ok(newest_created(
            state
                .webhooks
                .values()
                .map(|r| r.hook.clone())
                .filter(|h| h.org_id == org && h.is_own()),
            |h| (h.created_at, h.id.as_uuid()),
        ))
    }

    async fn get(&self, org: OrgId, id: WebhookId) -> Result<Option<Webhook>, RepositoryError> {
        let state = self.snapshot();
        Ok(state
            .webhooks
            .in_org(&id.as_uuid(), org)
            .map(|r| r.hook.clone()))
    }

    async fn remote_channel(&self, agent: AgentId) -> Result<Option<Webhook>, RepositoryError> {
        let state = self.snapshot();
        Ok(state
            .webhooks
            .values()
            .map(|r| r.hook.clone())
            .find(|h| h.remote.as_ref().is_some_and(|r| r.agent_id == agent)))
    }

    async fn push_configs(
        &self,
        org: OrgId,
        task: TaskId,
    ) -> Result<Vec<Webhook>, RepositoryError> {
        let state = self.snapshot();
        Ok(super::transaction::push_configs_of(&state, org, task))
    }

    async fn attempts(
        &self,
        org: OrgId,
        id: WebhookId,
        limit: u32,
        offset: u64,
    ) -> Result<(Vec<DeliveryAttempt>, u64), RepositoryError> {
        let state = self.snapshot();
        let of_hook = newest_created(
            state
                .attempts
                .values()
                .filter(|a| a.org_id == org && a.webhook_id == id)
                .cloned(),
            |a| (a.created_at, a.id.as_uuid()),
        );
        let total = count(of_hook.len());
        Ok((page(of_hook.into_iter(), offset, limit), total))
    }
}

#[async_trait]
impl InboundKeyRepository for MemoryStore {
    async fn list(&self, org: OrgId) -> Result<Vec<InboundKey>, RepositoryError> {
        let state = self.snapshot();
        Ok(newest_created(
            state
                .inbound_keys
                .values()
                .filter(|k| k.org_id == org)
                .cloned(),
            |k| (k.created_at, k.id.as_uuid()),
        ))
    }

    async fn get(
        &self,
        org: OrgId,
        id: InboundKeyId,
    ) -> Result<Option<InboundKey>, RepositoryError> {
        let state = self.snapshot();
        Ok(state.inbound_keys.in_org(&id.as_uuid(), org).cloned())
    }

    async fn by_key(&self, key: &str) -> Result<Option<InboundKey>, RepositoryError> {
        let state = self.snapshot();
        Ok(state.inbound_keys.values().find(|k| k.key == key).cloned())
    }
}

#[async_trait]
impl CodeHostRepository for MemoryStore {
    async fn list(&self, org: OrgId) -> Result<Vec<CodeHostConnection>, RepositoryError> {
        let state = self.snapshot();
        Ok(newest_created(
            state.codehost.values().filter(|c| c.org_id == org).cloned(),
            |c| (c.created_at, c.id.as_uuid()),
        ))
    }

    async fn get(
        &self,
        org: OrgId,
        id: CodeHostConnectionId,
    ) -> Result<Option<CodeHostConnection>, RepositoryError> {
        let state = self.snapshot();
        Ok(state.codehost.in_org(&id.as_uuid(), org).cloned())
    }

    async fn by_installation(
        &self,
        installation: InstallationId,
    ) -> Result<Vec<CodeHostConnection>, RepositoryError> {
        let state = self.snapshot();
        let mut found: Vec<CodeHostConnection> = state
            .codehost
            .values()
            .filter(|c| c.installation_id == installation)
            .cloned()
            .collect();
        found.sort_by_key(|c| (c.created_at, c.id.as_uuid()));
        Ok(found)
    }
}
