//! The bearer authenticator with mocked ports: access tokens need no storage; API keys
//! are looked up by hash, refused when unknown or expired, and their `lastUsedAt` is
//! written at most once a minute.

use std::sync::{Arc, Mutex};

use muster_domain::model::{
    AccessGrant, ApiKey, ApiKeyId, ApiKeyName, ApiKeyScope, Email, OrgId, User, UserId, UserRole,
};
use muster_domain::ports::{MockClock, MockUserRepository};
use time::OffsetDateTime;
use time::macros::datetime;
use uuid::Uuid;

use super::*;
use crate::keys::ServerKey;
use crate::tokens::token_hash;

const NOW: OffsetDateTime = datetime!(2026-11-26 12:00:00 UTC);
const KEY: &str = "msk_0123456789abcdef0123456789abcdef";

fn tokens() -> Arc<TokenService> {
    let key = ServerKey::from_bytes([7; 32]).unwrap();
    Arc::new(TokenService::new(&key))
}

fn clock_at(now: OffsetDateTime) -> Arc<MockClock> {
    let mut clock = MockClock::new();
    clock.expect_now().return_const(now);
    Arc::new(clock)
}

fn owner() -> User {
    User::new(
        UserId::from_uuid(Uuid::from_u128(1)),
        OrgId::from_uuid(Uuid::from_u128(2)),
        Email::new("ops@example.com").unwrap(),
        "Ops".to_owned(),
        UserRole::Operator,
        "$argon2id$unused".to_owned(),
        NOW,
    )
}

fn api_key(last_used_at: Option<OffsetDateTime>, expires_at: Option<OffsetDateTime>) -> ApiKey {
    let owner = owner();
    ApiKey {
        id: ApiKeyId::from_uuid(Uuid::from_u128(3)),
        org_id: owner.org_id,
        user_id: owner.id,
        name: ApiKeyName::new("ci").unwrap(),
        key_prefix: KEY[..ApiKey::PREFIX_CHARS].to_owned(),
        key_hash: token_hash(KEY),
        scopes: vec![ApiKeyScope::Read, ApiKeyScope::Write],
        last_used_at,
        expires_at,
        created_at: NOW - Duration::days(1),
    }
}

/// Every `touch_api_key(_, at, unless_since)` call, as `(at, unless_since)`.
type Touches = Arc<Mutex<Vec<(OffsetDateTime, OffsetDateTime)>>>;

/// A store holding `key` (found only by its hash), recording every touch.
fn users_holding(key: ApiKey) -> (MockUserRepository, Touches) {
    let touches = Arc::new(Mutex::new(Vec::new()));
    let mut users = MockUserRepository::new();
    let hash = key.key_hash;
    users
        .expect_api_key_by_hash()
        .returning(move |asked| Ok((*asked == hash).then(|| (key.clone(), owner()))));
    let recorded = Arc::clone(&touches);
    users
        .expect_touch_api_key()
        .returning(move |_, at, unless| {
            recorded.lock().unwrap().push((at, unless));
            Ok(())
        });
    (users, touches)
}

fn authenticator(users: MockUserRepository) -> BearerAuthenticator {
    BearerAuthenticator::new(tokens(), Arc::new(users), clock_at(NOW))
}

#[test]
fn api_keys_and_access_tokens_are_told_apart_by_prefix() {
    assert!(BearerAuthenticator::is_api_key(KEY));
    assert!(!BearerAuthenticator::is_api_key(
        "eyJhbGciOiJIUzI1NiJ9.e30.sig"
    ));
    assert!(!BearerAuthenticator::is_api_key("mrt_refresh-token"));
}

#[test]
fn a_valid_access_token_is_its_user_with_the_role_it_was_issued_with() {
    let grant = AccessGrant {
        user_id: UserId::from_uuid(Uuid::from_u128(10)),
        org_id: OrgId::from_uuid(Uuid::from_u128(11)),
        role: UserRole::Admin,
    };
    let token = tokens()
        .access_token(&grant, NOW - Duration::minutes(5))
        .unwrap();
    let actor = authenticator(MockUserRepository::new())
        .access_token(token.token.expose())
        .unwrap();
    assert_eq!(
        actor,
        Actor {
            org_id: grant.org_id,
            kind: ActorKind::User {
                id: grant.user_id,
                role: UserRole::Admin,
                key: None,
            },
        }
    );
}

#[test]
fn an_expired_access_token_is_told_apart_from_a_forged_one() {
    let grant = AccessGrant {
        user_id: UserId::from_uuid(Uuid::from_u128(10)),
        org_id: OrgId::from_uuid(Uuid::from_u128(11)),
        role: UserRole::Viewer,
    };
    let old = tokens()
        .access_token(&grant, NOW - Duration::hours(1))
        .unwrap();
    let auth = authenticator(MockUserRepository::new());
    assert!(matches!(
        auth.access_token(old.token.expose()),
        Err(BearerAuthError::ExpiredAccessToken)
    ));
    let other_key = TokenService::new(&ServerKey::from_bytes([8; 32]).unwrap());
    let forged = other_key.access_token(&grant, NOW).unwrap();
    assert!(matches!(
        auth.access_token(forged.token.expose()),
        Err(BearerAuthError::InvalidAccessToken)
    ));
    assert!(matches!(
        auth.access_token("not-a-jwt"),
        Err(BearerAuthError::InvalidAccessToken)
    ));
}

#[tokio::test]
async fn an_api_key_is_its_owner_limited_by_the_strongest_scope() {
    let (users, _) = users_holding(api_key(Some(NOW), None));
    let actor = authenticator(users).api_key(KEY).await.unwrap();
    let owner = owner();
    assert_eq!(
        actor,
        Actor {
            org_id: owner.org_id,
            kind: ActorKind::User {
                id: owner.id,
                role: UserRole::Operator,
                key: Some(KeyAccess {
                    id: ApiKeyId::from_uuid(Uuid::from_u128(3)),
                    scope: ApiKeyScope::Write,
                }),
            },
        }
    );
}

#[tokio::test]
async fn an_unknown_or_expired_api_key_is_refused() {
    let (users, touches) = users_holding(api_key(None, Some(NOW)));
    let auth = authenticator(users);
    assert!(matches!(
        auth.api_key("msk_someone-else").await,
        Err(BearerAuthError::InvalidApiKey)
    ));
    // Expiry is inclusive: a key expiring now no longer authenticates.
    assert!(matches!(
        auth.api_key(KEY).await,
        Err(BearerAuthError::ExpiredApiKey)
    ));
    assert!(
        touches.lock().unwrap().is_empty(),
        "a refused key is not touched"
    );
    let (users, _) = users_holding(api_key(None, Some(NOW + Duration::seconds(1))));
    assert!(authenticator(users).api_key(KEY).await.is_ok());
}

#[tokio::test]
async fn last_use_is_written_at_most_once_a_minute() {
    let minute_ago = NOW - Duration::minutes(1);
    // Never used, or used more than a minute ago: written, guarded by the same bound so
    // that concurrent requests write once.
    for last in [None, Some(minute_ago - Duration::seconds(1))] {
        let (users, touches) = users_holding(api_key(last, None));
        authenticator(users).api_key(KEY).await.unwrap();
        assert_eq!(
            *touches.lock().unwrap(),
            vec![(NOW, minute_ago)],
            "{last:?}"
        );
    }
    // Used a minute ago or less: not written.
    for last in [minute_ago, NOW - Duration::seconds(30), NOW] {
        let (users, touches) = users_holding(api_key(Some(last), None));
        authenticator(users).api_key(KEY).await.unwrap();
        assert!(touches.lock().unwrap().is_empty(), "{last}");
    }
}

#[test]
fn debug_shows_no_key_material() {
    let auth = authenticator(MockUserRepository::new());
    assert_eq!(format!("{auth:?}"), "BearerAuthenticator { .. }");
}
