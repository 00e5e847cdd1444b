//! `NonceBatcher`: the batched nonce store honours the `NonceStore` contract, and a
//! nonce replayed concurrently with its first use is accepted exactly once, whether the
//! copies land in one batch or in several; beside units of work that fail, and on
//! SQLite when the one writer is held too long.

use std::sync::Arc;

use muster_domain::model::AgentId;
use muster_domain::ports::{NonceOutcome, NonceStore, TaskRepository, transact};
use muster_domain::service::{Conflict, Entity, ServiceError};
use muster_persistence::{Database, NonceBatcher};
use time::{Duration, OffsetDateTime};

use crate::support::{OpenWrite, event, new_id, now_ms, seed_org, task};

engine_contract_tests!(
    batched_first_use_is_fresh_then_replayed_everywhere,
    batched_expired_nonce_is_fresh_again,
    batched_distinct_nonces_are_all_fresh,
    a_nonce_replayed_concurrently_with_its_first_use_is_accepted_once,
    nonces_batched_beside_failing_units_of_work_are_recorded,
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

/// Nonces recorded while units of work run, some of which refuse or panic after
/// writing (on SQLite all of them queue for the one writer): every nonce is fresh once
/// and recorded for every store, and only the units that succeed stand.
async fn nonces_batched_beside_failing_units_of_work_are_recorded(db: &Database) {
    let seed = seed_org(db).await;
    let batcher = Arc::new(NonceBatcher::spawn(db.clone()));
    let now = now_ms();
    let nonces: Vec<String> = (0..48).map(|_| nonce()).collect();
    let remembered: Vec<_> = nonces
        .iter()
        .cloned()
        .map(|n| {
            let batcher = Arc::clone(&batcher);
            tokio::spawn(async move { remember(batcher.as_ref(), seed.hr, &n, now).await })
        })
        .collect();
    let units: Vec<_> = (0..24)
        .map(|i| {
            let (db, written) = (db.clone(), task(seed.org));
            let id = written.id;
            let run = tokio::spawn(async move {
                transact(&db, move |tx| {
                    Box::pin(async move {
                        tx.insert_task(&written).await?;
                        match i % 3 {
                            0 => Ok(()),
                            1 => Err(ServiceError::from(Conflict::ChangedConcurrently {
                                entity: Entity::Task,
                            })),
                            _ => panic!("a unit of work that panics"),
                        }
                    })
                })
                .await
            });
            (i % 3 == 0, id, run)
        })
        .collect();
    for run in remembered {
        assert_eq!(run.await.unwrap(), NonceOutcome::Fresh);
    }
    for (stands, id, run) in units {
        let answered = run.await.is_ok_and(|answer| answer.is_ok());
        assert_eq!(answered, stands);
        let stored = TaskRepository::get(db, seed.org, id).await.unwrap();
        assert_eq!(stored.is_some(), stands);
    }
    for n in &nonces {
        assert_eq!(remember(db, seed.hr, n, now).await, NonceOutcome::Replayed);
        assert_eq!(
            remember(batcher.as_ref(), seed.hr, n, now).await,
            NonceOutcome::Replayed
        );
    }
}

/// SQLite: a nonce batch that the writer cannot take within the pool's timeout (busy
/// with a unit of work that has not finished) is refused as unavailable and never
/// written: the same nonce is fresh once the writer is free.
#[tokio::test]
async fn sqlite_refuses_a_nonce_batch_that_waits_too_long_for_the_writer() {
    use muster_domain::ports::RepositoryError;
    use muster_persistence::testing::TestDatabase;
    use muster_persistence::{Engine, PoolOptions};

    let Some(test) = TestDatabase::new(Engine::Sqlite).await else {
        return;
    };
    let options = PoolOptions {
        timeout: std::time::Duration::from_millis(300),
        ..PoolOptions::default()
    };
    let db = TestDatabase::adopt(test.url.clone(), options).await;
    let seed = seed_org(&db.db).await;
    let batcher = NonceBatcher::spawn(db.db.clone());
    let (n, now) = (nonce(), now_ms());
    let busy = OpenWrite::start(&db.db, vec![event(seed.org, "task.created", now)]).await;
    let err = batcher
        .remember(seed.hr, &n, now, now + TEN_MINUTES)
        .await
        .expect_err("the writer is busy");
    assert!(matches!(err, RepositoryError::Unavailable(_)), "{err:?}");
    busy.release().await;
    assert_eq!(
        remember(&batcher, seed.hr, &n, now).await,
        NonceOutcome::Fresh
    );
}
