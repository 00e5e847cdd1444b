use async_trait::async_trait;

use super::RepositoryError;
use crate::model::{OrgId, Organization};

/// Stored organizations (reads; they are created through a [`Transaction`](super::Transaction)).
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait OrganizationRepository: Send + Sync {
    /// The organization with `id`, if any.
    async fn get(&self, id: OrgId) -> Result<Option<Organization>, RepositoryError>;

    /// The deployment's default organization (decision D-14), if any.
    async fn default_organization(&self) -> Result<Option<Organization>, RepositoryError>;

    /// Whether any organization exists yet.
    async fn any_exists(&self) -> Result<bool, RepositoryError>;
}
