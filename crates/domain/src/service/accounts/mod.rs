//! Human users' accounts: login with throttling and a second factor, token rotation,
//! logout, profile and password, user creation, TOTP setup (decisions D-13 to D-16, D-20).
//!
//! Every change runs as one transaction with its audit event. Where a refusal must
//! still be remembered (a password or code attempt counts toward the throttle; a reused
//! refresh token ends its login), the work commits and answers the refusal afterwards.

mod login;
mod oauth;
mod owner;
mod profile;
mod second_factor;
mod sessions;
mod throttle;
mod totp;

use std::sync::Arc;

use time::{Duration, OffsetDateTime};

pub use login::{LoginMethod, LoginRequest};
pub use oauth::{SIGN_IN_TIMEOUT, SignInFailure};
pub use owner::OWNER_EMAIL;
pub use profile::NewUser;
pub use second_factor::normalize_recovery_code;
pub use totp::TotpSetup;

use super::{Entity, NotFound, ServiceError};
use crate::model::{
    AccessGrant, AuditEvent, Event, EventId, LoginFamilyId, OrgId, RefreshToken, RefreshTokenId,
    TokenPair, User, UserId,
};
use crate::ports::{
    Clock, IdGenerator, Lock, OrganizationRepository, OrganizationsTx, PasswordHasher, SecretKind,
    SessionsTx, TokenMinter, TotpAuthority, UnitOfWork, UserRepository,
};

/// How long a refresh token is accepted (decision D-13).
pub const REFRESH_TOKEN_LIFETIME: Duration = Duration::days(14);

/// The user `id` of `org` inside a transaction, held with `lock`; not found is a 404.
async fn stored_user<T: OrganizationsTx + ?Sized>(
    tx: &mut T,
    org: OrgId,
    id: UserId,
    lock: Lock,
) -> Result<User, ServiceError> {
    tx.user(org, id, lock)
        .await?
        .ok_or_else(|| NotFound::new(Entity::User, id).into())
}

/// The ports the account use cases need.
#[derive(Clone)]
pub struct AccountPorts {
    /// Changes, one transaction each.
    pub uow: Arc<dyn UnitOfWork>,
    /// Reads of users.
    pub users: Arc<dyn UserRepository>,
    /// Reads of organizations (the default one).
    pub orgs: Arc<dyn OrganizationRepository>,
    /// Password hashing.
    pub hasher: Arc<dyn PasswordHasher>,
    /// Access tokens and opaque secrets.
    pub tokens: Arc<dyn TokenMinter>,
    /// One-time codes.
    pub totp: Arc<dyn TotpAuthority>,
    /// Now.
    pub clock: Arc<dyn Clock>,
    /// New ids.
    pub ids: Arc<dyn IdGenerator>,
}

impl std::fmt::Debug for AccountPorts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AccountPorts").finish_non_exhaustive()
    }
}

/// The account use cases.
#[derive(Clone)]
pub struct AccountService {
    ports: AccountPorts,
    /// `MUSTER_DEFAULT_ORG_ID`: overrides the first bootstrapped organization.
    default_org: Option<OrgId>,
}

impl std::fmt::Debug for AccountService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AccountService").finish_non_exhaustive()
    }
}

impl AccountService {
    /// Wires the use cases to their ports.
    pub fn new(ports: AccountPorts) -> Self {
        Self {
            ports,
            default_org: None,
        }
    }

    /// Logins without an `orgId` go to `org` instead of the default organization
    /// (decision D-14).
    #[must_use]
    pub fn with_default_org(mut self, org: Option<OrgId>) -> Self {
        self.default_org = org;
        self
    }

    /// The organization of logins that name none: the configured one, else the first
    /// bootstrapped one.
    async fn default_org(&self) -> Result<Option<OrgId>, ServiceError> {
        if let Some(org) = self.default_org {
            return Ok(Some(org));
        }
        Ok(self.ports.orgs.default_organization().await?.map(|o| o.id))
    }

    fn now(&self) -> OffsetDateTime {
        self.ports.clock.now()
    }

    /// The audit record of `what` about the user `user`.
    fn event(
        &self,
        user: &User,
        actor: Option<uuid::Uuid>,
        at: OffsetDateTime,
        what: &AuditEvent,
    ) -> Event {
        Event::record(
            EventId::from_uuid(self.ports.ids.new_id()),
            user.org_id,
            actor,
            user.id.as_uuid(),
            at,
            what,
        )
    }

    /// Issues an access token and a refresh token of `family` for `user`, storing the
    /// refresh token.
    async fn issue_tokens<T: SessionsTx + ?Sized>(
        &self,
        tx: &mut T,
        user: &User,
        family: LoginFamilyId,
        now: OffsetDateTime,
    ) -> Result<TokenPair, ServiceError> {
        let grant = AccessGrant {
            user_id: user.id,
            org_id: user.org_id,
            role: user.role,
        };
        let access = self
            .ports
            .tokens
            .access_token(&grant, now)
            .map_err(ServiceError::Internal)?;
        let refresh_token = self
            .ports
            .tokens
            .new_secret(SecretKind::RefreshToken)
            .map_err(ServiceError::Internal)?;
        tx.insert_refresh_token(&RefreshToken {
            id: RefreshTokenId::from_uuid(self.ports.ids.new_id()),
            org_id: user.org_id,
            user_id: user.id,
            family_id: family,
            token_hash: self.ports.tokens.hash(refresh_token.expose()),
            created_at: now,
            expires_at: now + REFRESH_TOKEN_LIFETIME,
            replaced_at: None,
            revoked_at: None,
        })
        .await?;
        Ok(TokenPair {
            access,
            refresh_token,
        })
    }
}
