//! Projects (issue 66, decision D-107): create, read with progress, edit, archive; and
//! the rule every way into a project shares: a task joins only an active project of its
//! organization.

use std::sync::Arc;

use time::OffsetDateTime;

use super::{Conflict, Entity, NotFound, Page, PageRequest, ServiceError};
use crate::ValidationError;
use crate::model::{
    Actor, AuditEvent, Author, BurnUpDay, Description, Event, EventId, OrgId, Project,
    ProjectArchived, ProjectCreated, ProjectGoal, ProjectId, ProjectName, ProjectStatus,
    ProjectTally, ProjectUpdated, instant,
};
use crate::policy;
use crate::ports::{
    Clock, IdGenerator, Lock, ProjectRepository, ProjectsTx, UnitOfWork, WebhooksTx, transact,
};
use crate::rules::progress::{self, ProjectProgress};

/// A project to create, already validated field by field.
#[derive(Debug, Clone, PartialEq)]
pub struct NewProject {
    /// Its name.
    pub name: ProjectName,
    /// What it is for.
    pub goal: Option<ProjectGoal>,
    /// Markdown body.
    pub description: Option<Description>,
    /// When it should be done.
    pub due_at: Option<OffsetDateTime>,
}

/// The editable fields of `PATCH /projects/:id`: `None` leaves a field as it is;
/// `Some(None)` clears a clearable one.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ProjectPatch {
    /// New name.
    pub name: Option<ProjectName>,
    /// New goal, or cleared.
    pub goal: Option<Option<ProjectGoal>>,
    /// New description, or cleared.
    pub description: Option<Option<Description>>,
    /// New due date, or cleared.
    pub due_at: Option<Option<OffsetDateTime>>,
}

impl ProjectPatch {
    /// Whether the patch names no field at all.
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }
}

/// A project with its progress, as `GET /projects/:id` shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct ProjectView {
    /// The project.
    pub project: Project,
    /// What its task counts mean.
    pub progress: ProjectProgress,
    /// The counts themselves, its overdue and blocked tasks, and its spend.
    pub tally: ProjectTally,
}

/// One page of projects, newest first.
pub type ProjectPage = Page<Project, ProjectId>;

/// Most tasks a burn-up reads.
pub const BURN_UP_MAX_TASKS: u32 = 100_000;

/// The project use cases.
#[derive(Clone)]
pub struct ProjectService {
    projects: Arc<dyn ProjectRepository>,
    uow: Arc<dyn UnitOfWork>,
    clock: Arc<dyn Clock>,
    ids: Arc<dyn IdGenerator>,
}

impl std::fmt::Debug for ProjectService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProjectService").finish_non_exhaustive()
    }
}

impl ProjectService {
    /// Wires the service to its ports: `projects` for reads, `uow` for changes.
    pub fn new(
        projects: Arc<dyn ProjectRepository>,
        uow: Arc<dyn UnitOfWork>,
        clock: Arc<dyn Clock>,
        ids: Arc<dyn IdGenerator>,
    ) -> Self {
        Self {
            projects,
            uow,
            clock,
            ids,
        }
    }

    /// Creates an active project in the actor's organization, with `project.created`.
    pub async fn create(&self, actor: &Actor, new: NewProject) -> Result<Project, ServiceError> {
        policy::may_write(actor)?;
        let now = instant::to_millis(self.clock.now());
        let project = Project {
            id: ProjectId::from_uuid(self.ids.new_id()),
            org_id: actor.org_id,
            name: new.name,
            goal: new.goal,
            description: new.description,
            due_at: new.due_at,
            status: ProjectStatus::Active,
            creator: Author::of(actor),
            created_at: now,
            updated_at: now,
            archived_at: None,
            version: 1,
        };
        let event = self.event(
            actor,
            project.id,
            now,
            &AuditEvent::ProjectCreated(ProjectCreated {
                name: project.name.as_str().to_owned(),
                due_at: project
                    .due_at
                    .and_then(|at| instant::format_millis(at).ok()),
            }),
        );
        let stored = project.clone();
        transact(self.uow.as_ref(), move |tx| {
            Box::pin(async move {
                tx.insert_project(&stored).await?;
                tx.append_events(&[event]).await?;
                Ok(())
            })
        })
        .await?;
        Ok(project)
    }

    /// The project, if it is in the actor's organization.
    pub async fn get(&self, actor: &Actor, id: ProjectId) -> Result<Project, ServiceError> {
        self.projects
            .project(actor.org_id, id)
            .await?
            .ok_or_else(|| NotFound::new(Entity::Project, id).into())
    }

    /// The project with its progress now.
    pub async fn view(&self, actor: &Actor, id: ProjectId) -> Result<ProjectView, ServiceError> {
        let project = self.get(actor, id).await?;
        let tally = self
            .projects
            .tally(actor.org_id, id, self.clock.now())
            .await?;
        Ok(ProjectView {
            progress: ProjectProgress::of(&tally),
            project,
            tally,
        })
    }

    /// Projects of the actor's organization (only those in `status` when given), newest
    /// first.
    pub async fn list(
        &self,
        actor: &Actor,
        status: Option<ProjectStatus>,
        page: PageRequest<ProjectId>,
    ) -> Result<ProjectPage, ServiceError> {
        page.check()?;
        let rows = self
            .projects
            .projects(actor.org_id, status, page.cursor, page.fetch())
            .await?;
        Ok(Page::cut(rows, page.limit, |p| p.id))
    }

    /// The burn-up of the project over the `days` UTC days that end today.
    pub async fn burn_up(
        &self,
        actor: &Actor,
        id: ProjectId,
        days: u32,
    ) -> Result<Vec<BurnUpDay>, ServiceError> {
        self.get(actor, id).await?;
        let now = self.clock.now();
        let spans = self
            .projects
            .task_spans(actor.org_id, id, now, BURN_UP_MAX_TASKS)
            .await?;
        Ok(progress::burn_up(&spans, now, days))
    }

    /// Edits a project's fields and writes `project.updated` naming the changed ones. An
    /// archived project takes no edits (409 `project_archived`).
    pub async fn update(
        &self,
        actor: &Actor,
        id: ProjectId,
        patch: ProjectPatch,
    ) -> Result<Project, ServiceError> {
        policy::may_write(actor)?;
        if patch.is_empty() {
            return Err(ValidationError::new("at least one field must be given").into());
        }
        let (service, actor) = (self.clone(), actor.clone());
        transact(self.uow.as_ref(), move |tx| {
            Box::pin(async move {
                let current = locked(tx, actor.org_id, id).await?;
                if current.status == ProjectStatus::Archived {
                    return Err(Conflict::ProjectArchived { project: id }.into());
                }
                let mut project = current.clone();
                let fields = apply_patch(&mut project, patch);
                if fields.is_empty() {
                    return Ok(current);
                }
                let now = instant::to_millis(service.clock.now());
                let event = service.event(
                    &actor,
                    id,
                    now,
                    &AuditEvent::ProjectUpdated(ProjectUpdated { fields }),
                );
                service.save(tx, &current, project, now, event).await
            })
        })
        .await
    }

    /// Archives the project, with `project.archived`: its tasks stay in it, no task
    /// joins it any more. Archiving an archived project changes nothing.
    pub async fn archive(&self, actor: &Actor, id: ProjectId) -> Result<Project, ServiceError> {
        policy::may_write(actor)?;
        let (service, actor) = (self.clone(), actor.clone());
        transact(self.uow.as_ref(), move |tx| {
            Box::pin(async move {
                let current = locked(tx, actor.org_id, id).await?;
                if current.status == ProjectStatus::Archived {
                    return Ok(current);
                }
                let now = instant::to_millis(service.clock.now());
                let project = Project {
                    status: ProjectStatus::Archived,
                    archived_at: Some(now),
                    ..current.clone()
                };
                let event = service.event(
                    &actor,
                    id,
                    now,
                    &AuditEvent::ProjectArchived(ProjectArchived {
                        name: project.name.as_str().to_owned(),
                    }),
                );
                service.save(tx, &current, project, now, event).await
            })
        })
        .await
    }

    /// Writes `project` (changed from `current`) if nobody changed it meanwhile.
    async fn save<T: ProjectsTx + WebhooksTx + ?Sized>(
        &self,
        tx: &mut T,
        current: &Project,
        mut project: Project,
        now: OffsetDateTime,
        event: Event,
    ) -> Result<Project, ServiceError> {
        project.updated_at = now;
        project.version = current.version + 1;
        if !tx.update_project(&project, current.version).await? {
            return Err(Conflict::ChangedConcurrently {
                entity: Entity::Project,
            }
            .into());
        }
        tx.append_events(&[event]).await?;
        Ok(project)
    }

    fn event(&self, actor: &Actor, id: ProjectId, at: OffsetDateTime, what: &AuditEvent) -> Event {
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

/// The project `id` of `org`, locked for update until the commit.
async fn locked<T: ProjectsTx + ?Sized>(
    tx: &mut T,
    org: OrgId,
    id: ProjectId,
) -> Result<Project, ServiceError> {
    tx.project(org, id, Lock::Update)
        .await?
        .ok_or_else(|| NotFound::new(Entity::Project, id).into())
}

/// The project a task may join: `id` of `org`, active, share-locked so that it cannot
/// be archived before the task is stored. Missing: 404 `project_not_found`; archived:
/// 409 `project_archived`.
pub(crate) async fn joinable<T: ProjectsTx + ?Sized>(
    tx: &mut T,
    org: OrgId,
    id: ProjectId,
) -> Result<Project, ServiceError> {
    let project = tx
        .project(org, id, Lock::Share)
        .await?
        .ok_or(NotFound::new(Entity::Project, id))?;
    if project.status == ProjectStatus::Archived {
        return Err(Conflict::ProjectArchived { project: id }.into());
    }
    Ok(project)
}

/// Applies `patch` to `project`; the camelCase names of the fields that changed.
fn apply_patch(project: &mut Project, patch: ProjectPatch) -> Vec<String> {
    let mut fields = Vec::new();
    if let Some(name) = patch.name
        && project.name != name
    {
        project.name = name;
        fields.push("name".to_owned());
    }
    if let Some(goal) = patch.goal
        && project.goal != goal
    {
        project.goal = goal;
        fields.push("goal".to_owned());
    }
    if let Some(description) = patch.description
        && project.description != description
    {
        project.description = description;
        fields.push("description".to_owned());
    }
    if let Some(due_at) = patch.due_at
        && project.due_at != due_at
    {
        project.due_at = due_at;
        fields.push("dueAt".to_owned());
    }
    fields
}
