//! The login-throttle `Transaction` methods: a streak is stored empty when first asked
//! for, saved (over the stored one, or anew), read back and cleared by its key; concurrent attempts on one streak are
//! counted one after the other; streaks quiet long enough are purged.

use crate::support::Store;
use muster_domain::model::{LoginThrottle, ThrottleKey};
use muster_domain::ports::{UserRepository, transact};
use time::{Duration, OffsetDateTime};

use crate::support::at_minute;
use crate::support::credentials::unique_hash;

contract_tests!(
    a_streak_is_stored_empty_first_then_saved_read_back_and_cleared,
    concurrent_attempts_on_one_streak_are_all_counted,
    streaks_quiet_since_before_the_cut_are_purged,
);

fn new_key() -> ThrottleKey {
    ThrottleKey(unique_hash().0)
}

fn streak(failures: u32, last: OffsetDateTime) -> LoginThrottle {
    LoginThrottle {
        failures,
        last_failure_at: Some(last),
    }
}

/// The streak under `key` asked for at `now`, in a transaction of its own.
async fn read(db: &impl Store, key: ThrottleKey, now: OffsetDateTime) -> LoginThrottle {
    transact(db, move |tx| {
        Box::pin(async move { Ok(tx.login_throttle(&key, now).await?) })
    })
    .await
    .unwrap()
}

async fn save(db: &impl Store, key: ThrottleKey, throttle: LoginThrottle) {
    transact(db, move |tx| {
        Box::pin(async move { Ok(tx.save_login_throttle(&key, &throttle).await?) })
    })
    .await
    .unwrap();
}

async fn clear(db: &impl Store, key: ThrottleKey) {
    transact(db, move |tx| {
        Box::pin(async move { Ok(tx.clear_login_throttle(&key).await?) })
    })
    .await
    .unwrap();
}

async fn a_streak_is_stored_empty_first_then_saved_read_back_and_cleared(db: &impl Store) {
    let (key, other) = (new_key(), new_key());
    assert_eq!(read(db, key, at_minute(0)).await, streak(0, at_minute(0)));
    // Stored: asked again later, it keeps its stamp.
    assert_eq!(read(db, key, at_minute(1)).await, streak(0, at_minute(0)));

    save(db, key, streak(12, at_minute(2))).await;
    save(db, other, streak(1, at_minute(3))).await;
    assert_eq!(read(db, key, at_minute(4)).await, streak(12, at_minute(2)));
    // `save` stores a streak never asked for too.
    assert_eq!(read(db, other, at_minute(4)).await, streak(1, at_minute(3)));

    clear(db, key).await;
    assert_eq!(read(db, key, at_minute(5)).await, streak(0, at_minute(5)));
    clear(db, key).await;
    clear(db, new_key()).await;
}

/// Twenty attempts at once on a streak nobody asked for before: each reads the count
/// the previous one saved (the first ones queue on the row stored empty), so none is
/// lost.
async fn concurrent_attempts_on_one_streak_are_all_counted(db: &impl Store) {
    let key = new_key();
    let attempts = (0..20).map(|n| {
        let at = at_minute(n);
        transact(db, move |tx| {
            Box::pin(async move {
                let current = tx.login_throttle(&key, at).await?;
                let next = LoginThrottle {
                    failures: current.failures + 1,
                    last_failure_at: Some(at),
                };
                tx.save_login_throttle(&key, &next).await?;
                Ok(())
            })
        })
    });
    for done in futures_util::future::join_all(attempts).await {
        done.unwrap();
    }
    assert_eq!(read(db, key, at_minute(30)).await.failures, 20);
}

async fn streaks_quiet_since_before_the_cut_are_purged(db: &impl Store) {
    let cut = at_minute(60);
    let (old, at_cut, recent) = (new_key(), new_key(), new_key());
    save_new(db, old, streak(3, cut - Duration::seconds(1))).await;
    save_new(db, at_cut, streak(14, cut)).await;
    save_new(db, recent, streak(1, cut + Duration::minutes(5))).await;

    let purged = UserRepository::purge_login_throttles(db, cut)
        .await
        .unwrap();

    assert_eq!(purged, 1);
    let later = cut + Duration::hours(1);
    assert_eq!(read(db, old, later).await, streak(0, later), "forgotten");
    assert_eq!(read(db, at_cut, later).await, streak(14, cut));
    assert_eq!(
        read(db, recent, later).await,
        streak(1, cut + Duration::minutes(5))
    );
}

/// Stores `throttle` under a key never asked for (asking first, as the service does).
async fn save_new(db: &impl Store, key: ThrottleKey, throttle: LoginThrottle) {
    read(db, key, throttle.last_failure_at.unwrap()).await;
    save(db, key, throttle).await;
}
