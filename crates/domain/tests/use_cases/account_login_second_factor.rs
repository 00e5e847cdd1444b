//! `AccountService::login` of an account whose second factor is on (TOTP codes with
//! replay protection, recovery codes), against mocked ports.

use crate::common;

use common::accounts::{
    Accounts, GOOD_CODE, GOOD_STEP, PASSWORD, SECRET, assert_user_event, fake_hash, signed_in,
    stored_user, totp_never_checking, with_totp,
};
use common::writes::{Log, written};
use common::{NOW, types};
use futures_executor::block_on;
use muster_domain::model::{LoginOutcome, LoginThrottle, User};
use muster_domain::ports::{Lock, MockTotpAuthority, MockUnitOfWork, Outcome};
use muster_domain::service::accounts::LoginRequest;
use muster_domain::service::{AccountService, ServiceError, Unauthorized};
use serde_json::json;
use std::sync::Arc;

fn request(password: &str, second_factor: Option<&str>) -> LoginRequest {
    LoginRequest {
        org_id: None,
        email: "ada@example.com".into(),
        password: password.into(),
        second_factor: second_factor.map(Into::into),
    }
}

/// A TOTP authority that must be asked once about `code` against the user's [`SECRET`]
/// at [`NOW`], and answers `step`.
fn totp_answering(code: &'static str, step: Option<i64>) -> MockTotpAuthority {
    let mut totp = MockTotpAuthority::new();
    let user = stored_user().id;
    totp.expect_check()
        .withf(move |u, sealed, c, now| *u == user && sealed == SECRET && c == code && *now == NOW)
        .times(1)
        .returning(move |_, _, _, _| Ok(step));
    totp
}

/// Ports where the default organization holds `user` (also as the locked row of the
/// transaction), checking codes with `totp`; every write is recorded.
fn service(user: &User, totp: MockTotpAuthority) -> (AccountService, Arc<MockUnitOfWork>, Log) {
    let mut ports = Accounts::default();
    ports.default_org_stored();
    ports.user_by_email(user);
    ports.totp = totp;
    ports.user_row(user, Lock::Update);
    let log = ports.record_writes();
    let (service, uow) = ports.build();
    (service, uow, log)
}

/// Checks a refused second factor: 401, committed, counted as a failure with an
/// `invalid_totp` event, no token, and the last accepted step unchanged.
fn assert_refused_and_counted(
    user: &User,
    result: Result<LoginOutcome, ServiceError>,
    uow: &MockUnitOfWork,
    log: &Log,
) {
    let err = result.unwrap_err();
    assert!(
        matches!(
            err,
            ServiceError::Unauthorized(Unauthorized::InvalidTwoFactorCode)
        ),
        "{err:?}"
    );
    assert_eq!(uow.outcomes(), [Outcome::Committed], "the failure is kept");
    let w = written(log);
    assert_eq!(w.calls, ["update_user", "append_events"]);
    let expected = User {
        throttle: LoginThrottle {
            failures: user.throttle.failures + 1,
            locked_until: None,
        },
        ..user.clone()
    };
    assert_eq!(w.updated_users, [expected]);
    assert_eq!(types(&w.events), ["user.login_failed"]);
    assert_user_event(&w.events[0], "user.login_failed", user, None);
    assert_eq!(w.events[0].payload, json!({"reason": "invalid_totp"}));
}

#[test]
fn without_a_code_the_right_password_asks_for_the_second_factor() {
    let user = with_totp(stored_user(), Some(GOOD_STEP));
    let mut ports = Accounts::default();
    ports.default_org_stored();
    ports.user_by_email(&user);
    ports.totp = totp_never_checking();
    // No expectation on the transaction: reading or writing anything fails the test.
    let (service, uow) = ports.build();

    let outcome = block_on(service.login(request(PASSWORD, None))).unwrap();

    assert_eq!(outcome, LoginOutcome::TwoFactorRequired);
    assert!(uow.outcomes().is_empty(), "no transaction was opened");
}

#[test]
fn without_a_code_a_wrong_password_is_a_counted_401_not_a_second_factor_prompt() {
    let user = with_totp(stored_user(), None);
    let (service, uow, log) = service(&user, totp_never_checking());

    let err = block_on(service.login(request("wrong password", None))).unwrap_err();

    assert!(
        matches!(
            err,
            ServiceError::Unauthorized(Unauthorized::InvalidCredentials)
        ),
        "{err:?}"
    );
    assert_eq!(uow.outcomes(), [Outcome::Committed]);
    assert_eq!(types(&written(&log).events), ["user.login_failed"]);
}

#[test]
fn a_code_of_an_already_accepted_step_is_refused_and_counted() {
    // The same step again (a replay), or an older one.
    for last_step in [GOOD_STEP, GOOD_STEP + 1] {
        let user = User {
            throttle: LoginThrottle {
                failures: 2,
                locked_until: None,
            },
            ..with_totp(stored_user(), Some(last_step))
        };
        let (service, uow, log) = service(&user, totp_answering(GOOD_CODE, Some(GOOD_STEP)));

        let result = block_on(service.login(request(PASSWORD, Some(GOOD_CODE))));

        assert_refused_and_counted(&user, result, &uow, &log);
    }
}

#[test]
fn a_code_that_matches_no_step_is_refused_and_counted() {
    let user = with_totp(stored_user(), None);
    let (service, uow, log) = service(&user, totp_answering("654321", None));

    let result = block_on(service.login(request(PASSWORD, Some("654321"))));

    assert_refused_and_counted(&user, result, &uow, &log);
}

#[test]
fn a_code_of_a_newer_step_signs_in_and_stores_the_step() {
    let user = User {
        throttle: LoginThrottle {
            failures: 3,
            locked_until: None,
        },
        ..with_totp(stored_user(), Some(GOOD_STEP - 1))
    };
    let (service, uow, log) = service(&user, totp_answering(GOOD_CODE, Some(GOOD_STEP)));

    // Surrounding blanks are not part of the code.
    let outcome = block_on(service.login(request(PASSWORD, Some(" 123456 ")))).unwrap();

    let (_, signed) = signed_in(outcome);
    assert_eq!(uow.outcomes(), [Outcome::Committed]);
    assert_eq!(signed.totp.last_step, Some(GOOD_STEP));
    let w = written(&log);
    assert_eq!(
        w.calls,
        ["update_user", "insert_refresh_token", "append_events"]
    );
    let stored = &w.updated_users[0];
    assert_eq!(stored.totp.last_step, Some(GOOD_STEP), "the step is kept");
    assert!(stored.totp.enabled);
    assert_eq!(stored.throttle, LoginThrottle::default());
    assert_eq!(stored.last_login_at, Some(NOW));
    assert_user_event(&w.events[0], "user.login", &user, Some(user.id));
    assert_eq!(
        w.events[0].payload,
        json!({"method": "password", "twoFactor": true})
    );
}

#[test]
fn a_recovery_code_is_used_up_by_the_hash_of_its_normal_form() {
    for typed in [" abcd-efgh ", "ABCDefgh"] {
        let user = with_totp(stored_user(), Some(5));
        let mut ports = Accounts::default();
        ports.default_org_stored();
        ports.user_by_email(&user);
        ports.totp = totp_never_checking();
        ports.user_row(&user, Lock::Update);
        let id = user.id;
        ports
            .tx
            .expect_use_recovery_code()
            .withf(move |u, hash, at| *u == id && *hash == fake_hash("ABCD-EFGH") && *at == NOW)
            .times(1)
            .returning(|_, _, _| Ok(true));
        let log = ports.record_writes();
        let (service, uow) = ports.build();

        let outcome = block_on(service.login(request(PASSWORD, Some(typed)))).unwrap();

        let (_, signed) = signed_in(outcome);
        assert_eq!(uow.outcomes(), [Outcome::Committed], "{typed}");
        assert_eq!(signed.totp.last_step, Some(5), "no TOTP step was used");
        let w = written(&log);
        assert_eq!(w.refresh_tokens.len(), 1);
        assert_eq!(
            w.events[0].payload,
            json!({"method": "password", "twoFactor": true})
        );
    }
}

#[test]
fn an_unknown_or_used_recovery_code_is_refused_and_counted() {
    let user = with_totp(stored_user(), None);
    let mut ports = Accounts::default();
    ports.default_org_stored();
    ports.user_by_email(&user);
    ports.totp = totp_never_checking();
    ports.user_row(&user, Lock::Update);
    ports
        .tx
        .expect_use_recovery_code()
        .withf(|_, hash, _| *hash == fake_hash("WXYZ-1234"))
        .times(1)
        .returning(|_, _, _| Ok(false));
    let log = ports.record_writes();
    let (service, uow) = ports.build();

    let result = block_on(service.login(request(PASSWORD, Some("wxyz-1234"))));

    assert_refused_and_counted(&user, result, &uow, &log);
}

#[test]
fn a_code_that_is_neither_kind_is_refused_without_asking_anyone() {
    let user = with_totp(stored_user(), None);
    // Neither six digits nor eight letters and digits: no TOTP check, no recovery lookup.
    let (service, uow, log) = service(&user, totp_never_checking());

    let result = block_on(service.login(request(PASSWORD, Some("12345"))));

    assert_refused_and_counted(&user, result, &uow, &log);
}
