//! Password hashing with argon2id (decision D-14).
//!
//! Both functions are deliberately slow (about 20 ms and 19 MiB of memory each). Async
//! callers must run them on a blocking thread (`tokio::task::spawn_blocking`), never
//! directly on an executor thread; [`Argon2Hasher`], the adapter of the domain's
//! [`PasswordHasher`] port, does so.

use std::sync::{Arc, Mutex, OnceLock, PoisonError, mpsc};

use argon2::{Algorithm, Argon2, Params, PasswordHasher as _, PasswordVerifier as _, Version};
use async_trait::async_trait;
use muster_domain::ports::{BoxError, PasswordHasher};

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
/// [`verify_password`] on a few dedicated threads ([`default_threads`] unless told).
///
/// Each hash holds 19 MiB for about 20 ms of a core. Login is a public route: on tokio's
/// blocking pool a burst of logins ran on as many threads as there were requests, and
/// the allocator kept each thread's 19 MiB afterwards (2 to 6 GiB after a 32-connection
/// burst). On a fixed set of threads the excess waits in line instead, and the memory
/// held is bounded by the number of threads; nothing runs faster with more threads than
/// cores.
///
/// `verify(password, None)`, asked when no user has the e-mail, verifies against a
/// stand-in hash of a random password with the same parameters and answers `false`, so
/// an unknown e-mail costs what a wrong password costs (decision D-14). The stand-in is
/// computed once per process, by the first hasher made, before any request needs it.
#[derive(Debug, Clone)]
pub struct Argon2Hasher {
    jobs: mpsc::Sender<Job>,
}

/// How many threads [`Argon2Hasher::new`] hashes on: one per core but one, and at least
/// one. Login is a public route that anyone can call: however many logins arrive at
/// once, hashing then takes at most all cores but one, and signed requests keep the
/// last; and on two cores the process holds one hash's 19 MiB at a time, not two.
pub fn default_threads() -> usize {
    threads_for(std::thread::available_parallelism().map_or(2, std::num::NonZero::get))
}

/// One thread per core but one, at least one.
const fn threads_for(cores: usize) -> usize {
    if cores > 1 { cores - 1 } else { 1 }
}

/// A piece of password work for one of the hasher's threads.
type Job = Box<dyn FnOnce() + Send>;

impl Default for Argon2Hasher {
    fn default() -> Self {
        Self::new()
    }
}

impl Argon2Hasher {
    /// A hasher with [`default_threads`] threads.
    pub fn new() -> Self {
        Self::with_threads(default_threads())
    }

    /// A hasher with `threads` threads (at least one). They end when the last clone of
    /// the hasher is dropped.
    pub fn with_threads(threads: usize) -> Self {
        let (sender, receiver) = mpsc::channel::<Job>();
        let receiver = Arc::new(Mutex::new(receiver));
        for n in 0..threads.max(1) {
            let receiver = Arc::clone(&receiver);
            let spawned = std::thread::Builder::new()
                .name(format!("argon2-{n}"))
                .spawn(move || {
                    loop {
                        // The lock is held only while waiting for the next job.
                        let next = receiver
                            .lock()
                            .unwrap_or_else(PoisonError::into_inner)
                            .recv();
                        match next {
                            Ok(job) => job(),
                            Err(_) => break,
                        }
                    }
                });
            if spawned.is_err() && n == 0 {
                // Not even one thread: jobs fail with "hasher stopped" below.
                break;
            }
        }
        // Compute the stand-in hash now, off the request path, so that not even the
        // first unknown e-mail costs more than a wrong password.
        let _ = sender.send(Box::new(|| {
            let _ = stand_in_hash();
        }));
        Self { jobs: sender }
    }

    /// Runs `work` on one of the hasher's threads and waits for its answer.
    async fn run<T: Send + 'static>(
        &self,
        work: impl FnOnce() -> Result<T, PasswordError> + Send + 'static,
    ) -> Result<T, BoxError> {
        let (answer, answered) = tokio::sync::oneshot::channel();
        let job: Job = Box::new(move || {
            let _ = answer.send(work());
        });
        self.jobs
            .send(job)
            .map_err(|_| PasswordError::Hash("the password hasher stopped".into()))?;
        Ok(answered
            .await
            .map_err(|_| PasswordError::Hash("the password hasher stopped".into()))??)
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
    async fn a_burst_waits_in_line_on_the_hashers_threads() {
        let hasher = Argon2Hasher::with_threads(1);
        let phc = hasher.hash("in line").await.unwrap();
        let checks = (0..6).map(|n| {
            let (hasher, phc) = (hasher.clone(), phc.clone());
            async move {
                hasher
                    .verify(if n % 2 == 0 { "in line" } else { "out" }, Some(phc))
                    .await
            }
        });
        let answers: Vec<bool> = futures_util::future::join_all(checks)
            .await
            .into_iter()
            .map(Result::unwrap)
            .collect();
        assert_eq!(answers, [true, false, true, false, true, false]);
    }

    #[tokio::test]
    async fn no_more_hashes_run_at_once_than_the_hasher_has_threads() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let hasher = Argon2Hasher::with_threads(2);
        let (running, most) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
        let jobs = (0..8).map(|_| {
            let (running, most) = (Arc::clone(&running), Arc::clone(&most));
            hasher.run(move || {
                let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                most.fetch_max(now, Ordering::SeqCst);
                // Until two jobs have run at once (up to 5 s, however slow the machine),
                // the first ones wait for each other; then each lasts a little, in
                // which a third thread would start one more.
                let until = std::time::Instant::now() + std::time::Duration::from_secs(5);
                while most.load(Ordering::SeqCst) < 2 && std::time::Instant::now() < until {
                    std::thread::yield_now();
                }
                std::thread::sleep(std::time::Duration::from_millis(20));
                running.fetch_sub(1, Ordering::SeqCst);
                Ok(())
            })
        });
        for done in futures_util::future::join_all(jobs).await {
            done.unwrap();
        }
        assert_eq!(most.load(Ordering::SeqCst), 2);
    }

    #[test]
    fn hashing_leaves_a_core_to_the_rest_of_the_server() {
        assert_eq!(threads_for(0), 1);
        assert_eq!(threads_for(1), 1);
        assert_eq!(threads_for(2), 1);
        assert_eq!(threads_for(8), 7);
    }

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
