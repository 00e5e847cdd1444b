//! [`IntegrationsTx`]: what a transaction reads and writes of code-host integrations:
//! connections, their deliveries and item links.

use async_trait::async_trait;
use time::OffsetDateTime;

use crate::model::{
    CodeHostConnection, CodeHostConnectionId, CodeHostLink, IntegrationAnswer, ItemRef, OrgId,
};
use crate::ports::{Lock, RepositoryError};

/// Code-host integrations: connections, their deliveries and item links. Part of
/// [`Transaction`](crate::ports::Transaction); every method is scoped to one organization
/// except where it says otherwise.
#[async_trait]
pub trait IntegrationsTx: Send {
    /// The code-host connection `id`, if it is in `org`.
    async fn codehost_connection(
        &mut self,
        org: OrgId,
        id: CodeHostConnectionId,
        lock: Lock,
    ) -> Result<Option<CodeHostConnection>, RepositoryError>;

    /// Stores a new code-host connection (its installation id is unique within its
    /// organization: [`UniqueKey::Installation`](crate::ports::UniqueKey::Installation)).
    async fn insert_codehost_connection(
        &mut self,
        connection: &CodeHostConnection,
    ) -> Result<(), RepositoryError>;

    /// Stores every field of a connection; `false` when it is gone.
    async fn update_codehost_connection(
        &mut self,
        connection: &CodeHostConnection,
    ) -> Result<bool, RepositoryError>;

    /// Deletes a connection with its links and remembered deliveries; `false` when it
    /// is gone.
    async fn delete_codehost_connection(
        &mut self,
        org: OrgId,
        id: CodeHostConnectionId,
    ) -> Result<bool, RepositoryError>;

    /// Claims the code host's delivery `delivery` of `connection` for this transaction:
    /// `true` when it is new. A concurrent claim of the same delivery waits until this
    /// transaction ends, and is then `false` (or `true`, if this one rolled back).
    async fn claim_codehost_delivery(
        &mut self,
        connection: CodeHostConnectionId,
        delivery: &str,
        at: OffsetDateTime,
    ) -> Result<bool, RepositoryError>;

    /// What a claimed delivery came to, once recorded.
    async fn codehost_answer(
        &mut self,
        connection: CodeHostConnectionId,
        delivery: &str,
    ) -> Result<Option<IntegrationAnswer>, RepositoryError>;

    /// Records what a claimed delivery came to, for its redeliveries.
    async fn record_codehost_answer(
        &mut self,
        connection: CodeHostConnectionId,
        delivery: &str,
        answer: &IntegrationAnswer,
    ) -> Result<(), RepositoryError>;

    /// The task `item` of `connection` is linked to, locked against a concurrent link.
    async fn codehost_link(
        &mut self,
        connection: CodeHostConnectionId,
        item: &ItemRef,
    ) -> Result<Option<CodeHostLink>, RepositoryError>;

    /// Links the item to the task, replacing an earlier link of the item.
    async fn link_codehost_item(
        &mut self,
        link: &CodeHostLink,
        at: OffsetDateTime,
    ) -> Result<(), RepositoryError>;
}
