//! `POST /auth/login`: e-mail and password, the second factor, throttling (D-14, D-15),
//! and the single-password login of auth mode `local` (D-20).

use super::throttle::Subject;
use super::{AccountService, stored_user};
use crate::ValidationError;
use crate::model::{
    AuditEvent, ClientAddress, Email, LoginFamilyId, LoginOutcome, OrgId, ThrottleKey, User,
    UserId, UserLogin, UserLoginFailed,
};
use crate::ports::{Lock, transact};
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
    /// Where the attempt came from: the throttle counts failures per account and address.
    pub from: ClientAddress,
}

impl std::fmt::Debug for LoginRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoginRequest")
            .field("org_id", &self.org_id)
            .field("email", &self.email)
            .field("from", &self.from)
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
    /// wrong password are the same 401 after the same password work, and count toward a
    /// throttle streak alike (see the `throttle` module): a locked streak answers
    /// [`ServiceError::Throttled`] before any check. With a second factor on and no
    /// code given, answers [`LoginOutcome::TwoFactorRequired`].
    pub async fn login(&self, req: LoginRequest) -> Result<LoginOutcome, ServiceError> {
        let org = self.login_org(req.org_id).await?;
        let email = Email::new(&req.email);
        let user = match (org, &email) {
            (Some(org), Ok(email)) => self.ports.users.user_by_email(org, email).await?,
            _ => None,
        };
        let typed = match &email {
            Ok(email) => email.as_str().to_owned(),
            Err(_) => req.email.trim().to_lowercase(),
        };
        let subject = match &user {
            Some(user) => Subject::User(user.id),
            None => Subject::Typed {
                org: org.or(req.org_id),
                email: &typed,
            },
        };
        let streak = self.throttle_key(subject, req.from);
        self.admit(streak).await?;
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
            self.record_failure(&user, "invalid_credentials").await?;
            return Err(Unauthorized::InvalidCredentials.into());
        }
        if user.totp.enabled && req.second_factor.is_none() {
            // The attempt stays counted: only a complete sign-in ends the streak.
            return Ok(LoginOutcome::TwoFactorRequired);
        }
        self.complete_login(
            user.org_id,
            user.id,
            req.second_factor,
            LoginMethod::Password,
            Some(streak),
        )
        .await
    }

    /// The single-password login of auth mode `local` (decision D-20): `phc` is the
    /// configured password's hash; success signs in the synthetic owner `owner`. Throttled
    /// like any login, as the owner's streak from `from`.
    pub async fn login_local(
        &self,
        owner: &User,
        phc: &str,
        password: &str,
        from: ClientAddress,
    ) -> Result<LoginOutcome, ServiceError> {
        let streak = self.throttle_key(Subject::User(owner.id), from);
        self.admit(streak).await?;
        let matches = self
            .ports
            .hasher
            .verify(password, Some(phc.to_owned()))
            .await
            .map_err(ServiceError::Internal)?;
        if !matches {
            self.record_failure(owner, "invalid_credentials").await?;
            return Err(Unauthorized::InvalidCredentials.into());
        }
        self.complete_login(
            owner.org_id,
            owner.id,
            None,
            LoginMethod::Local,
            Some(streak),
        )
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

    /// Records a failed login of `user` (a `user.login_failed` event; the throttle
    /// counted the attempt when it was admitted).
    async fn record_failure(&self, user: &User, reason: &'static str) -> Result<(), ServiceError> {
        let failed = AuditEvent::UserLoginFailed(UserLoginFailed {
            reason: reason.to_owned(),
        });
        let event = self.event(user, None, self.now(), &failed);
        transact(self.ports.uow.as_ref(), move |tx| {
            Box::pin(async move {
                tx.append_events(&[event]).await?;
                Ok(())
            })
        })
        .await
    }

    /// Checks the second factor (when on), ends the throttle streak `streak` (the
    /// attempt's, when it had one), records the login and issues a new login's tokens,
    /// all in one transaction on the locked user row. A wrong code is a failed login
    /// (its attempt stays counted).
    pub(super) async fn complete_login(
        &self,
        org: OrgId,
        user: UserId,
        second_factor: Option<String>,
        method: LoginMethod,
        streak: Option<ThrottleKey>,
    ) -> Result<LoginOutcome, ServiceError> {
        let service = self.clone();
        transact(self.ports.uow.as_ref(), move |tx| {
            Box::pin(async move {
                let now = service.now();
                let mut stored = stored_user(tx, org, user, Lock::Update).await?;
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
                            let failed = AuditEvent::UserLoginFailed(UserLoginFailed {
                                reason: "invalid_totp".to_owned(),
                            });
                            tx.append_events(&[service.event(&stored, None, now, &failed)])
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
                if let Some(streak) = &streak {
                    tx.clear_login_throttle(streak).await?;
                }
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
