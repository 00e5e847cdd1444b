//! Agent request signing, exactly as docs/signing.md describes.
//!
//! Through `muster_auth::signing`, the one recipe the server verifies with and the Rust
//! client sends with (the tests below are the document's worked example).

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

    const SECRET: &str = "7f3a9c2e5b8d1f4a6c0e9b2d5f8a1c4e7b0d3f6a9c2e5b8d1f4a7c0e3b6d9f2a";
    const TIMESTAMP: &str = "1795000000";
    const NONCE: &str = "0f8e9d2c-4b6a-4e1f-9a3d-7c5b2e1f0a9d";

    #[test]
    fn matches_the_worked_example_of_docs_signing() {
        let cases: [(&str, &str, &str, &str); 3] = [
            (
                "GET",
                "/tasks?status=todo&limit=5",
                "",
                "43b7abef5102706f37f7ca86c8fb99f4e0e3b957000ec16ea611bf1b344f0e62",
            ),
            (
                "POST",
                "/tasks",
                r#"{"title":"Write the report","priority":"high","tags":["q4"]}"#,
                "184d5eb61965750d632fb9668d371ab59a2978bdc7e077607e8bc7ba0a75dd99",
            ),
            (
                "POST",
                "/tasks/01936f7e-8a4b-7c3d-9e2f-1a2b3c4d5e6f/transition",
                r#"{"status": "in_progress", "reason": "starting"}"#,
                "583ec40485bfbd46a8b3a016badcf9e857eb07e3ecfb248cdc61e5af2f0ed672",
            ),
        ];
        for (method, target, body, expected) in cases {
            let got = Signed::at(SECRET, method, target, TIMESTAMP, NONCE, body.as_bytes());
            assert_eq!(got.signature, expected, "{method} {target}");
        }
    }

    #[test]
    fn every_signature_has_a_new_nonce() {
        let credentials = Credentials {
            agent_id: "hr-bench".into(),
            secret: SECRET.into(),
        };
        let first = sign_now(&credentials, "GET", "/tasks", b"");
        let second = sign_now(&credentials, "GET", "/tasks", b"");
        assert_ne!(first.nonce, second.nonce);
        assert_ne!(first.signature, second.signature);
    }
}
