//! Turning the second factor on and off (decision D-15): setup with the password stores
//! a pending secret and fresh recovery codes; verifying a first code turns it on;
//! disabling needs the password and a code.

use super::{AccountService, stored_user};
use crate::model::{Actor, AuditEvent, BearerSecret, TokenHash, TotpSettings, UserSecurityChanged};
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
    /// recovery codes. Refused while the second factor is on.
    pub async fn totp_setup(
        &self,
        actor: &Actor,
        password: &str,
    ) -> Result<TotpSetup, ServiceError> {
        let user = self.me(actor).await?;
        self.check_password(&user, password).await?;
        if user.totp.enabled {
            return Err(Conflict::TwoFactorEnabled.into());
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

    /// Turns the second factor on with a first valid code of the pending secret.
    pub async fn totp_verify(&self, actor: &Actor, code: &str) -> Result<(), ServiceError> {
        let id = crate::policy::signed_in_user(actor)?;
        let org = actor.org_id;
        let code = code.trim().to_owned();
        let service = self.clone();
        transact(self.ports.uow.as_ref(), move |tx| {
            Box::pin(async move {
                let now = service.now();
                let mut user = stored_user(tx, org, id, Lock::Update).await?;
                let Some(pending) = user.totp.pending_secret.clone() else {
                    return Err(if user.totp.enabled {
                        Conflict::TwoFactorEnabled.into()
                    } else {
                        Conflict::TwoFactorNotStarted.into()
                    });
                };
                let step = service
                    .ports
                    .totp
                    .check(id, &pending, &code, now)
                    .map_err(ServiceError::Internal)?
                    .ok_or(Unauthorized::InvalidTwoFactorCode)?;
                user.totp = TotpSettings {
                    enabled: true,
                    secret: Some(pending),
                    pending_secret: None,
                    last_step: Some(step),
                };
                tx.update_user(&user, now).await?;
                let enabled = AuditEvent::UserTotpEnabled(UserSecurityChanged {});
                tx.append_events(&[service.event(&user, Some(id.as_uuid()), now, &enabled)])
                    .await?;
                Ok(())
            })
        })
        .await
    }

    /// Turns the second factor off, given the password and a current code (or a
    /// recovery code); the recovery codes go with it.
    pub async fn totp_disable(
        &self,
        actor: &Actor,
        password: &str,
        code: &str,
    ) -> Result<(), ServiceError> {
        let user = self.me(actor).await?;
        self.check_password(&user, password).await?;
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
                service.check_second_factor(tx, &user, &code, now).await??;
                user.totp = TotpSettings::default();
                tx.update_user(&user, now).await?;
                tx.replace_recovery_codes(id, &[]).await?;
                let disabled = AuditEvent::UserTotpDisabled(UserSecurityChanged {});
                tx.append_events(&[service.event(&user, Some(id.as_uuid()), now, &disabled)])
                    .await?;
                Ok(())
            })
        })
        .await
    }
}
