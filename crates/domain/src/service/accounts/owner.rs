//! The synthetic owner of auth modes `none` and `local` (decision D-20): an `admin` user
//! of the default organization, created at start when missing.

use super::AccountService;
use crate::model::{
    AuditEvent, Email, OrgId, OrgName, Organization, User, UserCreated, UserId, UserRole,
};
use crate::ports::{Lock, transact};
use crate::service::{Entity, NotFound, ServiceError};

/// The owner's login e-mail.
pub const OWNER_EMAIL: &str = "owner@muster.local";

/// Not a PHC string: no password ever matches it, so the owner cannot log in with one
/// (only through auth mode `local`, which checks the configured password).
const NO_PASSWORD: &str = "!";

impl AccountService {
    /// The synthetic owner, created with the default organization ("Default") when
    /// either is missing. Idempotent; safe when several instances start together (the
    /// loser of a race finds the winner's rows on its retry).
    pub async fn ensure_owner(&self) -> Result<User, ServiceError> {
        match self.try_ensure_owner().await {
            Err(ServiceError::Conflict(_)) => self.try_ensure_owner().await,
            other => other,
        }
    }

    async fn try_ensure_owner(&self) -> Result<User, ServiceError> {
        // A configured default organization must exist; the owner lives there.
        let configured = match self.default_org {
            Some(id) => Some(
                self.ports
                    .orgs
                    .get(id)
                    .await?
                    .ok_or(NotFound::new(Entity::Organization, id))?
                    .id,
            ),
            None => None,
        };
        let service = self.clone();
        transact(self.ports.uow.as_ref(), move |tx| {
            Box::pin(async move {
                let now = service.now();
                let email = Email::new(OWNER_EMAIL)?;
                let org = if let Some(org) = configured {
                    org
                } else if let Some(org) = tx.default_organization().await? {
                    org.id
                } else {
                    let org = Organization {
                        id: OrgId::from_uuid(service.ports.ids.new_id()),
                        name: OrgName::new("Default")?,
                        is_default: true,
                        created_at: now,
                    };
                    tx.insert_organization(&org).await?;
                    org.id
                };
                if let Some(owner) = tx.user_by_email(org, &email, Lock::Share).await? {
                    return Ok(owner);
                }
                let owner = User::new(
                    UserId::from_uuid(service.ports.ids.new_id()),
                    org,
                    email,
                    "Owner".to_owned(),
                    UserRole::Admin,
                    NO_PASSWORD.to_owned(),
                    now,
                );
                tx.insert_user(&owner).await?;
                let created = AuditEvent::UserCreated(UserCreated {
                    email: owner.email.as_str().to_owned(),
                    role: owner.role,
                });
                tx.append_events(&[service.event(&owner, None, now, &created)])
                    .await?;
                Ok(owner)
            })
        })
        .await
    }
}
