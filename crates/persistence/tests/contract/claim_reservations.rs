//! The credits a claim reserved for its task (decision D-106) on every store: a
//! reservation round trips, locked or not, and is removed once; a task holds at most one;
//! its credits are more than 0; another organization's is not there.

use crate::support::Store;
use muster_domain::model::{AgentId, ClaimReservation, OrgId, TaskId};
use muster_domain::ports::{Lock, transact};
use muster_domain::service::{Conflict, ServiceError};

use crate::support::{at_minute, seed_org, task};
use crate::writes::Writes;

contract_tests!(
    a_claim_reservation_round_trips_and_is_removed_once,
    a_task_holds_one_claim_reservation,
    a_claim_reservation_holds_some_credits,
    another_organizations_claim_reservation_is_not_there,
);

/// A stored task of `org`.
async fn stored_task(db: &impl Store, org: OrgId) -> TaskId {
    let t = task(org);
    db.insert(&t, &[]).await.unwrap();
    t.id
}

fn reservation(org: OrgId, task: TaskId, agent: AgentId, credits: i64) -> ClaimReservation {
    ClaimReservation {
        org_id: org,
        task_id: task,
        agent_id: agent,
        credits,
        created_at: at_minute(7),
    }
}

async fn insert(db: &impl Store, held: &ClaimReservation) -> Result<(), ServiceError> {
    let held = held.clone();
    transact(db, move |tx| {
        Box::pin(async move { Ok(tx.insert_claim_reservation(&held).await?) })
    })
    .await
}

async fn find(db: &impl Store, org: OrgId, task: TaskId, lock: Lock) -> Option<ClaimReservation> {
    transact(db, move |tx| {
        Box::pin(async move { Ok(tx.claim_reservation(org, task, lock).await?) })
    })
    .await
    .unwrap()
}

async fn delete(db: &impl Store, org: OrgId, task: TaskId) -> bool {
    transact(db, move |tx| {
        Box::pin(async move { Ok(tx.delete_claim_reservation(org, task).await?) })
    })
    .await
    .unwrap()
}

async fn a_claim_reservation_round_trips_and_is_removed_once(db: &impl Store) {
    let seed = seed_org(db).await;
    let held_task = stored_task(db, seed.org).await;
    let other_task = stored_task(db, seed.org).await;
    let held = reservation(seed.org, held_task, seed.hr, 1_000_000_000);
    insert(db, &held).await.unwrap();
    for lock in [Lock::Nothing, Lock::Share, Lock::Update] {
        assert_eq!(
            find(db, seed.org, held_task, lock).await.as_ref(),
            Some(&held)
        );
    }
    assert_eq!(find(db, seed.org, other_task, Lock::Update).await, None);
    assert!(!delete(db, seed.org, other_task).await);
    assert!(delete(db, seed.org, held_task).await);
    assert_eq!(find(db, seed.org, held_task, Lock::Nothing).await, None);
    assert!(!delete(db, seed.org, held_task).await, "removed once");
    // Once removed, the task may hold a new one.
    insert(db, &reservation(seed.org, held_task, seed.hr, 3))
        .await
        .unwrap();
    assert_eq!(
        find(db, seed.org, held_task, Lock::Nothing)
            .await
            .map(|h| h.credits),
        Some(3)
    );
}

async fn a_task_holds_one_claim_reservation(db: &impl Store) {
    let seed = seed_org(db).await;
    let held_task = stored_task(db, seed.org).await;
    insert(db, &reservation(seed.org, held_task, seed.hr, 5))
        .await
        .unwrap();
    let refused = insert(db, &reservation(seed.org, held_task, seed.hr, 9)).await;
    assert!(
        matches!(refused, Err(ServiceError::Conflict(Conflict::Duplicate(_)))),
        "{refused:?}"
    );
    assert_eq!(
        find(db, seed.org, held_task, Lock::Nothing)
            .await
            .map(|h| h.credits),
        Some(5),
        "the first one stays"
    );
}

async fn a_claim_reservation_holds_some_credits(db: &impl Store) {
    let seed = seed_org(db).await;
    let held_task = stored_task(db, seed.org).await;
    for credits in [0, -1] {
        let refused = insert(db, &reservation(seed.org, held_task, seed.hr, credits)).await;
        assert!(refused.is_err(), "{credits}: {refused:?}");
    }
    assert_eq!(find(db, seed.org, held_task, Lock::Nothing).await, None);
}

async fn another_organizations_claim_reservation_is_not_there(db: &impl Store) {
    let mine = seed_org(db).await;
    let theirs = seed_org(db).await;
    let held_task = stored_task(db, mine.org).await;
    let held = reservation(mine.org, held_task, mine.hr, 8);
    insert(db, &held).await.unwrap();
    assert_eq!(find(db, theirs.org, held_task, Lock::Update).await, None);
    assert!(!delete(db, theirs.org, held_task).await);
    assert_eq!(
        find(db, mine.org, held_task, Lock::Nothing).await,
        Some(held)
    );
}
