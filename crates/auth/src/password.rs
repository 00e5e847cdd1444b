//! Password hashing with argon2id (decision D-14).
//!
//! Both functions are deliberately slow (about 20 ms and 19 MiB of memory each). Async
//! callers must run them on a blocking thread (`tokio::task::spawn_blocking`), never
//! directly on an executor thread.

use argon2::{Algorithm, Argon2, Params, PasswordHasher as _, PasswordVerifier as _, Version};

/// Memory cost in KiB (19 MiB).
const M_COST_KIB: u32 = 19_456;
/// Number of passes.
const T_COST: u32 = 2;
/// Degree of parallelism.
const P_COST: u32 = 1;

/// A password could not be hashed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PasswordError {
    /// The hasher failed (random salt unavailable, or invalid parameters). The message
    /// never contains the password.
    #[error("password hashing failed: {0}")]
    Hash(String),
}

/// Hashes `password` with argon2id (m=19456 KiB, t=2, p=1) and a random salt, and
/// returns the PHC string (`$argon2id$v=19$m=19456,t=2,p=1$<salt>$<hash>`).
///
/// CPU- and memory-heavy: run it in `spawn_blocking` from async code.
pub fn hash_password(password: &str) -> Result<String, PasswordError> {
    let params = Params::new(M_COST_KIB, T_COST, P_COST, None)
        .map_err(|err| PasswordError::Hash(err.to_string()))?;
    Argon2::new(Algorithm::Argon2id, Version::V0x13, params)
        .hash_password(password.as_bytes())
        .map(|hash| hash.to_string())
        .map_err(|err| PasswordError::Hash(err.to_string()))
}

/// Whether `password` matches the PHC string `phc`, using the algorithm and parameters
/// recorded in `phc`. A malformed `phc` is a mismatch. The final comparison is
/// constant-time.
///
/// CPU- and memory-heavy: run it in `spawn_blocking` from async code. `phc` must come
/// from a trusted store, since its parameters decide the cost.
pub fn verify_password(password: &str, phc: &str) -> bool {
    Argon2::default()
        .verify_password(password.as_bytes(), phc)
        .is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let phc = hash_password("correct horse battery staple").unwrap();
        assert!(verify_password("correct horse battery staple", &phc));
    }

    #[test]
    fn wrong_password_is_rejected() {
        let phc = hash_password("correct horse battery staple").unwrap();
        assert!(!verify_password("correct horse battery stapl", &phc));
        assert!(!verify_password("", &phc));
    }

    #[test]
    fn garbage_hash_is_rejected() {
        for phc in [
            "",
            "garbage",
            "$argon2id$v=19$m=19456,t=2,p=1$",
            "$argon2id$v=19$$$",
        ] {
            assert!(!verify_password("password", phc), "{phc:?}");
        }
    }

    #[test]
    fn phc_string_records_the_parameters() {
        let phc = hash_password("password").unwrap();
        assert!(phc.starts_with("$argon2id$v=19$m=19456,t=2,p=1$"), "{phc}");
    }

    #[test]
    fn salts_are_random() {
        assert_ne!(
            hash_password("password").unwrap(),
            hash_password("password").unwrap()
        );
    }
}
