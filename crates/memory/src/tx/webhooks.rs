//! The audit log's and the webhooks' writes: appended events queue the deliveries the
//! hearing rule answers for them; webhooks, push configs and delivery attempts.

use std::collections::BTreeSet;

use async_trait::async_trait;
use muster_domain::model::{
    DeliveryAttempt, Event, EventId, HookType, OrgId, TaskId, Webhook, WebhookId,
};
use muster_domain::ports::{Lock, RepositoryError, WebhooksTx};
use muster_domain::rules::hearing::{self, Listener};
use time::OffsetDateTime;

use super::{MemoryTransaction, insert_new, primary_key};
use crate::state::{HookRecord, Outbox, State};

impl State {
    /// Stores `events` and queues the deliveries the hearing rule answers for them.
    fn appended(&mut self, events: &[Event]) {
        let listeners: Vec<Listener> = self
            .webhooks
            .values()
            .map(|r| Listener::of(&r.hook))
            .collect();
        let queued = hearing::deliveries(events, &listeners, |task| {
            self.tasks.get(&task).and_then(|t| t.assignee_id)
        });
        for event in events {
            let place = self.next_event_place();
            self.events.put(place, event.clone());
            self.event_places.put(event.id.as_uuid(), place);
        }
        for delivery in queued {
            let key = (delivery.hook.as_uuid(), delivery.event.as_uuid());
            if !self.outbox.contains_key(&key) {
                self.outbox.put(
                    key,
                    Outbox {
                        event_at: delivery.at,
                        attempts: 0,
                        next_at: delivery.at,
                    },
                );
            }
        }
    }
}

#[async_trait]
impl WebhooksTx for MemoryTransaction {
    async fn append_events(&mut self, events: &[Event]) -> Result<(), RepositoryError> {
        let mut ids = BTreeSet::new();
        for event in events {
            if self.state.event_places.contains_key(&event.id.as_uuid()) || !ids.insert(event.id) {
                return Err(primary_key("events"));
            }
        }
        self.state.appended(events);
        self.written.extend_from_slice(events);
        Ok(())
    }

    fn written_events(&self) -> Vec<Event> {
        self.written.clone()
    }

    async fn webhook(
        &mut self,
        org: OrgId,
        id: WebhookId,
        _lock: Lock,
    ) -> Result<Option<Webhook>, RepositoryError> {
        Ok(self
            .state
            .webhooks
            .in_org(&id.as_uuid(), org)
            .map(|r| r.hook.clone()))
    }

    async fn pre_hooks(&mut self, org: OrgId) -> Result<Vec<Webhook>, RepositoryError> {
        let mut hooks: Vec<Webhook> = self
            .state
            .webhooks
            .values()
            .map(|r| &r.hook)
            .filter(|h| h.org_id == org && h.enabled && h.hook_type == HookType::Pre)
            .cloned()
            .collect();
        hooks.sort_by(|a, b| b.created_at.cmp(&a.created_at).then(b.id.cmp(&a.id)));
        Ok(hooks)
    }

    async fn push_configs(
        &mut self,
        org: OrgId,
        task: TaskId,
    ) -> Result<Vec<Webhook>, RepositoryError> {
        Ok(push_configs_of(&self.state, org, task))
    }

    async fn insert_webhook(&mut self, hook: &Webhook) -> Result<(), RepositoryError> {
        let record = HookRecord {
            hook: hook.clone(),
            lease: None,
        };
        insert_new(
            &mut self.state.webhooks,
            hook.id.as_uuid(),
            record,
            "webhooks",
        )
    }

    async fn update_webhook(&mut self, hook: &Webhook) -> Result<bool, RepositoryError> {
        let stored = self
            .state
            .webhooks
            .row_in_org(&hook.id.as_uuid(), hook.org_id);
        Ok(stored
            .map(|r| {
                let created_at = r.hook.created_at;
                r.hook = Webhook {
                    created_at,
                    ..hook.clone()
                };
            })
            .is_some())
    }

    async fn update_webhook_health(&mut self, hook: &Webhook) -> Result<bool, RepositoryError> {
        let stored = self
            .state
            .webhooks
            .row_in_org(&hook.id.as_uuid(), hook.org_id);
        Ok(stored
            .map(|r| {
                r.hook.enabled = hook.enabled;
                r.hook.consecutive_failures = hook.consecutive_failures;
                r.hook.last_error.clone_from(&hook.last_error);
                r.hook.updated_at = hook.updated_at;
            })
            .is_some())
    }

    async fn delete_webhook(&mut self, org: OrgId, id: WebhookId) -> Result<bool, RepositoryError> {
        if self
            .state
            .webhooks
            .take_in_org(&id.as_uuid(), org)
            .is_none()
        {
            return Ok(false);
        }
        self.state
            .outbox
            .retain(|(hook, _), _| *hook != id.as_uuid());
        self.state.attempts.retain(|_, a| a.webhook_id != id);
        Ok(true)
    }

    async fn insert_delivery_attempts(
        &mut self,
        attempts: &[DeliveryAttempt],
    ) -> Result<(), RepositoryError> {
        for attempt in attempts {
            insert_new(
                &mut self.state.attempts,
                attempt.id.as_uuid(),
                attempt.clone(),
                "webhook_attempts",
            )?;
        }
        Ok(())
    }

    async fn reschedule_delivery(
        &mut self,
        hook: WebhookId,
        event: EventId,
        attempts: u32,
        next_at: OffsetDateTime,
    ) -> Result<(), RepositoryError> {
        if let Some(row) = self
            .state
            .outbox
            .row_mut(&(hook.as_uuid(), event.as_uuid()))
        {
            row.attempts = attempts;
            row.next_at = next_at;
        }
        Ok(())
    }

    async fn finish_deliveries(
        &mut self,
        hook: WebhookId,
        events: &[EventId],
    ) -> Result<(), RepositoryError> {
        for event in events {
            self.state.outbox.take(&(hook.as_uuid(), event.as_uuid()));
        }
        Ok(())
    }
}

/// The push configs of `task`, oldest first.
pub(crate) fn push_configs_of(state: &State, org: OrgId, task: TaskId) -> Vec<Webhook> {
    let mut hooks: Vec<Webhook> = state
        .webhooks
        .values()
        .map(|r| &r.hook)
        .filter(|h| h.org_id == org && h.push.as_ref().is_some_and(|p| p.task_id == task))
        .cloned()
        .collect();
    hooks.sort_by(|a, b| a.created_at.cmp(&b.created_at).then(a.id.cmp(&b.id)));
    hooks
}
