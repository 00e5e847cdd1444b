//! The organizations' writes: organizations, their users, their guard settings and their
//! treasury's creation, as the bootstrap and the account services make them.

use async_trait::async_trait;
use muster_domain::model::{Email, OrgId, Organization, User, UserId};
use muster_domain::ports::{Lock, OrganizationsTx, RepositoryError, UniqueKey};
use time::OffsetDateTime;

use super::{MemoryTransaction, duplicate, primary_key};

#[async_trait]
impl OrganizationsTx for MemoryTransaction {
    async fn any_organization(&mut self) -> Result<bool, RepositoryError> {
        Ok(!self.state.organizations.is_empty())
    }

    async fn insert_organization(&mut self, org: &Organization) -> Result<(), RepositoryError> {
        if self.state.organizations.contains_key(&org.id.as_uuid()) {
            return Err(primary_key("organizations"));
        }
        if org.is_default && self.state.organizations.values().any(|o| o.is_default) {
            return duplicate(UniqueKey::DefaultOrganization);
        }
        self.state.organizations.put(org.id.as_uuid(), org.clone());
        Ok(())
    }

    async fn insert_user(&mut self, user: &User) -> Result<(), RepositoryError> {
        if self.state.users.contains_key(&user.id.as_uuid()) {
            return Err(primary_key("users"));
        }
        let taken = self
            .state
            .users
            .values()
            .any(|u| u.org_id == user.org_id && u.email == user.email);
        if taken {
            return duplicate(UniqueKey::UserEmail);
        }
        self.state.users.put(user.id.as_uuid(), user.clone());
        Ok(())
    }

    async fn default_organization(&mut self) -> Result<Option<Organization>, RepositoryError> {
        Ok(self
            .state
            .organizations
            .values()
            .find(|o| o.is_default)
            .cloned())
    }

    async fn user(
        &mut self,
        org: OrgId,
        id: UserId,
        _lock: Lock,
    ) -> Result<Option<User>, RepositoryError> {
        Ok(self.state.users.in_org(&id.as_uuid(), org).cloned())
    }

    async fn user_by_email(
        &mut self,
        org: OrgId,
        email: &Email,
        _lock: Lock,
    ) -> Result<Option<User>, RepositoryError> {
        Ok(self
            .state
            .users
            .values()
            .find(|u| u.org_id == org && u.email == *email)
            .cloned())
    }

    async fn update_user(
        &mut self,
        user: &User,
        _at: OffsetDateTime,
    ) -> Result<bool, RepositoryError> {
        if self
            .state
            .users
            .in_org(&user.id.as_uuid(), user.org_id)
            .is_none()
        {
            return Ok(false);
        }
        let taken = self
            .state
            .users
            .values()
            .any(|u| u.org_id == user.org_id && u.id != user.id && u.email == user.email);
        if taken {
            duplicate(UniqueKey::UserEmail)?;
        }
        if let Some(stored) = self.state.users.row_mut(&user.id.as_uuid()) {
            let created_at = stored.created_at;
            *stored = User {
                created_at,
                ..user.clone()
            };
        }
        Ok(true)
    }
}
