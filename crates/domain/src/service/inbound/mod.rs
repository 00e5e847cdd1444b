//! Inbound webhook keys (decision D-80): managed by signed-in users ([`InboundService`]),
//! used by other systems to create tasks ([`ingest`]).

mod ingest;

use std::sync::Arc;

pub use self::ingest::{InboundTask, MAX_BATCH};
use super::{Entity, NotFound, ServiceError};
use crate::ValidationError;
use crate::model::{
    Actor, AgentId, AuditEvent, Event, EventId, HookName, InboundKey, InboundKeyId,
    InboundWebhookChanged, Tags, TaskPriority,
};
use crate::policy;
use crate::ports::{
    AgentsTx, Clock, IdGenerator, InboundKeyRepository, Lock, MessageSigner, SecretVault,
    UnitOfWork, transact,
};

/// A key to create, checked field by field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewInboundKey {
    /// What its owners call it.
    pub name: HookName,
    /// Assignee of tasks that name none.
    pub default_agent_id: Option<AgentId>,
    /// Priority of tasks that name none (`medium` when `None`).
    pub default_priority: Option<TaskPriority>,
    /// Tags every task gets.
    pub default_tags: Option<Tags>,
}

/// The editable fields of `PATCH /api/v1/inbound-webhooks/:id`; `None` leaves a field,
/// `default_agent_id: Some(None)` clears it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct InboundKeyPatch {
    /// New name.
    pub name: Option<HookName>,
    /// New default assignee, or none.
    pub default_agent_id: Option<Option<AgentId>>,
    /// New default priority.
    pub default_priority: Option<TaskPriority>,
    /// New default tags.
    pub default_tags: Option<Tags>,
    /// Switch it on or off.
    pub enabled: Option<bool>,
}

impl InboundKeyPatch {
    /// Whether the patch names no field at all.
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }
}

/// A key with its secret in the clear: the answer of create and rotate, the only times
/// the secret is shown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IssuedKey {
    /// The record.
    pub key: InboundKey,
    /// The body-signing secret (64 lowercase hex characters).
    pub secret: String,
}

/// Inbound webhook keys: management and ingestion.
#[derive(Clone)]
pub struct InboundService {
    keys: Arc<dyn InboundKeyRepository>,
    uow: Arc<dyn UnitOfWork>,
    vault: Arc<dyn SecretVault>,
    signer: Arc<dyn MessageSigner>,
    clock: Arc<dyn Clock>,
    ids: Arc<dyn IdGenerator>,
    reward: i64,
}

impl std::fmt::Debug for InboundService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InboundService").finish_non_exhaustive()
    }
}

/// The ports [`InboundService`] works through.
#[derive(Clone)]
pub struct InboundPorts {
    /// Reads of keys.
    pub keys: Arc<dyn InboundKeyRepository>,
    /// Changes.
    pub uow: Arc<dyn UnitOfWork>,
    /// Seals and opens key secrets, and draws new keys and secrets.
    pub vault: Arc<dyn SecretVault>,
    /// Checks body signatures.
    pub signer: Arc<dyn MessageSigner>,
    /// Time.
    pub clock: Arc<dyn Clock>,
    /// New ids.
    pub ids: Arc<dyn IdGenerator>,
}

impl std::fmt::Debug for InboundPorts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InboundPorts").finish_non_exhaustive()
    }
}

impl InboundService {
    /// Wires the use cases to their ports.
    pub fn new(ports: InboundPorts) -> Self {
        Self {
            keys: ports.keys,
            uow: ports.uow,
            vault: ports.vault,
            signer: ports.signer,
            clock: ports.clock,
            ids: ports.ids,
            reward: crate::rules::reward::DEFAULT_TASK_REWARD,
        }
    }

    /// Sets the reward the tasks it creates get from the treasury when it can fund it
    /// (decision D-101).
    #[must_use]
    pub fn with_reward(mut self, reward: i64) -> Self {
        self.reward = reward;
        self
    }

    /// Creates a key, answered with its secret, with `inbound_webhook.created`.
    pub async fn create(
        &self,
        actor: &Actor,
        new: NewInboundKey,
    ) -> Result<IssuedKey, ServiceError> {
        policy::may_manage_webhooks(actor)?;
        let now = self.clock.now();
        let id = InboundKeyId::from_uuid(self.ids.new_id());
        let (key, secret, sealed_secret) = self.draw(id)?;
        let record = InboundKey {
            id,
            org_id: actor.org_id,
            name: new.name,
            key,
            sealed_secret,
            default_agent_id: new.default_agent_id,
            default_priority: new.default_priority.unwrap_or_default(),
            default_tags: new.default_tags.unwrap_or_default(),
            enabled: true,
            last_used_at: None,
            created_at: now,
            updated_at: now,
        };
        let event = self.event(
            actor,
            &record,
            &AuditEvent::InboundWebhookCreated(changed(&record)),
        );
        let record = transact(self.uow.as_ref(), move |tx| {
            Box::pin(async move {
                check_default_agent(tx, &record).await?;
                tx.insert_inbound_key(&record).await?;
                tx.append_events(&[event]).await?;
                Ok(record)
            })
        })
        .await?;
        Ok(IssuedKey {
            key: record,
            secret,
        })
    }

    /// The organization's keys, newest first.
    pub async fn list(&self, actor: &Actor) -> Result<Vec<InboundKey>, ServiceError> {
        policy::may_read_webhooks(actor)?;
        Ok(self.keys.list(actor.org_id).await?)
    }

    /// One key of the organization.
    pub async fn get(&self, actor: &Actor, id: InboundKeyId) -> Result<InboundKey, ServiceError> {
        policy::may_read_webhooks(actor)?;
        self.keys
            .get(actor.org_id, id)
            .await?
            .ok_or_else(|| NotFound::new(Entity::InboundKey, id).into())
    }

    /// Changes a key's name, defaults or switch, with `inbound_webhook.updated`.
    pub async fn update(
        &self,
        actor: &Actor,
        id: InboundKeyId,
        patch: InboundKeyPatch,
    ) -> Result<InboundKey, ServiceError> {
        policy::may_manage_webhooks(actor)?;
        if patch.is_empty() {
            return Err(ValidationError::new("the update must name at least one field").into());
        }
        self.change(actor, id, move |key| {
            if let Some(name) = patch.name {
                key.name = name;
            }
            if let Some(agent) = patch.default_agent_id {
                key.default_agent_id = agent;
            }
            if let Some(priority) = patch.default_priority {
                key.default_priority = priority;
            }
            if let Some(tags) = patch.default_tags {
                key.default_tags = tags;
            }
            if let Some(enabled) = patch.enabled {
                key.enabled = enabled;
            }
            Ok(AuditEvent::InboundWebhookUpdated(changed(key)))
        })
        .await
    }

    /// Replaces a key's key and secret: the old key stops working at once. Answered with
    /// the new secret, with `inbound_webhook.rotated`.
    pub async fn rotate(&self, actor: &Actor, id: InboundKeyId) -> Result<IssuedKey, ServiceError> {
        policy::may_manage_webhooks(actor)?;
        let (new_key, secret, sealed) = self.draw(id)?;
        let key = self
            .change(actor, id, move |key| {
                key.key = new_key;
                key.sealed_secret = sealed;
                Ok(AuditEvent::InboundWebhookRotated(changed(key)))
            })
            .await?;
        Ok(IssuedKey { key, secret })
    }

    /// Deletes a key for good, with `inbound_webhook.deleted`.
    pub async fn delete(&self, actor: &Actor, id: InboundKeyId) -> Result<(), ServiceError> {
        policy::may_manage_webhooks(actor)?;
        let (org, service, actor) = (actor.org_id, self.clone(), actor.clone());
        transact(self.uow.as_ref(), move |tx| {
            Box::pin(async move {
                let key = tx
                    .inbound_key(org, id, Lock::Update)
                    .await?
                    .ok_or(NotFound::new(Entity::InboundKey, id))?;
                tx.delete_inbound_key(org, id).await?;
                let deleted = AuditEvent::InboundWebhookDeleted(changed(&key));
                tx.append_events(&[service.event(&actor, &key, &deleted)])
                    .await?;
                Ok(())
            })
        })
        .await
    }

    /// Loads the key under lock, applies `edit`, checks and stores it with the event
    /// `edit` names, in one transaction.
    async fn change<F>(
        &self,
        actor: &Actor,
        id: InboundKeyId,
        edit: F,
    ) -> Result<InboundKey, ServiceError>
    where
        F: FnOnce(&mut InboundKey) -> Result<AuditEvent, ServiceError> + Clone + Send + 'static,
    {
        let (org, now, service, actor) =
            (actor.org_id, self.clock.now(), self.clone(), actor.clone());
        transact(self.uow.as_ref(), move |tx| {
            Box::pin(async move {
                let mut key = tx
                    .inbound_key(org, id, Lock::Update)
                    .await?
                    .ok_or(NotFound::new(Entity::InboundKey, id))?;
                let what = edit(&mut key)?;
                key.updated_at = now;
                check_default_agent(tx, &key).await?;
                tx.update_inbound_key(&key).await?;
                tx.append_events(&[service.event(&actor, &key, &what)])
                    .await?;
                Ok(key)
            })
        })
        .await
    }

    /// A new key and secret for the record `id`, with the secret sealed.
    fn draw(&self, id: InboundKeyId) -> Result<(String, String, Vec<u8>), ServiceError> {
        let key = format!(
            "{}{}",
            InboundKey::PREFIX,
            self.vault.random_hex(32).map_err(ServiceError::internal)?
        );
        let secret = self.vault.random_hex(32).map_err(ServiceError::internal)?;
        let sealed = self
            .vault
            .seal(InboundKey::SECRET_PURPOSE, id.as_uuid(), &secret)
            .map_err(ServiceError::internal)?;
        Ok((key, secret, sealed))
    }

    fn event(&self, actor: &Actor, key: &InboundKey, what: &AuditEvent) -> Event {
        Event::record(
            EventId::from_uuid(self.ids.new_id()),
            key.org_id,
            actor.actor_id(),
            key.id.as_uuid(),
            self.clock.now(),
            what,
        )
    }
}

/// A default assignee must be an agent of the key's organization.
async fn check_default_agent<T: AgentsTx + ?Sized>(
    tx: &mut T,
    key: &InboundKey,
) -> Result<(), ServiceError> {
    if let Some(agent) = key.default_agent_id
        && tx.agent(key.org_id, agent, Lock::Share).await?.is_none()
    {
        return Err(NotFound::new(Entity::Agent, agent).into());
    }
    Ok(())
}

fn changed(key: &InboundKey) -> InboundWebhookChanged {
    InboundWebhookChanged {
        name: key.name.as_str().to_owned(),
    }
}
