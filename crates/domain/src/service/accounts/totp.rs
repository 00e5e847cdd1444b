//! Turning the second factor on and off (decision D-15): setup with the password stores
//! a pending secret and fresh recovery codes; verifying a first code turns it on;
//! disabling needs the password and a code. Each password or code check is an attempt
//! of the user's login-throttle streak (see [`super::throttle`]), and any wrong one is
//! [`Unauthorized::InvalidPasswordOrCode`].

use super::throttle::Subject;
use super::{AccountService, stored_user};
use crate::model::{
    Actor, AuditEvent, BearerSecret, ClientAddress, TokenHash, TotpSettings, User,
    UserSecurityChanged,
};
use crate::ports::{Lock, transact};
use crate::service::{Conflict, ServiceError, Unauthorized};

/// What `/auth/totp/setup` hands the user, once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TotpSetup {
    /// A `data:image/png;base64,` QR code of the `otpauth://` URI.
    pub qr_code: String,
    /// Ten single-use recovery codes.
    pub recovery_codes: Vec<BearerSecret>,
    /// The secret in base32, for typing into an app that cannot scan the code (the
    /// dashboard shows it; the API's answer keeps to the QR code).
    pub manual_key: BearerSecret,
}

impl AccountService {
    /// Starts a setup: checks the password, stores a new pending secret and replaces the
    /// recovery codes. Refused while the second factor is on. The check is an attempt
    /// of the user's throttle streak from `from`.
    pub async fn totp_setup(
        &self,
        actor: &Actor,
        from: ClientAddress,
        password: &str,
    ) -> Result<TotpSetup, ServiceError> {
        let user = self.me(actor).await?;
        if user.totp.enabled {
            return Err(Conflict::TwoFactorEnabled.into());
        }
        let streak = self.throttle_key(Subject::User(user.id), from);
        self.admit(streak).await?;
        if !self.password_matches(&user, password).await? {
            return Err(Unauthorized::InvalidPasswordOrCode.into());
        }
        let secret = self
            .ports
            .totp
            .new_secret(user.id, &user.email)
            .map_err(ServiceError::Internal)?;
        let codes = self
            .ports
            .totp
            .recovery_codes()
            .map_err(ServiceError::Internal)?;
        let hashes: Vec<TokenHash> = codes
            .iter()
            .map(|code| self.ports.tokens.hash(code.expose()))
            .collect();
        let (org, id, sealed) = (user.org_id, user.id, secret.sealed);
        let service = self.clone();
        transact(self.ports.uow.as_ref(), move |tx| {
            Box::pin(async move {
                let now = service.now();
                let mut user = stored_user(tx, org, id, Lock::Update).await?;
                if user.totp.enabled {
                    return Err(Conflict::TwoFactorEnabled.into());
                }
                user.totp.pending_secret = Some(sealed);
                tx.update_user(&user, now).await?;
                tx.replace_recovery_codes(id, &hashes).await?;
                tx.clear_login_throttle(&streak).await?;
                Ok(())
            })
        })
        .await?;
        Ok(TotpSetup {
            qr_code: secret.qr_code,
            recovery_codes: codes,
            manual_key: secret.manual_key,
        })
    }

    /// Turns the second factor on with a first valid code of the pending secret. The
    /// code is an attempt of the user's throttle streak from `from`.
    pub async fn totp_verify(
        &self,
        actor: &Actor,
        from: ClientAddress,
        code: &str,
    ) -> Result<(), ServiceError> {
        let user = self.me(actor).await?;
        pending_secret(&user)?;
        let (org, id) = (user.org_id, user.id);
        let streak = self.throttle_key(Subject::User(id), from);
        self.admit(streak).await?;
        let code = code.trim().to_owned();
        let service = self.clone();
        transact(self.ports.uow.as_ref(), move |tx| {
            Box::pin(async move {
                let now = service.now();
                let mut user = stored_user(tx, org, id, Lock::Update).await?;
                let pending = pending_secret(&user)?;
                let step = service
                    .ports
                    .totp
                    .check(id, &pending, &code, now)
                    .map_err(ServiceError::Internal)?
                    .ok_or(Unauthorized::InvalidPasswordOrCode)?;
                user.totp = TotpSettings {
                    enabled: true,
                    secret: Some(pending),
                    pending_secret: None,
                    last_step: Some(step),
                };
                tx.update_user(&user, now).await?;
                tx.clear_login_throttle(&streak).await?;
                let enabled = AuditEvent::UserTotpEnabled(UserSecurityChanged {});
                tx.append_events(&[service.event(&user, Some(id.as_uuid()), now, &enabled)])
                    .await?;
                Ok(())
            })
        })
        .await
    }

    /// Turns the second factor off, given the password and a current code (or a
    /// recovery code); the recovery codes go with it. Both are checked whichever is
    /// wrong, as one attempt of the user's throttle streak from `from`, and a wrong one
    /// is the same 401 whichever it was.
    pub async fn totp_disable(
        &self,
        actor: &Actor,
        from: ClientAddress,
        password: &str,
        code: &str,
    ) -> Result<(), ServiceError> {
        let user = self.me(actor).await?;
        if !user.totp.enabled {
            return Err(Conflict::TwoFactorNotEnabled.into());
        }
        let streak = self.throttle_key(Subject::User(user.id), from);
        self.admit(streak).await?;
        let password_ok = self.password_matches(&user, password).await?;
        let (org, id) = (user.org_id, user.id);
        let code = code.to_owned();
        let service = self.clone();
        transact(self.ports.uow.as_ref(), move |tx| {
            Box::pin(async move {
                let now = service.now();
                let mut user = stored_user(tx, org, id, Lock::Update).await?;
                if !user.totp.enabled {
                    return Err(Conflict::TwoFactorNotEnabled.into());
                }
                // Checked even after a wrong password, so the answer's timing does not
                // tell which was wrong; refusing rolls back a recovery code's use.
                let factor = service.check_second_factor(tx, &user, &code, now).await?;
                if !password_ok || factor.is_err() {
                    return Err(Unauthorized::InvalidPasswordOrCode.into());
                }
                user.totp = TotpSettings::default();
                tx.update_user(&user, now).await?;
                tx.replace_recovery_codes(id, &[]).await?;
                tx.clear_login_throttle(&streak).await?;
                let disabled = AuditEvent::UserTotpDisabled(UserSecurityChanged {});
                tx.append_events(&[service.event(&user, Some(id.as_uuid()), now, &disabled)])
                    .await?;
                Ok(())
            })
        })
        .await
    }
}

/// The pending secret of a setup to verify; a conflict when there is none.
fn pending_secret(user: &User) -> Result<Vec<u8>, ServiceError> {
    match &user.totp.pending_secret {
        Some(pending) => Ok(pending.clone()),
        None if user.totp.enabled => Err(Conflict::TwoFactorEnabled.into()),
        None => Err(Conflict::TwoFactorNotStarted.into()),
    }
}
