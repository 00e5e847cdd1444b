//! The server key, `MUSTER_SECRET_KEY`, and the subkeys derived from it.

use std::fmt;

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD};
use ring::hkdf;

use super::{KeyError, SecretCipher, random_bytes};

/// Length of the server key, in bytes.
const KEY_LEN: usize = 32;

/// HKDF salt. Fixed: the server key is already uniformly random, so the salt only
/// separates Muster's derivations from any other use of the same key material.
const HKDF_SALT: &[u8] = b"muster/server-key/v1";

/// HKDF `info` of the key that seals secrets at rest.
const SECRET_ENCRYPTION_INFO: &[u8] = b"muster/secret-encryption/v1";

/// HKDF `info` of the access-token signing key.
const JWT_SIGNING_INFO: &[u8] = b"muster/jwt-signing/v1";

/// The deployment's 32-byte root key (`MUSTER_SECRET_KEY`, decision D-12). Every
/// instance of a deployment must use the same one. Its `Debug` output shows no key
/// material.
#[derive(Clone)]
pub struct ServerKey {
    bytes: [u8; KEY_LEN],
    cipher: SecretCipher,
    jwt_signing_key: [u8; KEY_LEN],
}

impl ServerKey {
    /// Parses the key text: 64 hex characters (either case), or base64 of exactly 32
    /// bytes in the standard or URL-safe alphabet, padded or not. Surrounding
    /// whitespace (a trailing newline in a key file) is ignored.
    ///
    /// ```
    /// use muster_auth::keys::ServerKey;
    /// assert!(ServerKey::parse(&"ab".repeat(32)).is_ok());
    /// assert!(ServerKey::parse("AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n").is_ok());
    /// assert!(ServerKey::parse("too short").is_err());
    /// ```
    pub fn parse(text: &str) -> Result<Self, KeyError> {
        let text = text.trim();
        let decoded = if text.len() == 2 * KEY_LEN && text.bytes().all(|b| b.is_ascii_hexdigit()) {
            hex::decode(text).map_err(|_| KeyError::InvalidFormat)?
        } else {
            decode_base64(text).ok_or(KeyError::InvalidFormat)?
        };
        let bytes: [u8; KEY_LEN] = decoded
            .as_slice()
            .try_into()
            .map_err(|_| KeyError::InvalidFormat)?;
        Self::from_bytes(bytes)
    }

    /// A new random key, from the operating system's generator.
    pub fn generate() -> Result<Self, KeyError> {
        Self::from_bytes(random_bytes()?)
    }

    /// A key from its raw bytes; derives the subkeys.
    pub fn from_bytes(bytes: [u8; KEY_LEN]) -> Result<Self, KeyError> {
        let encryption_key = derive_subkey(&bytes, SECRET_ENCRYPTION_INFO)?;
        Ok(Self {
            bytes,
            cipher: SecretCipher::from_key(&encryption_key)?,
            jwt_signing_key: derive_subkey(&bytes, JWT_SIGNING_INFO)?,
        })
    }

    /// The key as 64 lowercase hex characters, the form written to `secret.key`.
    pub fn to_hex(&self) -> String {
        hex::encode(self.bytes)
    }

    /// The cipher that seals secrets at rest (agent secrets bound to the agent's UUID,
    /// TOTP secrets bound to the user's UUID), keyed with the subkey labelled
    /// `muster/secret-encryption/v1`.
    pub fn secret_cipher(&self) -> SecretCipher {
        self.cipher.clone()
    }

    /// The HS256 key of access tokens: the subkey labelled `muster/jwt-signing/v1`. Hand
    /// the whole `ServerKey` to [`TokenService`](crate::tokens::TokenService) rather than
    /// using it directly.
    pub fn jwt_signing_key(&self) -> [u8; KEY_LEN] {
        self.jwt_signing_key
    }
}

impl fmt::Debug for ServerKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServerKey").finish_non_exhaustive()
    }
}

/// HKDF-SHA256 of `root` with the fixed salt and `info`, 32 bytes long.
fn derive_subkey(root: &[u8; KEY_LEN], info: &[u8]) -> Result<[u8; KEY_LEN], KeyError> {
    let prk = hkdf::Salt::new(hkdf::HKDF_SHA256, HKDF_SALT).extract(root);
    let mut subkey = [0u8; KEY_LEN];
    prk.expand(&[info], hkdf::HKDF_SHA256)
        .and_then(|okm| okm.fill(&mut subkey))
        .map_err(|_| KeyError::Derivation)?;
    Ok(subkey)
}

/// Decodes base64 in any of the accepted alphabets and paddings.
fn decode_base64(text: &str) -> Option<Vec<u8>> {
    [STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD]
        .iter()
        .find_map(|engine| engine.decode(text).ok())
}

#[cfg(test)]
mod tests;
