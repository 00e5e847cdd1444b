//! API keys: `UserRepository` reads (by hash with the owner, a user's list, one key) and
//! `touch_api_key`; the `Transaction` methods `insert_api_key` and `delete_api_key`.

use crate::support::Store;
use crate::writes::Writes;
use muster_domain::model::{ApiKey, ApiKeyId, ApiKeyScope, OrgId, User, UserId};
use muster_domain::ports::transact;
use time::Duration;

use crate::support::credentials::{api_key, changed_user, full_user, unique_hash};
use crate::support::{at_minute, new_id, now_ms, seed_org};

contract_tests!(
    api_key_by_hash_answers_the_key_and_its_owner_as_stored_now,
    api_keys_of_lists_only_that_users_keys_newest_first,
    api_key_is_scoped_by_organization_and_user,
    delete_api_key_answers_the_deleted_key_once,
    touch_api_key_writes_at_most_once_a_window,
);

/// Two users of one organization, stored.
async fn two_users(db: &impl Store) -> (User, User) {
    let seed = seed_org(db).await;
    let (owner, colleague) = (full_user(seed.org), full_user(seed.org));
    db.insert_user(&owner).await.unwrap();
    db.insert_user(&colleague).await.unwrap();
    (owner, colleague)
}

async fn api_key_by_hash_answers_the_key_and_its_owner_as_stored_now(db: &impl Store) {
    let (owner, _) = two_users(db).await;
    let key = ApiKey {
        scopes: vec![ApiKeyScope::Read, ApiKeyScope::Write],
        last_used_at: Some(at_minute(-5)),
        expires_at: Some(at_minute(60 * 24)),
        ..api_key(&owner)
    };
    db.insert_api_key(&key).await.unwrap();
    assert_eq!(
        db.api_key_by_hash(&key.key_hash).await.unwrap(),
        Some((key.clone(), owner.clone()))
    );
    assert_eq!(db.api_key_by_hash(&unique_hash()).await.unwrap(), None);

    // The owner as stored now, not as it was when the key was made.
    let demoted = changed_user(&owner);
    assert!(db.update_user(&demoted, now_ms()).await.unwrap());
    assert_eq!(
        db.api_key_by_hash(&key.key_hash).await.unwrap(),
        Some((key, demoted))
    );
}

async fn api_keys_of_lists_only_that_users_keys_newest_first(db: &impl Store) {
    let (owner, colleague) = two_users(db).await;
    // Ids are UUID v7: made later, listed first.
    let keys: Vec<ApiKey> = (0..3).map(|_| api_key(&owner)).collect();
    for key in &keys {
        db.insert_api_key(key).await.unwrap();
    }
    db.insert_api_key(&api_key(&colleague)).await.unwrap();

    let listed = db.api_keys_of(owner.org_id, owner.id).await.unwrap();
    let newest_first: Vec<ApiKey> = keys.into_iter().rev().collect();
    assert_eq!(listed, newest_first);
    assert_eq!(
        db.api_keys_of(colleague.org_id, colleague.id)
            .await
            .unwrap()
            .len(),
        1
    );
    let elsewhere = OrgId::from_uuid(new_id());
    assert!(
        db.api_keys_of(elsewhere, owner.id)
            .await
            .unwrap()
            .is_empty()
    );
    let nobody = UserId::from_uuid(new_id());
    assert!(
        db.api_keys_of(owner.org_id, nobody)
            .await
            .unwrap()
            .is_empty()
    );
}

async fn api_key_is_scoped_by_organization_and_user(db: &impl Store) {
    let (owner, colleague) = two_users(db).await;
    let key = api_key(&owner);
    db.insert_api_key(&key).await.unwrap();
    assert_eq!(
        db.api_key(owner.org_id, owner.id, key.id).await.unwrap(),
        Some(key.clone())
    );
    assert_eq!(
        db.api_key(owner.org_id, colleague.id, key.id)
            .await
            .unwrap(),
        None
    );
    let elsewhere = OrgId::from_uuid(new_id());
    assert_eq!(db.api_key(elsewhere, owner.id, key.id).await.unwrap(), None);
    let unknown = ApiKeyId::from_uuid(new_id());
    assert_eq!(
        db.api_key(owner.org_id, owner.id, unknown).await.unwrap(),
        None
    );
}

/// Deletes key `id` as `user` of `org`; the deleted key.
async fn delete(db: &impl Store, org: OrgId, user: UserId, id: ApiKeyId) -> Option<ApiKey> {
    transact(db, move |tx| {
        Box::pin(async move { Ok(tx.delete_api_key(org, user, id).await?) })
    })
    .await
    .unwrap()
}

async fn delete_api_key_answers_the_deleted_key_once(db: &impl Store) {
    let (owner, colleague) = two_users(db).await;
    let (key, kept) = (api_key(&owner), api_key(&owner));
    db.insert_api_key(&key).await.unwrap();
    db.insert_api_key(&kept).await.unwrap();

    // Another user's key is not theirs to delete.
    assert_eq!(delete(db, owner.org_id, colleague.id, key.id).await, None);
    assert!(db.api_key_by_hash(&key.key_hash).await.unwrap().is_some());

    assert_eq!(
        delete(db, owner.org_id, owner.id, key.id).await,
        Some(key.clone())
    );
    assert_eq!(delete(db, owner.org_id, owner.id, key.id).await, None);
    assert_eq!(
        db.api_key(owner.org_id, owner.id, key.id).await.unwrap(),
        None
    );
    assert_eq!(db.api_key_by_hash(&key.key_hash).await.unwrap(), None);
    assert_eq!(
        db.api_keys_of(owner.org_id, owner.id).await.unwrap(),
        [kept]
    );
}

async fn touch_api_key_writes_at_most_once_a_window<S: Store>(db: &S) {
    let (owner, _) = two_users(db).await;
    let key = api_key(&owner);
    db.insert_api_key(&key).await.unwrap();
    let last_used = |db: &S| {
        let (db, key) = (db.clone(), key.clone());
        async move {
            db.api_key(key.org_id, key.user_id, key.id)
                .await
                .unwrap()
                .unwrap()
                .last_used_at
        }
    };
    let minute = Duration::minutes(1);

    // Never used: the first use is recorded.
    let first = at_minute(0);
    db.touch_api_key(key.id, first, first - minute)
        .await
        .unwrap();
    assert_eq!(last_used(db).await, Some(first));

    // Within the minute: nothing is written.
    let soon = first + Duration::seconds(30);
    db.touch_api_key(key.id, soon, soon - minute).await.unwrap();
    assert_eq!(last_used(db).await, Some(first));
    // Exactly a minute later the recorded use is not before `unless_since`: still not.
    let edge = first + minute;
    db.touch_api_key(key.id, edge, edge - minute).await.unwrap();
    assert_eq!(last_used(db).await, Some(first));

    // Past the minute: recorded again.
    let later = first + Duration::seconds(61);
    db.touch_api_key(key.id, later, later - minute)
        .await
        .unwrap();
    assert_eq!(last_used(db).await, Some(later));

    // An unknown key is no error.
    let unknown = ApiKeyId::from_uuid(new_id());
    db.touch_api_key(unknown, later, later - minute)
        .await
        .unwrap();
}
