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

/// Degree of parallelism.
const P_COST: u32 = 1;

/// What a new password hash costs: argon2id's memory in KiB and its number of passes
/// (one lane). Verifying a stored hash costs what that hash records, whatever the
/// setting is now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PasswordCost {
    memory_kib: u32,
    passes: u32,
}

impl PasswordCost {
    /// The service's cost: 19 MiB and 2 passes, OWASP's recommendation for argon2id.
    pub const DEFAULT: Self = Self {
        memory_kib: 19_456,
        passes: 2,
    };
    /// The floor a configuration may not go below without saying so
    /// ([`PasswordCost::is_below_floor`]): the service's own cost.
    pub const FLOOR: Self = Self::DEFAULT;
    /// The cheapest cost argon2 accepts (8 KiB, one pass): for test runs, where the
    /// passwords are throw-away and hashing was a fifth of the API tests' CPU.
    pub const MINIMUM: Self = Self {
        memory_kib: 8,
        passes: 1,
    };

    /// A cost of `memory_kib` KiB and `passes` passes, when argon2 accepts it (at least
    /// 8 KiB and one pass; at most 4 GiB and 64 passes here).
    pub fn new(memory_kib: u32, passes: u32) -> Result<Self, PasswordError> {
        if !(Self::MINIMUM.memory_kib..=4 * 1024 * 1024).contains(&memory_kib) {
            return Err(PasswordError::Hash(format!(
                "memory must be from 8 to 4194304 KiB, not {memory_kib}"
            )));
        }
        if !(1..=64).contains(&passes) {
            return Err(PasswordError::Hash(format!(
                "passes must be from 1 to 64, not {passes}"
            )));
        }
        Ok(Self { memory_kib, passes })
    }

    /// Memory in KiB.
    pub const fn memory_kib(self) -> u32 {
        self.memory_kib
    }

    /// Number of passes.
    pub const fn passes(self) -> u32 {
        self.passes
    }

    /// Whether either figure is below [`PasswordCost::FLOOR`]'s.
    pub const fn is_below_floor(self) -> bool {
        self.memory_kib < Self::FLOOR.memory_kib || self.passes < Self::FLOOR.passes
    }
}

impl Default for PasswordCost {
    fn default() -> Self {
        Self::DEFAULT
    }
}

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
    hash_password_at(password, PasswordCost::DEFAULT)
}

/// [`hash_password`] at `cost`.
pub fn hash_password_at(password: &str, cost: PasswordCost) -> Result<String, PasswordError> {
    let params = Params::new(cost.memory_kib, cost.passes, P_COST, None)
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
    cost: PasswordCost,
    /// The stand-in hash at `cost`, computed once.
    stand_in: Arc<OnceLock<String>>,
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

    /// A hasher with `threads` threads (at least one) hashing at the service's cost.
    /// They end when the last clone of the hasher is dropped.
    pub fn with_threads(threads: usize) -> Self {
        Self::with_cost(threads, PasswordCost::DEFAULT)
    }

    /// A hasher with `threads` threads (at least one) whose new hashes, and the
    /// stand-in an unknown e-mail is checked against, cost `cost`.
    pub fn with_cost(threads: usize, cost: PasswordCost) -> Self {
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
        let stand_in = Arc::new(OnceLock::new());
        let first = Arc::clone(&stand_in);
        let _ = sender.send(Box::new(move || {
            let _ = stand_in_hash(&first, cost);
        }));
        Self {
            jobs: sender,
            cost,
            stand_in,
        }
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
        let cost = self.cost;
        self.run(move || hash_password_at(&password, cost)).await
    }

    async fn verify(&self, password: &str, phc: Option<String>) -> Result<bool, BoxError> {
        let password = password.to_owned();
        let (stand_in, cost) = (Arc::clone(&self.stand_in), self.cost);
        self.run(move || {
            let Some(phc) = phc else {
                // Same work, answer ignored: the stand-in's password is unknowable.
                let stand_in = stand_in_hash(&stand_in, cost)?;
                std::hint::black_box(verify_password(&password, stand_in));
                return Ok(false);
            };
            Ok(verify_password(&password, &phc))
        })
        .await
    }
}

/// The PHC string of a random password at `cost`, computed once per hasher.
fn stand_in_hash(stand_in: &OnceLock<String>, cost: PasswordCost) -> Result<&str, PasswordError> {
    if let Some(phc) = stand_in.get() {
        return Ok(phc);
    }
    let password: [u8; 32] = random_bytes().map_err(|err| PasswordError::Hash(err.to_string()))?;
    let phc = hash_password_at(&hex::encode(password), cost)?;
    // Another thread may have won the race; either hash serves.
    Ok(stand_in.get_or_init(|| phc))
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
        let cell = OnceLock::new();
        let first = stand_in_hash(&cell, PasswordCost::DEFAULT).unwrap();
        assert!(
            first.starts_with("$argon2id$v=19$m=19456,t=2,p=1$"),
            "{first}"
        );
        assert!(std::ptr::eq(
            first,
            stand_in_hash(&cell, PasswordCost::DEFAULT).unwrap()
        ));
    }

    #[tokio::test]
    async fn a_hasher_hashes_and_stands_in_at_its_cost() {
        let cost = PasswordCost::new(64, 3).unwrap();
        let hasher = Argon2Hasher::with_cost(1, cost);
        let phc = hasher.hash("cheap").await.unwrap();
        assert!(phc.starts_with("$argon2id$v=19$m=64,t=3,p=1$"), "{phc}");
        assert!(hasher.verify("cheap", Some(phc.clone())).await.unwrap());
        assert!(!hasher.verify("cheap", None).await.unwrap());
        let stand_in = hasher.stand_in.get().unwrap();
        assert!(
            stand_in.starts_with("$argon2id$v=19$m=64,t=3,p=1$"),
            "{stand_in}"
        );
        // A hash made at another cost still verifies: it records its own.
        let dear = hash_password("dear").unwrap();
        assert!(hasher.verify("dear", Some(dear)).await.unwrap());
    }

    #[test]
    fn costs_argon2_refuses_are_refused() {
        assert!(PasswordCost::new(7, 1).is_err());
        assert!(PasswordCost::new(8, 0).is_err());
        assert!(PasswordCost::new(8, 65).is_err());
        assert!(PasswordCost::new(4 * 1024 * 1024 + 1, 1).is_err());
        assert_eq!(PasswordCost::new(8, 1), Ok(PasswordCost::MINIMUM));
        assert_eq!(PasswordCost::new(4 * 1024 * 1024, 64).unwrap().passes(), 64);
        let top = PasswordCost::new(4 * 1024 * 1024, 64).unwrap();
        assert_eq!(top.memory_kib(), 4 * 1024 * 1024);
    }

    #[test]
    fn the_floor_is_the_service_cost() {
        assert_eq!(PasswordCost::default(), PasswordCost::DEFAULT);
        assert!(!PasswordCost::DEFAULT.is_below_floor());
        assert!(PasswordCost::MINIMUM.is_below_floor());
        assert!(PasswordCost::new(19_455, 2).unwrap().is_below_floor());
        assert!(PasswordCost::new(19_456, 1).unwrap().is_below_floor());
        assert!(!PasswordCost::new(65_536, 3).unwrap().is_below_floor());
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
