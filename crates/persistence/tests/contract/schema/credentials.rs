//! The user columns and credential tables of `schema.rs` against the migrations: a row
//! of each written and read back through the ports, every column with a value and,
//! where nullable, without one. Hashes come back as the same 32 bytes.

use crate::writes::Writes;
use muster_domain::model::{ApiKey, ApiKeyScope, OAuthState, RefreshToken, User, UserId};
use muster_domain::ports::{Lock, UniqueKey, UserRepository, transact};
use muster_domain::service::{Conflict, ServiceError};
use muster_persistence::Database;

use crate::support::credentials::{
    api_key, full_user, new_family, oauth_state, refresh_token, unique_hash,
};
use crate::support::{at_minute, new_id, seed_org};

engine_contract_tests!(
    users_round_trip_with_every_field_set,
    refresh_tokens_round_trip,
    recovery_codes_round_trip,
    api_keys_round_trip,
    oauth_states_round_trip,
    credentials_need_a_stored_user_and_unique_hashes,
);

async fn stored_user(db: &Database) -> User {
    let seed = seed_org(db).await;
    let user = full_user(seed.org);
    db.insert_user(&user).await.unwrap();
    user
}

async fn users_round_trip_with_every_field_set(db: &Database) {
    let user = stored_user(db).await;
    let stored = UserRepository::user(db, user.org_id, user.id)
        .await
        .unwrap()
        .expect("stored user");
    assert_eq!(stored, user);
    assert_eq!(
        stored.totp.secret.as_deref(),
        Some(&[0x00, 0x9f, 0xff, 0x10, 0x00][..])
    );
    assert_eq!(stored.totp.last_step, Some(59_000_000_123), "beyond i32");
}

async fn refresh_tokens_round_trip(db: &Database) {
    let user = stored_user(db).await;
    let bare = refresh_token(&user, new_family());
    let full = RefreshToken {
        replaced_at: Some(at_minute(1)),
        revoked_at: Some(at_minute(2)),
        ..refresh_token(&user, new_family())
    };
    db.insert_refresh_tokens(&[bare.clone(), full.clone()])
        .await
        .unwrap();
    for written in [bare, full] {
        let hash = written.token_hash;
        let stored = transact(db, move |tx| {
            Box::pin(async move { Ok(tx.refresh_token_by_hash(&hash, Lock::Share).await?) })
        })
        .await
        .unwrap();
        assert_eq!(stored, Some(written));
    }
}

async fn recovery_codes_round_trip(db: &Database) {
    let user = stored_user(db).await;
    let (id, hash) = (user.id, unique_hash());
    let found = transact(db, move |tx| {
        Box::pin(async move {
            tx.replace_recovery_codes(id, &[hash]).await?;
            Ok(tx.use_recovery_code(id, &hash, at_minute(0)).await?)
        })
    })
    .await
    .unwrap();
    assert!(found, "the stored hash is found by the same bytes");
}

async fn api_keys_round_trip(db: &Database) {
    let user = stored_user(db).await;
    let bare = ApiKey {
        scopes: vec![ApiKeyScope::Admin],
        ..api_key(&user)
    };
    let full = ApiKey {
        last_used_at: Some(at_minute(-1)),
        expires_at: Some(at_minute(60)),
        ..api_key(&user)
    };
    for written in [bare, full] {
        db.insert_api_key(&written).await.unwrap();
        let stored = db.api_key_by_hash(&written.key_hash).await.unwrap();
        assert_eq!(stored, Some((written.clone(), user.clone())));
        let stored = db.api_key(user.org_id, user.id, written.id).await.unwrap();
        assert_eq!(stored, Some(written));
    }
}

async fn oauth_states_round_trip(db: &Database) {
    let written = oauth_state();
    let moved = written.clone();
    let taken: Option<OAuthState> = transact(db, move |tx| {
        Box::pin(async move {
            tx.insert_oauth_state(&moved).await?;
            Ok(tx.take_oauth_state(&moved.state_hash).await?)
        })
    })
    .await
    .unwrap();
    assert_eq!(taken, Some(written));
}

async fn credentials_need_a_stored_user_and_unique_hashes(db: &Database) {
    let user = stored_user(db).await;
    let ghost = User {
        id: UserId::from_uuid(new_id()),
        ..user.clone()
    };
    assert!(db.insert_api_key(&api_key(&ghost)).await.is_err());
    let orphan = refresh_token(&ghost, new_family());
    assert!(db.insert_refresh_tokens(&[orphan]).await.is_err());

    let key = api_key(&user);
    db.insert_api_key(&key).await.unwrap();
    let same_hash = ApiKey {
        key_hash: key.key_hash,
        ..api_key(&user)
    };
    let err = db.insert_api_key(&same_hash).await.unwrap_err();
    assert!(
        matches!(
            err,
            ServiceError::Conflict(Conflict::Duplicate(UniqueKey::Other(_)))
        ),
        "got {err:?}"
    );
}
