//! Routines (issue 66, decision D-108): work that recurs on a cron schedule. This module
//! holds creating, reading, changing and deleting them; `fire` holds what makes their
//! tasks, on schedule and on demand.

mod fire;

use std::sync::Arc;

use time::OffsetDateTime;

pub use self::fire::{FireReport, RoutineFailure};
use super::projects::joinable;
use super::tasks::check_assignable;
use super::{Conflict, Entity, NotFound, Page, PageRequest, ServiceError, TaskService};
use crate::ValidationError;
use crate::model::{
    Actor, AuditEvent, Author, CatchUp, Event, EventId, OrgId, Routine, RoutineCreated,
    RoutineDeleted, RoutineId, RoutineName, RoutineUpdated, RoutineWork, instant,
};
use crate::policy;
use crate::ports::{
    AgentsTx, Clock, IdGenerator, Lock, ProjectsTx, RoutineRepository, RoutinesTx, TaskRepository,
    UnitOfWork, WebhooksTx, transact,
};
use crate::rules::schedule::Schedule;

/// A routine to create, already validated field by field.
#[derive(Debug, Clone, PartialEq)]
pub struct NewRoutine {
    /// Its name.
    pub name: RoutineName,
    /// When it fires.
    pub schedule: Schedule,
    /// What it creates.
    pub work: RoutineWork,
    /// Whether it fires (default: yes).
    pub enabled: bool,
    /// What it does with times missed while nothing ran.
    pub catch_up: CatchUp,
}

/// The editable fields of `PATCH /routines/:id`: `None` leaves a field as it is.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RoutinePatch {
    /// New name.
    pub name: Option<RoutineName>,
    /// New cron expression (checked with the routine's time zone, or the new one).
    pub schedule: Option<String>,
    /// New time zone.
    pub timezone: Option<String>,
    /// New work.
    pub work: Option<RoutineWork>,
    /// Switched on or off; switching a paused routine on clears why it was paused.
    pub enabled: Option<bool>,
    /// New catch-up policy.
    pub catch_up: Option<CatchUp>,
}

impl RoutinePatch {
    /// Whether the patch names no field at all.
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }
}

/// One page of routines, newest first.
pub type RoutinePage = Page<Routine, RoutineId>;

/// The routine use cases.
#[derive(Clone)]
pub struct RoutineService {
    routines: Arc<dyn RoutineRepository>,
    templates: Arc<dyn TaskRepository>,
    uow: Arc<dyn UnitOfWork>,
    clock: Arc<dyn Clock>,
    ids: Arc<dyn IdGenerator>,
    tasks: TaskService,
}

impl std::fmt::Debug for RoutineService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RoutineService").finish_non_exhaustive()
    }
}

impl RoutineService {
    /// Wires the service: `routines` and `templates` for reads, `uow` for changes, and
    /// `tasks`, whose rules create the routine's tasks (its reward setting included).
    pub fn new(
        routines: Arc<dyn RoutineRepository>,
        templates: Arc<dyn TaskRepository>,
        uow: Arc<dyn UnitOfWork>,
        tasks: TaskService,
        clock: Arc<dyn Clock>,
        ids: Arc<dyn IdGenerator>,
    ) -> Self {
        Self {
            routines,
            templates,
            uow,
            clock,
            ids,
            tasks,
        }
    }

    fn now(&self) -> OffsetDateTime {
        instant::to_millis(self.clock.now())
    }

    /// Creates a routine owned by the actor, with `routine.created`. Its template, project
    /// and assignee are checked now (they are checked again at each firing).
    pub async fn create(&self, actor: &Actor, new: NewRoutine) -> Result<Routine, ServiceError> {
        policy::may_write(actor)?;
        let owner = Author::of(actor).ok_or(policy::Forbidden::UserRequired)?;
        self.check_template(actor.org_id, &new.work).await?;
        let now = self.now();
        let next_run_at = first_run(&new.schedule, new.enabled, now)?;
        let routine = Routine {
            id: RoutineId::from_uuid(self.ids.new_id()),
            org_id: actor.org_id,
            name: new.name,
            schedule: new.schedule,
            work: new.work,
            enabled: new.enabled,
            catch_up: new.catch_up,
            owner,
            next_run_at,
            last_run_at: None,
            last_task_id: None,
            last_error: None,
            paused_reason: None,
            created_at: now,
            updated_at: now,
            version: 1,
        };
        let event = self.event(
            actor,
            routine.id,
            now,
            &AuditEvent::RoutineCreated(RoutineCreated {
                name: routine.name.as_str().to_owned(),
                schedule: routine.schedule.expression().to_owned(),
                timezone: routine.schedule.timezone().to_owned(),
            }),
        );
        let stored = routine.clone();
        transact(self.uow.as_ref(), move |tx| {
            Box::pin(async move {
                check_work(tx, stored.org_id, &stored.work).await?;
                tx.insert_routine(&stored).await?;
                tx.append_events(&[event]).await?;
                Ok(())
            })
        })
        .await?;
        Ok(routine)
    }

    /// The routine, if it is in the actor's organization.
    pub async fn get(&self, actor: &Actor, id: RoutineId) -> Result<Routine, ServiceError> {
        self.routines
            .routine(actor.org_id, id)
            .await?
            .ok_or_else(|| NotFound::new(Entity::Routine, id).into())
    }

    /// Routines of the actor's organization, newest first.
    pub async fn list(
        &self,
        actor: &Actor,
        page: PageRequest<RoutineId>,
    ) -> Result<RoutinePage, ServiceError> {
        page.check()?;
        let rows = self
            .routines
            .routines(actor.org_id, page.cursor, page.fetch())
            .await?;
        Ok(Page::cut(rows, page.limit, |r| r.id))
    }

    /// Changes a routine (its owner or an admin user: 403 `routine_owner_required`
    /// otherwise) and writes `routine.updated` naming the changed fields. Whoever
    /// changes it becomes its owner: its tasks are created with the changer's
    /// permissions from then on. A changed schedule, time zone or switch recomputes the
    /// next due time from now.
    pub async fn update(
        &self,
        actor: &Actor,
        id: RoutineId,
        patch: RoutinePatch,
    ) -> Result<Routine, ServiceError> {
        policy::may_write(actor)?;
        if patch.is_empty() {
            return Err(ValidationError::new("at least one field must be given").into());
        }
        if let Some(work) = &patch.work {
            self.check_template(actor.org_id, work).await?;
        }
        let (service, actor) = (self.clone(), actor.clone());
        transact(self.uow.as_ref(), move |tx| {
            Box::pin(async move {
                let current = locked(tx, actor.org_id, id).await?;
                policy::may_manage_routine(&actor, current.owner)?;
                if let Some(work) = &patch.work {
                    check_work(tx, actor.org_id, work).await?;
                }
                let now = service.now();
                let mut routine = current.clone();
                let mut fields = apply_patch(&mut routine, patch, now)?;
                if fields.is_empty() {
                    return Ok(current);
                }
                if let Some(owner) = Author::of(&actor)
                    && owner != routine.owner
                {
                    routine.owner = owner;
                    fields.push("owner".to_owned());
                }
                let event = service.event(
                    &actor,
                    id,
                    now,
                    &AuditEvent::RoutineUpdated(RoutineUpdated {
                        fields,
                        paused_reason: None,
                    }),
                );
                save(tx, &current, routine, now, event).await
            })
        })
        .await
    }

    /// Deletes a routine (its owner or an admin user), with `routine.deleted`; the tasks
    /// it created stay.
    pub async fn delete(&self, actor: &Actor, id: RoutineId) -> Result<(), ServiceError> {
        policy::may_write(actor)?;
        let (service, actor) = (self.clone(), actor.clone());
        transact(self.uow.as_ref(), move |tx| {
            Box::pin(async move {
                let current = locked(tx, actor.org_id, id).await?;
                policy::may_manage_routine(&actor, current.owner)?;
                let event = service.event(
                    &actor,
                    id,
                    service.now(),
                    &AuditEvent::RoutineDeleted(RoutineDeleted {
                        name: current.name.as_str().to_owned(),
                    }),
                );
                tx.delete_routine(actor.org_id, id).await?;
                tx.append_events(&[event]).await?;
                Ok(())
            })
        })
        .await
    }

    /// A template routine's template must be one of the organization's.
    async fn check_template(&self, org: OrgId, work: &RoutineWork) -> Result<(), ServiceError> {
        if let RoutineWork::Template(id) = work
            && self.templates.template(org, *id).await?.is_none()
        {
            return Err(NotFound::new(Entity::Template, *id).into());
        }
        Ok(())
    }

    fn event(&self, actor: &Actor, id: RoutineId, at: OffsetDateTime, what: &AuditEvent) -> Event {
        Event::record(
            EventId::from_uuid(self.ids.new_id()),
            actor.org_id,
            actor.actor_id(),
            id.as_uuid(),
            at,
            what,
        )
    }
}

/// The first due time of a routine switched on at `now`: refused (400) when its
/// schedule has none left.
fn first_run(
    schedule: &Schedule,
    enabled: bool,
    now: OffsetDateTime,
) -> Result<Option<OffsetDateTime>, ValidationError> {
    if !enabled {
        return Ok(None);
    }
    schedule
        .next_after(now)
        .map(Some)
        .ok_or_else(|| ValidationError::new("schedule never fires"))
}

/// The work's project must be active and its assignee assignable (a task's own rules).
async fn check_work<T: AgentsTx + ProjectsTx + ?Sized>(
    tx: &mut T,
    org: OrgId,
    work: &RoutineWork,
) -> Result<(), ServiceError> {
    if let RoutineWork::Task(task) = work {
        if let Some(project) = task.project_id {
            joinable(tx, org, project).await?;
        }
        if let Some(assignee) = task.assignee_id {
            check_assignable(tx, org, assignee).await?;
        }
    }
    Ok(())
}

/// The routine `id` of `org`, locked for update until the commit.
async fn locked<T: RoutinesTx + ?Sized>(
    tx: &mut T,
    org: OrgId,
    id: RoutineId,
) -> Result<Routine, ServiceError> {
    tx.routine(org, id, Lock::Update)
        .await?
        .ok_or_else(|| NotFound::new(Entity::Routine, id).into())
}

/// Writes `routine` (changed from `current`, stamped `now`) if nobody changed it
/// meanwhile, with its event.
async fn save<T: RoutinesTx + WebhooksTx + ?Sized>(
    tx: &mut T,
    current: &Routine,
    mut routine: Routine,
    now: OffsetDateTime,
    event: Event,
) -> Result<Routine, ServiceError> {
    routine.updated_at = now;
    routine.version = current.version + 1;
    if !tx.update_routine(&routine, current.version).await? {
        return Err(Conflict::ChangedConcurrently {
            entity: Entity::Routine,
        }
        .into());
    }
    tx.append_events(&[event]).await?;
    Ok(routine)
}

/// Applies `patch`; the camelCase names of the fields that changed.
fn apply_patch(
    routine: &mut Routine,
    patch: RoutinePatch,
    now: OffsetDateTime,
) -> Result<Vec<String>, ValidationError> {
    let mut fields = Vec::new();
    if let Some(name) = patch.name
        && name != routine.name
    {
        routine.name = name;
        fields.push("name".to_owned());
    }
    let mut reschedule = false;
    if patch.schedule.is_some() || patch.timezone.is_some() {
        let expression = patch
            .schedule
            .as_deref()
            .unwrap_or(routine.schedule.expression());
        let timezone = patch
            .timezone
            .as_deref()
            .unwrap_or(routine.schedule.timezone());
        let schedule = Schedule::new(expression, timezone)?;
        if schedule.expression() != routine.schedule.expression() {
            fields.push("schedule".to_owned());
        }
        if schedule.timezone() != routine.schedule.timezone() {
            fields.push("timezone".to_owned());
        }
        reschedule = schedule != routine.schedule;
        routine.schedule = schedule;
    }
    if let Some(work) = patch.work
        && work != routine.work
    {
        routine.work = work;
        fields.push("task".to_owned());
    }
    if let Some(catch_up) = patch.catch_up
        && catch_up != routine.catch_up
    {
        routine.catch_up = catch_up;
        fields.push("catchUp".to_owned());
    }
    if let Some(enabled) = patch.enabled
        && (enabled != routine.enabled || (enabled && routine.paused_reason.is_some()))
    {
        routine.enabled = enabled;
        routine.paused_reason = None;
        fields.push("enabled".to_owned());
        reschedule = true;
    }
    if reschedule {
        routine.next_run_at = first_run(&routine.schedule, routine.enabled, now)?;
    }
    Ok(fields)
}
