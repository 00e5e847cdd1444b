//! Server key and secrets (decisions D-11, D-12).
//!
//! One 32-byte server key, [`ServerKey`] (`MUSTER_SECRET_KEY`), is the root of every
//! server-side secret. Subkeys are derived from it with HKDF-SHA256 under distinct
//! labels, so a key used for one purpose never serves another:
//!
//! - [`ServerKey::secret_cipher`]: the AES-256-GCM [`SecretCipher`] sealing agent
//!   secrets and TOTP secrets at rest;
//! - [`ServerKey::jwt_signing_key`]: the HS256 key of access tokens
//!   ([`TokenService`](crate::tokens::TokenService)).

mod cipher;
mod server_key;

pub use cipher::{CipherError, SecretCipher};
pub use server_key::ServerKey;

use ring::digest;
use ring::rand::{SecureRandom, SystemRandom};

/// A server key or fresh secret could not be produced.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeyError {
    /// `MUSTER_SECRET_KEY` is neither 64 hex characters nor base64 of exactly 32 bytes.
    /// The key text itself is never part of the message.
    #[error("MUSTER_SECRET_KEY must be 32 bytes, given as 64 hex characters or base64")]
    InvalidFormat,
    /// The operating system's random number generator failed.
    #[error("the system random number generator failed")]
    Random,
    /// Deriving a subkey failed (not expected with the fixed lengths used here).
    #[error("deriving a key from MUSTER_SECRET_KEY failed")]
    Derivation,
}

/// Number of random bytes in an agent secret.
const AGENT_SECRET_BYTES: usize = 32;

/// A fresh agent signing secret: 32 random bytes as 64 lowercase hex characters
/// (decision D-10; the HMAC key is the UTF-8 bytes of this text).
pub fn generate_agent_secret() -> Result<String, KeyError> {
    let bytes: [u8; AGENT_SECRET_BYTES] = random_bytes()?;
    Ok(hex::encode(bytes))
}

/// `N` bytes from the system random number generator.
pub(crate) fn random_bytes<const N: usize>() -> Result<[u8; N], KeyError> {
    let mut bytes = [0u8; N];
    SystemRandom::new()
        .fill(&mut bytes)
        .map_err(|_| KeyError::Random)?;
    Ok(bytes)
}

/// The SHA-256 digest of `data`.
pub(crate) fn sha256(data: &[u8]) -> [u8; 32] {
    let digest = digest::digest(&digest::SHA256, data);
    let mut out = [0u8; 32];
    for (byte, digest_byte) in out.iter_mut().zip(digest.as_ref()) {
        *byte = *digest_byte;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agent_secret_is_64_lowercase_hex() {
        let secret = generate_agent_secret().unwrap();
        assert_eq!(secret.len(), 64);
        assert!(
            secret
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        );
    }

    #[test]
    fn sha256_matches_the_fips_vector() {
        assert_eq!(
            hex::encode(sha256(b"abc")),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn agent_secrets_differ() {
        assert_ne!(
            generate_agent_secret().unwrap(),
            generate_agent_secret().unwrap()
        );
    }
}
