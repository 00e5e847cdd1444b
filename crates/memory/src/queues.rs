//! The stores written outside units of work: replay nonces, `Idempotency-Key`s and the
//! webhook outbox's leases. Each change waits for the running unit of work and commits
//! at once.

use async_trait::async_trait;
use muster_domain::model::{AgentId, Begun, IdempotencyKey, OrgId, StoredResponse, WebhookId};
use muster_domain::ports::{
    DeliveryQueue, IdempotencyStore, NonceOutcome, NonceStore, PendingDelivery, RepositoryError,
};
use time::OffsetDateTime;
use uuid::Uuid;

use crate::MemoryStore;
use crate::state::{IdempotencyRecord, IdempotencySlot};

#[async_trait]
impl NonceStore for MemoryStore {
    async fn remember(
        &self,
        agent: AgentId,
        nonce: &str,
        now: OffsetDateTime,
        expires_at: OffsetDateTime,
    ) -> Result<NonceOutcome, RepositoryError> {
        let key = (agent.as_uuid(), nonce.to_owned());
        Ok(self
            .change(|state| {
                if state.nonces.get(&key).is_some_and(|until| *until >= now) {
                    return NonceOutcome::Replayed;
                }
                state.nonces.put(key, expires_at);
                NonceOutcome::Fresh
            })
            .await)
    }

    async fn purge_expired(&self, now: OffsetDateTime) -> Result<u64, RepositoryError> {
        Ok(self
            .change(|state| state.nonces.retain(|_, until| *until >= now))
            .await)
    }
}

fn slot(key: &IdempotencyKey) -> IdempotencySlot {
    (
        key.scope.clone(),
        key.method.clone(),
        key.path.clone(),
        key.key.clone(),
    )
}

#[async_trait]
impl IdempotencyStore for MemoryStore {
    async fn begin(
        &self,
        key: &IdempotencyKey,
        fingerprint: &[u8],
        now: OffsetDateTime,
    ) -> Result<Begun, RepositoryError> {
        let slot = slot(key);
        Ok(self
            .change(|state| {
                let Some(found) = state.idempotency.get(&slot) else {
                    state.idempotency.put(
                        slot,
                        IdempotencyRecord {
                            fingerprint: fingerprint.to_vec(),
                            created_at: now,
                            response: None,
                        },
                    );
                    return Begun::Claimed;
                };
                if found.fingerprint != fingerprint {
                    return Begun::Mismatch;
                }
                found
                    .response
                    .clone()
                    .map_or(Begun::InProgress, Begun::Replay)
            })
            .await)
    }

    async fn finish(
        &self,
        key: &IdempotencyKey,
        response: &StoredResponse,
    ) -> Result<(), RepositoryError> {
        let slot = slot(key);
        self.change(|state| {
            if let Some(found) = state.idempotency.row_mut(&slot) {
                found.response = Some(response.clone());
            }
        })
        .await;
        Ok(())
    }

    async fn abandon(&self, key: &IdempotencyKey) -> Result<(), RepositoryError> {
        let slot = slot(key);
        self.change(|state| {
            if state
                .idempotency
                .get(&slot)
                .is_some_and(|found| found.response.is_none())
            {
                state.idempotency.take(&slot);
            }
        })
        .await;
        Ok(())
    }

    async fn purge(&self, before: OffsetDateTime) -> Result<u64, RepositoryError> {
        Ok(self
            .change(|state| state.idempotency.retain(|_, r| r.created_at >= before))
            .await)
    }
}

#[async_trait]
impl DeliveryQueue for MemoryStore {
    async fn lease_due_hooks(
        &self,
        now: OffsetDateTime,
        until: OffsetDateTime,
        holder: Uuid,
        max_hooks: u32,
    ) -> Result<Vec<(OrgId, WebhookId)>, RepositoryError> {
        Ok(self
            .change(|state| {
                let due: Vec<Uuid> = state
                    .webhooks
                    .iter()
                    .filter(|(_, r)| r.hook.enabled)
                    .filter(|(_, r)| r.lease.is_none_or(|(_, until)| until < now))
                    .filter(|(id, _)| {
                        state
                            .outbox
                            .iter()
                            .any(|((hook, _), row)| hook == *id && row.next_at <= now)
                    })
                    .map(|(id, _)| *id)
                    .take(usize::try_from(max_hooks).unwrap_or(usize::MAX))
                    .collect();
                due.iter()
                    .filter_map(|id| {
                        let record = state.webhooks.row_mut(id)?;
                        record.lease = Some((holder, until));
                        Some((record.hook.org_id, record.hook.id))
                    })
                    .collect()
            })
            .await)
    }

    async fn extend_lease(
        &self,
        hook: WebhookId,
        holder: Uuid,
        until: OffsetDateTime,
    ) -> Result<bool, RepositoryError> {
        Ok(self
            .change(|state| {
                let held = state
                    .webhooks
                    .get(&hook.as_uuid())
                    .is_some_and(|r| r.lease.is_some_and(|(h, _)| h == holder));
                if held && let Some(record) = state.webhooks.row_mut(&hook.as_uuid()) {
                    record.lease = Some((holder, until));
                }
                held
            })
            .await)
    }

    async fn release(&self, hook: WebhookId, holder: Uuid) -> Result<(), RepositoryError> {
        self.change(|state| {
            let held = state
                .webhooks
                .get(&hook.as_uuid())
                .is_some_and(|r| r.lease.is_some_and(|(h, _)| h == holder));
            if held && let Some(record) = state.webhooks.row_mut(&hook.as_uuid()) {
                record.lease = None;
            }
        })
        .await;
        Ok(())
    }

    async fn release_all(&self, holder: Uuid) -> Result<u64, RepositoryError> {
        Ok(self
            .change(|state| {
                let held: Vec<Uuid> = state
                    .webhooks
                    .iter()
                    .filter(|(_, r)| r.lease.is_some_and(|(h, _)| h == holder))
                    .map(|(id, _)| *id)
                    .collect();
                for id in &held {
                    if let Some(record) = state.webhooks.row_mut(id) {
                        record.lease = None;
                    }
                }
                u64::try_from(held.len()).unwrap_or(u64::MAX)
            })
            .await)
    }

    async fn due(
        &self,
        hook: WebhookId,
        now: OffsetDateTime,
        limit: u32,
    ) -> Result<Vec<PendingDelivery>, RepositoryError> {
        let state = self.snapshot();
        let mut due: Vec<_> = state
            .outbox
            .iter()
            .filter(|((h, _), row)| *h == hook.as_uuid() && row.next_at <= now)
            .filter_map(|((_, event), row)| {
                let place = state.event_places.get(event)?;
                let stored = state.events.get(place)?;
                Some((row.event_at, *event, row.attempts, stored))
            })
            .collect();
        due.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.cmp(&b.1)));
        Ok(due
            .into_iter()
            .take(usize::try_from(limit).unwrap_or(usize::MAX))
            .map(|(_, _, attempts, event)| PendingDelivery {
                // The memory store keeps no trace context: nothing here exports traces.
                trace: None,
                event: event.clone(),
                attempts,
            })
            .collect())
    }
}
