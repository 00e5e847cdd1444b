//! Password hashing with argon2id (decision D-14).
//!
//! Both functions are deliberately slow (about 20 ms and 19 MiB of memory each). Async
//! callers must run them on a blocking thread (`tokio::task::spawn_blocking`), never
//! directly on an executor thread; [`Argon2Hasher`], the adapter of the domain's
//! [`PasswordHasher`] port, does so.

use std::sync::{Arc, OnceLock};

use argon2::{Algorithm, Argon2, Params, PasswordHasher as _, PasswordVerifier as _, Version};
use async_trait::async_trait;
use muster_domain::ports::{BoxError, PasswordHasher};
use tokio::sync::Semaphore;

use crate::keys::random_bytes;

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

/// The argon2id adapter of [`PasswordHasher`]: [`hash_password`] and
/// [`verify_password`] on tokio's blocking threads (so it needs a tokio runtime), at
/// most a few at a time.
///
/// Each hash holds 19 MiB for about 20 ms of a core. Login is a public route, so without
/// a bound a burst of logins would take memory in proportion to the burst (and gain no
/// speed beyond the number of cores): the permits make the excess wait in line instead.
///
/// `verify(password, None)`, asked when no user has the e-mail, verifies against a
/// stand-in hash of a random password with the same parameters and answers `false`, so
/// an unknown e-mail costs what a wrong password costs (decision D-14). The stand-in is
/// computed once per process, on first need.
#[derive(Debug, Clone)]
pub struct Argon2Hasher {
    permits: Arc<Semaphore>,
}

impl Default for Argon2Hasher {
    fn default() -> Self {
        Self::new()
    }
}

impl Argon2Hasher {
    /// A hasher running as many hashes at once as the machine has cores.
    pub fn new() -> Self {
        let cores = std::thread::available_parallelism().map_or(2, std::num::NonZero::get);
        Self::with_concurrency(cores)
    }

    /// A hasher running at most `concurrent` hashes at once (at least one).
    pub fn with_concurrency(concurrent: usize) -> Self {
        Self {
            permits: Arc::new(Semaphore::new(concurrent.max(1))),
        }
    }

    /// Runs `work` on a blocking thread once a permit is free.
    async fn run<T: Send + 'static>(
        &self,
        work: impl FnOnce() -> Result<T, PasswordError> + Send + 'static,
    ) -> Result<T, BoxError> {
        let _permit = self.permits.acquire().await?;
        Ok(tokio::task::spawn_blocking(work).await??)
    }
}

#[async_trait]
impl PasswordHasher for Argon2Hasher {
    async fn hash(&self, password: &str) -> Result<String, BoxError> {
        let password = password.to_owned();
        self.run(move || hash_password(&password)).await
    }

    async fn verify(&self, password: &str, phc: Option<String>) -> Result<bool, BoxError> {
        let password = password.to_owned();
        self.run(move || {
            let Some(phc) = phc else {
                // Same work, answer ignored: the stand-in's password is unknowable.
                std::hint::black_box(verify_password(&password, stand_in_hash()?));
                return Ok(false);
            };
            Ok(verify_password(&password, &phc))
        })
        .await
    }
}

/// The PHC string of a random password, computed once per process.
fn stand_in_hash() -> Result<&'static str, PasswordError> {
    static STAND_IN: OnceLock<String> = OnceLock::new();
    if let Some(phc) = STAND_IN.get() {
        return Ok(phc);
    }
    let password: [u8; 32] = random_bytes().map_err(|err| PasswordError::Hash(err.to_string()))?;
    let phc = hash_password(&hex::encode(password))?;
    // Another thread may have won the race; either hash serves.
    Ok(STAND_IN.get_or_init(|| phc))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn hasher_round_trip() {
        let hasher = Argon2Hasher::new();
        let phc = hasher.hash("correct horse battery staple").await.unwrap();
        assert!(phc.starts_with("$argon2id$v=19$m=19456,t=2,p=1$"), "{phc}");
        let right = hasher.verify("correct horse battery staple", Some(phc.clone()));
        assert!(right.await.unwrap());
        let wrong = hasher.verify("correct horse battery stapl", Some(phc));
        assert!(!wrong.await.unwrap());
    }

    #[tokio::test]
    async fn hasher_refuses_unknown_users_and_garbage() {
        let hasher = Argon2Hasher::new();
        assert!(!hasher.verify("password", None).await.unwrap());
        assert!(!hasher.verify("", None).await.unwrap());
        assert!(
            !hasher
                .verify("password", Some("garbage".into()))
                .await
                .unwrap()
        );
    }

    #[test]
    fn stand_in_is_computed_once_with_the_usual_parameters() {
        let first = stand_in_hash().unwrap();
        assert!(
            first.starts_with("$argon2id$v=19$m=19456,t=2,p=1$"),
            "{first}"
        );
        assert!(std::ptr::eq(first, stand_in_hash().unwrap()));
    }

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
