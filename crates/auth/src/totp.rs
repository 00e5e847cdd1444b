//! Time-based one-time passwords and recovery codes (decision D-15).
//!
//! [`TotpService`] is the adapter of the domain's [`TotpAuthority`] port. Codes
//! follow RFC 6238 with HMAC-SHA-1, 6 digits and 30-second steps; one step either way
//! is tolerated. A user's secret is 20 random bytes, sealed at rest with the server
//! key's [`SecretCipher`] bound to the user's UUID (as agent secrets are bound to their
//! agent's UUID), so a sealed secret copied onto another user does not open.

mod qr;
mod recovery;

pub use recovery::{RECOVERY_CODE_COUNT, new_recovery_codes};

use muster_domain::model::{BearerSecret, Email, UserId};
use muster_domain::ports::{BoxError, NewTotpSecret, TotpAuthority};
use muster_domain::rules::constant_time::eq as constant_time_eq;
use time::OffsetDateTime;
use totp_lite::{Sha1, totp_custom};

use crate::keys::{CipherError, KeyError, SecretCipher, ServerKey, random_bytes};

/// The issuer label authenticator apps show unless configured otherwise.
pub const DEFAULT_ISSUER_LABEL: &str = "Muster";

/// Length of a time step, in seconds.
pub const STEP_SECS: u64 = 30;

/// Digits in a code.
pub const DIGITS: u32 = 6;

/// [`DIGITS`] as a length.
const CODE_LEN: usize = 6;

/// Random bytes in a TOTP secret (160 bits, as RFC 4226 recommends).
const SECRET_BYTES: usize = 20;

/// Why a TOTP operation failed. The messages contain no secret material.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TotpError {
    /// A fresh secret or recovery code could not be drawn.
    #[error("producing a TOTP secret failed")]
    Random(#[from] KeyError),
    /// The new secret could not be sealed.
    #[error("sealing the TOTP secret failed")]
    Seal(#[source] CipherError),
    /// The stored secret does not open for this user: another user's, altered, or sealed
    /// under another server key.
    #[error("the TOTP secret cannot be opened")]
    Open(#[source] CipherError),
    /// The `otpauth://` URI could not be drawn as a PNG QR code.
    #[error("rendering the TOTP QR code failed")]
    QrCode,
}

/// Issues TOTP secrets, checks codes against them and issues recovery codes: the adapter
/// of [`TotpAuthority`]. Its `Debug` output shows no key material.
#[derive(Debug, Clone)]
pub struct TotpService {
    cipher: SecretCipher,
    issuer: String,
}

impl TotpService {
    /// A service sealing with `cipher` whose secrets authenticator apps list
    /// under `issuer`.
    pub fn new(cipher: SecretCipher, issuer: &str) -> Self {
        Self {
            cipher,
            issuer: issuer.to_owned(),
        }
    }

    /// A service sealing with `key`'s [`SecretCipher`], listed under
    /// [`DEFAULT_ISSUER_LABEL`].
    pub fn from_server_key(key: &ServerKey) -> Self {
        Self::new(key.secret_cipher(), DEFAULT_ISSUER_LABEL)
    }

    /// The code `user`'s authenticator shows at `now`, for tests and tools that hold
    /// the sealed secret.
    pub fn current_code(
        &self,
        user: UserId,
        sealed: &[u8],
        now: OffsetDateTime,
    ) -> Result<String, TotpError> {
        let secret = self.open(user, sealed)?;
        Ok(code_for_secret(&secret, unix_time(now)))
    }

    /// The time step (Unix time / 30) at which `code` is valid for `user`, trying the
    /// step of `now` and one step either way, or `None`. A `code` that is not exactly
    /// six ASCII digits matches nothing. Codes are compared in constant time.
    pub fn check_code(
        &self,
        user: UserId,
        sealed: &[u8],
        code: &str,
        now: OffsetDateTime,
    ) -> Result<Option<i64>, TotpError> {
        if code.len() != CODE_LEN || !code.bytes().all(|b| b.is_ascii_digit()) {
            return Ok(None);
        }
        let secret = self.open(user, sealed)?;
        let step = unix_time(now) / STEP_SECS;
        let mut matched = None;
        // Every candidate is computed and compared, whichever matches.
        for candidate in [Some(step), step.checked_sub(1), step.checked_add(1)]
            .into_iter()
            .flatten()
        {
            let expected = code_for_secret(&secret, candidate.saturating_mul(STEP_SECS));
            if constant_time_eq(expected.as_bytes(), code.as_bytes()) && matched.is_none() {
                matched = Some(candidate);
            }
        }
        Ok(matched.and_then(|step| i64::try_from(step).ok()))
    }

    /// A fresh secret for `user`, sealed, with the QR code of its `otpauth://` URI.
    pub fn new_sealed_secret(
        &self,
        user: UserId,
        email: &Email,
    ) -> Result<NewTotpSecret, TotpError> {
        let secret: [u8; SECRET_BYTES] = random_bytes()?;
        let sealed = self
            .cipher
            .seal(&secret, user.as_uuid().as_bytes())
            .map_err(TotpError::Seal)?;
        let uri = qr::otpauth_uri(&self.issuer, email.as_str(), &secret);
        Ok(NewTotpSecret {
            sealed,
            qr_code: qr::png_data_url(&uri)?,
            manual_key: BearerSecret::new(data_encoding::BASE32_NOPAD.encode(&secret)),
        })
    }

    /// The secret bytes of `user`'s sealed secret.
    fn open(&self, user: UserId, sealed: &[u8]) -> Result<Vec<u8>, TotpError> {
        self.cipher
            .open(sealed, user.as_uuid().as_bytes())
            .map_err(TotpError::Open)
    }
}

impl TotpAuthority for TotpService {
    fn new_secret(&self, user: UserId, email: &Email) -> Result<NewTotpSecret, BoxError> {
        Ok(self.new_sealed_secret(user, email)?)
    }

    fn check(
        &self,
        user: UserId,
        sealed: &[u8],
        code: &str,
        now: OffsetDateTime,
    ) -> Result<Option<i64>, BoxError> {
        Ok(self.check_code(user, sealed, code, now)?)
    }

    fn recovery_codes(&self) -> Result<Vec<BearerSecret>, BoxError> {
        Ok(new_recovery_codes()?
            .into_iter()
            .map(BearerSecret::new)
            .collect())
    }
}

/// The 6-digit RFC 6238 code (HMAC-SHA-1, 30-second steps) of the raw `secret` at
/// `unix_time`.
///
/// ```
/// // RFC 6238 appendix B, last six digits of 94287082.
/// assert_eq!(muster_auth::totp::code_for_secret(b"12345678901234567890", 59), "287082");
/// ```
pub fn code_for_secret(secret: &[u8], unix_time: u64) -> String {
    totp_custom::<Sha1>(STEP_SECS, DIGITS, secret, unix_time)
}

/// `now` in whole seconds since the Unix epoch; times before it count as the epoch.
fn unix_time(now: OffsetDateTime) -> u64 {
    u64::try_from(now.unix_timestamp()).unwrap_or(0)
}

#[cfg(test)]
mod tests;
