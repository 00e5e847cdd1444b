//! Agent request signing (interface "Authentication 1", decision D-10): the one recipe
//! the server verifies with (`muster-auth`) and the client signs with (`muster-client`).
//!
//! The signature is the hex HMAC-SHA256 of the canonical message, keyed with the UTF-8
//! bytes of the agent's secret string exactly as it was handed out (64 lowercase hex
//! characters; the key is those 64 ASCII bytes, not the 32 bytes they encode).
//!
//! This crate holds no credential store and no framework: only the bytes, so that a
//! client needs nothing heavier than `ring` to sign.

use ring::hmac;

/// Builds the canonical message: `METHOD`, `PATH` (the request target as sent, with its
/// `?query`), `TIMESTAMP` and `NONCE` (as in their headers) and the raw `BODY` bytes,
/// concatenated with no separator.
///
/// ```
/// use muster_signing::canonical_message;
/// let message = canonical_message("GET", "/tasks?limit=5", "1795000000", "n-1", b"");
/// assert_eq!(message, b"GET/tasks?limit=51795000000n-1");
/// ```
pub fn canonical_message(
    method: &str,
    path_and_query: &str,
    timestamp: &str,
    nonce: &str,
    body: &[u8],
) -> Vec<u8> {
    [
        method.as_bytes(),
        path_and_query.as_bytes(),
        timestamp.as_bytes(),
        nonce.as_bytes(),
        body,
    ]
    .concat()
}

/// Signs `message` with `secret`: the lowercase hex HMAC-SHA256 keyed with the UTF-8
/// bytes of `secret`.
pub fn sign(secret: &str, message: &[u8]) -> String {
    sign_with_key(secret.as_bytes(), message)
}

/// The three headers of an agent's request that change with every request:
/// `X-Timestamp`, `X-Nonce` and `X-Signature` (`X-Agent-ID` goes beside them).
///
/// ```
/// use muster_signing::RequestSignature;
/// let secret = "7f3a9c2e5b8d1f4a6c0e9b2d5f8a1c4e7b0d3f6a9c2e5b8d1f4a7c0e3b6d9f2a";
/// let signed = RequestSignature::now(secret, "GET", "/tasks?limit=5", b"");
/// assert_eq!(signed.signature.len(), 64);
/// assert_ne!(signed.nonce, RequestSignature::now(secret, "GET", "/tasks?limit=5", b"").nonce);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestSignature {
    /// `X-Timestamp`: Unix seconds.
    pub timestamp: String,
    /// `X-Nonce`: never used twice by one agent.
    pub nonce: String,
    /// `X-Signature`: [`sign`] of the [`canonical_message`].
    pub signature: String,
}

impl RequestSignature {
    /// Signs a request sent at `timestamp` with `nonce` (`target` is the path with its
    /// `?query`, as sent; `body` the raw bytes, as sent).
    pub fn at(
        secret: &str,
        method: &str,
        target: &str,
        timestamp: &str,
        nonce: &str,
        body: &[u8],
    ) -> Self {
        let message = canonical_message(method, target, timestamp, nonce, body);
        Self {
            timestamp: timestamp.to_owned(),
            nonce: nonce.to_owned(),
            signature: sign(secret, &message),
        }
    }

    /// Signs a request sent now, with a fresh nonce (a UUIDv7): the server refuses a
    /// nonce it has seen, so every request needs its own.
    pub fn now(secret: &str, method: &str, target: &str, body: &[u8]) -> Self {
        let timestamp = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |since| since.as_secs())
            .to_string();
        let nonce = uuid::Uuid::now_v7().to_string();
        Self::at(secret, method, target, &timestamp, &nonce, body)
    }
}

/// Checks `signature_hex` against the HMAC-SHA256 of `message` keyed with the UTF-8
/// bytes of `secret`, in constant time.
///
/// Hex digits are accepted in either case (`sign` always produces lowercase). Anything
/// that is not hex, or does not decode to exactly 32 bytes, is rejected.
pub fn verify(secret: &str, message: &[u8], signature_hex: &str) -> bool {
    verify_with_key(secret.as_bytes(), message, signature_hex)
}

/// [`sign`] with a raw key (the webhook and code-host signers key with stored bytes).
///
/// ```
/// use muster_signing::{sign, sign_with_key};
/// assert_eq!(sign_with_key(b"key", b"message"), sign("key", b"message"));
/// ```
pub fn sign_with_key(key: &[u8], message: &[u8]) -> String {
    let key = hmac::Key::new(hmac::HMAC_SHA256, key);
    hex::encode(hmac::sign(&key, message).as_ref())
}

/// [`verify`] with a raw key.
pub fn verify_with_key(key: &[u8], message: &[u8], signature_hex: &str) -> bool {
    let Ok(tag) = hex::decode(signature_hex) else {
        return false;
    };
    let key = hmac::Key::new(hmac::HMAC_SHA256, key);
    hmac::verify(&key, message, &tag).is_ok()
}

#[cfg(test)]
mod tests;
