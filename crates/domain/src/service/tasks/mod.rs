//! Task use cases: create, read, edit ([`TaskService`]), and in the submodules the
//! workflow, dependencies, comments, escalations, templates and routing.

mod claims;
mod comments;
mod dependencies;
mod escalations;
pub(crate) mod escrow;
mod integration;
mod outcomes;
mod release;
mod routing;
mod sweep;
mod templates;
mod workflow;

use std::sync::Arc;

use time::OffsetDateTime;

pub use self::claims::ClaimRequest;
pub use self::escalations::NewEscalation;
use self::escrow::{Books, Purse, take};
pub(crate) use self::integration::Closing;
pub use self::integration::IntegrationMove;
pub use self::routing::{AutoAssign, CandidateQuery};
pub use self::sweep::{EscalationSweep, SweepFailure, SweepRun};
pub use self::templates::TemplateOverrides;
pub use self::workflow::TaskMove;
use super::{Conflict, Entity, NotFound, Page, PageRequest, ServiceError};
use crate::ValidationError;
use crate::model::{
    Actor, AgentId, AgentMode, AuditEvent, Author, Description, Event, EventId, Metadata, OrgId,
    ProjectId, RewardPayer, Tags, Task, TaskCreated, TaskId, TaskPriority, TaskUpdated, Title,
};
use crate::policy;
use crate::ports::{
    AgentsTx, Clock, IdGenerator, LedgerTx, Lock, ProjectsTx, RunObserver, TaskFilter,
    TaskRepository, TasksTx, UnitOfWork, Unobserved, WebhooksTx, transact,
};
use crate::rules::budget::{BudgetPeriod, roll_over};
use crate::rules::reward::DEFAULT_TASK_REWARD;
use crate::service::locks::lock_agents_as;
use crate::service::projects::joinable;

/// A task to create, already validated field by field.
#[derive(Debug, Clone, PartialEq)]
pub struct NewTask {
    /// Short summary.
    pub title: Title,
    /// Markdown body.
    pub description: Option<Description>,
    /// Urgency.
    pub priority: TaskPriority,
    /// Agent to assign right away.
    pub assignee_id: Option<AgentId>,
    /// Parent task.
    pub parent_task_id: Option<TaskId>,
    /// The project it joins (issue 66); `None` for a sub-task means its parent's.
    pub project_id: Option<ProjectId>,
    /// Whether closing needs approval.
    pub approval_required: bool,
    /// Deadline.
    pub due_at: Option<OffsetDateTime>,
    /// Labels.
    pub tags: Tags,
    /// Arbitrary JSON object.
    pub metadata: Metadata,
    /// Credits to escrow for whoever finishes it (checked with
    /// [`reward_amount`](crate::rules::reward::reward_amount)); `None` for the
    /// service's default reward, which a payer that cannot fund it makes 0 (D-101).
    pub reward: Option<i64>,
}

impl NewTask {
    /// A task titled `title`, every other field at its default: normal priority,
    /// nobody assigned, no parent, no approval needed, no deadline, no tags, empty
    /// metadata and the service's default reward. Name the others with struct update
    /// syntax:
    ///
    /// ```
    /// use muster_domain::model::{TaskPriority, Title};
    /// use muster_domain::service::NewTask;
    /// let new = NewTask {
    ///     priority: TaskPriority::Urgent,
    ///     ..NewTask::new(Title::new("Page the on-call")?)
    /// };
    /// assert_eq!((new.priority, new.reward), (TaskPriority::Urgent, None));
    /// # Ok::<(), muster_domain::ValidationError>(())
    /// ```
    pub fn new(title: Title) -> Self {
        Self {
            title,
            description: None,
            priority: TaskPriority::default(),
            assignee_id: None,
            parent_task_id: None,
            project_id: None,
            approval_required: false,
            due_at: None,
            tags: Tags::default(),
            metadata: Metadata::default(),
            reward: None,
        }
    }
}

/// The editable fields of `PATCH /tasks/:id` (decision D-39): `None` leaves a field as
/// it is; `Some(None)` clears a clearable one.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TaskPatch {
    /// New title.
    pub title: Option<Title>,
    /// New description, or cleared.
    pub description: Option<Option<Description>>,
    /// New priority.
    pub priority: Option<TaskPriority>,
    /// New deadline, or cleared.
    pub due_at: Option<Option<OffsetDateTime>>,
    /// New tags (replacing the old).
    pub tags: Option<Tags>,
    /// New metadata (replacing the old).
    pub metadata: Option<Metadata>,
    /// New reward: the difference is taken from or given back to its payer (D-101).
    pub reward: Option<i64>,
    /// Another project (an active one), or none.
    pub project_id: Option<Option<ProjectId>>,
}

impl TaskPatch {
    /// Whether the patch names no field at all.
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }
}

/// One page of tasks, newest first.
pub type TaskPage = Page<Task, TaskId>;

/// Creating, reading, editing and moving tasks, and everything that hangs off them.
#[derive(Clone)]
pub struct TaskService {
    tasks: Arc<dyn TaskRepository>,
    uow: Arc<dyn UnitOfWork>,
    clock: Arc<dyn Clock>,
    ids: Arc<dyn IdGenerator>,
    reward: i64,
    period: BudgetPeriod,
    /// Told of the runs the lease sweep loses (decision D-106).
    runs: Arc<dyn RunObserver>,
}

impl std::fmt::Debug for TaskService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskService").finish_non_exhaustive()
    }
}

impl TaskService {
    /// Page size of `GET /tasks` when none is asked for (decision D-7).
    pub const DEFAULT_PAGE_SIZE: u32 = PageRequest::<TaskId>::DEFAULT_LIMIT;
    /// Largest page size of `GET /tasks` (decision D-7).
    pub const MAX_PAGE_SIZE: u32 = PageRequest::<TaskId>::MAX_LIMIT;

    /// Wires the service to its ports: `tasks` for reads, `uow` for changes. A task
    /// created with no reward named gets [`DEFAULT_TASK_REWARD`] credits until
    /// [`with_reward`](Self::with_reward) says otherwise.
    pub fn new(
        tasks: Arc<dyn TaskRepository>,
        uow: Arc<dyn UnitOfWork>,
        clock: Arc<dyn Clock>,
        ids: Arc<dyn IdGenerator>,
    ) -> Self {
        Self {
            tasks,
            uow,
            clock,
            ids,
            reward: DEFAULT_TASK_REWARD,
            period: BudgetPeriod::default(),
            runs: Arc::new(Unobserved),
        }
    }

    /// Sets the reward a task gets when its creator names none (decision D-101).
    #[must_use]
    pub fn with_reward(mut self, reward: i64) -> Self {
        self.reward = reward;
        self
    }

    /// Sets the agents' budget period, within which an agent's escrowed rewards count
    /// as spending (decision D-57).
    #[must_use]
    pub fn with_budget_period(mut self, period: BudgetPeriod) -> Self {
        self.period = period;
        self
    }

    /// Tells `observer` of each run the lease sweep loses, once its hand-back commits
    /// (the run service tells of the runs their agents finish).
    #[must_use]
    pub fn with_run_observer(mut self, observer: Arc<dyn RunObserver>) -> Self {
        self.runs = observer;
        self
    }

    /// Creates a task in status `todo` in the actor's organization, with a
    /// `task.created` event. The assignee and parent checks and the writes are one
    /// transaction, so an assignee suspended meanwhile is never assigned.
    pub async fn create(&self, actor: &Actor, new: NewTask) -> Result<Task, ServiceError> {
        policy::may_write(actor)?;
        let (service, actor) = (self.clone(), actor.clone());
        transact(self.uow.as_ref(), move |tx| {
            Box::pin(async move { service.create_in(tx, &actor, new).await })
        })
        .await
    }

    /// [`create`](Self::create) inside a transaction that also writes other things. The
    /// reward is escrowed from its payer (decision D-101): an explicit one it cannot fund
    /// is refused (409); the default one is then 0, and `task.created` says so.
    pub(crate) async fn create_in<
        T: AgentsTx + TasksTx + LedgerTx + WebhooksTx + ProjectsTx + ?Sized,
    >(
        &self,
        tx: &mut T,
        actor: &Actor,
        new: NewTask,
    ) -> Result<Task, ServiceError> {
        let payer = actor
            .agent_id()
            .map_or(RewardPayer::Treasury, RewardPayer::Agent);
        self.create_paid_by(tx, actor, new, payer).await
    }

    /// [`create_in`](Self::create_in) with the reward escrowed from `payer` rather than
    /// from the creating agent: a routine's tasks are created as its owner would create
    /// them, paid by the treasury (decision D-108).
    pub(crate) async fn create_paid_by<
        T: AgentsTx + TasksTx + LedgerTx + WebhooksTx + ProjectsTx + ?Sized,
    >(
        &self,
        tx: &mut T,
        actor: &Actor,
        new: NewTask,
        payer: RewardPayer,
    ) -> Result<Task, ServiceError> {
        policy::may_write(actor)?;
        let asked = new.reward;
        let mut task = self.new_task(actor, new, payer);
        let (org, now) = (task.org_id, task.created_at);
        // Tasks before agents, as every use case locks them, so that none waits in a cycle.
        let parent = match task.parent_task_id {
            Some(id) => Some(
                tx.task(org, id, Lock::Share)
                    .await?
                    .ok_or(NotFound::new(Entity::ParentTask, id))?,
            ),
            None => None,
        };
        task.project_id = project_of(tx, org, task.project_id, parent.as_ref()).await?;
        let amount = asked.unwrap_or(self.reward);
        let fund = amount > 0
            && (asked.is_some()
                || self
                    .seems_funded(tx, org, task.reward_payer, amount, now)
                    .await?);
        let payer_agent = task.reward_payer.agent().filter(|_| fund);
        // The assignee share-locked (it cannot be suspended until the task is stored),
        // the paying agent locked for update, in the one agent order.
        let wanted: Vec<(AgentId, Lock)> = task
            .assignee_id
            .map(|id| (id, Lock::Share))
            .into_iter()
            .chain(payer_agent.map(|id| (id, Lock::Update)))
            .collect();
        let mut locked = lock_agents_as(tx, org, &wanted).await?;
        if task.assignee_id.is_some()
            && let Some(assignee) = locked.first()
        {
            ensure_assignable(assignee)?;
        }
        let mut books = Books::default();
        let mut unfunded = (amount > 0 && !fund).then_some(amount);
        let mut escrowed = None;
        let mut treasury = None;
        if fund {
            let purse = match payer_agent {
                Some(_) => match locked.last_mut() {
                    Some(agent) => {
                        roll_over(agent, self.period, now);
                        Purse::Agent(agent)
                    }
                    None => return Err(ServiceError::internal("the paying agent was not locked")),
                },
                None => Purse::Treasury(treasury.insert(tx.treasury(org, Lock::Update).await?)),
            };
            match take(
                self.ids.as_ref(),
                actor,
                purse,
                &task,
                amount,
                &mut books,
                now,
            ) {
                Ok(event) => {
                    task.reward = amount;
                    escrowed = Some(event);
                }
                Err(_) if asked.is_none() => unfunded = Some(amount),
                Err(refusal) => return Err(refusal.into()),
            }
        }
        let created = created_event(&task, unfunded);
        let mut events = vec![self.task_event(actor, &task, &created)];
        tx.insert_task(&task).await?;
        if let Some(event) = escrowed {
            events.push(event);
            match (payer_agent, locked.last(), &treasury) {
                (Some(_), Some(agent), _) => {
                    tx.update_agent(agent, now).await?;
                }
                (None, _, Some(treasury)) => tx.update_treasury(treasury).await?,
                _ => {}
            }
        }
        books.write(tx).await?;
        tx.append_events(&events).await?;
        Ok(task)
    }

    /// The task, if it is in the actor's organization.
    pub async fn get(&self, actor: &Actor, id: TaskId) -> Result<Task, ServiceError> {
        self.tasks
            .get(actor.org_id, id)
            .await?
            .ok_or_else(|| NotFound::new(Entity::Task, id).into())
    }

    /// Tasks of the actor's organization, newest first. `limit` is the page size;
    /// `before` is the cursor from the previous page.
    pub async fn list(
        &self,
        actor: &Actor,
        filter: &TaskFilter,
        before: Option<TaskId>,
        limit: u32,
    ) -> Result<TaskPage, ServiceError> {
        let page = PageRequest {
            cursor: before,
            limit,
        };
        page.check()?;
        let rows = self
            .tasks
            .list(actor.org_id, filter, before, page.fetch())
            .await?;
        Ok(Page::cut(rows, limit, |t| t.id))
    }

    /// How many tasks of the actor's organization match `filter`.
    pub async fn count(&self, actor: &Actor, filter: &TaskFilter) -> Result<u64, ServiceError> {
        Ok(self.tasks.count(actor.org_id, filter).await?)
    }

    /// Edits a task's fields (decision D-39) and writes `task.updated` naming the
    /// changed fields. A done or cancelled task is closed for edits (409).
    pub async fn update(
        &self,
        actor: &Actor,
        id: TaskId,
        patch: TaskPatch,
    ) -> Result<Task, ServiceError> {
        policy::may_write(actor)?;
        if patch.is_empty() {
            return Err(ValidationError::new("at least one field must be given").into());
        }
        let (service, actor) = (self.clone(), actor.clone());
        transact(self.uow.as_ref(), move |tx| {
            Box::pin(async move { service.update_in(tx, &actor, id, patch).await })
        })
        .await
    }

    /// [`update`](Self::update) inside a transaction that also writes other things.
    pub(crate) async fn update_in<
        T: AgentsTx + TasksTx + LedgerTx + WebhooksTx + ProjectsTx + ?Sized,
    >(
        &self,
        tx: &mut T,
        actor: &Actor,
        id: TaskId,
        patch: TaskPatch,
    ) -> Result<Task, ServiceError> {
        policy::may_write(actor)?;
        let current = locked_task(tx, actor.org_id, id).await?;
        ensure_open(&current)?;
        let mut task = current.clone();
        let reward = patch.reward.filter(|r| *r != current.reward);
        if let Some(Some(project)) = patch.project_id
            && current.project_id != Some(project)
        {
            joinable(tx, actor.org_id, project).await?;
        }
        let mut fields = apply_patch(&mut task, patch);
        let now = self.clock.now();
        let mut moved = (Vec::new(), Books::default());
        if let Some(reward) = reward {
            policy::may_change_reward(actor, current.reward_payer)?;
            moved = self.rereward(tx, actor, &mut task, reward, now).await?;
            fields.push("reward".to_owned());
        }
        if fields.is_empty() {
            return Ok(current);
        }
        let (credits, books) = moved;
        let mut events = vec![self.task_event_at(
            actor,
            id,
            now,
            &AuditEvent::TaskUpdated(TaskUpdated { fields }),
        )];
        events.extend(credits);
        let task = self.save(tx, &current, task, now, events).await?;
        books.write(tx).await?;
        Ok(task)
    }

    /// The task of `new`, created now by `actor`, its reward paid by `reward_payer`.
    fn new_task(&self, actor: &Actor, new: NewTask, reward_payer: RewardPayer) -> Task {
        let now = self.clock.now();
        let id = TaskId::from_uuid(self.ids.new_id());
        Task {
            description: new.description,
            priority: new.priority,
            assignee_id: new.assignee_id,
            creator: Author::of(actor),
            parent_task_id: new.parent_task_id,
            project_id: new.project_id,
            approval_required: new.approval_required,
            due_at: new.due_at,
            tags: new.tags,
            metadata: new.metadata,
            reward_payer,
            ..Task::new(id, actor.org_id, new.title, now)
        }
    }

    /// Writes `task` (changed from `current`, stamped `now`) if nobody else changed it
    /// meanwhile, with its events.
    async fn save<T: TasksTx + WebhooksTx + ?Sized>(
        &self,
        tx: &mut T,
        current: &Task,
        mut task: Task,
        now: OffsetDateTime,
        events: Vec<Event>,
    ) -> Result<Task, ServiceError> {
        task.updated_at = now;
        task.last_activity_at = now;
        if task.status != current.status {
            task.status_changed_at = now;
        }
        task.version = current.version + 1;
        if !tx.update_task(&task, current.version).await? {
            return Err(Conflict::ChangedConcurrently {
                entity: Entity::Task,
            }
            .into());
        }
        tx.append_events(&events).await?;
        Ok(task)
    }

    /// The audit record of `what`, done by `actor` to `task` when it was last stamped.
    fn task_event(&self, actor: &Actor, task: &Task, what: &AuditEvent) -> Event {
        self.task_event_at(actor, task.id, task.updated_at, what)
    }

    /// The audit record of `what`, done by `actor` to the task `task` at `at`.
    fn task_event_at(
        &self,
        actor: &Actor,
        task: TaskId,
        at: OffsetDateTime,
        what: &AuditEvent,
    ) -> Event {
        self.event(actor, task.as_uuid(), at, what)
    }

    /// The audit record of `what`, done by `actor` to the entity `entity` at `at`.
    fn event(
        &self,
        actor: &Actor,
        entity: uuid::Uuid,
        at: OffsetDateTime,
        what: &AuditEvent,
    ) -> Event {
        Event::record(
            EventId::from_uuid(self.ids.new_id()),
            actor.org_id,
            actor.actor_id(),
            entity,
            at,
            what,
        )
    }
}

/// `task.created` for `task`; `unfunded` is the default reward its payer could not fund.
pub(crate) fn created_event(task: &Task, unfunded: Option<i64>) -> AuditEvent {
    AuditEvent::TaskCreated(TaskCreated {
        title: task.title.as_str().to_owned(),
        status: task.status,
        priority: task.priority,
        assignee_id: task.assignee_id,
        parent_task_id: task.parent_task_id,
        project_id: task.project_id,
        reward: task.reward,
        reward_unfunded: unfunded,
    })
}

/// The checks a new task needs inside its creating transaction: an assignable assignee
/// and a parent in the same organization.
pub(crate) async fn check_new_task<T: AgentsTx + TasksTx + ?Sized>(
    tx: &mut T,
    task: &Task,
) -> Result<(), ServiceError> {
    // Tasks before agents, as every use case locks them, so that none waits in a cycle.
    if let Some(parent) = task.parent_task_id
        && tx.task(task.org_id, parent, Lock::Share).await?.is_none()
    {
        return Err(NotFound::new(Entity::ParentTask, parent).into());
    }
    if let Some(assignee) = task.assignee_id {
        check_assignable(tx, task.org_id, assignee).await?;
    }
    Ok(())
}

/// Applies `patch` to `task`; the camelCase names of the fields that changed.
fn apply_patch(task: &mut Task, patch: TaskPatch) -> Vec<String> {
    let mut fields = Vec::new();
    let mut set = |name: &str, changed: bool| {
        if changed {
            fields.push(name.to_owned());
        }
    };
    if let Some(title) = patch.title {
        set("title", task.title != title);
        task.title = title;
    }
    if let Some(description) = patch.description {
        set("description", task.description != description);
        task.description = description;
    }
    if let Some(priority) = patch.priority {
        set("priority", task.priority != priority);
        task.priority = priority;
    }
    if let Some(due_at) = patch.due_at {
        set("dueAt", task.due_at != due_at);
        task.due_at = due_at;
    }
    if let Some(tags) = patch.tags {
        set("tags", task.tags != tags);
        task.tags = tags;
    }
    if let Some(metadata) = patch.metadata {
        set("metadata", task.metadata != metadata);
        task.metadata = metadata;
    }
    if let Some(project) = patch.project_id {
        set("projectId", task.project_id != project);
        task.project_id = project;
    }
    fields
}

/// The project a new task joins: the one `asked` (it must be an active project of
/// `org`), else its parent's when that one is still active (a sub-task of a task in an
/// archived project starts outside any project).
pub(crate) async fn project_of<T: ProjectsTx + ?Sized>(
    tx: &mut T,
    org: OrgId,
    asked: Option<ProjectId>,
    parent: Option<&Task>,
) -> Result<Option<ProjectId>, ServiceError> {
    if let Some(asked) = asked {
        return Ok(Some(joinable(tx, org, asked).await?.id));
    }
    let Some(inherited) = parent.and_then(|p| p.project_id) else {
        return Ok(None);
    };
    Ok(match joinable(tx, org, inherited).await {
        Ok(project) => Some(project.id),
        Err(ServiceError::Conflict(Conflict::ProjectArchived { .. })) => None,
        Err(other) => return Err(other),
    })
}

/// The task `id` of `org`, locked for update until the commit.
async fn locked_task<T: TasksTx + ?Sized>(
    tx: &mut T,
    org: OrgId,
    id: TaskId,
) -> Result<Task, ServiceError> {
    tx.task(org, id, Lock::Update)
        .await?
        .ok_or_else(|| NotFound::new(Entity::Task, id).into())
}

/// Refuses changes to a done or cancelled task.
fn ensure_open(task: &Task) -> Result<(), Conflict> {
    if task.status.is_terminal() {
        Err(Conflict::TaskClosed {
            status: task.status,
        })
    } else {
        Ok(())
    }
}

/// An assignee must be an active agent of the organization that executes work
/// (decision D-34). The agent row is share-locked: it cannot be suspended until the
/// task is stored.
pub(crate) async fn check_assignable<T: AgentsTx + ?Sized>(
    tx: &mut T,
    org: OrgId,
    id: AgentId,
) -> Result<crate::model::Agent, ServiceError> {
    let agent = tx
        .agent(org, id, Lock::Share)
        .await?
        .ok_or(NotFound::new(Entity::Agent, id))?;
    ensure_assignable(&agent)?;
    Ok(agent)
}

/// An assignee must be active and execute work (decision D-34).
fn ensure_assignable(agent: &crate::model::Agent) -> Result<(), Conflict> {
    if policy::agent_may_act(agent).is_err() {
        return Err(Conflict::AssigneeNotActive { agent: agent.id });
    }
    if matches!(agent.mode, AgentMode::Orchestrator | AgentMode::Observer) {
        return Err(Conflict::AssigneeDoesNotExecute {
            agent: agent.id,
            mode: agent.mode,
        });
    }
    Ok(())
}
