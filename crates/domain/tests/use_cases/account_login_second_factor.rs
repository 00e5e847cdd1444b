//! `AccountService::login` of an account whose second factor is on (TOTP codes with
//! replay protection, recovery codes), against mocked ports.

use crate::common;

use common::accounts::{
    Accounts, GOOD_CODE, GOOD_STEP, PASSWORD, SECRET, assert_user_event, fake_hash, from,
    signed_in, stored_user, streak_of, totp_never_checking, user_streak, with_totp,
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
        from: from(),
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

/// The streak every test starts from: two earlier failures.
fn earlier() -> LoginThrottle {
    streak_of(2, NOW)
}

/// Ports where the default organization holds `user` (also as the locked row of the
/// transaction) with the streak [`earlier`], checking codes with `totp`; every write is
/// recorded.
fn ports_of(user: &User, totp: MockTotpAuthority) -> (Accounts, Log) {
    let mut ports = Accounts::default();
    ports.default_org_stored();
    ports.user_by_email(user);
    ports.totp = totp;
    ports.user_row(user, Lock::Update);
    ports.streak(user_streak(user.id, from()), earlier());
    let log = ports.record_writes();
    (ports, log)
}

/// [`ports_of`], built.
fn service(user: &User, totp: MockTotpAuthority) -> (AccountService, Arc<MockUnitOfWork>, Log) {
    let (ports, log) = ports_of(user, totp);
    let (service, uow) = ports.build();
    (service, uow, log)
}

/// Checks a refused second factor: 401, committed, counted as a failure (when the
/// attempt was admitted) with an `invalid_totp` event, no token, and the user row (with
/// its last accepted step) unchanged.
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
    assert_eq!(
        uow.outcomes(),
        [Outcome::Committed, Outcome::Committed],
        "the failure is kept"
    );
    let w = written(log);
    assert_eq!(w.calls, ["save_login_throttle", "append_events"]);
    assert_eq!(
        w.streaks,
        [(user_streak(user.id, from()), streak_of(3, NOW))]
    );
    assert!(w.updated_users.is_empty());
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
    ports.streak(user_streak(user.id, from()), LoginThrottle::default());
    let log = ports.record_writes();
    let (service, uow) = ports.build();

    let outcome = block_on(service.login(request(PASSWORD, None))).unwrap();

    assert_eq!(outcome, LoginOutcome::TwoFactorRequired);
    assert_eq!(uow.outcomes(), [Outcome::Committed]);
    assert_eq!(
        written(&log).calls,
        ["save_login_throttle"],
        "the attempt is counted, no user or token is written"
    );
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
    assert_eq!(uow.outcomes(), [Outcome::Committed, Outcome::Committed]);
    assert_eq!(types(&written(&log).events), ["user.login_failed"]);
}

#[test]
fn a_code_of_an_already_accepted_step_is_refused_and_counted() {
    // The same step again (a replay), or an older one.
    for last_step in [GOOD_STEP, GOOD_STEP + 1] {
        let user = with_totp(stored_user(), Some(last_step));
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
    let user = with_totp(stored_user(), Some(GOOD_STEP - 1));
    let (service, uow, log) = service(&user, totp_answering(GOOD_CODE, Some(GOOD_STEP)));

    // Surrounding blanks are not part of the code.
    let outcome = block_on(service.login(request(PASSWORD, Some(" 123456 ")))).unwrap();

    let (_, signed) = signed_in(outcome);
    assert_eq!(uow.outcomes(), [Outcome::Committed, Outcome::Committed]);
    assert_eq!(signed.totp.last_step, Some(GOOD_STEP));
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
    assert_eq!(w.cleared_streaks, [user_streak(user.id, from())]);
    let stored = &w.updated_users[0];
    assert_eq!(stored.totp.last_step, Some(GOOD_STEP), "the step is kept");
    assert!(stored.totp.enabled);
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
        ports.streak(user_streak(user.id, from()), earlier());
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
        assert_eq!(
            uow.outcomes(),
            [Outcome::Committed, Outcome::Committed],
            "{typed}"
        );
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
    let (mut ports, log) = ports_of(&user, totp_never_checking());
    ports
        .tx
        .expect_use_recovery_code()
        .withf(|_, hash, _| *hash == fake_hash("WXYZ-1234"))
        .times(1)
        .returning(|_, _, _| Ok(false));
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

#[test]
fn a_locked_streak_is_throttled_before_the_password_or_the_code_is_checked() {
    let user = with_totp(stored_user(), None);
    let mut ports = Accounts::default();
    ports.default_org_stored();
    ports.user_by_email(&user);
    ports.totp = totp_never_checking();
    ports.hasher = muster_domain::ports::MockPasswordHasher::new();
    ports.hasher.expect_verify().never();
    ports.streak(
        user_streak(user.id, from()),
        streak_of(14, NOW - time::Duration::minutes(230)),
    );
    let log = ports.record_writes();
    let (service, uow) = ports.build();

    let err = block_on(service.login(request(PASSWORD, Some(GOOD_CODE)))).unwrap_err();

    assert!(
        matches!(
            err,
            ServiceError::Throttled {
                retry_after_secs: 600
            }
        ),
        "{err:?}"
    );
    assert_eq!(uow.outcomes(), [Outcome::RolledBack]);
    assert!(written(&log).is_empty());
}
