//! `NonceBatcher`: the batched nonce store honours the `NonceStore` contract, and a
//! nonce replayed concurrently with its first use is accepted exactly once, whether the
//! copies land in one batch or in several.

use std::sync::Arc;

use muster_domain::model::AgentId;
use muster_domain::ports::{NonceOutcome, NonceStore};
use muster_persistence::{Database, NonceBatcher};
use time::{Duration, OffsetDateTime};

use crate::support::{new_id, now_ms, seed_org};

engine_contract_tests!(
    batched_first_use_is_fresh_then_replayed_everywhere,
    batched_expired_nonce_is_fresh_again,
    batched_distinct_nonces_are_all_fresh,
    a_nonce_replayed_concurrently_with_its_first_use_is_accepted_once,
);

const TEN_MINUTES: Duration = Duration::minutes(10);

fn nonce() -> String {
    format!("nonce-{}", new_id().simple())
}

async fn remember(
    store: &dyn NonceStore,
    agent: AgentId,
    nonce: &str,
    now: OffsetDateTime,
) -> NonceOutcome {
    store
        .remember(agent, nonce, now, now + TEN_MINUTES)
        .await
        .unwrap()
}

/// Recorded through the batcher, a nonce is a replay for the batcher and for any other
/// store on the same database (another instance).
async fn batched_first_use_is_fresh_then_replayed_everywhere(db: &Database) {
    let seed = seed_org(db).await;
    let batcher = NonceBatcher::spawn(db.clone());
    let (n, now) = (nonce(), now_ms());
    assert_eq!(
        remember(&batcher, seed.hr, &n, now).await,
        NonceOutcome::Fresh
    );
    assert_eq!(
        remember(&batcher, seed.hr, &n, now).await,
        NonceOutcome::Replayed
    );
    assert_eq!(remember(db, seed.hr, &n, now).await, NonceOutcome::Replayed);
    let other = nonce();
    assert_eq!(
        remember(db, seed.hr, &other, now).await,
        NonceOutcome::Fresh
    );
    assert_eq!(
        remember(&batcher, seed.hr, &other, now).await,
        NonceOutcome::Replayed
    );
}

async fn batched_expired_nonce_is_fresh_again(db: &Database) {
    let seed = seed_org(db).await;
    let batcher = NonceBatcher::spawn(db.clone());
    let (n, now) = (nonce(), now_ms());
    assert_eq!(
        remember(&batcher, seed.hr, &n, now).await,
        NonceOutcome::Fresh
    );
    let after_expiry = now + TEN_MINUTES + Duration::seconds(1);
    assert_eq!(
        remember(&batcher, seed.hr, &n, after_expiry).await,
        NonceOutcome::Fresh
    );
    assert_eq!(
        remember(&batcher, seed.hr, &n, after_expiry).await,
        NonceOutcome::Replayed
    );
}

/// Many distinct nonces at once (so they share batches): every one is fresh, the same
/// nonce of another agent included.
async fn batched_distinct_nonces_are_all_fresh(db: &Database) {
    let (first, second) = (seed_org(db).await, seed_org(db).await);
    let batcher = Arc::new(NonceBatcher::spawn(db.clone()));
    let now = now_ms();
    let shared = nonce();
    let runs: Vec<_> = (0..64)
        .map(|i| {
            let batcher = Arc::clone(&batcher);
            let agent = if i % 2 == 0 { first.hr } else { second.hr };
            let n = if i < 2 { shared.clone() } else { nonce() };
            tokio::spawn(async move { remember(batcher.as_ref(), agent, &n, now).await })
        })
        .collect();
    for run in runs {
        assert_eq!(run.await.unwrap(), NonceOutcome::Fresh);
    }
}

/// 32 copies of one signed request arrive together: exactly one is accepted.
async fn a_nonce_replayed_concurrently_with_its_first_use_is_accepted_once(db: &Database) {
    let seed = seed_org(db).await;
    let batcher = Arc::new(NonceBatcher::spawn(db.clone()));
    for _ in 0..5 {
        let (n, now) = (nonce(), now_ms());
        let runs: Vec<_> = (0..32)
            .map(|_| {
                let (batcher, n) = (Arc::clone(&batcher), n.clone());
                tokio::spawn(async move { remember(batcher.as_ref(), seed.hr, &n, now).await })
            })
            .collect();
        let mut fresh = 0;
        for run in runs {
            if run.await.unwrap() == NonceOutcome::Fresh {
                fresh += 1;
            }
        }
        assert_eq!(fresh, 1, "exactly one copy is accepted");
    }
}
