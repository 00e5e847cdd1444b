//! Task templates (decision D-38).

use time::OffsetDateTime;

use super::{NewTask, TaskService};
use crate::model::{
    Actor, AgentId, AuditEvent, Task, TaskId, TaskTemplate, TemplateCreated, TemplateId,
    TemplateName, Title,
};
use crate::policy;
use crate::ports::{Lock, transact};
use crate::service::{Entity, NotFound, Page, PageRequest, ServiceError};

/// What a task made from a template may set differently from the template.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TemplateOverrides {
    /// Another title.
    pub title: Option<Title>,
    /// An assignee.
    pub assignee_id: Option<AgentId>,
    /// A parent task.
    pub parent_task_id: Option<TaskId>,
    /// A deadline.
    pub due_at: Option<OffsetDateTime>,
}

impl TaskService {
    /// Saves the shape of a task of the actor's organization as a template named `name`
    /// (unique in the organization regardless of case: 409), with `template.created`.
    pub async fn create_template(
        &self,
        actor: &Actor,
        task: TaskId,
        name: TemplateName,
    ) -> Result<TaskTemplate, ServiceError> {
        policy::may_write(actor)?;
        let service = self.clone();
        let actor = actor.clone();
        transact(self.uow.as_ref(), move |tx| {
            Box::pin(async move {
                let source = tx
                    .task(actor.org_id, task, Lock::Share)
                    .await?
                    .ok_or(NotFound::new(Entity::Task, task))?;
                let template = service.template_of(source, name);
                let created = AuditEvent::TemplateCreated(TemplateCreated {
                    name: template.name.as_str().to_owned(),
                    created_from_task_id: template.created_from_task_id,
                });
                let event =
                    service.event(&actor, template.id.as_uuid(), template.created_at, &created);
                tx.insert_template(&template).await?;
                tx.append_events(&[event]).await?;
                Ok(template)
            })
        })
        .await
    }

    /// Templates of the actor's organization, newest first.
    pub async fn templates(
        &self,
        actor: &Actor,
        page: PageRequest<TemplateId>,
    ) -> Result<Page<TaskTemplate, TemplateId>, ServiceError> {
        page.check()?;
        let rows = self
            .tasks
            .templates(actor.org_id, page.cursor, page.fetch())
            .await?;
        Ok(Page::cut(rows, page.limit, |t| t.id))
    }

    /// Creates a task from a template of the actor's organization, as
    /// [`create`](Self::create) does, with `overrides` applied.
    pub async fn instantiate(
        &self,
        actor: &Actor,
        id: TemplateId,
        overrides: TemplateOverrides,
    ) -> Result<Task, ServiceError> {
        policy::may_write(actor)?;
        let template = self
            .tasks
            .template(actor.org_id, id)
            .await?
            .ok_or(NotFound::new(Entity::Template, id))?;
        let new = NewTask {
            description: template.description,
            priority: template.priority,
            assignee_id: overrides.assignee_id,
            parent_task_id: overrides.parent_task_id,
            approval_required: template.approval_required,
            due_at: overrides.due_at,
            tags: template.tags,
            metadata: template.metadata,
            ..NewTask::new(overrides.title.unwrap_or(template.title))
        };
        self.create(actor, new).await
    }

    fn template_of(&self, task: Task, name: TemplateName) -> TaskTemplate {
        TaskTemplate {
            id: TemplateId::from_uuid(self.ids.new_id()),
            org_id: task.org_id,
            name,
            title: task.title,
            description: task.description,
            priority: task.priority,
            tags: task.tags,
            approval_required: task.approval_required,
            metadata: task.metadata,
            created_from_task_id: Some(task.id),
            created_at: self.clock.now(),
        }
    }
}
