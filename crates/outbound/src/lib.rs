//! Muster's outbound webhooks. For now: the signature every delivery carries, so that
//! receivers can be written against it. Delivery itself (a hyper client with an SSRF
//! guard, retries from the outbox) comes with the webhooks issue.

use ring::hmac;

/// The `X-Service-Signature` value of a delivery: `sha256=<lowercase hex HMAC-SHA256 of
/// the raw body keyed with the hook secret>`.
///
/// ```
/// let sig = muster_outbound::delivery_signature("whsec-test-secret", b"{}");
/// assert!(sig.starts_with("sha256=") && sig.len() == 7 + 64);
/// ```
pub fn delivery_signature(secret: &str, body: &[u8]) -> String {
    let key = hmac::Key::new(hmac::HMAC_SHA256, secret.as_bytes());
    format!("sha256={}", hex::encode(hmac::sign(&key, body).as_ref()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The outbound vector of spec/signing-vectors.md.
    #[test]
    fn reproduces_the_documented_vector() {
        let body = br#"{"event":"task.created","timestamp":"2026-11-22T01:02:03.456Z","data":{"id":"01936f7e-8a4b-7c3d-9e2f-1a2b3c4d5e6f"}}"#;
        assert_eq!(
            delivery_signature("whsec-test-secret", body),
            "sha256=783d7a76bd6bebb1324a7f8cfcf2b25b4148e8a1f2420f8f9c03bf55b172a144"
        );
    }
}
