/// Computes message authentication codes: the lowercase hex HMAC-SHA256 of a message
/// under a key. One adapter (`muster-auth`) serves every signature the service makes or
/// checks: agent requests and outbound webhook deliveries.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
pub trait MessageSigner: Send + Sync {
    /// The lowercase hex HMAC-SHA256 of `message` keyed with `key`.
    fn sign_hex(&self, key: &[u8], message: &[u8]) -> String;
}
