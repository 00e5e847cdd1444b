//! A2A push notification configs: webhooks scoped to one task (see
//! [`crate::model::TaskPush`]), set, read and deleted through the A2A endpoints under
//! the webhooks' policy, checked and audited like any other hook.

use super::calls::{open_auth, seal_auth};
use super::{Entity, NotFound, ServiceError, WebhookService, changed};
use crate::ValidationError;
use crate::model::{
    Actor, AuditEvent, HookEvents, HookName, HookTimeout, HookType, HookUrl,
    MAX_PUSH_CONFIGS_PER_TASK, PUSH_EVENT_TYPES, PushAuth, PushConfigId, TaskId, TaskPush, Webhook,
    WebhookDeleted, WebhookId, check_push_token,
};
use crate::policy;
use crate::ports::{Lock, transact};

/// A push config to set on a task.
#[derive(Clone, PartialEq, Eq)]
pub struct NewPush {
    /// Its id within the task; a new UUID when `None`. Setting an id again replaces
    /// that config.
    pub config_id: Option<PushConfigId>,
    /// Where the task's updates go.
    pub url: HookUrl,
    /// Sent in `X-A2A-Notification-Token`, and the key the body is signed with.
    pub token: Option<String>,
    /// Sent in `Authorization`.
    pub auth: Option<PushAuth>,
}

impl std::fmt::Debug for NewPush {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NewPush")
            .field("config_id", &self.config_id)
            .field("url", &self.url)
            .field("token", &self.token.as_ref().map(|_| "<redacted>"))
            .field("auth", &self.auth)
            .finish()
    }
}

/// How long a push may take: A2A suggests 10 to 30 seconds.
const PUSH_TIMEOUT_MS: i64 = 10_000;

impl WebhookService {
    /// Checks what can be checked of `new` before anything changes: the caller may set
    /// push configs, the token fits, the URL may be called (decision D-81).
    pub async fn check_push(&self, actor: &Actor, new: &NewPush) -> Result<(), ServiceError> {
        policy::may_manage_webhooks(actor)?;
        if let Some(token) = &new.token {
            check_push_token(token)?;
        }
        self.check_target(&new.url).await
    }

    /// Sets a push config on `task` (a new one, or the one with its id replaced), with
    /// `webhook.created` or `webhook.updated`.
    pub async fn set_push(
        &self,
        actor: &Actor,
        task: TaskId,
        new: NewPush,
    ) -> Result<Webhook, ServiceError> {
        self.check_push(actor, &new).await?;
        let now = self.clock.now();
        let fresh_id = WebhookId::from_uuid(self.ids.new_id());
        let config_id = match new.config_id.clone() {
            Some(id) => id,
            None => PushConfigId::new(&self.ids.new_id().to_string())?,
        };
        let name = HookName::new(&format!("A2A push {} of task {task}", config_id.as_str()))?;
        let events = HookEvents::new(PUSH_EVENT_TYPES.iter().map(|t| (*t).to_owned()).collect())?;
        let timeout = HookTimeout::new(PUSH_TIMEOUT_MS)?;
        let (org, service, actor_owned) = (actor.org_id, self.clone(), actor.clone());
        let hook = transact(self.uow.as_ref(), move |tx| {
            Box::pin(async move {
                // The task's lock orders concurrent settings of its configs.
                tx.task(org, task, Lock::Update)
                    .await?
                    .ok_or(NotFound::new(Entity::Task, task))?;
                let configs = tx.push_configs(org, task).await?;
                let existing = configs
                    .iter()
                    .find(|h| h.push.as_ref().is_some_and(|p| p.config_id == config_id));
                if existing.is_none() && configs.len() >= MAX_PUSH_CONFIGS_PER_TASK {
                    return Err(ValidationError::new(format!(
                        "a task has at most {MAX_PUSH_CONFIGS_PER_TASK} push notification \
                         configs: delete one first"
                    ))
                    .into());
                }
                let id = existing.map_or(fresh_id, |h| h.id);
                let hook = Webhook {
                    id,
                    org_id: org,
                    name,
                    url: new.url,
                    sealed_secret: service.seal(id, new.token.as_deref())?,
                    events,
                    hook_type: HookType::Post,
                    can_block: false,
                    timeout,
                    enabled: true,
                    consecutive_failures: 0,
                    last_error: None,
                    push: Some(TaskPush {
                        task_id: task,
                        config_id,
                        sealed_auth: new
                            .auth
                            .as_ref()
                            .map(|auth| seal_auth(service.vault.as_ref(), id, auth))
                            .transpose()?,
                    }),
                    remote: None,
                    created_at: existing.map_or(now, |h| h.created_at),
                    updated_at: now,
                };
                let what = if existing.is_some() {
                    tx.update_webhook(&hook).await?;
                    AuditEvent::WebhookUpdated(changed(&hook))
                } else {
                    tx.insert_webhook(&hook).await?;
                    AuditEvent::WebhookCreated(changed(&hook))
                };
                tx.append_events(&[service.event(&actor_owned, &hook, &what)])
                    .await?;
                Ok(hook)
            })
        })
        .await?;
        Ok(hook)
    }

    /// The push configs of `task`, oldest first.
    pub async fn push_configs(
        &self,
        actor: &Actor,
        task: TaskId,
    ) -> Result<Vec<Webhook>, ServiceError> {
        policy::may_read_webhooks(actor)?;
        Ok(self.hooks.push_configs(actor.org_id, task).await?)
    }

    /// The push config `id` of `task`, if there is one.
    pub async fn push_config(
        &self,
        actor: &Actor,
        task: TaskId,
        id: &PushConfigId,
    ) -> Result<Option<Webhook>, ServiceError> {
        Ok(self
            .push_configs(actor, task)
            .await?
            .into_iter()
            .find(|h| h.push.as_ref().is_some_and(|p| p.config_id == *id)))
    }

    /// Deletes the push config `id` of `task`, with `webhook.deleted`; nothing to do when
    /// there is none.
    pub async fn delete_push(
        &self,
        actor: &Actor,
        task: TaskId,
        id: PushConfigId,
    ) -> Result<(), ServiceError> {
        policy::may_manage_webhooks(actor)?;
        let (org, service, actor_owned) = (actor.org_id, self.clone(), actor.clone());
        transact(self.uow.as_ref(), move |tx| {
            Box::pin(async move {
                let configs = tx.push_configs(org, task).await?;
                let Some(hook) = configs
                    .iter()
                    .find(|h| h.push.as_ref().is_some_and(|p| p.config_id == id))
                else {
                    return Ok(());
                };
                let deleted = AuditEvent::WebhookDeleted(WebhookDeleted {
                    name: hook.name.as_str().to_owned(),
                });
                if tx.delete_webhook(org, hook.id).await? {
                    tx.append_events(&[service.event(&actor_owned, hook, &deleted)])
                        .await?;
                }
                Ok(())
            })
        })
        .await
    }

    /// The `Authorization` scheme a push config sends, its credentials kept back.
    pub fn push_scheme(&self, hook: &Webhook) -> Result<Option<String>, ServiceError> {
        let Some(push) = &hook.push else {
            return Ok(None);
        };
        Ok(open_auth(self.vault.as_ref(), hook.id, push)?.map(|auth| auth.scheme().to_owned()))
    }
}
