//! `AccountService::refresh` (rotation, reuse detection), `logout` and `logout_all`
//! against mocked ports.

use crate::common;

use common::accounts::{
    Accounts, access_for, assert_user_event, fake_hash, key_actor, stored_user,
};
use common::writes::written;
use common::{EARLIER, NOW, agent_actor, types, user_actor};
use futures_executor::block_on;
use muster_domain::model::{
    AgentMode, ApiKeyScope, LoginFamilyId, RefreshToken, RefreshTokenId, User, UserId, UserRole,
};
use muster_domain::policy::Forbidden;
use muster_domain::ports::{Lock, Outcome};
use muster_domain::service::{ServiceError, Unauthorized};
use serde_json::json;
use time::Duration;
use uuid::Uuid;

/// The refresh token the client presents.
const PRESENTED: &str = "mrt_presented";

fn family() -> LoginFamilyId {
    LoginFamilyId::from_uuid(Uuid::from_u128(0xf1))
}

fn token_id() -> RefreshTokenId {
    RefreshTokenId::from_uuid(Uuid::from_u128(0xf2))
}

/// The stored form of [`PRESENTED`], issued to `user` and valid for one more day.
fn stored_token(user: &User) -> RefreshToken {
    RefreshToken {
        id: token_id(),
        org_id: user.org_id,
        user_id: user.id,
        family_id: family(),
        token_hash: fake_hash(PRESENTED),
        created_at: EARLIER,
        expires_at: NOW + Duration::days(1),
        replaced_at: None,
        revoked_at: None,
    }
}

/// The transaction finds `token` (locked for update) by the hash of [`PRESENTED`], once.
fn token_lookup(ports: &mut Accounts, token: Option<RefreshToken>) {
    ports
        .tx
        .expect_refresh_token_by_hash()
        .withf(|hash, lock| *hash == fake_hash(PRESENTED) && *lock == Lock::Update)
        .times(1)
        .returning(move |_, _| Ok(token.clone()));
}

fn is_invalid_refresh_token(err: &ServiceError) -> bool {
    matches!(
        err,
        ServiceError::Unauthorized(Unauthorized::InvalidRefreshToken)
    )
}

#[test]
fn an_unknown_refresh_token_is_refused() {
    let mut ports = Accounts::default();
    token_lookup(&mut ports, None);
    let log = ports.record_writes();
    let (service, _) = ports.build();

    let err = block_on(service.refresh(PRESENTED)).unwrap_err();

    assert!(is_invalid_refresh_token(&err), "{err:?}");
    assert_eq!(err.to_string(), "Invalid or expired refresh token");
    assert!(written(&log).is_empty());
}

#[test]
fn a_replaced_token_shown_again_ends_its_login_and_commits_that() {
    for expires_at in [NOW + Duration::days(1), NOW - Duration::days(1)] {
        replaced_token_shown_again(expires_at);
    }
}

/// A replaced token expiring at `expires_at` (expired or not) ends its login.
fn replaced_token_shown_again(expires_at: time::OffsetDateTime) {
    let user = stored_user();
    let mut ports = Accounts::default();
    token_lookup(
        &mut ports,
        Some(RefreshToken {
            replaced_at: Some(EARLIER),
            expires_at,
            ..stored_token(&user)
        }),
    );
    // The user is not even read: no `tx.user` expectation.
    let log = ports.record_writes();
    let (service, uow) = ports.build();

    let err = block_on(service.refresh(PRESENTED)).unwrap_err();

    assert!(is_invalid_refresh_token(&err), "{err:?}");
    assert_eq!(
        uow.outcomes(),
        [Outcome::Committed],
        "the revocation must not be rolled back with the refusal"
    );
    let w = written(&log);
    assert_eq!(w.calls, ["revoke_login_family"]);
    assert_eq!(w.revoked_families, [family()]);
    assert_eq!(w.stamps, [NOW]);
}

#[test]
fn revoked_and_expired_tokens_are_refused_without_any_write() {
    let user = stored_user();
    let cases = [
        RefreshToken {
            revoked_at: Some(EARLIER),
            ..stored_token(&user)
        },
        // Revoked with the rest of its login after a reuse.
        RefreshToken {
            revoked_at: Some(EARLIER),
            replaced_at: Some(EARLIER),
            ..stored_token(&user)
        },
        RefreshToken {
            expires_at: NOW,
            ..stored_token(&user)
        },
        RefreshToken {
            expires_at: NOW - Duration::milliseconds(1),
            ..stored_token(&user)
        },
    ];
    for token in cases {
        let mut ports = Accounts::default();
        token_lookup(&mut ports, Some(token.clone()));
        let log = ports.record_writes();
        let (service, _) = ports.build();

        let err = block_on(service.refresh(PRESENTED)).unwrap_err();

        assert!(is_invalid_refresh_token(&err), "{token:?}: {err:?}");
        assert!(written(&log).is_empty(), "{token:?}");
    }
}

#[test]
fn a_token_of_a_deleted_user_is_refused() {
    let user = stored_user();
    let mut ports = Accounts::default();
    token_lookup(&mut ports, Some(stored_token(&user)));
    ports
        .tx
        .expect_user()
        .times(1)
        .returning(|_, _, _| Ok(None));
    let log = ports.record_writes();
    let (service, _) = ports.build();

    let err = block_on(service.refresh(PRESENTED)).unwrap_err();

    assert!(is_invalid_refresh_token(&err), "{err:?}");
    assert!(written(&log).is_empty());
}

#[test]
fn a_valid_token_is_rotated_within_its_login() {
    // Promoted since the login: the new access token carries the role as stored now.
    let user = User {
        role: UserRole::Admin,
        ..stored_user()
    };
    let mut ports = Accounts::default();
    token_lookup(&mut ports, Some(stored_token(&user)));
    ports.user_row(&user, Lock::Share);
    let log = ports.record_writes();
    let (service, uow) = ports.build();

    let pair = block_on(service.refresh(PRESENTED)).unwrap();

    assert_eq!(uow.outcomes(), [Outcome::Committed]);
    assert_eq!(pair.access, access_for(&user));
    let w = written(&log);
    assert_eq!(
        w.calls,
        ["mark_refresh_token_replaced", "insert_refresh_token"]
    );
    assert_eq!(w.replaced_tokens, [token_id()]);
    let next = &w.refresh_tokens[0];
    assert_eq!(next.family_id, family(), "same login");
    assert_ne!(next.id, token_id());
    assert_eq!(next.token_hash, fake_hash(pair.refresh_token.expose()));
    assert_ne!(pair.refresh_token.expose(), PRESENTED);
    assert_eq!((next.user_id, next.org_id), (user.id, user.org_id));
    assert_eq!(next.created_at, NOW);
    assert_eq!(next.expires_at, NOW + Duration::days(14));
    assert_eq!((next.replaced_at, next.revoked_at), (None, None));
    assert_eq!(w.stamps, [NOW]);
    assert!(w.revoked_families.is_empty());
}

#[test]
fn logout_ends_the_login_of_the_callers_own_token() {
    let user = stored_user();
    let mut ports = Accounts::default();
    ports.user_row(&user, Lock::Share);
    token_lookup(&mut ports, Some(stored_token(&user)));
    let log = ports.record_writes();
    let (service, uow) = ports.build();

    block_on(service.logout(&user_actor(UserRole::Operator), PRESENTED)).unwrap();

    assert_eq!(uow.outcomes(), [Outcome::Committed]);
    let w = written(&log);
    assert_eq!(w.calls, ["revoke_login_family", "append_events"]);
    assert_eq!(w.revoked_families, [family()]);
    assert!(w.revoked_users.is_empty(), "other logins go on");
    assert_eq!(types(&w.events), ["user.logout"]);
    assert_user_event(&w.events[0], "user.logout", &user, Some(user.id));
    assert_eq!(w.events[0].payload, json!({"allSessions": false}));
}

#[test]
fn logout_with_someone_elses_or_an_unknown_token_revokes_nothing() {
    let user = stored_user();
    let someone_else = User {
        id: UserId::from_uuid(Uuid::from_u128(0xb2)),
        ..stored_user()
    };
    for token in [Some(stored_token(&someone_else)), None] {
        let mut ports = Accounts::default();
        ports.user_row(&user, Lock::Share);
        token_lookup(&mut ports, token);
        let log = ports.record_writes();
        let (service, uow) = ports.build();

        // Answered the same: the caller learns nothing about other tokens.
        block_on(service.logout(&user_actor(UserRole::Operator), PRESENTED)).unwrap();

        assert_eq!(uow.outcomes(), [Outcome::Committed]);
        let w = written(&log);
        assert_eq!(w.calls, ["append_events"]);
        assert_eq!(w.events[0].payload, json!({"allSessions": false}));
    }
}

#[test]
fn logout_all_revokes_every_refresh_token_of_the_user() {
    let user = stored_user();
    let mut ports = Accounts::default();
    ports.user_row(&user, Lock::Share);
    let log = ports.record_writes();
    let (service, uow) = ports.build();

    block_on(service.logout_all(&user_actor(UserRole::Viewer))).unwrap();

    assert_eq!(uow.outcomes(), [Outcome::Committed]);
    let w = written(&log);
    assert_eq!(w.calls, ["revoke_user_refresh_tokens", "append_events"]);
    assert_eq!(w.revoked_users, [user.id]);
    assert_eq!(w.stamps, [NOW]);
    assert_user_event(&w.events[0], "user.logout", &user, Some(user.id));
    assert_eq!(w.events[0].payload, json!({"allSessions": true}));
}

#[test]
fn logout_of_a_user_who_no_longer_exists_is_not_found() {
    let mut ports = Accounts::default();
    ports.tx.expect_user().returning(|_, _, _| Ok(None));
    let log = ports.record_writes();
    let (service, uow) = ports.build();

    let err = block_on(service.logout_all(&user_actor(UserRole::Operator))).unwrap_err();

    assert!(matches!(err, ServiceError::NotFound(_)), "{err:?}");
    assert_eq!(uow.outcomes(), [Outcome::RolledBack]);
    assert!(written(&log).is_empty());
}

#[test]
fn agents_and_api_keys_cannot_log_out() {
    for actor in [
        agent_actor(AgentMode::Worker),
        key_actor(UserRole::Admin, ApiKeyScope::Admin),
    ] {
        // No expectation on the transaction: nothing may be read or written.
        let (service, uow) = Accounts::default().build();

        let one = block_on(service.logout(&actor, PRESENTED)).unwrap_err();
        let all = block_on(service.logout_all(&actor)).unwrap_err();

        for err in [one, all] {
            assert!(
                matches!(err, ServiceError::Forbidden(Forbidden::UserRequired)),
                "{actor:?}: {err:?}"
            );
        }
        assert!(uow.outcomes().is_empty());
    }
}
