//! Outbound webhooks, inbound webhook keys and code-host connections.
//!
//! Two routes are left out on purpose: `POST /api/v1/webhooks/chat` and
//! `POST /api/v1/integrations/codehost/webhook` are called by chat platforms and code
//! hosts with their own signatures, not by Muster's clients.

use muster_wire::Data;
use muster_wire::Paged;
use muster_wire::auth::MessageResponse;
use muster_wire::inbound_webhooks::{
    CreateInboundKeyBody, InboundBatchBody, InboundKeyResponse, InboundTaskBody,
    UpdateInboundKeyBody,
};
use muster_wire::integrations::{ConnectionResponse, CreateConnectionBody, UpdateConnectionBody};
use muster_wire::tasks::TaskResponse;
use muster_wire::webhooks::{
    CreateWebhookBody, DeliveriesQuery, DeliveryPageMeta, DeliveryResponse, TestResponse,
    UpdateWebhookBody, WebhookResponse,
};
use reqwest::Method;
use uuid::Uuid;

use super::data;
use crate::{Client, Error};

const WEBHOOKS: &str = "/api/v1/webhooks";
const INBOUND: &str = "/api/v1/inbound-webhooks";
const CONNECTIONS: &str = "/api/v1/integrations/codehost/connections";

impl Client {
    /// `GET /api/v1/webhooks`.
    pub async fn list_webhooks(&self) -> Result<Vec<WebhookResponse>, Error> {
        data(self.get::<Data<Vec<WebhookResponse>>>(WEBHOOKS).await)
    }

    /// `POST /api/v1/webhooks`: answers the signing secret once.
    pub async fn create_webhook(&self, body: &CreateWebhookBody) -> Result<WebhookResponse, Error> {
        self.call(Method::POST, WEBHOOKS, body).await
    }

    /// `GET /api/v1/webhooks/:id`.
    pub async fn get_webhook(&self, id: Uuid) -> Result<WebhookResponse, Error> {
        self.get(&format!("{WEBHOOKS}/{id}")).await
    }

    /// `PATCH /api/v1/webhooks/:id`.
    pub async fn update_webhook(
        &self,
        id: Uuid,
        body: &UpdateWebhookBody,
    ) -> Result<WebhookResponse, Error> {
        self.call(Method::PATCH, &format!("{WEBHOOKS}/{id}"), body)
            .await
    }

    /// `DELETE /api/v1/webhooks/:id`.
    pub async fn delete_webhook(&self, id: Uuid) -> Result<MessageResponse, Error> {
        self.call_empty(Method::DELETE, &format!("{WEBHOOKS}/{id}"))
            .await
    }

    /// `POST /api/v1/webhooks/:id/test`: one delivery now.
    pub async fn test_webhook(&self, id: Uuid) -> Result<TestResponse, Error> {
        data(
            self.call_empty(Method::POST, &format!("{WEBHOOKS}/{id}/test"))
                .await,
        )
    }

    /// `GET /api/v1/webhooks/:id/deliveries`.
    pub async fn webhook_deliveries(
        &self,
        id: Uuid,
        query: &DeliveriesQuery,
    ) -> Result<Paged<DeliveryResponse, DeliveryPageMeta>, Error> {
        self.get_query(&format!("{WEBHOOKS}/{id}/deliveries"), query)
            .await
    }

    /// `GET /api/v1/inbound-webhooks`.
    pub async fn list_inbound_keys(&self) -> Result<Vec<InboundKeyResponse>, Error> {
        data(self.get::<Data<Vec<InboundKeyResponse>>>(INBOUND).await)
    }

    /// `POST /api/v1/inbound-webhooks`: answers the key once.
    pub async fn create_inbound_key(
        &self,
        body: &CreateInboundKeyBody,
    ) -> Result<InboundKeyResponse, Error> {
        self.call(Method::POST, INBOUND, body).await
    }

    /// `GET /api/v1/inbound-webhooks/:id`.
    pub async fn get_inbound_key(&self, id: Uuid) -> Result<InboundKeyResponse, Error> {
        self.get(&format!("{INBOUND}/{id}")).await
    }

    /// `PATCH /api/v1/inbound-webhooks/:id`.
    pub async fn update_inbound_key(
        &self,
        id: Uuid,
        body: &UpdateInboundKeyBody,
    ) -> Result<InboundKeyResponse, Error> {
        self.call(Method::PATCH, &format!("{INBOUND}/{id}"), body)
            .await
    }

    /// `DELETE /api/v1/inbound-webhooks/:id`.
    pub async fn delete_inbound_key(&self, id: Uuid) -> Result<MessageResponse, Error> {
        self.call_empty(Method::DELETE, &format!("{INBOUND}/{id}"))
            .await
    }

    /// `POST /api/v1/inbound-webhooks/:id/rotate`: a new key; the old one stops working.
    pub async fn rotate_inbound_key(&self, id: Uuid) -> Result<InboundKeyResponse, Error> {
        self.call_empty(Method::POST, &format!("{INBOUND}/{id}/rotate"))
            .await
    }

    /// `POST /api/v1/webhooks/inbound/:key`: a task from outside, authorized by the key
    /// in the path (any client, even an anonymous one, can send it).
    pub async fn ingest_task(
        &self,
        key: &str,
        body: &InboundTaskBody,
    ) -> Result<TaskResponse, Error> {
        data(
            self.call(Method::POST, &format!("{WEBHOOKS}/inbound/{key}"), body)
                .await,
        )
    }

    /// `POST /api/v1/webhooks/inbound/:key/batch`: up to 100 tasks, all or none.
    pub async fn ingest_tasks(
        &self,
        key: &str,
        body: &InboundBatchBody,
    ) -> Result<Vec<TaskResponse>, Error> {
        let path = format!("{WEBHOOKS}/inbound/{key}/batch");
        data(self.call(Method::POST, &path, body).await)
    }

    /// `GET /api/v1/integrations/codehost/connections`.
    pub async fn list_codehost_connections(&self) -> Result<Vec<ConnectionResponse>, Error> {
        data(self.get::<Data<Vec<ConnectionResponse>>>(CONNECTIONS).await)
    }

    /// `POST /api/v1/integrations/codehost/connections`.
    pub async fn create_codehost_connection(
        &self,
        body: &CreateConnectionBody,
    ) -> Result<ConnectionResponse, Error> {
        self.call(Method::POST, CONNECTIONS, body).await
    }

    /// `GET /api/v1/integrations/codehost/connections/:id`.
    pub async fn get_codehost_connection(&self, id: Uuid) -> Result<ConnectionResponse, Error> {
        self.get(&format!("{CONNECTIONS}/{id}")).await
    }

    /// `PATCH /api/v1/integrations/codehost/connections/:id`.
    pub async fn update_codehost_connection(
        &self,
        id: Uuid,
        body: &UpdateConnectionBody,
    ) -> Result<ConnectionResponse, Error> {
        self.call(Method::PATCH, &format!("{CONNECTIONS}/{id}"), body)
            .await
    }

    /// `DELETE /api/v1/integrations/codehost/connections/:id`.
    pub async fn delete_codehost_connection(&self, id: Uuid) -> Result<MessageResponse, Error> {
        self.call_empty(Method::DELETE, &format!("{CONNECTIONS}/{id}"))
            .await
    }
}
