//! Agent request signing, exactly as docs/signing.md describes.
//!
//! Through `muster_auth::signing`, the one recipe the server verifies with and the Rust
//! client sends with (its tests hold the documented vectors).

use muster_auth::signing;

/// What an agent signs with: its `agentId` handle and its secret string.
#[derive(Clone)]
pub struct Credentials {
    /// `X-Agent-ID`.
    pub agent_id: String,
    /// The 64-hex secret, used as a key as is (its UTF-8 bytes, not what they encode).
    pub secret: String,
}

impl Credentials {
    /// No agent: for calls that are not signed.
    pub fn none() -> Self {
        Self {
            agent_id: String::new(),
            secret: String::new(),
        }
    }
}

// Hand-written so that a secret never reaches an error message.
impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Credentials")
            .field("agent_id", &self.agent_id)
            .finish_non_exhaustive()
    }
}

/// The three headers that change with every request (`X-Agent-ID` does not).
pub type Signed = signing::RequestSignature;

/// Signs a request with the current time and a fresh nonce: the server remembers every
/// nonce for 10 minutes, so a reused one would be answered 401.
pub fn sign_now(credentials: &Credentials, method: &str, target: &str, body: &[u8]) -> Signed {
    Signed::now(&credentials.secret, method, target, body)
}

#[cfg(test)]
mod tests {
    use super::*;

    // The recipe and the documented vectors are muster_auth::signing's, tested there
    // and in the client's tests; this checks the bench's use of it.
    #[test]
    fn signs_with_the_credentials_secret_and_a_fresh_nonce() {
        let credentials = Credentials {
            agent_id: "hr-bench".into(),
            secret: "7f3a9c2e5b8d1f4a6c0e9b2d5f8a1c4e7b0d3f6a9c2e5b8d1f4a7c0e3b6d9f2a".into(),
        };
        let first = sign_now(&credentials, "POST", "/tasks", b"{}");
        let message =
            signing::canonical_message("POST", "/tasks", &first.timestamp, &first.nonce, b"{}");
        assert!(signing::verify(
            &credentials.secret,
            &message,
            &first.signature
        ));
        let second = sign_now(&credentials, "POST", "/tasks", b"{}");
        assert_ne!(first.nonce, second.nonce);
        assert_ne!(first.signature, second.signature);
    }
}
