//! AES-256-GCM sealing of secrets at rest (decision D-11).

use std::fmt;

use muster_domain::model::{AgentId, AgentSecret};
use muster_domain::ports::{SealError, SecretSealer, SecretVault};
use ring::aead::{AES_256_GCM, Aad, LessSafeKey, NONCE_LEN, Nonce, UnboundKey};

use super::{KeyError, random_bytes};

/// Format version of a sealed value: the first byte of every output of
/// [`SecretCipher::seal`].
const FORMAT_V1: u8 = 1;

/// Length of the authentication tag.
const TAG_LEN: usize = 16;

/// Why sealing or opening failed. The messages never contain key or plaintext bytes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CipherError {
    /// The operating system's random number generator failed.
    #[error("the system random number generator failed")]
    Random,
    /// Encryption failed (input too large for AES-GCM).
    #[error("encryption failed")]
    Seal,
    /// The sealed value is shorter than a header plus a tag.
    #[error("sealed value is truncated")]
    Truncated,
    /// The sealed value starts with an unknown format version.
    #[error("sealed value has unknown format version {0}")]
    UnknownVersion(u8),
    /// Authentication failed: the value was sealed with another key or was altered.
    #[error("sealed value cannot be opened: wrong key or altered data")]
    Open,
}

/// Seals and opens secrets with AES-256-GCM under a key derived from the
/// [`ServerKey`](super::ServerKey).
///
/// A sealed value is `1` (format version) `||` 12-byte random nonce `||` ciphertext and
/// 16-byte tag. The associated data is the version byte followed by a caller-chosen
/// context (the owning agent's UUID for agent secrets), so neither the version nor the
/// owner can be changed without detection: a sealed secret copied onto another agent's
/// row does not open. Random nonces are safe here: one key seals far fewer than 2^32
/// values. `Debug` output shows no key material.
#[derive(Clone)]
pub struct SecretCipher {
    key: LessSafeKey,
}

impl SecretCipher {
    /// A cipher with the raw 32-byte AES key `key`.
    pub(crate) fn from_key(key: &[u8; 32]) -> Result<Self, KeyError> {
        let key = UnboundKey::new(&AES_256_GCM, key).map_err(|_| KeyError::Derivation)?;
        Ok(Self {
            key: LessSafeKey::new(key),
        })
    }

    /// Encrypts `plaintext` under a fresh random nonce, bound to `context`.
    pub fn seal(&self, plaintext: &[u8], context: &[u8]) -> Result<Vec<u8>, CipherError> {
        let nonce: [u8; NONCE_LEN] = random_bytes().map_err(|_| CipherError::Random)?;
        let mut in_out = plaintext.to_vec();
        self.key
            .seal_in_place_append_tag(
                Nonce::assume_unique_for_key(nonce),
                Aad::from(associated_data(FORMAT_V1, context)),
                &mut in_out,
            )
            .map_err(|_| CipherError::Seal)?;
        let mut sealed = Vec::with_capacity(1 + NONCE_LEN + in_out.len());
        sealed.push(FORMAT_V1);
        sealed.extend_from_slice(&nonce);
        sealed.extend_from_slice(&in_out);
        Ok(sealed)
    }

    /// Decrypts a value produced by [`seal`](Self::seal) with the same key and context.
    pub fn open(&self, sealed: &[u8], context: &[u8]) -> Result<Vec<u8>, CipherError> {
        let (&version, rest) = sealed.split_first().ok_or(CipherError::Truncated)?;
        if version != FORMAT_V1 {
            return Err(CipherError::UnknownVersion(version));
        }
        if rest.len() < NONCE_LEN + TAG_LEN {
            return Err(CipherError::Truncated);
        }
        let (nonce, ciphertext) = rest.split_at(NONCE_LEN);
        let nonce = Nonce::try_assume_unique_for_key(nonce).map_err(|_| CipherError::Truncated)?;
        let mut in_out = ciphertext.to_vec();
        let plaintext_len = self
            .key
            .open_in_place(
                nonce,
                Aad::from(associated_data(version, context)),
                &mut in_out,
            )
            .map_err(|_| CipherError::Open)?
            .len();
        in_out.truncate(plaintext_len);
        Ok(in_out)
    }
}

fn associated_data(version: u8, context: &[u8]) -> Vec<u8> {
    let mut aad = Vec::with_capacity(1 + context.len());
    aad.push(version);
    aad.extend_from_slice(context);
    aad
}

/// Agent secrets are sealed bound to the agent's UUID.
impl SecretSealer for SecretCipher {
    fn seal(&self, agent: AgentId, secret: &AgentSecret) -> Result<Vec<u8>, SealError> {
        SecretCipher::seal(self, secret.expose().as_bytes(), agent.as_uuid().as_bytes())
            .map_err(|e| SealError(e.to_string()))
    }

    fn generate(&self) -> Result<AgentSecret, SealError> {
        super::generate_agent_secret()
            .map(AgentSecret::new)
            .map_err(|e| SealError(e.to_string()))
    }
}

/// Webhook and integration secrets are sealed bound to their purpose and record UUID.
impl SecretVault for SecretCipher {
    fn seal(&self, purpose: &str, owner: uuid::Uuid, plain: &str) -> Result<Vec<u8>, SealError> {
        SecretCipher::seal(self, plain.as_bytes(), &vault_context(purpose, owner))
            .map_err(|e| SealError(e.to_string()))
    }

    fn open(&self, purpose: &str, owner: uuid::Uuid, sealed: &[u8]) -> Result<String, SealError> {
        let plain = SecretCipher::open(self, sealed, &vault_context(purpose, owner))
            .map_err(|e| SealError(e.to_string()))?;
        String::from_utf8(plain).map_err(|_| SealError("sealed value is not UTF-8".into()))
    }

    fn random_hex(&self, bytes: usize) -> Result<String, SealError> {
        let mut buf = vec![0u8; bytes];
        ring::rand::SecureRandom::fill(&ring::rand::SystemRandom::new(), &mut buf)
            .map_err(|_| SealError(CipherError::Random.to_string()))?;
        Ok(hex::encode(buf))
    }
}

/// `purpose || 0x00 || owner UUID`: the associated data of a vault secret, distinct
/// from an agent secret's (the bare agent UUID).
fn vault_context(purpose: &str, owner: uuid::Uuid) -> Vec<u8> {
    let mut context = Vec::with_capacity(purpose.len() + 17);
    context.extend_from_slice(purpose.as_bytes());
    context.push(0);
    context.extend_from_slice(owner.as_bytes());
    context
}

impl fmt::Debug for SecretCipher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SecretCipher")
            .field("algorithm", &"AES-256-GCM")
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests;
