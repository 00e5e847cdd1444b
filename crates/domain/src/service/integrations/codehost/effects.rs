//! What each code-host event does to tasks (decisions D-87, D-88), inside the
//! transaction that records its delivery. Tasks are changed by the service itself (the
//! audit log shows `actorId: null`) through the task use cases, so every rule of the
//! task API holds.

use serde_json::json;
use time::OffsetDateTime;

use crate::model::{
    Actor, CodeHostConnection, CodeHostLink, CommentBody, Description, IntegrationAction,
    IntegrationAnswer, ItemRef, LinkKind, Metadata, Reason, TaskId, TaskStatus, Title,
};
use crate::ports::{
    AgentsTx, IntegrationsTx, LedgerTx, Lock, ProjectsTx, RunsTx, TasksTx, WebhooksTx,
};
use crate::rules::codehost::{HostEvent, Item};
use crate::service::{NewTask, ServiceError, TaskPatch, TaskService};

/// Applies `event` for `connection` as `actor` (the service in its organization).
pub(super) async fn apply<T>(
    tasks: &TaskService,
    tx: &mut T,
    actor: &Actor,
    connection: &CodeHostConnection,
    event: HostEvent,
    now: OffsetDateTime,
) -> Result<IntegrationAnswer, ServiceError>
where
    T: AgentsTx + TasksTx + LedgerTx + WebhooksTx + RunsTx + IntegrationsTx + ProjectsTx + ?Sized,
{
    let mut effects = Effects {
        tasks,
        tx,
        actor,
        connection,
        now,
    };
    match event {
        HostEvent::Opened(item) => match effects.linked(&item.at).await? {
            Some(task) => Ok(IntegrationAnswer::ignored(
                format!("{} is already linked to a task", item.at),
                Some(task),
            )),
            None => effects.open(&item).await,
        },
        HostEvent::Reopened(item) => effects.reopen(&item).await,
        HostEvent::Edited(item) => effects.edit(&item).await,
        HostEvent::Closed { item, outcome } => {
            let verb = match (item.kind, outcome) {
                (LinkKind::PullRequest, TaskStatus::Done) => "merged",
                (LinkKind::PullRequest, _) => "closed without merging",
                (LinkKind::Issue, TaskStatus::Done) => "closed as completed",
                (LinkKind::Issue, _) => "closed as not planned",
            };
            let Some(task) = effects.linked(&item).await? else {
                return Ok(not_linked(&item));
            };
            let reason = format!("{item} was {verb} on the code host");
            effects.advance(task, outcome, &reason).await
        }
        HostEvent::Commented { item, body, author } => {
            effects.comment(&item, &body, author.as_deref()).await
        }
        HostEvent::ChecksCompleted {
            repository,
            pull_requests,
            passed,
        } => effects.checks(repository, &pull_requests, passed).await,
        HostEvent::Ignored(reason) => Ok(IntegrationAnswer::ignored(reason, None)),
    }
}

struct Effects<'a, 't, T: ?Sized> {
    tasks: &'a TaskService,
    tx: &'t mut T,
    actor: &'a Actor,
    connection: &'a CodeHostConnection,
    now: OffsetDateTime,
}

impl<T: AgentsTx + TasksTx + LedgerTx + WebhooksTx + RunsTx + IntegrationsTx + ProjectsTx + ?Sized>
    Effects<'_, '_, T>
{
    /// The task `item` is linked to, if any.
    async fn linked(&mut self, item: &ItemRef) -> Result<Option<TaskId>, ServiceError> {
        Ok(self
            .tx
            .codehost_link(self.connection.id, item)
            .await?
            .map(|link| link.task_id))
    }

    /// A new task for `item`, linked to it; a pull request's task goes on to review.
    async fn open(&mut self, item: &Item) -> Result<IntegrationAnswer, ServiceError> {
        let new = self.new_task(item)?;
        let task = self.tasks.create_in(self.tx, self.actor, new).await?;
        let link = CodeHostLink {
            connection_id: self.connection.id,
            item: item.at.clone(),
            task_id: task.id,
        };
        self.tx.link_codehost_item(&link, self.now).await?;
        if item.at.kind == LinkKind::PullRequest {
            let reason = reason(&format!("{} was opened on the code host", item.at))?;
            self.tasks
                .advance_in(self.tx, self.actor, task.id, TaskStatus::Review, reason)
                .await?;
        }
        Ok(IntegrationAnswer::done(IntegrationAction::Created, task.id))
    }

    /// A new task when the linked one is closed; nothing while it is open.
    async fn reopen(&mut self, item: &Item) -> Result<IntegrationAnswer, ServiceError> {
        let Some(linked) = self.linked(&item.at).await? else {
            return Ok(not_linked(&item.at));
        };
        let task = self.tx.task(self.actor.org_id, linked, Lock::Share).await?;
        match task {
            Some(task) if !task.status.is_terminal() => Ok(IntegrationAnswer::ignored(
                "the linked task is still open",
                Some(linked),
            )),
            _ => self.open(item).await,
        }
    }

    /// The linked task takes the item's title and body.
    async fn edit(&mut self, item: &Item) -> Result<IntegrationAnswer, ServiceError> {
        let Some(task) = self.linked(&item.at).await? else {
            return Ok(not_linked(&item.at));
        };
        let current = self.tx.task(self.actor.org_id, task, Lock::Share).await?;
        if current.is_none_or(|t| t.status.is_terminal()) {
            return Ok(IntegrationAnswer::ignored(
                "the linked task is closed",
                Some(task),
            ));
        }
        let patch = TaskPatch {
            title: Some(title(item)?),
            description: Some(description(item.body.as_deref())?),
            ..TaskPatch::default()
        };
        self.tasks
            .update_in(self.tx, self.actor, task, patch)
            .await?;
        Ok(IntegrationAnswer::done(IntegrationAction::Updated, task))
    }

    /// The comment, attributed to its author in its text, on the linked task.
    async fn comment(
        &mut self,
        item: &ItemRef,
        body: &str,
        author: Option<&str>,
    ) -> Result<IntegrationAnswer, ServiceError> {
        let Some(task) = self.linked(item).await? else {
            return Ok(not_linked(item));
        };
        if body.trim().is_empty() {
            return Ok(IntegrationAnswer::ignored(
                "the comment is empty",
                Some(task),
            ));
        }
        let text = format!(
            "{} commented on {item}:\n\n{}",
            author.unwrap_or("someone"),
            body.replace('\0', "")
        );
        let body = CommentBody::new(fit(&text, CommentBody::MAX_CHARS))?;
        self.tasks
            .comment_in(self.tx, self.actor, task, body, None)
            .await?;
        Ok(IntegrationAnswer::done(IntegrationAction::Commented, task))
    }

    /// Failed checks block each linked pull request's task; passing ones unblock it.
    /// The answer names the first task that moved, else the first held one.
    async fn checks(
        &mut self,
        repository: String,
        pull_requests: &[i64],
        passed: bool,
    ) -> Result<IntegrationAnswer, ServiceError> {
        let mut first: Option<IntegrationAnswer> = None;
        for number in pull_requests {
            let item = ItemRef {
                repository: repository.clone(),
                kind: LinkKind::PullRequest,
                number: *number,
            };
            let Some(task) = self.linked(&item).await? else {
                continue;
            };
            let answer = if passed {
                let status = self
                    .tx
                    .task(self.actor.org_id, task, Lock::Share)
                    .await?
                    .map(|t| t.status);
                if status == Some(TaskStatus::Blocked) {
                    let reason = format!("checks passed for {item}");
                    self.advance(task, TaskStatus::InProgress, &reason).await?
                } else {
                    IntegrationAnswer::ignored("the task is not blocked", Some(task))
                }
            } else {
                let reason = format!("checks failed for {item}");
                self.advance(task, TaskStatus::Blocked, &reason).await?
            };
            let moved = answer.action != IntegrationAction::Ignored;
            if first
                .as_ref()
                .is_none_or(|f| moved && f.action == IntegrationAction::Ignored)
            {
                first = Some(answer);
            }
        }
        Ok(first.unwrap_or_else(|| {
            IntegrationAnswer::ignored(
                "the check suite names no pull request linked to a task",
                None,
            )
        }))
    }

    /// Moves `task` toward `target` along the legal path (decision D-88).
    async fn advance(
        &mut self,
        task: TaskId,
        target: TaskStatus,
        why: &str,
    ) -> Result<IntegrationAnswer, ServiceError> {
        let moved = self
            .tasks
            .advance_in(self.tx, self.actor, task, target, reason(why)?)
            .await?;
        if let Some(held) = moved.held {
            return Ok(IntegrationAnswer::ignored(held, Some(task)));
        }
        if moved.steps.is_empty() {
            return Ok(IntegrationAnswer::ignored(
                format!("the task is {} already", moved.task.status.as_str()),
                Some(task),
            ));
        }
        let action = match moved.task.status {
            TaskStatus::Done => IntegrationAction::Completed,
            TaskStatus::Cancelled => IntegrationAction::Cancelled,
            _ => IntegrationAction::Moved,
        };
        Ok(IntegrationAnswer::done(action, task))
    }

    fn new_task(&self, item: &Item) -> Result<NewTask, ServiceError> {
        let metadata = Metadata::new(json!({
            "source": "codehost",
            "codehostConnectionId": self.connection.id.as_uuid(),
            "repository": item.at.repository,
            "kind": item.at.kind.as_str(),
            "number": item.at.number,
            "url": item.url,
            "author": item.author,
        }))?;
        let title = title(item)?;
        Ok(NewTask {
            description: description(item.body.as_deref())?,
            metadata,
            ..NewTask::new(title)
        })
    }
}

fn not_linked(item: &ItemRef) -> IntegrationAnswer {
    IntegrationAnswer::ignored(format!("{item} is not linked to a task"), None)
}

/// The item's title, cut to what a task takes, without the characters that hide or
/// reorder text (a task's title must show what it holds); "Issue #12" when nothing
/// visible is left.
fn title(item: &Item) -> Result<Title, ServiceError> {
    let clean = crate::validation::without_hidden(&item.title.replace('\0', ""));
    let text = if clean.chars().all(crate::validation::is_invisible) {
        let kind = match item.at.kind {
            LinkKind::Issue => "Issue",
            LinkKind::PullRequest => "Pull request",
        };
        format!("{kind} #{}", item.at.number)
    } else {
        fit(clean.trim(), Title::MAX_CHARS)
    };
    Ok(Title::new(&text)?)
}

/// The item's body, cut to what a description takes.
fn description(body: Option<&str>) -> Result<Option<Description>, ServiceError> {
    match body.map(|b| b.replace('\0', "")) {
        Some(body) if !body.trim().is_empty() => {
            Ok(Some(Description::new(fit(&body, Description::MAX_CHARS))?))
        }
        _ => Ok(None),
    }
}

fn reason(text: &str) -> Result<Reason, ServiceError> {
    Ok(Reason::new(fit(text, Reason::MAX_CHARS))?)
}

/// `text` cut to at most `max` characters.
fn fit(text: &str, max: usize) -> String {
    text.chars().take(max).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(title: &str) -> Item {
        Item {
            at: ItemRef {
                repository: "acme/widgets".to_owned(),
                kind: LinkKind::Issue,
                number: 12,
            },
            title: title.to_owned(),
            body: None,
            url: None,
            author: None,
        }
    }

    #[test]
    fn an_items_title_is_kept_without_what_hides_or_reorders_text() {
        let shown = |t: &str| title(&item(t)).unwrap().as_str().to_owned();
        assert_eq!(shown("Fix \u{202E}the parser\u{202C}"), "Fix the parser");
        assert_eq!(shown("\u{200B}\u{2060}"), "Issue #12");
        assert_eq!(shown("  "), "Issue #12");
        assert_eq!(shown("Crash on\u{0}start"), "Crash onstart");
    }
}
