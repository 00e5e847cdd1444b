//! A routine's tasks: created for each due time by the job every instance runs, and once
//! on demand. Each firing is one transaction that locks the routine, records the
//! (routine, due time) pair the store keeps unique, creates the task as the routine's
//! owner would (its reward paid by the treasury) and moves the routine to its next due
//! time: however many instances run the job, a due time gets its task once.

use time::OffsetDateTime;

use super::{RoutineService, locked};
use crate::model::{
    Actor, ActorKind, AuditEvent, Author, Event, EventId, OrgId, RewardPayer, Routine,
    RoutineFired, RoutineFiring, RoutineId, RoutineUpdated, RoutineWork, Task, TaskTemplate,
    instant,
};
use crate::policy;
use crate::ports::{Lock, RepositoryError, Transaction, UniqueKey, transact};
use crate::rules::routines::fire;
use crate::service::{Conflict, NewTask, ServiceError};

/// Routines looked at per run of the job.
const DUE_PER_RUN: u32 = 50;

/// What a run of the job did.
#[derive(Debug, Default)]
pub struct FireReport {
    /// Tasks created.
    pub created: usize,
    /// Routines paused because their owner may no longer create tasks.
    pub paused: usize,
    /// Routines whose firing created no task, and why (also kept as their `lastError`).
    pub failed: Vec<RoutineFailure>,
}

/// A firing that created no task.
#[derive(Debug)]
pub struct RoutineFailure {
    /// The routine.
    pub routine: RoutineId,
    /// Why.
    pub error: ServiceError,
}

/// What one routine's firing came to.
enum Fired {
    /// Tasks were created (how many).
    Created(usize),
    /// Nothing was due any more (another instance fired it, or it changed).
    Nothing,
    /// Its owner may no longer create tasks: switched off.
    Paused,
}

impl RoutineService {
    /// Fires every routine of every organization due at the clock's now: what the
    /// background job runs every second or so on each instance.
    pub async fn fire_due(&self) -> Result<FireReport, ServiceError> {
        let now = self.now();
        let due = self.routines.due_routines(now, DUE_PER_RUN).await?;
        let mut report = FireReport::default();
        for (org, id) in due {
            match self.fire_one(org, id, now).await {
                Ok(Fired::Created(n)) => report.created += n,
                Ok(Fired::Paused) => report.paused += 1,
                // Nothing was due any more, or another instance fired it between our read
                // and our lock: done either way.
                Ok(Fired::Nothing)
                | Err(ServiceError::Conflict(Conflict::Duplicate(UniqueKey::RoutineFiring))) => {}
                Err(error) if is_refusal(&error) => {
                    self.record_failure(org, id, now, &error).await?;
                    report.failed.push(RoutineFailure { routine: id, error });
                }
                Err(error) => return Err(error),
            }
        }
        Ok(report)
    }

    /// Fires the routine once now, whatever its schedule (its owner or an admin user):
    /// the task, created as the routine's owner would create it; `routine.fired` says
    /// `manual`. Its next due time stays.
    pub async fn run_now(&self, actor: &Actor, id: RoutineId) -> Result<Task, ServiceError> {
        policy::may_write(actor)?;
        let template = {
            let routine = self.get(actor, id).await?;
            self.template_of(&routine).await?
        };
        let (service, actor) = (self.clone(), actor.clone());
        transact(self.uow.as_ref(), move |tx| {
            Box::pin(async move {
                let routine = locked(tx, actor.org_id, id).await?;
                policy::may_manage_routine(&actor, routine.owner)?;
                let owner = owner_actor(tx, &routine)
                    .await?
                    .map_err(|reason| Conflict::RoutineOwnerInactive { reason })?;
                let now = service.now();
                let task = service
                    .fire_at(tx, &routine, &owner, template.as_ref(), now, true)
                    .await?;
                let mut changed = routine.clone();
                changed.last_run_at = Some(now);
                changed.last_task_id = Some(task.id);
                changed.last_error = None;
                store(tx, &routine, changed, now).await?;
                Ok(task)
            })
        })
        .await
    }

    /// The template a template routine makes its tasks from (read outside the
    /// transaction: templates do not change).
    async fn template_of(&self, routine: &Routine) -> Result<Option<TaskTemplate>, ServiceError> {
        match &routine.work {
            RoutineWork::Task(_) => Ok(None),
            RoutineWork::Template(id) => {
                let found = self.templates.template(routine.org_id, *id).await?;
                found.map(Some).ok_or_else(|| {
                    crate::service::NotFound::new(crate::service::Entity::Template, *id).into()
                })
            }
        }
    }

    async fn fire_one(
        &self,
        org: OrgId,
        id: RoutineId,
        now: OffsetDateTime,
    ) -> Result<Fired, ServiceError> {
        let Some(peek) = self.routines.routine(org, id).await? else {
            return Ok(Fired::Nothing);
        };
        let template = self.template_of(&peek).await?;
        let service = self.clone();
        transact(self.uow.as_ref(), move |tx| {
            let template = template.clone();
            Box::pin(async move {
                let Some(routine) = tx.routine(org, id, Lock::Update).await? else {
                    return Ok(Fired::Nothing);
                };
                let Some(next) = routine.next_run_at.filter(|_| routine.enabled) else {
                    return Ok(Fired::Nothing);
                };
                if next > now {
                    return Ok(Fired::Nothing);
                }
                let owner = match owner_actor(tx, &routine).await? {
                    Ok(owner) => owner,
                    Err(reason) => {
                        service.pause(tx, &routine, reason, now).await?;
                        return Ok(Fired::Paused);
                    }
                };
                let firing = fire(&routine.schedule, next, now, routine.catch_up);
                let mut last = None;
                for due in &firing.due {
                    let task = service
                        .fire_at(tx, &routine, &owner, template.as_ref(), *due, false)
                        .await?;
                    last = Some((*due, task.id));
                }
                let mut changed = routine.clone();
                changed.next_run_at = firing.next;
                if let Some((due, task)) = last {
                    changed.last_run_at = Some(due);
                    changed.last_task_id = Some(task);
                    changed.last_error = None;
                }
                store(tx, &routine, changed, now).await?;
                Ok(Fired::Created(firing.due.len()))
            })
        })
        .await
    }

    /// Creates the task of `routine` for `due` as `owner`, records the firing (once per
    /// due time: the store refuses a second) and writes `routine.fired`.
    async fn fire_at<T: Transaction + ?Sized>(
        &self,
        tx: &mut T,
        routine: &Routine,
        owner: &Actor,
        template: Option<&TaskTemplate>,
        due: OffsetDateTime,
        manual: bool,
    ) -> Result<Task, ServiceError> {
        let new = match (&routine.work, template) {
            (RoutineWork::Task(task), _) => NewTask::from_routine(task),
            (RoutineWork::Template(_), Some(template)) => NewTask::from_template(template),
            (RoutineWork::Template(id), None) => {
                return Err(
                    crate::service::NotFound::new(crate::service::Entity::Template, *id).into(),
                );
            }
        };
        let task = self
            .tasks
            .create_paid_by(tx, owner, new, RewardPayer::Treasury)
            .await?;
        let now = self.now();
        tx.insert_routine_firing(&RoutineFiring {
            routine_id: routine.id,
            org_id: routine.org_id,
            due_at: instant::to_millis(due),
            task_id: task.id,
            fired_at: now,
        })
        .await?;
        let event = Event::record(
            EventId::from_uuid(self.ids.new_id()),
            routine.org_id,
            Some(routine.owner.as_uuid()),
            routine.id.as_uuid(),
            now,
            &AuditEvent::RoutineFired(RoutineFired {
                task_id: task.id,
                due_at: instant::format_millis(due).unwrap_or_default(),
                manual,
            }),
        );
        tx.append_events(&[event]).await?;
        Ok(task)
    }

    /// Switches the routine off because its owner may no longer create tasks, with
    /// `routine.updated` saying why.
    async fn pause<T: Transaction + ?Sized>(
        &self,
        tx: &mut T,
        routine: &Routine,
        reason: String,
        now: OffsetDateTime,
    ) -> Result<(), ServiceError> {
        let mut changed = routine.clone();
        changed.enabled = false;
        changed.next_run_at = None;
        changed.paused_reason = Some(reason.clone());
        changed.last_error = Some(reason.clone());
        store(tx, routine, changed, now).await?;
        let event = Event::record(
            EventId::from_uuid(self.ids.new_id()),
            routine.org_id,
            None,
            routine.id.as_uuid(),
            now,
            &AuditEvent::RoutineUpdated(RoutineUpdated {
                fields: vec!["enabled".to_owned()],
                paused_reason: Some(reason),
            }),
        );
        tx.append_events(&[event]).await?;
        Ok(())
    }

    /// After a firing refused by the rules (a project archived, a template gone, an
    /// assignee suspended, a reward the treasury cannot fund...): the routine keeps why
    /// and goes on to its next due time, so that one bad firing does not repeat forever.
    /// A refusal of the owner's permissions pauses it instead.
    async fn record_failure(
        &self,
        org: OrgId,
        id: RoutineId,
        now: OffsetDateTime,
        error: &ServiceError,
    ) -> Result<(), ServiceError> {
        let (service, message) = (self.clone(), error.to_string());
        let forbidden = matches!(error, ServiceError::Forbidden(_));
        transact(self.uow.as_ref(), move |tx| {
            let message = message.clone();
            Box::pin(async move {
                let Some(routine) = tx.routine(org, id, Lock::Update).await? else {
                    return Ok(());
                };
                if forbidden {
                    return service.pause(tx, &routine, message, now).await;
                }
                let mut changed = routine.clone();
                changed.last_error = Some(message);
                changed.next_run_at = routine
                    .enabled
                    .then(|| routine.schedule.next_after(now))
                    .flatten();
                store(tx, &routine, changed, now).await
            })
        })
        .await
    }
}

/// The actor the routine's owner is now, or why it may no longer create tasks.
async fn owner_actor<T: Transaction + ?Sized>(
    tx: &mut T,
    routine: &Routine,
) -> Result<Result<Actor, String>, RepositoryError> {
    let org = routine.org_id;
    let actor = match routine.owner {
        Author::Agent(id) => {
            let Some(agent) = tx.agent(org, id, Lock::Share).await? else {
                return Ok(Err("its owner agent is gone".to_owned()));
            };
            if policy::agent_may_act(&agent).is_err() {
                return Ok(Err(format!("its owner agent is {}", agent.status.as_str())));
            }
            Actor {
                org_id: org,
                kind: ActorKind::Agent {
                    id: agent.id,
                    role: agent.role,
                    mode: agent.mode,
                    level: agent.level,
                },
            }
        }
        Author::User(id) => {
            let Some(user) = tx.user(org, id, Lock::Share).await? else {
                return Ok(Err("its owner user is gone".to_owned()));
            };
            Actor {
                org_id: org,
                kind: ActorKind::User {
                    id: user.id,
                    role: user.role,
                    key: None,
                },
            }
        }
    };
    Ok(match policy::may_write(&actor) {
        Ok(()) => Ok(actor),
        Err(refusal) => Err(format!("its owner may not create tasks: {refusal}")),
    })
}

/// Writes the routine's new state (bumped) if nobody changed it meanwhile.
async fn store<T: Transaction + ?Sized>(
    tx: &mut T,
    current: &Routine,
    mut changed: Routine,
    now: OffsetDateTime,
) -> Result<(), ServiceError> {
    changed.updated_at = now;
    changed.version = current.version + 1;
    if tx.update_routine(&changed, current.version).await? {
        Ok(())
    } else {
        Err(Conflict::ChangedConcurrently {
            entity: crate::service::Entity::Routine,
        }
        .into())
    }
}

/// Whether a firing's failure is the rules refusing it (kept as the routine's
/// `lastError`), rather than the store failing (tried again at the next run).
fn is_refusal(error: &ServiceError) -> bool {
    !matches!(
        error,
        ServiceError::Unavailable(_) | ServiceError::Internal(_)
    )
}

impl NewTask {
    /// The task a routine's `task` describes.
    pub(crate) fn from_routine(task: &crate::model::RoutineTask) -> Self {
        Self {
            description: task.description.clone(),
            priority: task.priority,
            assignee_id: task.assignee_id,
            approval_required: task.approval_required,
            tags: task.tags.clone(),
            metadata: task.metadata.clone(),
            reward: task.reward,
            project_id: task.project_id,
            ..Self::new(task.title.clone())
        }
    }

    /// The task a template makes, as `POST /tasks/templates/:id/instantiate` makes it
    /// without overrides.
    pub(crate) fn from_template(template: &TaskTemplate) -> Self {
        Self {
            description: template.description.clone(),
            priority: template.priority,
            approval_required: template.approval_required,
            tags: template.tags.clone(),
            metadata: template.metadata.clone(),
            ..Self::new(template.title.clone())
        }
    }
}
