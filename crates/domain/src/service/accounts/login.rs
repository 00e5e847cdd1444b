//! `POST /auth/login`: e-mail and password, the second factor, throttling (D-14, D-15),
//! and the single-password login of auth mode `local` (D-20).

use super::{AccountService, stored_user};
use crate::ValidationError;
use crate::model::{
    AuditEvent, Email, LoginFamilyId, LoginOutcome, OrgId, User, UserId, UserLogin, UserLoginFailed,
};
use crate::ports::{Lock, Transaction, transact};
use crate::service::{ServiceError, Unauthorized};

/// A login attempt as typed by the user.
#[derive(Clone, PartialEq, Eq)]
pub struct LoginRequest {
    /// The organization; `None` for the deployment's default one.
    pub org_id: Option<OrgId>,
    /// The e-mail, as typed.
    pub email: String,
    /// The password, as typed.
    pub password: String,
    /// A TOTP code or a recovery code, when the account has a second factor.
    pub second_factor: Option<String>,
}

impl std::fmt::Debug for LoginRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoginRequest")
            .field("org_id", &self.org_id)
            .field("email", &self.email)
            .finish_non_exhaustive()
    }
}

/// How a user signed in, as recorded in `user.login`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LoginMethod {
    /// E-mail and password.
    Password,
    /// The deployment's single password (auth mode `local`).
    Local,
    /// The identity provider's redirect flow.
    OAuth,
}

impl LoginMethod {
    const fn as_str(self) -> &'static str {
        match self {
            Self::Password => "password",
            Self::Local => "local",
            Self::OAuth => "oauth",
        }
    }
}

impl AccountService {
    /// Signs a user in (decisions D-13 to D-15). An unknown organization or e-mail and a
    /// wrong password are the same 401 after the same password work; each failure on a
    /// known account counts toward its lock, which answers
    /// [`ServiceError::Throttled`] until it runs out. With a second factor on and no
    /// code given, answers [`LoginOutcome::TwoFactorRequired`].
    pub async fn login(&self, req: LoginRequest) -> Result<LoginOutcome, ServiceError> {
        let org = self.login_org(req.org_id).await?;
        let user = match (org, Email::new(&req.email)) {
            (Some(org), Ok(email)) => self.ports.users.user_by_email(org, &email).await?,
            _ => None,
        };
        if let Some(retry_after_secs) = user
            .as_ref()
            .and_then(|u| u.throttle.retry_after(self.now()))
        {
            return Err(ServiceError::Throttled { retry_after_secs });
        }
        let matches = self
            .ports
            .hasher
            .verify(
                &req.password,
                user.as_ref().map(|u| u.password_hash.clone()),
            )
            .await
            .map_err(ServiceError::Internal)?;
        let Some(user) = user else {
            return Err(Unauthorized::InvalidCredentials.into());
        };
        if !matches {
            self.record_failure(user.org_id, user.id, "invalid_credentials")
                .await?;
            return Err(Unauthorized::InvalidCredentials.into());
        }
        if user.totp.enabled && req.second_factor.is_none() {
            return Ok(LoginOutcome::TwoFactorRequired);
        }
        self.complete_login(
            user.org_id,
            user.id,
            req.second_factor,
            LoginMethod::Password,
        )
        .await
    }

    /// The single-password login of auth mode `local` (decision D-20): `phc` is the
    /// configured password's hash; success signs in the synthetic owner `owner`.
    pub async fn login_local(
        &self,
        owner: &User,
        phc: &str,
        password: &str,
    ) -> Result<LoginOutcome, ServiceError> {
        if let Some(retry_after_secs) = self
            .ports
            .users
            .user(owner.org_id, owner.id)
            .await?
            .and_then(|u| u.throttle.retry_after(self.now()))
        {
            return Err(ServiceError::Throttled { retry_after_secs });
        }
        let matches = self
            .ports
            .hasher
            .verify(password, Some(phc.to_owned()))
            .await
            .map_err(ServiceError::Internal)?;
        if !matches {
            self.record_failure(owner.org_id, owner.id, "invalid_credentials")
                .await?;
            return Err(Unauthorized::InvalidCredentials.into());
        }
        self.complete_login(owner.org_id, owner.id, None, LoginMethod::Local)
            .await
    }

    /// The organization a login is for: the one named, else the default one, else 400.
    async fn login_org(&self, named: Option<OrgId>) -> Result<Option<OrgId>, ServiceError> {
        if let Some(org) = named {
            // An unknown organization is answered like a wrong password.
            return Ok(self.ports.orgs.get(org).await?.map(|o| o.id));
        }
        match self.default_org().await? {
            Some(org) => Ok(Some(org)),
            None => Err(ValidationError::new(
                "orgId is required: this deployment has no default organization",
            )
            .into()),
        }
    }

    /// Counts a failed login of `user` (and locks it on the tenth), with a
    /// `user.login_failed` event. Committed even though the login is refused.
    pub(super) async fn record_failure(
        &self,
        org: OrgId,
        user: UserId,
        reason: &'static str,
    ) -> Result<(), ServiceError> {
        let service = self.clone();
        transact(self.ports.uow.as_ref(), move |tx| {
            Box::pin(async move {
                let now = service.now();
                let Some(mut stored) = tx.user(org, user, Lock::Update).await? else {
                    return Ok(());
                };
                service.count_failure(tx, &mut stored, reason, now).await
            })
        })
        .await
    }

    /// Inside a transaction on the locked row: one more failed login of `stored` (the
    /// tenth locks it), with its `user.login_failed` event.
    async fn count_failure(
        &self,
        tx: &mut dyn Transaction,
        stored: &mut User,
        reason: &str,
        now: time::OffsetDateTime,
    ) -> Result<(), ServiceError> {
        stored.throttle = stored.throttle.after_failure(now);
        tx.update_user(stored, now).await?;
        let failed = AuditEvent::UserLoginFailed(UserLoginFailed {
            reason: reason.to_owned(),
        });
        tx.append_events(&[self.event(stored, None, now, &failed)])
            .await?;
        Ok(())
    }

    /// Checks the second factor (when on), clears the throttle, records the login and
    /// issues a new login's tokens, all in one transaction on the locked user row. A
    /// wrong code counts as a failed login.
    pub(super) async fn complete_login(
        &self,
        org: OrgId,
        user: UserId,
        second_factor: Option<String>,
        method: LoginMethod,
    ) -> Result<LoginOutcome, ServiceError> {
        let service = self.clone();
        transact(self.ports.uow.as_ref(), move |tx| {
            Box::pin(async move {
                let now = service.now();
                let mut stored = stored_user(tx, org, user, Lock::Update).await?;
                if let Some(retry_after_secs) = stored.throttle.retry_after(now) {
                    return Ok(Err(ServiceError::Throttled { retry_after_secs }));
                }
                let checked_factor = method == LoginMethod::Password && stored.totp.enabled;
                if checked_factor {
                    let code = second_factor.unwrap_or_default();
                    match service.check_second_factor(tx, &stored, &code, now).await? {
                        Ok(step) => {
                            if let Some(step) = step {
                                stored.totp.last_step = Some(step);
                            }
                        }
                        Err(refused) => {
                            service
                                .count_failure(tx, &mut stored, "invalid_totp", now)
                                .await?;
                            return Ok(Err(refused.into()));
                        }
                    }
                }
                if method == LoginMethod::OAuth && stored.totp.enabled {
                    // The provider vouches for the e-mail, not for Muster's second
                    // factor: a user who turned it on signs in with it.
                    return Ok(Err(Unauthorized::InvalidTwoFactorCode.into()));
                }
                stored.throttle = stored.throttle.after_success();
                stored.last_login_at = Some(now);
                if method == LoginMethod::OAuth {
                    // The provider verified this address.
                    stored.email_verified = true;
                }
                tx.update_user(&stored, now).await?;
                let family = LoginFamilyId::from_uuid(service.ports.ids.new_id());
                let tokens = service.issue_tokens(tx, &stored, family, now).await?;
                let login = AuditEvent::UserLogin(UserLogin {
                    method: method.as_str().to_owned(),
                    two_factor: checked_factor,
                });
                let actor = Some(stored.id.as_uuid());
                tx.append_events(&[service.event(&stored, actor, now, &login)])
                    .await?;
                Ok(Ok(LoginOutcome::SignedIn {
                    tokens,
                    user: Box::new(stored),
                }))
            })
        })
        .await?
    }
}
