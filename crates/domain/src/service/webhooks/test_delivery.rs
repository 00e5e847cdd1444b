//! `POST /api/v1/webhooks/:id/test` (decision D-85): one delivery of `webhook.test`, made
//! at once, logged, and answered with what came of it.

use serde_json::json;

use super::calls::{Attempted, hook_call};
use super::{ServiceError, WebhookService};
use crate::model::instant::format_millis;
use crate::model::{Actor, DeliveryAttemptId, WebhookId};
use crate::policy;
use crate::ports::transact;
use crate::rules::delivery::{TEST_EVENT_TYPE, TEST_MESSAGE, is_success};

/// What came of a test delivery.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TestOutcome {
    /// Whether the receiver answered 2xx.
    pub delivered: bool,
    /// Its status code, when it answered.
    pub status_code: Option<u16>,
    /// How long the call took.
    pub duration_ms: u32,
    /// Why it failed.
    pub error: Option<String>,
}

impl WebhookService {
    /// Sends `webhook.test` with data `{message: "Test delivery from Muster"}` to the hook
    /// now (enabled or not), records it in the hook's log, and answers what came of it.
    /// A test does not count toward the failures that switch a hook off.
    pub async fn test(&self, actor: &Actor, id: WebhookId) -> Result<TestOutcome, ServiceError> {
        policy::may_manage_webhooks(actor)?;
        let hook = self.get(actor, id).await?;
        let now = self.clock.now();
        let test_id = self.ids.new_id();
        let body = json!({
            "event": TEST_EVENT_TYPE,
            "timestamp": format_millis(now).ok(),
            "data": {
                "id": test_id,
                "actorId": actor.actor_id(),
                "entityType": "webhook",
                "entityId": hook.id.as_uuid(),
                "severity": "info",
                "data": {"message": TEST_MESSAGE},
                "createdAt": format_millis(now).ok(),
            },
        });
        let call = hook_call(self.vault.as_ref(), &hook, TEST_EVENT_TYPE, test_id, &body)?;
        let result = self.caller.call(&call).await;
        let attempt = Attempted {
            id: DeliveryAttemptId::from_uuid(self.ids.new_id()),
            hook: &hook,
            call: &call,
            event_id: None,
            attempt: 1,
            result: &result,
            at: now,
        }
        .record();
        transact(self.uow.as_ref(), move |tx| {
            Box::pin(async move {
                tx.insert_delivery_attempts(&[attempt]).await?;
                Ok(())
            })
        })
        .await?;
        Ok(TestOutcome {
            delivered: result.status.is_some_and(is_success),
            status_code: result.status,
            duration_ms: result.duration_ms,
            error: result.error,
        })
    }
}
