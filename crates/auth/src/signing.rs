//! Agent request signing (interface "Authentication 1", decision D-10).
//!
//! The recipe itself (canonical message, HMAC-SHA256, constant-time verification) lives
//! in the small `muster-signing` crate, which the client signs with too; it is
//! re-exported here unchanged. This module adds what only the server needs: the
//! adapter of the domain's [`MessageSigner`] port and the body [`fingerprint`].

use muster_domain::ports::MessageSigner;
pub use muster_signing::{RequestSignature, canonical_message, sign, verify};
pub(crate) use muster_signing::{sign_with_key, verify_with_key};

/// The HMAC-SHA256 adapter of the domain's [`MessageSigner`] port.
#[derive(Debug, Clone, Copy, Default)]
pub struct HmacSha256;

impl MessageSigner for HmacSha256 {
    fn sign_hex(&self, key: &[u8], message: &[u8]) -> String {
        sign_with_key(key, message)
    }
}

#[cfg(test)]
mod tests;

/// The SHA-256 digest of `data`: how a request body is recognized again (an
/// `Idempotency-Key` retry must carry the same body).
///
/// ```
/// use muster_auth::signing::fingerprint;
/// assert_eq!(fingerprint(b"abc")[..4], [0xba, 0x78, 0x16, 0xbf]);
/// assert_ne!(fingerprint(b"abc"), fingerprint(b"abd"));
/// ```
pub fn fingerprint(data: &[u8]) -> [u8; 32] {
    crate::keys::sha256(data)
}
