//! The signed-in user's own account (`/auth/me`, `/auth/profile`, `/auth/password`) and
//! user creation by an admin (`/auth/register`).

use super::throttle::Subject;
use super::{AccountService, stored_user};
use crate::ValidationError;
use crate::model::{
    Actor, AuditEvent, ClientAddress, Email, OrgId, Password, User, UserCreated, UserId, UserRole,
    UserSecurityChanged,
};
use crate::policy::{self, Forbidden};
use crate::ports::{Lock, RepositoryError, UniqueKey, transact};
use crate::service::{Entity, NotFound, ServiceError, Unauthorized};
use crate::validation::{displayable, max_chars, no_nul};

/// A user to create, as typed by the admin.
#[derive(Clone, PartialEq, Eq)]
pub struct NewUser {
    /// Login e-mail.
    pub email: String,
    /// Initial password.
    pub password: String,
    /// Display name.
    pub name: String,
    /// The organization; must be the admin's own.
    pub org_id: OrgId,
    /// Role; `operator` when `None` (decision D-14).
    pub role: Option<UserRole>,
}

impl std::fmt::Debug for NewUser {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NewUser")
            .field("email", &self.email)
            .field("name", &self.name)
            .field("org_id", &self.org_id)
            .field("role", &self.role)
            .finish_non_exhaustive()
    }
}

/// A display name: trimmed, 1..=255 characters, holding a visible character and no
/// bidirectional control.
fn display_name(value: &str) -> Result<String, ValidationError> {
    let trimmed = value.trim();
    if trimmed.is_empty() {
        return Err(ValidationError::new("name must not be empty"));
    }
    max_chars("name", trimmed, 255)?;
    no_nul("name", trimmed)?;
    displayable("name", trimmed)?;
    Ok(trimmed.to_owned())
}

impl AccountService {
    /// The signed-in user.
    pub async fn me(&self, actor: &Actor) -> Result<User, ServiceError> {
        let id = policy::signed_in_user(actor)?;
        self.ports
            .users
            .user(actor.org_id, id)
            .await?
            .ok_or_else(|| NotFound::new(Entity::User, id).into())
    }

    /// Changes the user's own name and e-mail. A taken e-mail is a 400 (decision D-14).
    pub async fn update_profile(
        &self,
        actor: &Actor,
        name: Option<String>,
        email: Option<String>,
    ) -> Result<User, ServiceError> {
        let id = policy::signed_in_user(actor)?;
        let name = name.as_deref().map(display_name).transpose()?;
        let email = email.as_deref().map(Email::new).transpose()?;
        let org = actor.org_id;
        let service = self.clone();
        transact(self.ports.uow.as_ref(), move |tx| {
            Box::pin(async move {
                let now = service.now();
                let mut user = stored_user(tx, org, id, Lock::Update).await?;
                if let Some(name) = name {
                    user.name = name;
                }
                if let Some(email) = email.filter(|e| *e != user.email) {
                    // A new address is not verified until a provider vouches for it.
                    user.email = email;
                    user.email_verified = false;
                }
                tx.update_user(&user, now).await.map_err(|err| match err {
                    RepositoryError::Duplicate(UniqueKey::UserEmail) => ServiceError::from(
                        ValidationError::new("email is already in use in this organization"),
                    ),
                    other => other.into(),
                })?;
                Ok(user)
            })
        })
        .await
    }

    /// Changes the user's password after checking the current one, and ends every login
    /// (all refresh tokens are revoked). The check is an attempt of the user's throttle
    /// streak from `from`, like a login's.
    pub async fn change_password(
        &self,
        actor: &Actor,
        from: ClientAddress,
        current: &str,
        new: &str,
    ) -> Result<(), ServiceError> {
        let user = self.me(actor).await?;
        let new = Password::new(new)
            .map_err(|_| ValidationError::new("newPassword must be 8 to 128 characters"))?;
        let streak = self.throttle_key(Subject::User(user.id), from);
        self.admit(streak).await?;
        if !self.password_matches(&user, current).await? {
            return Err(Unauthorized::InvalidPasswordOrCode.into());
        }
        let hash = self
            .ports
            .hasher
            .hash(new.expose())
            .await
            .map_err(ServiceError::Internal)?;
        let (org, id) = (user.org_id, user.id);
        let service = self.clone();
        transact(self.ports.uow.as_ref(), move |tx| {
            Box::pin(async move {
                let now = service.now();
                let mut user = stored_user(tx, org, id, Lock::Update).await?;
                user.password_hash = hash;
                tx.update_user(&user, now).await?;
                tx.clear_login_throttle(&streak).await?;
                tx.revoke_user_refresh_tokens(id, now).await?;
                let changed = AuditEvent::UserPasswordChanged(UserSecurityChanged {});
                tx.append_events(&[service.event(&user, Some(id.as_uuid()), now, &changed)])
                    .await?;
                Ok(())
            })
        })
        .await
    }

    /// Creates a user in the admin's own organization (decision D-14). A caller that is
    /// not an admin user is [`Unauthorized::AdminRequired`], as the contract answers 401.
    pub async fn register(&self, actor: &Actor, new: NewUser) -> Result<User, ServiceError> {
        if !policy::is_user_admin(actor) {
            return Err(Unauthorized::AdminRequired.into());
        }
        if new.org_id != actor.org_id {
            return Err(Forbidden::OtherOrganization.into());
        }
        let email = Email::new(&new.email)?;
        let password = Password::new(&new.password)?;
        let name = display_name(&new.name)?;
        let hash = self
            .ports
            .hasher
            .hash(password.expose())
            .await
            .map_err(ServiceError::Internal)?;
        let now = self.now();
        let user = User::new(
            UserId::from_uuid(self.ports.ids.new_id()),
            actor.org_id,
            email,
            name,
            new.role.unwrap_or(UserRole::Operator),
            hash,
            now,
        );
        let created = AuditEvent::UserCreated(UserCreated {
            email: user.email.as_str().to_owned(),
            role: user.role,
        });
        let event = self.event(&user, actor.actor_id(), now, &created);
        transact(self.ports.uow.as_ref(), move |tx| {
            Box::pin(async move {
                tx.insert_user(&user).await?;
                tx.append_events(&[event]).await?;
                Ok(user)
            })
        })
        .await
    }

    /// Whether `password` is the user's (the caller admitted the attempt first).
    pub(super) async fn password_matches(
        &self,
        user: &User,
        password: &str,
    ) -> Result<bool, ServiceError> {
        self.ports
            .hasher
            .verify(password, Some(user.password_hash.clone()))
            .await
            .map_err(ServiceError::Internal)
    }
}
