use async_trait::async_trait;

use super::RepositoryError;
use crate::model::{AgentCredentials, Event, OrgId, Organization, User};

/// Everything `muster bootstrap` creates, written together.
#[derive(Debug, Clone, PartialEq)]
pub struct NewOrganization {
    /// The organization.
    pub organization: Organization,
    /// Its first admin user.
    pub admin: User,
    /// Its HR agent, with the sealed secret.
    pub hr_agent: AgentCredentials,
    /// The audit events of the above.
    pub events: Vec<Event>,
}

/// Stored organizations.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait OrganizationRepository: Send + Sync {
    /// Stores a new organization with its admin, HR agent and events in one transaction.
    /// `is_default` is stored as given (the bootstrap use case sets it for the first
    /// organization); a second default, or a taken agent handle, answers
    /// [`RepositoryError::Conflict`] and stores nothing.
    async fn create(&self, new: &NewOrganization) -> Result<(), RepositoryError>;

    /// The organization with `id`, if any.
    async fn get(&self, id: OrgId) -> Result<Option<Organization>, RepositoryError>;

    /// Whether any organization exists yet.
    async fn any_exists(&self) -> Result<bool, RepositoryError>;
}
