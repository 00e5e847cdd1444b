//! `NonceStore`: replay detection per agent, expiry, purge, and atomicity under
//! concurrent use of one nonce.

use crate::support::Store;

use futures_util::{StreamExt as _, stream};
use muster_domain::model::AgentId;
use muster_domain::ports::NonceOutcome;
use muster_persistence::testing::PURGE_BATCH;
use time::{Duration, OffsetDateTime};

use crate::support::{new_id, now_ms, seed_org};

contract_tests!(
    first_use_is_fresh_then_replayed,
    nonces_are_per_agent,
    expired_nonce_is_fresh_again,
    purge_deletes_only_expired_and_counts,
    purge_of_many_batches_deletes_every_expired_record,
    concurrent_uses_of_one_nonce_let_exactly_one_through,
);

const FIVE_MINUTES: Duration = Duration::minutes(5);

fn nonce() -> String {
    format!("nonce-{}", new_id().simple())
}

async fn remember(
    db: &impl Store,
    agent: AgentId,
    nonce: &str,
    now: OffsetDateTime,
) -> NonceOutcome {
    db.remember(agent, nonce, now, now + FIVE_MINUTES)
        .await
        .unwrap()
}

async fn first_use_is_fresh_then_replayed(db: &impl Store) {
    let seed = seed_org(db).await;
    let (n, now) = (nonce(), now_ms());
    assert_eq!(remember(db, seed.hr, &n, now).await, NonceOutcome::Fresh);
    assert_eq!(remember(db, seed.hr, &n, now).await, NonceOutcome::Replayed);
    let later = now + Duration::minutes(4);
    assert_eq!(
        remember(db, seed.hr, &n, later).await,
        NonceOutcome::Replayed
    );
    // Another nonce of the same agent is unaffected.
    assert_eq!(
        remember(db, seed.hr, &nonce(), now).await,
        NonceOutcome::Fresh
    );
}

async fn nonces_are_per_agent(db: &impl Store) {
    let first = seed_org(db).await;
    let second = seed_org(db).await;
    let (n, now) = (nonce(), now_ms());
    assert_eq!(remember(db, first.hr, &n, now).await, NonceOutcome::Fresh);
    assert_eq!(remember(db, second.hr, &n, now).await, NonceOutcome::Fresh);
    assert_eq!(
        remember(db, first.hr, &n, now).await,
        NonceOutcome::Replayed
    );
    assert_eq!(
        remember(db, second.hr, &n, now).await,
        NonceOutcome::Replayed
    );
}

async fn expired_nonce_is_fresh_again(db: &impl Store) {
    let seed = seed_org(db).await;
    let (n, now) = (nonce(), now_ms());
    let expires = now + FIVE_MINUTES;
    assert_eq!(remember(db, seed.hr, &n, now).await, NonceOutcome::Fresh);
    // Until its expiry instant (inclusive) the record still counts.
    assert_eq!(
        remember(db, seed.hr, &n, expires).await,
        NonceOutcome::Replayed
    );
    // Past it, the nonce is new again, and recorded anew for another window.
    let after = expires + Duration::milliseconds(1);
    assert_eq!(remember(db, seed.hr, &n, after).await, NonceOutcome::Fresh);
    assert_eq!(
        remember(db, seed.hr, &n, after).await,
        NonceOutcome::Replayed
    );
}

async fn purge_deletes_only_expired_and_counts(db: &impl Store) {
    let first = seed_org(db).await;
    let second = seed_org(db).await;
    let now = now_ms();
    let (expired_a, expired_b, boundary, live) = (nonce(), nonce(), nonce(), nonce());
    let record = |agent, n: &str, expires| {
        let n = n.to_owned();
        async move { db.remember(agent, &n, now, expires).await.unwrap() }
    };
    record(first.hr, &expired_a, now + Duration::seconds(1)).await;
    record(second.hr, &expired_b, now + Duration::seconds(2)).await;
    record(first.hr, &boundary, now + Duration::seconds(10)).await;
    record(second.hr, &live, now + Duration::minutes(10)).await;

    assert_eq!(
        db.purge_expired(now).await.unwrap(),
        0,
        "nothing has expired yet"
    );
    // Records that expired before `purge_now` go; one expiring exactly then stays.
    let purge_now = now + Duration::seconds(10);
    assert_eq!(db.purge_expired(purge_now).await.unwrap(), 2);
    assert_eq!(
        db.purge_expired(purge_now).await.unwrap(),
        0,
        "already purged"
    );

    // Asked at the original `now`, a purged record no longer answers "replayed" and a
    // kept one still does.
    let at_start = |agent, n: &str| {
        let n = n.to_owned();
        async move {
            db.remember(agent, &n, now, now + Duration::minutes(10))
                .await
                .unwrap()
        }
    };
    assert_eq!(at_start(first.hr, &expired_a).await, NonceOutcome::Fresh);
    assert_eq!(at_start(second.hr, &expired_b).await, NonceOutcome::Fresh);
    assert_eq!(at_start(first.hr, &boundary).await, NonceOutcome::Replayed);
    assert_eq!(at_start(second.hr, &live).await, NonceOutcome::Replayed);
}

/// The service deletes expired nonces in batches of about `PURGE_BATCH` (so that a
/// minute's worth never holds SQLite's writer for long); a purge of several batches,
/// with records sharing an expiry instant across a batch's edge, still deletes every
/// expired record, counts each once, and keeps the live ones.
async fn purge_of_many_batches_deletes_every_expired_record(db: &impl Store) {
    let seed = seed_org(db).await;
    let now = now_ms();
    let batch = PURGE_BATCH as usize;
    let mut expiries = vec![now - Duration::seconds(30); batch - 10];
    expiries.extend(vec![now - Duration::seconds(20); 20]);
    expiries.extend(vec![now - Duration::seconds(10); batch + 190]);
    let expired = expiries.len();
    let recorded: Vec<NonceOutcome> = stream::iter(expiries)
        .map(|expires| async move {
            let sent = expires - FIVE_MINUTES;
            db.remember(seed.hr, &nonce(), sent, expires).await.unwrap()
        })
        .buffer_unordered(16)
        .collect()
        .await;
    assert!(recorded.iter().all(|r| *r == NonceOutcome::Fresh));
    let (at_now, later) = (nonce(), nonce());
    db.remember(seed.hr, &at_now, now - FIVE_MINUTES, now)
        .await
        .unwrap();
    remember(db, seed.hr, &later, now).await;

    assert_eq!(db.purge_expired(now).await.unwrap(), expired as u64);
    assert_eq!(db.purge_expired(now).await.unwrap(), 0, "already purged");
    for kept in [&at_now, &later] {
        assert_eq!(
            remember(db, seed.hr, kept, now).await,
            NonceOutcome::Replayed
        );
    }
}

async fn concurrent_uses_of_one_nonce_let_exactly_one_through(db: &impl Store) {
    let seed = seed_org(db).await;
    let (n, now) = (nonce(), now_ms());
    let mut handles = Vec::new();
    for _ in 0..8 {
        let (db, n, agent) = (db.clone(), n.clone(), seed.hr);
        handles.push(tokio::spawn(async move {
            db.remember(agent, &n, now, now + FIVE_MINUTES)
                .await
                .unwrap()
        }));
    }
    let mut fresh = 0;
    for handle in handles {
        if handle.await.unwrap() == NonceOutcome::Fresh {
            fresh += 1;
        }
    }
    assert_eq!(fresh, 1, "one request gets through, every replay is caught");
}
