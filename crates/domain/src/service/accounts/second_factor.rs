//! Checking a second factor: a TOTP code whose time step was not accepted before, or an
//! unused recovery code (decision D-15).

use time::OffsetDateTime;

use super::AccountService;
use crate::model::User;
use crate::ports::SessionsTx;
use crate::service::{ServiceError, Unauthorized};

/// The canonical form `XXXX-XXXX` of a recovery code as typed: trimmed, upper-cased, with
/// or without its dash. `None` when it cannot be one.
///
/// ```
/// use muster_domain::service::accounts::normalize_recovery_code;
/// assert_eq!(normalize_recovery_code(" abcd-efgh ").as_deref(), Some("ABCD-EFGH"));
/// assert_eq!(normalize_recovery_code("ABCDEFGH").as_deref(), Some("ABCD-EFGH"));
/// assert_eq!(normalize_recovery_code("123456"), None);
/// ```
pub fn normalize_recovery_code(input: &str) -> Option<String> {
    let compact: String = input
        .trim()
        .chars()
        .filter(|c| *c != '-')
        .map(|c| c.to_ascii_uppercase())
        .collect();
    if compact.len() != 8 || !compact.chars().all(|c| c.is_ascii_alphanumeric()) {
        return None;
    }
    Some(format!("{}-{}", &compact[..4], &compact[4..]))
}

fn is_totp_code(code: &str) -> bool {
    code.len() == 6 && code.bytes().all(|b| b.is_ascii_digit())
}

impl AccountService {
    /// Checks `code` against `user`'s second factor at `now`, inside the transaction that
    /// will record its use. `Ok(Some(step))` for a TOTP code (the caller stores the step
    /// so it is not accepted again), `Ok(None)` for a recovery code (used up here), and
    /// the refusal otherwise.
    pub(super) async fn check_second_factor<T: SessionsTx + ?Sized>(
        &self,
        tx: &mut T,
        user: &User,
        code: &str,
        now: OffsetDateTime,
    ) -> Result<Result<Option<i64>, Unauthorized>, ServiceError> {
        let code = code.trim();
        if is_totp_code(code) {
            let Some(secret) = user.totp.secret.as_deref() else {
                return Ok(Err(Unauthorized::InvalidTwoFactorCode));
            };
            let step = self
                .ports
                .totp
                .check(user.id, secret, code, now)
                .map_err(ServiceError::Internal)?;
            return Ok(match step {
                Some(step) if user.totp.last_step.is_none_or(|last| step > last) => Ok(Some(step)),
                _ => Err(Unauthorized::InvalidTwoFactorCode),
            });
        }
        if let Some(recovery) = normalize_recovery_code(code) {
            let hash = self.ports.tokens.hash(&recovery);
            if tx.use_recovery_code(user.id, &hash, now).await? {
                return Ok(Ok(None));
            }
        }
        Ok(Err(Unauthorized::InvalidTwoFactorCode))
    }
}
