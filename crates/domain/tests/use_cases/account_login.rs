//! `AccountService::login` (password, organization, throttling) against mocked ports.
//! The second factor at login is in `account_login_second_factor.rs`, `login_local` in
//! `account_owner.rs`.

use crate::common;

use common::accounts::{
    Accounts, PASSWORD, access_for, assert_user_event, fake_hash, invalid_message, organization,
    phc, signed_in, stored_user, with_totp,
};
use common::writes::written;
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
    }
}

/// Ports of a deployment whose default organization holds `user`.
fn known(user: &User) -> Accounts {
    let mut ports = Accounts::default();
    ports.default_org_stored();
    ports.user_by_email(user);
    ports
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

fn throttled(failures: u32, locked_until: Option<time::OffsetDateTime>) -> User {
    User {
        throttle: LoginThrottle {
            failures,
            locked_until,
        },
        ..stored_user()
    }
}

fn is_invalid_credentials(err: &ServiceError) -> bool {
    matches!(
        err,
        ServiceError::Unauthorized(Unauthorized::InvalidCredentials)
    )
}

#[test]
fn an_unknown_email_costs_a_password_check_and_is_the_same_401() {
    let mut ports = Accounts::default();
    ports.default_org_stored();
    ports
        .users
        .expect_user_by_email()
        .withf(|o, e| *o == org() && e.as_str() == "nobody@example.com")
        .times(1)
        .returning(|_, _| Ok(None));
    ports.hasher = hasher_expecting("whatever1", None, false);
    let (service, uow) = ports.build();

    let err = block_on(service.login(request("Nobody@example.com", "whatever1"))).unwrap_err();

    assert!(is_invalid_credentials(&err), "{err:?}");
    assert_eq!(err.to_string(), "Invalid email or password");
    assert!(
        uow.outcomes().is_empty(),
        "no transaction: nothing to count"
    );
}

#[test]
fn a_malformed_email_is_the_same_401_without_a_lookup() {
    let mut ports = Accounts::default();
    ports.default_org_stored();
    ports.hasher = hasher_expecting("whatever1", None, false);
    let (service, uow) = ports.build();

    let err = block_on(service.login(request("not-an-email", "whatever1"))).unwrap_err();

    assert!(is_invalid_credentials(&err), "{err:?}");
    assert!(uow.outcomes().is_empty());
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
    let (service, uow) = ports.build();
    let req = LoginRequest {
        org_id: Some(other),
        ..request("ada@example.com", PASSWORD)
    };

    let err = block_on(service.login(req)).unwrap_err();

    assert!(is_invalid_credentials(&err), "{err:?}");
    assert!(uow.outcomes().is_empty());
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
    let (service, _) = ports.build();
    let req = LoginRequest {
        org_id: Some(org()),
        ..request("ada@example.com", PASSWORD)
    };

    let outcome = block_on(service.login(req)).unwrap();

    assert_eq!(outcome, LoginOutcome::TwoFactorRequired);
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
    let (service, _) = ports.build();

    let err = block_on(service.login(request("ada@example.com", PASSWORD))).unwrap_err();

    assert!(is_invalid_credentials(&err), "{err:?}");
}

#[test]
fn a_wrong_password_counts_one_failure_in_a_committed_unit_and_answers_401() {
    let user = throttled(3, None);
    let mut ports = known(&user);
    ports.hasher = hasher_expecting("wrong password", Some(phc(PASSWORD)), false);
    ports.user_row(&user, Lock::Update);
    let log = ports.record_writes();
    let (service, uow) = ports.build();

    let err = block_on(service.login(request("Ada@Example.COM", "wrong password"))).unwrap_err();

    assert!(is_invalid_credentials(&err), "{err:?}");
    assert_eq!(uow.outcomes(), [Outcome::Committed], "the failure is kept");
    let w = written(&log);
    assert_eq!(w.calls, ["update_user", "append_events"]);
    assert_eq!(w.stamps, [NOW]);
    let expected = User {
        throttle: LoginThrottle {
            failures: 4,
            locked_until: None,
        },
        ..user.clone()
    };
    assert_eq!(w.updated_users, [expected]);
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
fn the_tenth_wrong_password_locks_the_account_for_fifteen_minutes() {
    let user = throttled(9, None);
    let mut ports = known(&user);
    ports.user_row(&user, Lock::Update);
    let log = ports.record_writes();
    let (service, uow) = ports.build();

    let err = block_on(service.login(request("ada@example.com", "wrong password"))).unwrap_err();

    assert!(is_invalid_credentials(&err), "{err:?}");
    assert_eq!(uow.outcomes(), [Outcome::Committed]);
    assert_eq!(
        written(&log).updated_users[0].throttle,
        LoginThrottle {
            failures: 0,
            locked_until: Some(NOW + Duration::minutes(15)),
        }
    );
}

#[test]
fn a_locked_account_is_throttled_before_any_password_check() {
    // Locked for 89.6 more seconds: the caller is told to wait 90.
    let user = throttled(0, Some(NOW + Duration::milliseconds(89_600)));
    let mut ports = known(&user);
    ports.hasher = hasher_never();
    let (service, uow) = ports.build();

    let err = block_on(service.login(request("ada@example.com", PASSWORD))).unwrap_err();

    assert!(
        matches!(
            err,
            ServiceError::Throttled {
                retry_after_secs: 90
            }
        ),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        "Too many failed logins; try again in 90 seconds"
    );
    assert!(uow.outcomes().is_empty(), "nothing is read or written");
}

#[test]
fn the_right_password_signs_in_resets_the_throttle_and_starts_a_login() {
    // Four failures, and a lock that ran out a minute ago: neither survives the success.
    let user = throttled(4, Some(NOW - Duration::minutes(1)));
    let mut ports = known(&user);
    ports.hasher = hasher_expecting(PASSWORD, Some(phc(PASSWORD)), true);
    ports.user_row(&user, Lock::Update);
    let log = ports.record_writes();
    let (service, uow) = ports.build();

    let outcome = block_on(service.login(request("ada@example.com", PASSWORD))).unwrap();

    let (tokens, signed) = signed_in(outcome);
    assert_eq!(uow.outcomes(), [Outcome::Committed]);
    let w = written(&log);
    assert_eq!(
        w.calls,
        ["update_user", "insert_refresh_token", "append_events"]
    );
    let expected = User {
        throttle: LoginThrottle::default(),
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

#[test]
fn a_lock_taken_between_the_check_and_the_transaction_still_refuses() {
    // Read unlocked outside the transaction, locked inside it by a concurrent failure.
    let user = stored_user();
    let locked = throttled(0, Some(NOW + Duration::seconds(30)));
    let mut ports = known(&user);
    ports.user_row(&locked, Lock::Update);
    let log = ports.record_writes();
    let (service, uow) = ports.build();

    let err = block_on(service.login(request("ada@example.com", PASSWORD))).unwrap_err();

    assert!(
        matches!(
            err,
            ServiceError::Throttled {
                retry_after_secs: 30
            }
        ),
        "{err:?}"
    );
    assert!(written(&log).is_empty(), "no token is issued");
    assert_eq!(uow.outcomes(), [Outcome::Committed]);
}
