//! The random values of the identity-provider sign-in (decision D-16): the `state`
//! parameter and the PKCE code verifier and S256 challenge of RFC 7636.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

use crate::keys::{KeyError, random_bytes, sha256};

/// Random bytes in a `state` or code verifier.
const RANDOM_BYTES: usize = 32;

/// A fresh `state` parameter: 32 random bytes in base64url without padding
/// (43 characters).
pub fn new_state() -> Result<String, KeyError> {
    random_base64url()
}

/// A fresh PKCE code verifier: 32 random bytes in base64url without padding, 43
/// characters of the unreserved set (RFC 7636 allows 43..=128).
pub fn new_code_verifier() -> Result<String, KeyError> {
    random_base64url()
}

/// The S256 code challenge of `verifier`: base64url without padding of the SHA-256 of
/// its ASCII bytes.
///
/// ```
/// // RFC 7636, appendix B.
/// let challenge = muster_auth::pkce::code_challenge_s256("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk");
/// assert_eq!(challenge, "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM");
/// ```
pub fn code_challenge_s256(verifier: &str) -> String {
    URL_SAFE_NO_PAD.encode(sha256(verifier.as_bytes()))
}

fn random_base64url() -> Result<String, KeyError> {
    let bytes: [u8; RANDOM_BYTES] = random_bytes()?;
    Ok(URL_SAFE_NO_PAD.encode(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unreserved(text: &str) -> bool {
        text.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~'))
    }

    #[test]
    fn rfc_7636_appendix_b() {
        assert_eq!(
            code_challenge_s256("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"),
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        );
    }

    #[test]
    fn verifier_is_43_unreserved_characters() {
        let verifier = new_code_verifier().unwrap();
        assert_eq!(verifier.len(), 43);
        assert!(unreserved(&verifier), "{verifier}");
        assert_ne!(new_code_verifier().unwrap(), verifier);
        let challenge = code_challenge_s256(&verifier);
        assert_eq!(challenge.len(), 43);
        assert!(unreserved(&challenge), "{challenge}");
    }

    #[test]
    fn state_is_43_base64url_characters() {
        let state = new_state().unwrap();
        assert_eq!(state.len(), 43);
        assert_eq!(URL_SAFE_NO_PAD.decode(&state).unwrap().len(), 32);
        assert_ne!(new_state().unwrap(), state);
    }
}
