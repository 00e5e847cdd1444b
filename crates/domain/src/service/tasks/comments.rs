//! Comments with threaded replies, by agents and users (decision D-40).

use super::TaskService;
use crate::ValidationError;
use crate::model::{
    Actor, AuditEvent, Author, Comment, CommentBody, CommentId, Task, TaskCommented, TaskId,
};
use crate::policy;
use crate::ports::{Lock, TasksTx, WebhooksTx, transact};
use crate::service::{Entity, NotFound, Page, PageRequest, ServiceError};

impl TaskService {
    /// Adds a comment to a task, answering `parent` when given (which must be a comment
    /// of the same task: 400). Counts as activity on the task.
    pub async fn comment(
        &self,
        actor: &Actor,
        task: TaskId,
        body: CommentBody,
        parent: Option<CommentId>,
    ) -> Result<Comment, ServiceError> {
        policy::may_write(actor)?;
        let (service, actor) = (self.clone(), actor.clone());
        transact(self.uow.as_ref(), move |tx| {
            Box::pin(async move { service.comment_in(tx, &actor, task, body, parent).await })
        })
        .await
    }

    /// [`comment`](Self::comment) inside a transaction that also writes other things.
    pub(crate) async fn comment_in<T: TasksTx + WebhooksTx + ?Sized>(
        &self,
        tx: &mut T,
        actor: &Actor,
        task: TaskId,
        body: CommentBody,
        parent: Option<CommentId>,
    ) -> Result<Comment, ServiceError> {
        policy::may_write(actor)?;
        let now = self.clock.now();
        let comment = Comment {
            id: CommentId::from_uuid(self.ids.new_id()),
            org_id: actor.org_id,
            task_id: task,
            author: Author::of(actor),
            parent_comment_id: parent,
            body,
            created_at: now,
        };
        let commented = AuditEvent::TaskCommented(TaskCommented {
            comment_id: comment.id.as_uuid(),
            parent_comment_id: parent.map(CommentId::as_uuid),
        });
        let event = self.task_event_at(actor, task, now, &commented);
        let org = actor.org_id;
        if tx.task(org, task, Lock::Update).await?.is_none() {
            return Err(NotFound::new(Entity::Task, task).into());
        }
        if let Some(parent) = parent
            && tx.comment(org, task, parent).await?.is_none()
        {
            return Err(
                ValidationError::new("parentCommentId must be a comment of the same task").into(),
            );
        }
        tx.insert_comment(&comment).await?;
        tx.touch_task(org, task, now).await?;
        tx.append_events(&[event]).await?;
        Ok(comment)
    }

    /// Comments of a task of the actor's organization, oldest first.
    pub async fn comments(
        &self,
        actor: &Actor,
        task: TaskId,
        page: PageRequest<CommentId>,
    ) -> Result<Page<Comment, CommentId>, ServiceError> {
        page.check()?;
        let task = self.get(actor, task).await?;
        self.comments_of(actor, &task, page).await
    }

    /// [`comments`](Self::comments) of a task the caller has read already, without
    /// reading it again; a task of another organization is not found.
    pub async fn comments_of(
        &self,
        actor: &Actor,
        task: &Task,
        page: PageRequest<CommentId>,
    ) -> Result<Page<Comment, CommentId>, ServiceError> {
        page.check()?;
        if task.org_id != actor.org_id {
            return Err(NotFound::new(Entity::Task, task.id).into());
        }
        let rows = self
            .tasks
            .comments(actor.org_id, task.id, page.cursor, page.fetch())
            .await?;
        Ok(Page::cut(rows, page.limit, |c| c.id))
    }
}
