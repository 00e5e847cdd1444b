//! The credential `Transaction` methods: refresh tokens (found by hash, rotated, revoked
//! by login family or by user), recovery codes (replaced, used once) and started
//! identity-provider sign-ins (taken once).

use crate::support::Store;
use crate::writes::Writes;
use muster_domain::model::{OAuthState, RefreshToken, TokenHash, User, UserId};
use muster_domain::ports::{Lock, UserRepository, transact};
use muster_persistence::testing::PURGE_BATCH;
use time::{Duration, OffsetDateTime};

use crate::support::credentials::{full_user, new_family, oauth_state, refresh_token, unique_hash};
use crate::support::{at_minute, seed_org};

contract_tests!(
    refresh_token_is_found_by_hash_and_marked_replaced,
    revoking_a_login_family_revokes_only_that_family,
    revoking_a_users_tokens_revokes_only_that_user,
    recovery_codes_are_replaced_and_used_once,
    an_oauth_state_is_taken_once,
    expired_sign_ins_are_purged,
    a_purge_of_many_batches_forgets_every_expired_sign_in,
);

/// A user stored in a fresh organization.
async fn stored_user(db: &impl Store) -> User {
    let seed = seed_org(db).await;
    let user = full_user(seed.org);
    db.insert_user(&user).await.unwrap();
    user
}

/// The refresh token whose hash is `hash`, read in a transaction (locked for update).
async fn token(db: &impl Store, hash: TokenHash) -> Option<RefreshToken> {
    transact(db, move |tx| {
        Box::pin(async move { Ok(tx.refresh_token_by_hash(&hash, Lock::Update).await?) })
    })
    .await
    .unwrap()
}

async fn refresh_token_is_found_by_hash_and_marked_replaced(db: &impl Store) {
    let user = stored_user(db).await;
    let written = refresh_token(&user, new_family());
    db.insert_refresh_tokens(std::slice::from_ref(&written))
        .await
        .unwrap();
    assert_eq!(token(db, written.token_hash).await, Some(written.clone()));
    assert_eq!(token(db, unique_hash()).await, None);

    let at = at_minute(3);
    let id = written.id;
    transact(db, move |tx| {
        Box::pin(async move { Ok(tx.mark_refresh_token_replaced(id, at).await?) })
    })
    .await
    .unwrap();
    let replaced = RefreshToken {
        replaced_at: Some(at),
        ..written
    };
    assert_eq!(token(db, replaced.token_hash).await, Some(replaced));
}

/// Revokes the login `family`'s tokens, or `user`'s, at `at`; how many.
async fn revoke(db: &impl Store, what: Revoke, at: OffsetDateTime) -> u64 {
    transact(db, move |tx| {
        Box::pin(async move {
            Ok(match what {
                Revoke::Family(family) => tx.revoke_login_family(family, at).await?,
                Revoke::User(user) => tx.revoke_user_refresh_tokens(user, at).await?,
            })
        })
    })
    .await
    .unwrap()
}

#[derive(Debug, Clone, Copy)]
enum Revoke {
    Family(muster_domain::model::LoginFamilyId),
    User(UserId),
}

async fn revoking_a_login_family_revokes_only_that_family(db: &impl Store) {
    let user = stored_user(db).await;
    let (family, other_family) = (new_family(), new_family());
    let earlier = at_minute(-60);
    let rotated = RefreshToken {
        replaced_at: Some(at_minute(-61)),
        ..refresh_token(&user, family)
    };
    let revoked = RefreshToken {
        revoked_at: Some(earlier),
        ..refresh_token(&user, family)
    };
    let live = refresh_token(&user, family);
    let other = refresh_token(&user, other_family);
    let all = [
        rotated.clone(),
        revoked.clone(),
        live.clone(),
        other.clone(),
    ];
    db.insert_refresh_tokens(&all).await.unwrap();

    let at = at_minute(0);
    assert_eq!(revoke(db, Revoke::Family(family), at).await, 2);
    for expected in [&rotated, &live] {
        let stored = token(db, expected.token_hash).await.unwrap();
        assert_eq!(stored.revoked_at, Some(at));
        assert_eq!(stored.replaced_at, expected.replaced_at);
    }
    // An earlier revocation keeps its time; the other login is untouched.
    assert_eq!(token(db, revoked.token_hash).await, Some(revoked));
    assert_eq!(token(db, other.token_hash).await, Some(other));
    assert_eq!(revoke(db, Revoke::Family(family), at_minute(1)).await, 0);
}

async fn revoking_a_users_tokens_revokes_only_that_user(db: &impl Store) {
    let user = stored_user(db).await;
    let colleague = full_user(user.org_id);
    db.insert_user(&colleague).await.unwrap();
    let mine = [
        refresh_token(&user, new_family()),
        refresh_token(&user, new_family()),
    ];
    let theirs = refresh_token(&colleague, new_family());
    db.insert_refresh_tokens(&mine).await.unwrap();
    db.insert_refresh_tokens(std::slice::from_ref(&theirs))
        .await
        .unwrap();

    let at = at_minute(5);
    assert_eq!(revoke(db, Revoke::User(user.id), at).await, 2);
    for token_of_mine in &mine {
        let stored = token(db, token_of_mine.token_hash).await.unwrap();
        assert_eq!(stored.revoked_at, Some(at));
    }
    assert_eq!(token(db, theirs.token_hash).await, Some(theirs));
    assert_eq!(revoke(db, Revoke::User(user.id), at_minute(6)).await, 0);
}

/// Replaces `user`'s recovery codes with `hashes`.
async fn replace_codes(db: &impl Store, user: UserId, hashes: &[TokenHash]) {
    let hashes = hashes.to_vec();
    transact(db, move |tx| {
        Box::pin(async move { Ok(tx.replace_recovery_codes(user, &hashes).await?) })
    })
    .await
    .unwrap();
}

/// Uses `user`'s recovery code `hash`; whether it was unused.
async fn use_code(db: &impl Store, user: UserId, hash: TokenHash) -> bool {
    let at = at_minute(0);
    transact(db, move |tx| {
        Box::pin(async move { Ok(tx.use_recovery_code(user, &hash, at).await?) })
    })
    .await
    .unwrap()
}

async fn recovery_codes_are_replaced_and_used_once(db: &impl Store) {
    let user = stored_user(db).await;
    let colleague = full_user(user.org_id);
    db.insert_user(&colleague).await.unwrap();
    let (a, b, c) = (unique_hash(), unique_hash(), unique_hash());
    replace_codes(db, user.id, &[a, b]).await;
    replace_codes(db, colleague.id, &[c]).await;

    assert!(use_code(db, user.id, a).await);
    assert!(!use_code(db, user.id, a).await, "a code is used once");
    assert!(!use_code(db, user.id, unique_hash()).await, "unknown code");
    assert!(!use_code(db, user.id, c).await, "another user's code");

    // New codes replace all the old ones, used or not.
    let d = unique_hash();
    replace_codes(db, user.id, &[d]).await;
    assert!(!use_code(db, user.id, b).await, "replaced");
    assert!(use_code(db, user.id, d).await);
    replace_codes(db, user.id, &[]).await;
    replace_codes(db, user.id, &[a]).await;
    assert!(
        use_code(db, user.id, a).await,
        "a replaced code is a new code"
    );
    // The colleague's codes were never touched.
    assert!(use_code(db, colleague.id, c).await);
}

/// Takes the started sign-in whose state hashes to `hash`.
async fn take(db: &impl Store, hash: TokenHash) -> Option<OAuthState> {
    transact(db, move |tx| {
        Box::pin(async move { Ok(tx.take_oauth_state(&hash).await?) })
    })
    .await
    .unwrap()
}

/// Stores `states` as started sign-ins, in one transaction.
async fn store_states(db: &impl Store, states: Vec<OAuthState>) {
    transact(db, move |tx| {
        Box::pin(async move {
            for state in &states {
                tx.insert_oauth_state(state).await?;
            }
            Ok(())
        })
    })
    .await
    .unwrap();
}

async fn an_oauth_state_is_taken_once(db: &impl Store) {
    let (state, other) = (oauth_state(), oauth_state());
    store_states(db, vec![state.clone(), other.clone()]).await;

    assert_eq!(take(db, state.state_hash).await, Some(state.clone()));
    assert_eq!(take(db, state.state_hash).await, None, "taken once");
    assert_eq!(take(db, unique_hash()).await, None);
    let other_taken = take(db, other.state_hash).await.unwrap();
    assert_eq!(other_taken.code_verifier, other.code_verifier);
    assert_eq!(
        other_taken.expires_at - other_taken.created_at,
        Duration::minutes(10)
    );
}

async fn expired_sign_ins_are_purged(db: &impl Store) {
    let (fresh, mut stale) = (oauth_state(), oauth_state());
    stale.expires_at = stale.created_at - Duration::seconds(1);
    store_states(db, vec![fresh.clone(), stale.clone()]).await;
    let purged = UserRepository::purge_expired_sign_ins(db, fresh.created_at)
        .await
        .unwrap();
    assert_eq!(purged, 1);
    assert_eq!(take(db, stale.state_hash).await, None);
    assert_eq!(take(db, fresh.state_hash).await, Some(fresh));
}

/// Anyone can start sign-ins, so the service forgets expired ones in batches of about
/// `PURGE_BATCH`; a purge of several batches, with sign-ins sharing an expiry instant
/// across a batch's edge, still forgets every expired one, counts each once, and keeps
/// the one expiring at `now` and the live ones.
async fn a_purge_of_many_batches_forgets_every_expired_sign_in(db: &impl Store) {
    let now = oauth_state().created_at;
    let batch = PURGE_BATCH as usize;
    let mut expiries = vec![now - Duration::seconds(30); batch - 10];
    expiries.extend(vec![now - Duration::seconds(20); 20]);
    expiries.extend(vec![now - Duration::seconds(10); batch + 190]);
    let expired = expiries.len();
    let (at_now, live) = (
        OAuthState {
            expires_at: now,
            ..oauth_state()
        },
        oauth_state(),
    );
    let mut states: Vec<OAuthState> = expiries
        .into_iter()
        .map(|expires_at| OAuthState {
            expires_at,
            ..oauth_state()
        })
        .collect();
    states.extend([at_now.clone(), live.clone()]);
    for chunk in states.chunks(500) {
        store_states(db, chunk.to_vec()).await;
    }

    let purge = || UserRepository::purge_expired_sign_ins(db, now);
    assert_eq!(purge().await.unwrap(), expired as u64);
    assert_eq!(purge().await.unwrap(), 0, "already purged");
    assert_eq!(take(db, at_now.state_hash).await, Some(at_now));
    assert_eq!(take(db, live.state_hash).await, Some(live));
}
