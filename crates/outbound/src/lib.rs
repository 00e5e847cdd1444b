//! Muster's outbound adapters: what the service asks of other servers.
//!
//! - [`delivery_signature`]: the signature every webhook delivery carries, so that
//!   receivers can be written against it.
//! - [`hooks`]: the domain's `HookCaller` port: one signed POST per hook call.
//! - [`documents`]: one guarded GET of a JSON document (a remote agent's card).
//! - [`ssrf`]: which addresses a hook may not reach (decision D-81), the URL check at
//!   registration (the domain's `TargetGuard` port) and at every call.
//! - [`oauth`]: the domain's `IdentityProvider` port over OAuth 2.0 + PKCE (decision
//!   D-16), Google by default.
//! - `tracing_calls`: the span of each call and the W3C trace headers it carries.
//! - [`http_client`]: the HTTP/1.1 client (rustls with the ring provider and Mozilla's
//!   roots, or plain `http://`) they share, with a deadline and a body cap.

pub mod documents;
pub mod hooks;
pub mod http_client;
pub mod oauth;
pub mod ssrf;
mod tracing_calls;

pub use documents::DocumentFetcher;
pub use hooks::HttpHookCaller;
pub use oauth::{HttpIdentityProvider, OAuthProviderConfig, OAuthSetupError};
pub use ssrf::{ResolvingTargetGuard, TargetPolicy};

use muster_domain::ports::MessageSigner;

/// The `X-Service-Signature` value of a delivery: `sha256=<lowercase hex HMAC-SHA256 of
/// the raw body keyed with the UTF-8 bytes of the hook secret>`, computed through the
/// domain's [`MessageSigner`] port.
///
/// ```
/// use muster_auth::signing::HmacSha256;
/// let sig = muster_outbound::delivery_signature(&HmacSha256, "whsec-test-secret", b"{}");
/// assert!(sig.starts_with("sha256=") && sig.len() == 7 + 64);
/// ```
pub fn delivery_signature(signer: &dyn MessageSigner, secret: &str, body: &[u8]) -> String {
    format!("sha256={}", signer.sign_hex(secret.as_bytes(), body))
}

#[cfg(test)]
mod tests {
    use muster_auth::signing::HmacSha256;

    use super::*;

    /// A fixed vector, so that receivers can check their verification against it.
    #[test]
    fn reproduces_the_documented_vector() {
        let body = br#"{"event":"task.created","timestamp":"2026-11-22T01:02:03.456Z","data":{"id":"01936f7e-8a4b-7c3d-9e2f-1a2b3c4d5e6f"}}"#;
        assert_eq!(
            delivery_signature(&HmacSha256, "whsec-test-secret", body),
            "sha256=783d7a76bd6bebb1324a7f8cfcf2b25b4148e8a1f2420f8f9c03bf55b172a144"
        );
    }
}
