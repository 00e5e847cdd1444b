//! The integrations' writes: inbound keys, code-host connections, deliveries and links.

use async_trait::async_trait;
use muster_domain::model::{
    CodeHostConnection, CodeHostConnectionId, CodeHostLink, IntegrationAnswer, ItemRef, OrgId,
};
use muster_domain::ports::{IntegrationsTx, Lock, RepositoryError, UniqueKey};
use time::OffsetDateTime;

use super::{MemoryTransaction, duplicate, primary_key};

/// The stream key of a code-host item.
fn item_slot(connection: CodeHostConnectionId, item: &ItemRef) -> crate::state::ItemSlot {
    (
        connection.as_uuid(),
        item.repository.clone(),
        item.kind.as_str(),
        item.number,
    )
}

#[async_trait]
impl IntegrationsTx for MemoryTransaction {
    async fn codehost_connection(
        &mut self,
        org: OrgId,
        id: CodeHostConnectionId,
        _lock: Lock,
    ) -> Result<Option<CodeHostConnection>, RepositoryError> {
        Ok(self.state.codehost.in_org(&id.as_uuid(), org).cloned())
    }

    async fn insert_codehost_connection(
        &mut self,
        connection: &CodeHostConnection,
    ) -> Result<(), RepositoryError> {
        if self.state.codehost.contains_key(&connection.id.as_uuid()) {
            return Err(primary_key("codehost_connections"));
        }
        let taken = self.state.codehost.values().any(|c| {
            c.org_id == connection.org_id && c.installation_id == connection.installation_id
        });
        if taken {
            return duplicate(UniqueKey::Installation);
        }
        self.state
            .codehost
            .put(connection.id.as_uuid(), connection.clone());
        Ok(())
    }

    async fn update_codehost_connection(
        &mut self,
        connection: &CodeHostConnection,
    ) -> Result<bool, RepositoryError> {
        let taken = self.state.codehost.values().any(|c| {
            c.id != connection.id
                && c.org_id == connection.org_id
                && c.installation_id == connection.installation_id
        });
        if taken {
            duplicate(UniqueKey::Installation)?;
        }
        let stored = self
            .state
            .codehost
            .row_in_org(&connection.id.as_uuid(), connection.org_id);
        Ok(stored.map(|c| *c = connection.clone()).is_some())
    }

    async fn delete_codehost_connection(
        &mut self,
        org: OrgId,
        id: CodeHostConnectionId,
    ) -> Result<bool, RepositoryError> {
        if self
            .state
            .codehost
            .take_in_org(&id.as_uuid(), org)
            .is_none()
        {
            return Ok(false);
        }
        self.state
            .codehost_links
            .retain(|(connection, ..), _| *connection != id.as_uuid());
        self.state
            .codehost_deliveries
            .retain(|(connection, _), _| *connection != id.as_uuid());
        Ok(true)
    }

    async fn claim_codehost_delivery(
        &mut self,
        connection: CodeHostConnectionId,
        delivery: &str,
        _at: OffsetDateTime,
    ) -> Result<bool, RepositoryError> {
        let key = (connection.as_uuid(), delivery.to_owned());
        if self.state.codehost_deliveries.contains_key(&key) {
            return Ok(false);
        }
        self.state.codehost_deliveries.put(key, None);
        Ok(true)
    }

    async fn codehost_answer(
        &mut self,
        connection: CodeHostConnectionId,
        delivery: &str,
    ) -> Result<Option<IntegrationAnswer>, RepositoryError> {
        Ok(self
            .state
            .codehost_deliveries
            .get(&(connection.as_uuid(), delivery.to_owned()))
            .and_then(Clone::clone))
    }

    async fn record_codehost_answer(
        &mut self,
        connection: CodeHostConnectionId,
        delivery: &str,
        answer: &IntegrationAnswer,
    ) -> Result<(), RepositoryError> {
        if let Some(row) = self
            .state
            .codehost_deliveries
            .row_mut(&(connection.as_uuid(), delivery.to_owned()))
        {
            *row = Some(answer.clone());
        }
        Ok(())
    }

    async fn codehost_link(
        &mut self,
        connection: CodeHostConnectionId,
        item: &ItemRef,
    ) -> Result<Option<CodeHostLink>, RepositoryError> {
        Ok(self
            .state
            .codehost_links
            .get(&item_slot(connection, item))
            .cloned())
    }

    async fn link_codehost_item(
        &mut self,
        link: &CodeHostLink,
        _at: OffsetDateTime,
    ) -> Result<(), RepositoryError> {
        self.state
            .codehost_links
            .put(item_slot(link.connection_id, &link.item), link.clone());
        Ok(())
    }
}
