//! Outbound webhooks (decisions D-81 to D-85): registration and its checks
//! ([`WebhookService`]), the pre-hook gate every change passes ([`gate`], asked with no
//! transaction open by [`gated`]), and the delivery of post-hooks from the stored events
//! ([`delivery`]).

mod calls;
mod delivery;
mod gate;
mod gated;
mod push;
mod test_delivery;

use std::sync::Arc;

pub(crate) use self::calls::seal_auth_for;
pub use self::delivery::{DeliveryService, DrainReport};
pub use self::gate::HookGate;
pub use self::gated::GatedUnitOfWork;
pub use self::push::NewPush;
pub use self::test_delivery::TestOutcome;
use super::{Entity, NotFound, ServiceError};
use crate::ValidationError;
use crate::model::{
    Actor, AuditEvent, DeliveryAttempt, Event, EventId, HookEvents, HookName, HookTimeout,
    HookType, HookUrl, Webhook, WebhookChanged, WebhookDeleted, WebhookId,
};
use crate::policy;
use crate::ports::{
    Clock, HookCaller, IdGenerator, Lock, SecretVault, TargetGuard, UnitOfWork, WebhookRepository,
    transact,
};
use crate::validation::{max_chars, no_nul};

/// A hook to register, checked field by field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewWebhook {
    /// What its owners call it.
    pub name: HookName,
    /// Where it is called.
    pub url: HookUrl,
    /// The signing secret, if deliveries are to be signed.
    pub secret: Option<String>,
    /// Which events it hears about.
    pub events: HookEvents,
    /// Before or after the action (`post` by default).
    pub hook_type: HookType,
    /// Whether its `allow: false` blocks (pre-hooks only).
    pub can_block: bool,
    /// How long a call may take.
    pub timeout: HookTimeout,
}

impl NewWebhook {
    /// Hook `name`, calling `url` about `events`, every other field at its default: an
    /// unsigned post-hook that cannot block, with the default timeout.
    pub fn new(name: HookName, url: HookUrl, events: HookEvents) -> Self {
        Self {
            name,
            url,
            secret: None,
            events,
            hook_type: HookType::Post,
            can_block: false,
            timeout: HookTimeout::DEFAULT,
        }
    }
}

/// The editable fields of `PATCH /api/v1/webhooks/:id`; `None` leaves a field as it is,
/// `secret: Some(None)` removes the secret.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WebhookPatch {
    /// New name.
    pub name: Option<HookName>,
    /// New URL (checked again).
    pub url: Option<HookUrl>,
    /// New secret, or none.
    pub secret: Option<Option<String>>,
    /// New subscription.
    pub events: Option<HookEvents>,
    /// New type.
    pub hook_type: Option<HookType>,
    /// New blocking flag.
    pub can_block: Option<bool>,
    /// New timeout.
    pub timeout: Option<HookTimeout>,
    /// Switch it on or off; switching on forgets the failures counted so far.
    pub enabled: Option<bool>,
}

impl WebhookPatch {
    /// Whether the patch names no field at all.
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }
}

/// Checks a hook secret: 1..=255 characters, kept exactly as given.
pub fn check_secret(secret: &str) -> Result<(), ValidationError> {
    if secret.is_empty() {
        return Err(ValidationError::new("secret must not be empty"));
    }
    max_chars("secret", secret, Webhook::MAX_SECRET_CHARS)?;
    no_nul("secret", secret)
}

/// Managing outbound webhooks, reading their delivery logs, and test deliveries.
#[derive(Clone)]
pub struct WebhookService {
    hooks: Arc<dyn WebhookRepository>,
    uow: Arc<dyn UnitOfWork>,
    guard: Arc<dyn TargetGuard>,
    vault: Arc<dyn SecretVault>,
    caller: Arc<dyn HookCaller>,
    clock: Arc<dyn Clock>,
    ids: Arc<dyn IdGenerator>,
    gate: Option<Arc<HookGate>>,
}

impl std::fmt::Debug for WebhookService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebhookService").finish_non_exhaustive()
    }
}

/// The ports [`WebhookService`] works through.
#[derive(Clone)]
pub struct WebhookPorts {
    /// Reads of hooks and their logs.
    pub hooks: Arc<dyn WebhookRepository>,
    /// Changes.
    pub uow: Arc<dyn UnitOfWork>,
    /// The URL check of decision D-81.
    pub guard: Arc<dyn TargetGuard>,
    /// Seals and opens hook secrets.
    pub vault: Arc<dyn SecretVault>,
    /// Makes test deliveries.
    pub caller: Arc<dyn HookCaller>,
    /// Time.
    pub clock: Arc<dyn Clock>,
    /// New ids.
    pub ids: Arc<dyn IdGenerator>,
}

impl std::fmt::Debug for WebhookPorts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebhookPorts").finish_non_exhaustive()
    }
}

impl WebhookService {
    /// Page size of the delivery log when none is asked for.
    pub const DEFAULT_LOG_LIMIT: u32 = 50;
    /// Largest page of the delivery log.
    pub const MAX_LOG_LIMIT: u32 = 200;

    /// Wires the use cases to their ports.
    pub fn new(ports: WebhookPorts) -> Self {
        Self {
            hooks: ports.hooks,
            uow: ports.uow,
            guard: ports.guard,
            vault: ports.vault,
            caller: ports.caller,
            clock: ports.clock,
            ids: ports.ids,
            gate: None,
        }
    }

    /// Tells `gate` about every change of a hook, so that this instance asks a new or
    /// changed pre-hook at once rather than after its cache expires.
    #[must_use]
    pub fn with_gate(mut self, gate: Arc<HookGate>) -> Self {
        self.gate = Some(gate);
        self
    }

    /// Registers a hook after checking its URL (decision D-81), with `webhook.created`.
    pub async fn register(&self, actor: &Actor, new: NewWebhook) -> Result<Webhook, ServiceError> {
        policy::may_manage_webhooks(actor)?;
        check_blocking(new.hook_type, new.can_block)?;
        self.check_target(&new.url).await?;
        let now = self.clock.now();
        let id = WebhookId::from_uuid(self.ids.new_id());
        let sealed_secret = self.seal(id, new.secret.as_deref())?;
        let hook = Webhook {
            id,
            org_id: actor.org_id,
            name: new.name,
            url: new.url,
            sealed_secret,
            events: new.events,
            hook_type: new.hook_type,
            can_block: new.can_block,
            timeout: new.timeout,
            enabled: true,
            consecutive_failures: 0,
            last_error: None,
            push: None,
            remote: None,
            created_at: now,
            updated_at: now,
        };
        let event = self.event(actor, &hook, &AuditEvent::WebhookCreated(changed(&hook)));
        let hook = transact(self.uow.as_ref(), move |tx| {
            Box::pin(async move {
                tx.insert_webhook(&hook).await?;
                tx.append_events(&[event]).await?;
                Ok(hook)
            })
        })
        .await?;
        self.forget(actor);
        Ok(hook)
    }

    /// The organization's hooks, newest first.
    pub async fn list(&self, actor: &Actor) -> Result<Vec<Webhook>, ServiceError> {
        policy::may_read_webhooks(actor)?;
        Ok(self.hooks.list(actor.org_id).await?)
    }

    /// One hook of the organization.
    pub async fn get(&self, actor: &Actor, id: WebhookId) -> Result<Webhook, ServiceError> {
        policy::may_read_webhooks(actor)?;
        self.hooks
            .get(actor.org_id, id)
            .await?
            .filter(Webhook::is_own)
            .ok_or_else(|| NotFound::new(Entity::Webhook, id).into())
    }

    /// Changes a hook (a new URL is checked again), with `webhook.updated`. Switching a
    /// hook on forgets the failures counted so far.
    pub async fn update(
        &self,
        actor: &Actor,
        id: WebhookId,
        patch: WebhookPatch,
    ) -> Result<Webhook, ServiceError> {
        policy::may_manage_webhooks(actor)?;
        if patch.is_empty() {
            return Err(ValidationError::new("the update must name at least one field").into());
        }
        if let Some(url) = &patch.url {
            self.check_target(url).await?;
        }
        let secret = patch
            .secret
            .as_ref()
            .map(|secret| self.seal(id, secret.as_deref()))
            .transpose()?;
        let (org, now, service, actor_owned) =
            (actor.org_id, self.clock.now(), self.clone(), actor.clone());
        let hook = transact(self.uow.as_ref(), move |tx| {
            Box::pin(async move {
                let mut hook = tx
                    .webhook(org, id, Lock::Update)
                    .await?
                    .filter(Webhook::is_own)
                    .ok_or(NotFound::new(Entity::Webhook, id))?;
                if let Some(sealed) = secret {
                    hook.sealed_secret = sealed;
                }
                apply(&mut hook, patch);
                check_blocking(hook.hook_type, hook.can_block)?;
                hook.updated_at = now;
                tx.update_webhook(&hook).await?;
                let event = service.event(
                    &actor_owned,
                    &hook,
                    &AuditEvent::WebhookUpdated(changed(&hook)),
                );
                tx.append_events(&[event]).await?;
                Ok(hook)
            })
        })
        .await?;
        self.forget(actor);
        Ok(hook)
    }

    /// Deletes a hook with its pending deliveries and its log, with `webhook.deleted`.
    pub async fn delete(&self, actor: &Actor, id: WebhookId) -> Result<(), ServiceError> {
        policy::may_manage_webhooks(actor)?;
        let (org, service, actor_owned) = (actor.org_id, self.clone(), actor.clone());
        transact(self.uow.as_ref(), move |tx| {
            Box::pin(async move {
                let hook = tx
                    .webhook(org, id, Lock::Update)
                    .await?
                    .filter(Webhook::is_own)
                    .ok_or(NotFound::new(Entity::Webhook, id))?;
                let deleted = AuditEvent::WebhookDeleted(WebhookDeleted {
                    name: hook.name.as_str().to_owned(),
                });
                tx.delete_webhook(org, id).await?;
                tx.append_events(&[service.event(&actor_owned, &hook, &deleted)])
                    .await?;
                Ok(())
            })
        })
        .await?;
        self.forget(actor);
        Ok(())
    }

    /// The hook's recorded calls, newest first, with how many there are in all.
    pub async fn attempts(
        &self,
        actor: &Actor,
        id: WebhookId,
        limit: Option<u32>,
        offset: u64,
    ) -> Result<(Vec<DeliveryAttempt>, u64), ServiceError> {
        let limit = limit.unwrap_or(Self::DEFAULT_LOG_LIMIT);
        if !(1..=Self::MAX_LOG_LIMIT).contains(&limit) {
            return Err(ValidationError::new(format!(
                "limit must be between 1 and {}",
                Self::MAX_LOG_LIMIT
            ))
            .into());
        }
        let hook = self.get(actor, id).await?;
        Ok(self
            .hooks
            .attempts(actor.org_id, hook.id, limit, offset)
            .await?)
    }

    async fn check_target(&self, url: &HookUrl) -> Result<(), ServiceError> {
        self.guard
            .check(url.as_str())
            .await
            .map_err(|refusal| ValidationError::new(refusal.to_string()).into())
    }

    fn seal(&self, id: WebhookId, secret: Option<&str>) -> Result<Option<Vec<u8>>, ServiceError> {
        secret
            .map(|secret| {
                check_secret(secret)?;
                self.vault
                    .seal(Webhook::SECRET_PURPOSE, id.as_uuid(), secret)
                    .map_err(ServiceError::internal)
            })
            .transpose()
    }

    fn event(&self, actor: &Actor, hook: &Webhook, what: &AuditEvent) -> Event {
        Event::record(
            EventId::from_uuid(self.ids.new_id()),
            hook.org_id,
            actor.actor_id(),
            hook.id.as_uuid(),
            self.clock.now(),
            what,
        )
    }

    fn forget(&self, actor: &Actor) {
        if let Some(gate) = &self.gate {
            gate.forget(actor.org_id);
        }
    }
}

/// `canBlock` only makes sense before the action (decision D-84).
fn check_blocking(hook_type: HookType, can_block: bool) -> Result<(), ValidationError> {
    if can_block && hook_type == HookType::Post {
        return Err(ValidationError::new(
            "canBlock is only allowed for pre hooks",
        ));
    }
    Ok(())
}

/// Applies every field of `patch` but the secret (sealed by the caller).
fn apply(hook: &mut Webhook, patch: WebhookPatch) {
    let WebhookPatch {
        name,
        url,
        secret: _,
        events,
        hook_type,
        can_block,
        timeout,
        enabled,
    } = patch;
    if let Some(name) = name {
        hook.name = name;
    }
    if let Some(url) = url {
        hook.url = url;
    }
    if let Some(events) = events {
        hook.events = events;
    }
    if let Some(hook_type) = hook_type {
        hook.hook_type = hook_type;
        if hook_type == HookType::Post && can_block.is_none() {
            hook.can_block = false;
        }
    }
    if let Some(can_block) = can_block {
        hook.can_block = can_block;
    }
    if let Some(timeout) = timeout {
        hook.timeout = timeout;
    }
    if let Some(enabled) = enabled {
        if enabled && !hook.enabled {
            hook.consecutive_failures = 0;
        }
        hook.enabled = enabled;
    }
}

fn changed(hook: &Webhook) -> WebhookChanged {
    WebhookChanged {
        name: hook.name.as_str().to_owned(),
        url: hook.url.as_str().to_owned(),
        hook_type: hook.hook_type.as_str().to_owned(),
        events: hook.events.as_slice().to_vec(),
    }
}
