//! A user's API keys (decision D-17): created with their secret shown once, listed and
//! read without it, deleted (revoked).

use std::sync::Arc;

use time::{Duration, OffsetDateTime};

use super::{Entity, NotFound, ServiceError};
use crate::ValidationError;
use crate::model::{
    Actor, ApiKey, ApiKeyCreated, ApiKeyId, ApiKeyName, ApiKeyRevoked, ApiKeyScope, AuditEvent,
    BearerSecret, Event, EventId,
};
use crate::policy;
use crate::ports::{
    Clock, IdGenerator, SecretKind, TokenMinter, UnitOfWork, UserRepository, transact,
};

/// A key to create, as asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewApiKey {
    /// What the user calls it.
    pub name: String,
    /// Its scopes; `[read]` when `None`.
    pub scopes: Option<Vec<ApiKeyScope>>,
    /// Days until it expires; never when `None`.
    pub expires_in_days: Option<i64>,
}

/// API-key use cases.
#[derive(Clone)]
pub struct ApiKeyService {
    uow: Arc<dyn UnitOfWork>,
    users: Arc<dyn UserRepository>,
    tokens: Arc<dyn TokenMinter>,
    clock: Arc<dyn Clock>,
    ids: Arc<dyn IdGenerator>,
}

impl std::fmt::Debug for ApiKeyService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ApiKeyService").finish_non_exhaustive()
    }
}

impl ApiKeyService {
    /// Longest lifetime `expiresInDays` may ask for (ten years).
    pub const MAX_EXPIRY_DAYS: i64 = 3650;

    /// Wires the use cases to their ports.
    pub fn new(
        uow: Arc<dyn UnitOfWork>,
        users: Arc<dyn UserRepository>,
        tokens: Arc<dyn TokenMinter>,
        clock: Arc<dyn Clock>,
        ids: Arc<dyn IdGenerator>,
    ) -> Self {
        Self {
            uow,
            users,
            tokens,
            clock,
            ids,
        }
    }

    /// Creates a key for the signed-in user; answers it with its secret, which is not
    /// stored and cannot be shown again.
    pub async fn create(
        &self,
        actor: &Actor,
        new: NewApiKey,
    ) -> Result<(ApiKey, BearerSecret), ServiceError> {
        let user_id = policy::signed_in_user(actor)?;
        let name = ApiKeyName::new(&new.name)?;
        let mut scopes = new.scopes.unwrap_or_else(|| vec![ApiKeyScope::Read]);
        if scopes.is_empty() {
            return Err(ValidationError::new("scopes must not be empty").into());
        }
        scopes.sort_unstable();
        scopes.dedup();
        let now = self.clock.now();
        let expires_at = new
            .expires_in_days
            .map(|days| expiry(now, days))
            .transpose()?;
        let secret = self
            .tokens
            .new_secret(SecretKind::ApiKey)
            .map_err(ServiceError::Internal)?;
        let key = ApiKey {
            id: ApiKeyId::from_uuid(self.ids.new_id()),
            org_id: actor.org_id,
            user_id,
            name,
            key_prefix: secret.expose().chars().take(ApiKey::PREFIX_CHARS).collect(),
            key_hash: self.tokens.hash(secret.expose()),
            scopes,
            last_used_at: None,
            expires_at,
            created_at: now,
        };
        let created = AuditEvent::ApiKeyCreated(ApiKeyCreated {
            name: key.name.as_str().to_owned(),
            key_prefix: key.key_prefix.clone(),
            scopes: key.scopes.iter().map(|s| s.as_str().to_owned()).collect(),
        });
        let event = self.event(actor, key.id, now, &created);
        let key = transact(self.uow.as_ref(), move |tx| {
            Box::pin(async move {
                tx.insert_api_key(&key).await?;
                tx.append_events(&[event]).await?;
                Ok(key)
            })
        })
        .await?;
        Ok((key, secret))
    }

    /// The signed-in user's keys, newest first.
    pub async fn list(&self, actor: &Actor) -> Result<Vec<ApiKey>, ServiceError> {
        let user_id = policy::signed_in_user(actor)?;
        Ok(self.users.api_keys_of(actor.org_id, user_id).await?)
    }

    /// One of the signed-in user's keys; another user's key is not found.
    pub async fn get(&self, actor: &Actor, id: ApiKeyId) -> Result<ApiKey, ServiceError> {
        let user_id = policy::signed_in_user(actor)?;
        self.users
            .api_key(actor.org_id, user_id, id)
            .await?
            .ok_or_else(|| NotFound::new(Entity::ApiKey, id).into())
    }

    /// Deletes one of the signed-in user's keys: it stops authenticating at once.
    pub async fn delete(&self, actor: &Actor, id: ApiKeyId) -> Result<(), ServiceError> {
        let user_id = policy::signed_in_user(actor)?;
        let (org, service, actor) = (actor.org_id, self.clone(), actor.clone());
        transact(self.uow.as_ref(), move |tx| {
            Box::pin(async move {
                let key = tx
                    .delete_api_key(org, user_id, id)
                    .await?
                    .ok_or(NotFound::new(Entity::ApiKey, id))?;
                let revoked = AuditEvent::ApiKeyRevoked(ApiKeyRevoked {
                    key_prefix: key.key_prefix,
                });
                let now = service.clock.now();
                tx.append_events(&[service.event(&actor, id, now, &revoked)])
                    .await?;
                Ok(())
            })
        })
        .await
    }

    fn event(&self, actor: &Actor, key: ApiKeyId, at: OffsetDateTime, what: &AuditEvent) -> Event {
        Event::record(
            EventId::from_uuid(self.ids.new_id()),
            actor.org_id,
            actor.actor_id(),
            key.as_uuid(),
            at,
            what,
        )
    }
}

/// When a key asked to live `days` days from `now` expires.
fn expiry(now: OffsetDateTime, days: i64) -> Result<OffsetDateTime, ServiceError> {
    if !(1..=ApiKeyService::MAX_EXPIRY_DAYS).contains(&days) {
        return Err(ValidationError::new(format!(
            "expiresInDays must be between 1 and {}",
            ApiKeyService::MAX_EXPIRY_DAYS
        ))
        .into());
    }
    Ok(now + Duration::days(days))
}
