//! `AccountService::login` (password, organization, throttling) against mocked ports.
//! The second factor at login is in `account_login_second_factor.rs`, `login_local` in
//! `account_owner.rs`.

use crate::common;

use common::accounts::{
    Accounts, PASSWORD, access_for, assert_user_event, elsewhere, fake_hash, from, invalid_message,
    organization, phc, signed_in, stored_user, streak_of, typed_streak, user_streak, with_totp,
};
use common::writes::{Log, written};
use common::{NOW, org, types};
use futures_executor::block_on;
use muster_domain::model::{EventSeverity, LoginOutcome, LoginThrottle, OrgId, User};
use muster_domain::ports::{Lock, MockPasswordHasher, Outcome};
use muster_domain::service::accounts::LoginRequest;
use muster_domain::service::{ServiceError, Unauthorized};
use serde_json::json;
use time::Duration;
use uuid::Uuid;

fn request(email: &str, password: &str) -> LoginRequest {
    LoginRequest {
        org_id: None,
        email: email.into(),
        password: password.into(),
        second_factor: None,
        from: from(),
    }
}

/// Ports of a deployment whose default organization holds `user`, whose streak from
/// [`from`] is `streak`; every write is recorded.
fn known(user: &User, streak: LoginThrottle) -> (Accounts, Log) {
    let mut ports = Accounts::default();
    ports.default_org_stored();
    ports.user_by_email(user);
    ports.streak(user_streak(user.id, from()), streak);
    let log = ports.record_writes();
    (ports, log)
}

/// Ports of a deployment whose default organization has no user `typed`, whose streak
/// from [`from`] is `streak`; every write is recorded.
fn unknown(typed: &'static str, streak: LoginThrottle) -> (Accounts, Log) {
    let mut ports = Accounts::default();
    ports.default_org_stored();
    ports
        .users
        .expect_user_by_email()
        .withf(move |o, e| *o == org() && e.as_str() == typed)
        .times(1)
        .returning(|_, _| Ok(None));
    ports.streak(typed_streak(org(), typed, from()), streak);
    let log = ports.record_writes();
    (ports, log)
}

/// A hasher that must be asked exactly once, with `password` against `stored`, and
/// answers `matches`.
fn hasher_expecting(
    password: &'static str,
    stored: Option<String>,
    matches: bool,
) -> MockPasswordHasher {
    let mut hasher = MockPasswordHasher::new();
    hasher
        .expect_verify()
        .withf(move |p, phc| p == password && *phc == stored)
        .times(1)
        .returning(move |_, _| Ok(matches));
    hasher
}

/// A hasher that must not be asked.
fn hasher_never() -> MockPasswordHasher {
    let mut hasher = MockPasswordHasher::new();
    hasher.expect_verify().never();
    hasher
}

/// A streak that locks its next attempt for 89.6 more seconds (the caller is told 90).
fn locked() -> LoginThrottle {
    streak_of(11, NOW - Duration::milliseconds(1_710_400))
}

fn is_throttled_for_90_seconds(err: &ServiceError) -> bool {
    matches!(
        err,
        ServiceError::Throttled {
            retry_after_secs: 90
        }
    )
}

fn is_invalid_credentials(err: &ServiceError) -> bool {
    matches!(
        err,
        ServiceError::Unauthorized(Unauthorized::InvalidCredentials)
    )
}

#[test]
fn an_unknown_email_costs_a_password_check_counts_toward_its_streak_and_is_the_same_401() {
    let (mut ports, log) = unknown("nobody@example.com", streak_of(2, NOW));
    ports.hasher = hasher_expecting("whatever1", None, false);
    let (service, uow) = ports.build();

    let err = block_on(service.login(request("Nobody@example.com", "whatever1"))).unwrap_err();

    assert!(is_invalid_credentials(&err), "{err:?}");
    assert_eq!(err.to_string(), "Invalid email or password");
    assert_eq!(
        uow.outcomes(),
        [Outcome::Committed],
        "the attempt is counted"
    );
    let w = written(&log);
    assert_eq!(w.calls, ["save_login_throttle"]);
    assert_eq!(
        w.streaks,
        [(
            typed_streak(org(), "nobody@example.com", from()),
            streak_of(3, NOW)
        )]
    );
}

#[test]
fn a_malformed_email_is_the_same_401_without_a_lookup_and_counts_as_typed() {
    let mut ports = Accounts::default();
    ports.default_org_stored();
    ports.hasher = hasher_expecting("whatever1", None, false);
    let key = typed_streak(org(), "not-an-email", from());
    ports.streak(key, LoginThrottle::default());
    let log = ports.record_writes();
    let (service, uow) = ports.build();

    let err = block_on(service.login(request(" Not-An-Email ", "whatever1"))).unwrap_err();

    assert!(is_invalid_credentials(&err), "{err:?}");
    assert_eq!(uow.outcomes(), [Outcome::Committed]);
    assert_eq!(written(&log).streaks, [(key, streak_of(1, NOW))]);
}

#[test]
fn an_unknown_named_organization_is_the_same_401() {
    let other = OrgId::from_uuid(Uuid::from_u128(0x0b));
    let mut ports = Accounts::default();
    ports.orgs.expect_default_organization().never();
    ports
        .orgs
        .expect_get()
        .withf(move |id| *id == other)
        .times(1)
        .returning(|_| Ok(None));
    ports.hasher = hasher_expecting(PASSWORD, None, false);
    // Counted under the organization named, like an unknown e-mail of a real one.
    let key = typed_streak(other, "ada@example.com", from());
    ports.streak(key, LoginThrottle::default());
    let log = ports.record_writes();
    let (service, uow) = ports.build();
    let req = LoginRequest {
        org_id: Some(other),
        ..request("ada@example.com", PASSWORD)
    };

    let err = block_on(service.login(req)).unwrap_err();

    assert!(is_invalid_credentials(&err), "{err:?}");
    assert_eq!(uow.outcomes(), [Outcome::Committed]);
    assert_eq!(written(&log).streaks, [(key, streak_of(1, NOW))]);
}

#[test]
fn a_named_organization_is_used_instead_of_the_default() {
    let user = with_totp(stored_user(), None);
    let mut ports = Accounts::default();
    ports.orgs.expect_default_organization().never();
    ports
        .orgs
        .expect_get()
        .withf(|id| *id == org())
        .times(1)
        .returning(|id| Ok(Some(organization(id))));
    ports.user_by_email(&user);
    ports.streak(user_streak(user.id, from()), LoginThrottle::default());
    let log = ports.record_writes();
    let (service, _) = ports.build();
    let req = LoginRequest {
        org_id: Some(org()),
        ..request("ada@example.com", PASSWORD)
    };

    let outcome = block_on(service.login(req)).unwrap();

    assert_eq!(outcome, LoginOutcome::TwoFactorRequired);
    let w = written(&log);
    assert_eq!(
        w.calls,
        ["save_login_throttle"],
        "the attempt stays counted until a complete sign-in"
    );
}

#[test]
fn without_an_org_id_or_a_default_organization_the_request_is_invalid() {
    let mut ports = Accounts::default();
    ports
        .orgs
        .expect_default_organization()
        .times(1)
        .returning(|| Ok(None));
    ports.hasher = hasher_never();
    let (service, uow) = ports.build();

    let err = block_on(service.login(request("ada@example.com", PASSWORD))).unwrap_err();

    assert_eq!(
        invalid_message(&err),
        "orgId is required: this deployment has no default organization"
    );
    assert!(uow.outcomes().is_empty());
}

#[test]
fn the_configured_default_organization_wins_over_the_stored_one() {
    let configured = OrgId::from_uuid(Uuid::from_u128(0x0c));
    let mut ports = Accounts {
        default_org: Some(configured),
        ..Accounts::default()
    };
    ports.orgs.expect_default_organization().never();
    ports
        .users
        .expect_user_by_email()
        .withf(move |o, _| *o == configured)
        .times(1)
        .returning(|_, _| Ok(None));
    ports.hasher = hasher_expecting(PASSWORD, None, false);
    ports.streak(
        typed_streak(configured, "ada@example.com", from()),
        LoginThrottle::default(),
    );
    ports.record_writes();
    let (service, _) = ports.build();

    let err = block_on(service.login(request("ada@example.com", PASSWORD))).unwrap_err();

    assert!(is_invalid_credentials(&err), "{err:?}");
}

#[test]
fn a_wrong_password_is_counted_before_the_check_and_answers_401() {
    let user = stored_user();
    let key = user_streak(user.id, from());
    let (mut ports, log) = known(&user, streak_of(3, NOW - Duration::minutes(1)));
    let seen = log.clone();
    let mut hasher = MockPasswordHasher::new();
    hasher
        .expect_verify()
        .withf(|p, stored| p == "wrong password" && *stored == Some(phc(PASSWORD)))
        .times(1)
        .returning(move |_, _| {
            // A parallel guess finds this one counted already.
            assert_eq!(written(&seen).calls, ["save_login_throttle"]);
            Ok(false)
        });
    ports.hasher = hasher;
    let (service, uow) = ports.build();

    let err = block_on(service.login(request("Ada@Example.COM", "wrong password"))).unwrap_err();

    assert!(is_invalid_credentials(&err), "{err:?}");
    assert_eq!(
        uow.outcomes(),
        [Outcome::Committed, Outcome::Committed],
        "the count and the event are kept"
    );
    let w = written(&log);
    assert_eq!(w.calls, ["save_login_throttle", "append_events"]);
    assert_eq!(w.streaks, [(key, streak_of(4, NOW))]);
    assert!(w.updated_users.is_empty(), "the user row is not written");
    assert_eq!(types(&w.events), ["user.login_failed"]);
    assert_user_event(&w.events[0], "user.login_failed", &user, None);
    assert_eq!(w.events[0].severity, EventSeverity::Warning);
    assert_eq!(
        w.events[0].payload,
        json!({"reason": "invalid_credentials"})
    );
    assert!(w.refresh_tokens.is_empty());
}

#[test]
fn the_tenth_wrong_password_locks_the_streak_for_fifteen_minutes() {
    let user = stored_user();
    let (ports, log) = known(&user, streak_of(9, NOW - Duration::seconds(5)));
    let (service, _) = ports.build();

    let err = block_on(service.login(request("ada@example.com", "wrong password"))).unwrap_err();

    assert!(is_invalid_credentials(&err), "{err:?}");
    let w = written(&log);
    assert_eq!(w.streaks[0].1, streak_of(10, NOW));
    assert_eq!(w.streaks[0].1.retry_after(NOW), Some(900));
}

#[test]
fn a_locked_streak_is_throttled_before_any_password_check_known_or_not() {
    let user = stored_user();
    let (mut of_known, known_log) = known(&user, locked());
    of_known.hasher = hasher_never();
    let (mut of_unknown, unknown_log) = unknown("nobody@example.com", locked());
    of_unknown.hasher = hasher_never();
    let (of_known, known_uow) = of_known.build();
    let (of_unknown, unknown_uow) = of_unknown.build();

    let refused = [
        block_on(of_known.login(request("ada@example.com", PASSWORD))).unwrap_err(),
        block_on(of_unknown.login(request("nobody@example.com", PASSWORD))).unwrap_err(),
    ];

    for err in &refused {
        assert!(is_throttled_for_90_seconds(err), "{err:?}");
        assert_eq!(
            err.to_string(),
            "Too many failed logins; try again in 90 seconds"
        );
    }
    for (uow, log) in [(known_uow, known_log), (unknown_uow, unknown_log)] {
        assert_eq!(uow.outcomes(), [Outcome::RolledBack]);
        assert!(written(&log).is_empty(), "nothing counted, nothing issued");
    }
}

#[test]
fn a_locked_streak_from_another_address_does_not_refuse_the_owner() {
    let user = stored_user();
    let (mut ports, log) = known(&user, LoginThrottle::default());
    ports.streak(user_streak(user.id, elsewhere()), locked());
    ports.hasher = hasher_expecting(PASSWORD, Some(phc(PASSWORD)), true);
    ports.user_row(&user, Lock::Update);
    let (service, _) = ports.build();

    let outcome = block_on(service.login(request("ada@example.com", PASSWORD))).unwrap();

    signed_in(outcome);
    let w = written(&log);
    assert_eq!(w.cleared_streaks, [user_streak(user.id, from())]);
    assert_ne!(
        user_streak(user.id, from()),
        user_streak(user.id, elsewhere())
    );
}

#[test]
fn the_right_password_signs_in_ends_the_streak_and_starts_a_login() {
    let user = stored_user();
    let key = user_streak(user.id, from());
    // Four failures: they do not survive the success.
    let (mut ports, log) = known(&user, streak_of(4, NOW - Duration::minutes(1)));
    ports.hasher = hasher_expecting(PASSWORD, Some(phc(PASSWORD)), true);
    ports.user_row(&user, Lock::Update);
    let (service, uow) = ports.build();

    let outcome = block_on(service.login(request("ada@example.com", PASSWORD))).unwrap();

    let (tokens, signed) = signed_in(outcome);
    assert_eq!(uow.outcomes(), [Outcome::Committed, Outcome::Committed]);
    let w = written(&log);
    assert_eq!(
        w.calls,
        [
            "save_login_throttle",
            "clear_login_throttle",
            "update_user",
            "insert_refresh_token",
            "append_events"
        ]
    );
    assert_eq!(w.cleared_streaks, [key]);
    let expected = User {
        last_login_at: Some(NOW),
        ..user.clone()
    };
    assert_eq!(w.updated_users, std::slice::from_ref(&expected));
    assert_eq!(w.stamps, [NOW]);
    assert_eq!(signed, expected, "the caller gets the user as stored");
    assert_eq!(tokens.access, access_for(&user));

    assert_eq!(w.refresh_tokens.len(), 1);
    let refresh = &w.refresh_tokens[0];
    assert_eq!(tokens.refresh_token.expose(), "mrt_refresh-secret-1");
    assert_eq!(
        refresh.token_hash,
        fake_hash(tokens.refresh_token.expose()),
        "only the minted secret's hash is stored"
    );
    assert_eq!((refresh.user_id, refresh.org_id), (user.id, user.org_id));
    assert_eq!(refresh.created_at, NOW);
    assert_eq!(refresh.expires_at, NOW + Duration::days(14));
    assert_eq!((refresh.replaced_at, refresh.revoked_at), (None, None));
    assert_ne!(refresh.family_id.as_uuid(), refresh.id.as_uuid());

    assert_eq!(types(&w.events), ["user.login"]);
    assert_user_event(&w.events[0], "user.login", &user, Some(user.id));
    assert_eq!(w.events[0].severity, EventSeverity::Info);
    assert_eq!(
        w.events[0].payload,
        json!({"method": "password", "twoFactor": false})
    );
}
