//! The calls that close a run and move its task, tried again through a passing fault.

use std::future::Future;
use std::time::Duration;

use muster_client::Error;

/// Tries of one closing call, at most.
const TRIES: u32 = 6;
/// The wait after the first failed try; it doubles after each (0.5 s to 8 s, 15.5 s in
/// all: a server restarting, a database failing over).
const FIRST_WAIT: Duration = Duration::from_millis(500);

/// `call`, sent again while its refusal says the same request may succeed later (the
/// server was unreachable or busy, or another change got in the way: it changed
/// nothing), at most [`TRIES`] times. A run left open, or a task left with a worker that
/// is done with it, would otherwise wait for its lease to lapse.
pub async fn persist<T, F, Fut>(call: F) -> Result<T, Error>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, Error>>,
{
    persist_while(call, Error::is_retryable).await
}

/// [`persist`] with the test of a refusal worth another try.
async fn persist_while<T, E, F, Fut>(mut call: F, retryable: impl Fn(&E) -> bool) -> Result<T, E>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, E>>,
{
    let mut wait = FIRST_WAIT;
    let mut tries = 1;
    loop {
        match call().await {
            Err(err) if tries < TRIES && retryable(&err) => {
                tokio::time::sleep(wait).await;
                wait *= 2;
                tries += 1;
            }
            answer => return answer,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicU32, Ordering};

    use super::*;

    /// A refusal: whether it is worth another try.
    #[derive(Debug, PartialEq)]
    struct Refusal(bool);

    #[tokio::test(start_paused = true)]
    async fn a_retryable_refusal_is_tried_again_until_it_succeeds() {
        let calls = AtomicU32::new(0);
        let answer = persist_while(
            || async {
                if calls.fetch_add(1, Ordering::SeqCst) < 3 {
                    Err(Refusal(true))
                } else {
                    Ok(7)
                }
            },
            |r: &Refusal| r.0,
        )
        .await;
        assert_eq!(answer, Ok(7));
        assert_eq!(calls.load(Ordering::SeqCst), 4);
    }

    #[tokio::test(start_paused = true)]
    async fn a_final_refusal_is_answered_at_once_and_retries_end() {
        let calls = AtomicU32::new(0);
        let once = persist_while(
            || async {
                calls.fetch_add(1, Ordering::SeqCst);
                Err::<(), _>(Refusal(false))
            },
            |r: &Refusal| r.0,
        )
        .await;
        assert_eq!(once, Err(Refusal(false)));
        assert_eq!(calls.load(Ordering::SeqCst), 1);
        calls.store(0, Ordering::SeqCst);
        let exhausted = persist_while(
            || async {
                calls.fetch_add(1, Ordering::SeqCst);
                Err::<(), _>(Refusal(true))
            },
            |r: &Refusal| r.0,
        )
        .await;
        assert_eq!(exhausted, Err(Refusal(true)));
        assert_eq!(calls.load(Ordering::SeqCst), TRIES);
    }
}
