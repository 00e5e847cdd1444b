//! Running a unit of work's work again as it ran before.
//!
//! The pre-hook gate runs a change once to learn the events it would write, rolls it
//! back, asks the hooks with no transaction open, then runs the change again and commits
//! it only if it writes exactly the events the hooks were asked about. For that second
//! run to decide as the first did when nothing it read has changed, it must see the same
//! time and draw the same new ids: inside a [`Replay`], [`Clock::now`] and
//! [`IdGenerator::new_id`] answer, in order, what they answered in the runs before
//! (fresh values past the end of those), the way a workflow engine replays the side
//! effects of a step it runs again. Outside one they answer fresh values.
//!
//! The replay is the current one while the work's future is polled, on whichever thread
//! polls it (a thread-local set around each poll), so it follows the work onto the
//! database's writer thread and into nothing else.

use std::cell::RefCell;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};

use time::OffsetDateTime;
use uuid::Uuid;

#[cfg(doc)]
use super::{Clock, IdGenerator};

thread_local! {
    static CURRENT: RefCell<Option<Arc<Replay>>> = const { RefCell::new(None) };
}

/// The clock readings and ids drawn by the runs of one piece of work, in order.
#[derive(Debug, Default)]
pub(crate) struct Replay {
    log: Mutex<Log>,
}

#[derive(Debug, Default)]
struct Log {
    ids: Vec<Uuid>,
    times: Vec<OffsetDateTime>,
    next_id: usize,
    next_time: usize,
}

impl Replay {
    /// One more run of the work, from the first recorded value on: `start` (which makes
    /// the work's future) and every poll of that future see this replay.
    pub(crate) fn run<F: Future + Unpin>(
        self: &Arc<Self>,
        start: impl FnOnce() -> F,
    ) -> Replaying<F> {
        let mut log = self.lock();
        log.next_id = 0;
        log.next_time = 0;
        drop(log);
        let future = {
            let _current = Current::enter(self.clone());
            start()
        };
        Replaying {
            replay: self.clone(),
            future,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Log> {
        self.log.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn id(&self, fresh: impl FnOnce() -> Uuid) -> Uuid {
        let mut log = self.lock();
        let Log { ids, next_id, .. } = &mut *log;
        next(ids, next_id, fresh)
    }

    fn time(&self, fresh: impl FnOnce() -> OffsetDateTime) -> OffsetDateTime {
        let mut log = self.lock();
        let Log {
            times, next_time, ..
        } = &mut *log;
        next(times, next_time, fresh)
    }
}

/// The value at `*at` in `recorded`, or a fresh one recorded there; `*at` moves on.
fn next<T: Copy>(recorded: &mut Vec<T>, at: &mut usize, fresh: impl FnOnce() -> T) -> T {
    let value = if let Some(value) = recorded.get(*at) {
        *value
    } else {
        let value = fresh();
        recorded.push(value);
        value
    };
    *at += 1;
    value
}

/// A run's future, polled with its replay current.
#[derive(Debug)]
pub(crate) struct Replaying<F> {
    replay: Arc<Replay>,
    future: F,
}

impl<F: Future + Unpin> Future for Replaying<F> {
    type Output = F::Output;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let this = &mut *self;
        let _current = Current::enter(this.replay.clone());
        Pin::new(&mut this.future).poll(cx)
    }
}

/// Makes a replay the current one until dropped (a panic included), then restores the
/// one before.
struct Current(Option<Arc<Replay>>);

impl Current {
    fn enter(replay: Arc<Replay>) -> Self {
        Self(CURRENT.with(|current| current.replace(Some(replay))))
    }
}

impl Drop for Current {
    fn drop(&mut self) {
        let before = self.0.take();
        CURRENT.with(|current| *current.borrow_mut() = before);
    }
}

fn current() -> Option<Arc<Replay>> {
    CURRENT.with(|current| current.borrow().clone())
}

/// The id [`IdGenerator::new_id`] answers: the replayed one inside a replay, else `fresh`.
pub(super) fn id(fresh: impl FnOnce() -> Uuid) -> Uuid {
    match current() {
        Some(replay) => replay.id(fresh),
        None => fresh(),
    }
}

/// The time [`Clock::now`] answers: the replayed one inside a replay, else `fresh`.
pub(super) fn time(fresh: impl FnOnce() -> OffsetDateTime) -> OffsetDateTime {
    match current() {
        Some(replay) => replay.time(fresh),
        None => fresh(),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicU64, Ordering};

    use futures_util::future::{FutureExt, poll_fn};

    use super::*;

    fn counter() -> impl Fn() -> Uuid {
        let next = AtomicU64::new(1);
        move || Uuid::from_u128(u128::from(next.fetch_add(1, Ordering::SeqCst)))
    }

    fn drawn(replay: &Arc<Replay>, fresh: &impl Fn() -> Uuid, count: usize) -> Vec<Uuid> {
        replay
            .run(|| Box::pin(async { (0..count).map(|_| id(fresh)).collect::<Vec<_>>() }))
            .now_or_never()
            .unwrap()
    }

    #[test]
    fn a_run_again_draws_what_the_runs_before_drew_then_fresh_ids() {
        let fresh = counter();
        let replay = Arc::new(Replay::default());
        let first = drawn(&replay, &fresh, 2);
        assert_eq!(drawn(&replay, &fresh, 2), first, "the same ids again");
        let longer = drawn(&replay, &fresh, 3);
        assert_eq!(longer[..2], first[..], "the recorded ones first");
        assert!(!first.contains(&longer[2]), "then a fresh one");
        assert_eq!(drawn(&replay, &fresh, 1), first[..1], "a shorter run too");
    }

    #[test]
    fn outside_a_run_and_in_another_replay_values_are_fresh() {
        let fresh = counter();
        let replay = Arc::new(Replay::default());
        let inside = drawn(&replay, &fresh, 1);
        assert_ne!(id(&fresh), inside[0], "outside");
        let other = drawn(&Arc::new(Replay::default()), &fresh, 1);
        assert_ne!(other, inside, "another piece of work");
        assert!(current().is_none(), "nothing left current");
    }

    #[test]
    fn times_are_replayed_like_ids() {
        let replay = Arc::new(Replay::default());
        let start = OffsetDateTime::UNIX_EPOCH;
        let later = start + time::Duration::seconds(5);
        let first = replay
            .run(|| Box::pin(async { time(|| start) }))
            .now_or_never();
        let again = replay
            .run(|| Box::pin(async { time(|| later) }))
            .now_or_never();
        assert_eq!((first, again), (Some(start), Some(start)));
        assert_eq!(time(|| later), later, "outside a run");
    }

    #[test]
    fn the_replay_is_current_only_while_the_run_starts_and_is_polled() {
        let replay = Arc::new(Replay::default());
        let mut run = replay.run(|| {
            assert!(current().is_some(), "while the future is made");
            poll_fn(|_| Poll::Ready(current().is_some()))
        });
        assert!(current().is_none(), "not between polls");
        assert_eq!((&mut run).now_or_never(), Some(true), "while it is polled");
        assert!(current().is_none(), "not after them");
    }
}
