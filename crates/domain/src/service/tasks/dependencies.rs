//! Dependencies between tasks (decisions D-31, D-32).

use super::TaskService;
use crate::model::{
    Actor, AuditEvent, DependencyId, TaskDependency, TaskDependencyAdded, TaskDependencyRemoved,
    TaskId,
};
use crate::policy;
use crate::ports::{Lock, transact};
use crate::service::{Conflict, Entity, NotFound, ServiceError};

impl TaskService {
    /// Makes `task` depend on `depends_on` (decision D-32): both in the actor's
    /// organization (404), not the same task, not closing a cycle, not already there
    /// (409). The graph of the organization is locked while the cycle is looked for, so
    /// concurrent additions cannot close one together.
    pub async fn add_dependency(
        &self,
        actor: &Actor,
        task: TaskId,
        depends_on: TaskId,
        blocking: bool,
    ) -> Result<TaskDependency, ServiceError> {
        policy::may_write(actor)?;
        let now = self.clock.now();
        let dependency = TaskDependency {
            id: DependencyId::from_uuid(self.ids.new_id()),
            org_id: actor.org_id,
            task_id: task,
            depends_on_id: depends_on,
            blocking,
            created_at: now,
        };
        let added = AuditEvent::TaskDependencyAdded(TaskDependencyAdded {
            dependency_id: dependency.id.as_uuid(),
            depends_on_task_id: depends_on,
            blocking,
        });
        let event = self.task_event_at(actor, task, now, &added);
        let org = actor.org_id;
        transact(self.uow.as_ref(), move |tx| {
            Box::pin(async move {
                tx.lock_dependency_graph(org).await?;
                if tx.task(org, task, Lock::Share).await?.is_none() {
                    return Err(NotFound::new(Entity::Task, task).into());
                }
                if task == depends_on {
                    return Err(Conflict::SelfDependency.into());
                }
                if tx.task(org, depends_on, Lock::Share).await?.is_none() {
                    return Err(NotFound::new(Entity::DependsOnTask, depends_on).into());
                }
                if tx.depends_transitively(org, depends_on, task).await? {
                    return Err(Conflict::DependencyCycle { task, depends_on }.into());
                }
                tx.insert_dependency(&dependency).await?;
                tx.append_events(&[event]).await?;
                Ok(dependency)
            })
        })
        .await
    }

    /// Removes the dependency `id` (its own id, decision D-32) from `task`.
    pub async fn remove_dependency(
        &self,
        actor: &Actor,
        task: TaskId,
        id: DependencyId,
    ) -> Result<TaskDependency, ServiceError> {
        policy::may_write(actor)?;
        let service = self.clone();
        let actor = actor.clone();
        transact(self.uow.as_ref(), move |tx| {
            Box::pin(async move {
                let org = actor.org_id;
                if tx.task(org, task, Lock::Share).await?.is_none() {
                    return Err(NotFound::new(Entity::Task, task).into());
                }
                let removed = tx
                    .delete_dependency(org, task, id)
                    .await?
                    .ok_or(NotFound::new(Entity::Dependency, id))?;
                let what = AuditEvent::TaskDependencyRemoved(TaskDependencyRemoved {
                    dependency_id: id.as_uuid(),
                    depends_on_task_id: removed.depends_on_id,
                });
                let event = service.task_event_at(&actor, task, service.clock.now(), &what);
                tx.append_events(&[event]).await?;
                Ok(removed)
            })
        })
        .await
    }

    /// The dependencies of a task of the actor's organization, oldest first.
    pub async fn dependencies(
        &self,
        actor: &Actor,
        task: TaskId,
    ) -> Result<Vec<TaskDependency>, ServiceError> {
        self.get(actor, task).await?;
        Ok(self.tasks.dependencies(actor.org_id, task).await?)
    }
}
