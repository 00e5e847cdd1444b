//! The webhooks' reads: webhooks, push configs and delivery attempts.

use async_trait::async_trait;
use muster_domain::model::{AgentId, DeliveryAttempt, OrgId, TaskId, Webhook, WebhookId};
use muster_domain::ports::{RepositoryError, WebhookRepository};

use super::{count, newest_created, page};
use crate::MemoryStore;

#[async_trait]
impl WebhookRepository for MemoryStore {
    async fn list(&self, org: OrgId) -> Result<Vec<Webhook>, RepositoryError> {
        let state = self.snapshot();
        Ok(newest_created(
            state
                .webhooks
                .values()
                .map(|r| r.hook.clone())
                .filter(|h| h.org_id == org && h.is_own()),
            |h| (h.created_at, h.id.as_uuid()),
        ))
    }

    async fn get(&self, org: OrgId, id: WebhookId) -> Result<Option<Webhook>, RepositoryError> {
        let state = self.snapshot();
        Ok(state
            .webhooks
            .in_org(&id.as_uuid(), org)
            .map(|r| r.hook.clone()))
    }

    async fn remote_channel(&self, agent: AgentId) -> Result<Option<Webhook>, RepositoryError> {
        let state = self.snapshot();
        Ok(state
            .webhooks
            .values()
            .map(|r| r.hook.clone())
            .find(|h| h.remote.as_ref().is_some_and(|r| r.agent_id == agent)))
    }

    async fn push_configs(
        &self,
        org: OrgId,
        task: TaskId,
    ) -> Result<Vec<Webhook>, RepositoryError> {
        let state = self.snapshot();
        Ok(crate::tx::push_configs_of(&state, org, task))
    }

    async fn attempts(
        &self,
        org: OrgId,
        id: WebhookId,
        limit: u32,
        offset: u64,
    ) -> Result<(Vec<DeliveryAttempt>, u64), RepositoryError> {
        let state = self.snapshot();
        let of_hook = newest_created(
            state
                .attempts
                .values()
                .filter(|a| a.org_id == org && a.webhook_id == id)
                .cloned(),
            |a| (a.created_at, a.id.as_uuid()),
        );
        let total = count(of_hook.len());
        Ok((page(of_hook.into_iter(), offset, limit), total))
    }
}
