//! The `Idempotency-Key` store: a key is claimed once however many race for it, its
//! kept response comes back for the same body only, a key let go is free again, and old
//! keys are purged.

use crate::support::Store;

use futures_util::{StreamExt as _, stream};
use muster_domain::model::{Begun, IdempotencyKey, StoredResponse};
use muster_persistence::testing::PURGE_BATCH;
use time::Duration;

use crate::support::now_ms;

contract_tests!(
    a_key_is_claimed_kept_and_replayed,
    racing_claims_have_one_winner,
    old_keys_are_purged,
    a_purge_of_many_batches_deletes_every_old_key,
);

fn key(name: &str) -> IdempotencyKey {
    IdempotencyKey::new("agent:1", "POST", "/tasks", name).unwrap()
}

fn response() -> StoredResponse {
    StoredResponse {
        status: 201,
        content_type: Some("application/json".into()),
        body: b"{\"data\":{}}\x00\xff".to_vec(),
    }
}

async fn a_key_is_claimed_kept_and_replayed(db: &impl Store) {
    let k = key("a");
    let now = now_ms();
    assert_eq!(db.begin(&k, b"body", now).await.unwrap(), Begun::Claimed);
    assert_eq!(db.begin(&k, b"body", now).await.unwrap(), Begun::InProgress);
    assert_eq!(db.begin(&k, b"other", now).await.unwrap(), Begun::Mismatch);
    db.finish(&k, &response()).await.unwrap();
    assert_eq!(
        db.begin(&k, b"body", now).await.unwrap(),
        Begun::Replay(response())
    );
    // A kept response is never let go.
    db.abandon(&k).await.unwrap();
    assert_eq!(
        db.begin(&k, b"body", now).await.unwrap(),
        Begun::Replay(response())
    );
    let other_scope = IdempotencyKey::new("agent:2", "POST", "/tasks", "a").unwrap();
    assert_eq!(
        db.begin(&other_scope, b"body", now).await.unwrap(),
        Begun::Claimed
    );
    db.abandon(&other_scope).await.unwrap();
    assert_eq!(
        db.begin(&other_scope, b"body", now).await.unwrap(),
        Begun::Claimed,
        "a key let go is free again"
    );
}

async fn racing_claims_have_one_winner(db: &impl Store) {
    let racers: Vec<_> = (0..8)
        .map(|_| {
            let db = db.clone();
            tokio::spawn(async move { db.begin(&key("race"), b"body", now_ms()).await })
        })
        .collect();
    let mut claimed = 0;
    for racer in racers {
        match racer.await.unwrap().unwrap() {
            Begun::Claimed => claimed += 1,
            Begun::InProgress => {}
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(claimed, 1);
}

async fn old_keys_are_purged(db: &impl Store) {
    let now = now_ms();
    db.begin(&key("old"), b"x", now - Duration::hours(25))
        .await
        .unwrap();
    db.begin(&key("new"), b"x", now).await.unwrap();
    assert_eq!(db.purge(now - Duration::hours(24)).await.unwrap(), 1);
    assert_eq!(
        db.begin(&key("old"), b"x", now).await.unwrap(),
        Begun::Claimed
    );
    assert_eq!(
        db.begin(&key("new"), b"x", now).await.unwrap(),
        Begun::InProgress
    );
}

/// Old keys are deleted in batches of about `PURGE_BATCH`; a purge of more than one,
/// with keys sharing their creation instant across a batch's edge, deletes and counts
/// every old key and keeps the others.
async fn a_purge_of_many_batches_deletes_every_old_key(db: &impl Store) {
    let now = now_ms();
    let batch = PURGE_BATCH as usize;
    let mut created = vec![now - Duration::hours(26); batch - 2];
    created.extend(vec![now - Duration::hours(25); batch / 2]);
    let old = created.len();
    let claimed: Vec<Begun> = stream::iter(created.into_iter().enumerate())
        .map(|(i, at)| async move { db.begin(&key(&format!("old-{i}")), b"x", at).await.unwrap() })
        .buffer_unordered(16)
        .collect()
        .await;
    assert!(claimed.iter().all(|c| *c == Begun::Claimed));
    db.begin(&key("new"), b"x", now).await.unwrap();

    assert_eq!(
        db.purge(now - Duration::hours(24)).await.unwrap(),
        old as u64
    );
    assert_eq!(db.purge(now - Duration::hours(24)).await.unwrap(), 0);
    assert_eq!(
        db.begin(&key("new"), b"x", now).await.unwrap(),
        Begun::InProgress
    );
}
