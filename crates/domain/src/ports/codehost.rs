use async_trait::async_trait;

use super::RepositoryError;
use crate::model::{CodeHostConnection, CodeHostConnectionId, InstallationId, OrgId};

/// Reads of code-host connections.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait CodeHostRepository: Send + Sync {
    /// The organization's connections, newest first.
    async fn list(&self, org: OrgId) -> Result<Vec<CodeHostConnection>, RepositoryError>;

    /// The connection `id`, if it is in `org`.
    async fn get(
        &self,
        org: OrgId,
        id: CodeHostConnectionId,
    ) -> Result<Option<CodeHostConnection>, RepositoryError>;

    /// The connections of `installation` in every organization (at most one each),
    /// oldest first: events name only the installation, and the signature tells which
    /// of them an event is for.
    async fn by_installation(
        &self,
        installation: InstallationId,
    ) -> Result<Vec<CodeHostConnection>, RepositoryError>;
}
