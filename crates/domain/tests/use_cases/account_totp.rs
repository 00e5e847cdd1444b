//! `AccountService::totp_setup`, `totp_verify` and `totp_disable` against mocked ports.

use crate::common;

use common::accounts::{
    Accounts, GOOD_CODE, GOOD_STEP, PASSWORD, PENDING, QR_CODE, SECRET, assert_user_event,
    fake_hash, recovery_codes, stored_user, totp_never_checking, user_email, with_totp,
};
use common::writes::written;
use common::{NOW, agent_actor, types, user_actor};
use futures_executor::block_on;
use muster_domain::model::{AgentMode, EventSeverity, TotpSettings, User, UserRole};
use muster_domain::policy::Forbidden;
use muster_domain::ports::{Lock, MockTotpAuthority, Outcome};
use muster_domain::service::{Conflict, ServiceError, Unauthorized};
use serde_json::json;

fn actor() -> muster_domain::model::Actor {
    user_actor(UserRole::Operator)
}

/// A user whose setup stored [`PENDING`] but who has not verified a code yet.
fn pending_user() -> User {
    User {
        totp: TotpSettings {
            pending_secret: Some(PENDING.to_vec()),
            ..TotpSettings::default()
        },
        ..stored_user()
    }
}

/// Ports where `user` is the signed-in user, read both outside the transaction and
/// locked inside it.
fn ports_of(user: &User) -> Accounts {
    let mut ports = Accounts::default();
    ports.user_read(user);
    ports.user_row(user, Lock::Update);
    ports
}

/// A TOTP authority that mints nothing and is asked once about `code` against `sealed`.
fn totp_checking(sealed: &'static [u8], code: &'static str) -> MockTotpAuthority {
    let mut totp = MockTotpAuthority::new();
    totp.expect_new_secret().never();
    totp.expect_check()
        .withf(move |u, s, c, now| {
            *u == stored_user().id && s == sealed && c == code && *now == NOW
        })
        .times(1)
        .returning(|_, _, code, _| Ok((code == GOOD_CODE).then_some(GOOD_STEP)));
    totp
}

fn is_invalid_code(err: &ServiceError) -> bool {
    matches!(
        err,
        ServiceError::Unauthorized(Unauthorized::InvalidTwoFactorCode)
    )
}

#[test]
fn setup_with_a_wrong_password_mints_nothing() {
    let mut ports = Accounts::default();
    ports.user_read(&stored_user());
    ports.totp = MockTotpAuthority::new();
    ports.totp.expect_new_secret().never();
    let (service, uow) = ports.build();

    let err = block_on(service.totp_setup(&actor(), "not my password")).unwrap_err();

    assert!(
        matches!(err, ServiceError::Unauthorized(Unauthorized::WrongPassword)),
        "{err:?}"
    );
    assert!(uow.outcomes().is_empty());
}

#[test]
fn setup_while_enabled_is_a_conflict() {
    let mut ports = Accounts::default();
    ports.user_read(&with_totp(stored_user(), None));
    ports.totp = MockTotpAuthority::new();
    ports.totp.expect_new_secret().never();
    let (service, uow) = ports.build();

    let err = block_on(service.totp_setup(&actor(), PASSWORD)).unwrap_err();

    assert!(
        matches!(err, ServiceError::Conflict(Conflict::TwoFactorEnabled)),
        "{err:?}"
    );
    assert!(uow.outcomes().is_empty());
}

#[test]
fn setup_stores_a_pending_secret_and_replaces_the_recovery_codes_by_their_hashes() {
    // A setup started before and never verified is simply replaced.
    let user = User {
        totp: TotpSettings {
            pending_secret: Some(b"older-pending".to_vec()),
            ..TotpSettings::default()
        },
        ..stored_user()
    };
    let mut ports = ports_of(&user);
    let mut totp = MockTotpAuthority::new();
    totp.expect_new_secret()
        .withf(|u, email| *u == stored_user().id && *email == user_email())
        .times(1)
        .returning(|_, _| {
            Ok(muster_domain::ports::NewTotpSecret {
                sealed: PENDING.to_vec(),
                qr_code: QR_CODE.into(),
                manual_key: muster_domain::model::BearerSecret::new("MANUALKEY".to_owned()),
            })
        });
    totp.expect_recovery_codes()
        .times(1)
        .returning(|| Ok(recovery_codes()));
    ports.totp = totp;
    let log = ports.record_writes();
    let (service, uow) = ports.build();

    let setup = block_on(service.totp_setup(&actor(), PASSWORD)).unwrap();

    assert_eq!(uow.outcomes(), [Outcome::Committed]);
    assert_eq!(setup.qr_code, QR_CODE);
    assert_eq!(setup.recovery_codes, recovery_codes());
    let w = written(&log);
    assert_eq!(w.calls, ["update_user", "replace_recovery_codes"]);
    let expected = User {
        totp: TotpSettings {
            pending_secret: Some(PENDING.to_vec()),
            ..TotpSettings::default()
        },
        ..user.clone()
    };
    assert_eq!(w.updated_users, [expected], "not enabled until verified");
    let hashes: Vec<_> = setup
        .recovery_codes
        .iter()
        .map(|code| fake_hash(code.expose()))
        .collect();
    assert_eq!(hashes.len(), 10);
    assert_eq!(w.recovery_codes, [(user.id, hashes)]);
}

#[test]
fn setup_refuses_when_enabled_concurrently_and_writes_nothing() {
    let mut ports = Accounts::default();
    ports.user_read(&stored_user());
    ports.user_row(&with_totp(stored_user(), None), Lock::Update);
    let log = ports.record_writes();
    let (service, uow) = ports.build();

    let err = block_on(service.totp_setup(&actor(), PASSWORD)).unwrap_err();

    assert!(
        matches!(err, ServiceError::Conflict(Conflict::TwoFactorEnabled)),
        "{err:?}"
    );
    assert_eq!(uow.outcomes(), [Outcome::RolledBack]);
    assert!(written(&log).is_empty());
}

#[test]
fn verify_without_a_started_setup_is_a_conflict() {
    for (user, expected) in [
        (stored_user(), Conflict::TwoFactorNotStarted),
        (with_totp(stored_user(), None), Conflict::TwoFactorEnabled),
    ] {
        let mut ports = ports_of(&user);
        ports.totp = totp_never_checking();
        let log = ports.record_writes();
        let (service, uow) = ports.build();

        let err = block_on(service.totp_verify(&actor(), GOOD_CODE)).unwrap_err();

        assert!(
            matches!(&err, ServiceError::Conflict(c) if *c == expected),
            "{err:?}"
        );
        assert_eq!(uow.outcomes(), [Outcome::RolledBack]);
        assert!(written(&log).is_empty());
    }
}

#[test]
fn verify_with_a_wrong_code_rolls_back_and_keeps_the_setup_pending() {
    let mut ports = ports_of(&pending_user());
    ports.totp = totp_checking(PENDING, "000000");
    let log = ports.record_writes();
    let (service, uow) = ports.build();

    let err = block_on(service.totp_verify(&actor(), "000000")).unwrap_err();

    assert!(is_invalid_code(&err), "{err:?}");
    assert_eq!(uow.outcomes(), [Outcome::RolledBack]);
    assert!(written(&log).is_empty());
}

#[test]
fn verify_with_a_code_of_the_pending_secret_turns_the_second_factor_on() {
    let user = pending_user();
    let mut ports = ports_of(&user);
    ports.totp = totp_checking(PENDING, GOOD_CODE);
    let log = ports.record_writes();
    let (service, uow) = ports.build();

    block_on(service.totp_verify(&actor(), " 123456 ")).unwrap();

    assert_eq!(uow.outcomes(), [Outcome::Committed]);
    let w = written(&log);
    assert_eq!(w.calls, ["update_user", "append_events"]);
    assert_eq!(
        w.updated_users[0].totp,
        TotpSettings {
            enabled: true,
            secret: Some(PENDING.to_vec()),
            pending_secret: None,
            last_step: Some(GOOD_STEP),
        }
    );
    assert_eq!(types(&w.events), ["user.totp_enabled"]);
    assert_user_event(&w.events[0], "user.totp_enabled", &user, Some(user.id));
    assert_eq!(w.events[0].payload, json!({}));
}

#[test]
fn only_signed_in_users_verify() {
    let (service, uow) = Accounts::default().build();

    let err =
        block_on(service.totp_verify(&agent_actor(AgentMode::Worker), GOOD_CODE)).unwrap_err();

    assert!(
        matches!(err, ServiceError::Forbidden(Forbidden::UserRequired)),
        "{err:?}"
    );
    assert!(uow.outcomes().is_empty());
}

#[test]
fn disable_when_not_enabled_is_a_conflict() {
    let mut ports = ports_of(&pending_user());
    ports.totp = totp_never_checking();
    let log = ports.record_writes();
    let (service, uow) = ports.build();

    let err = block_on(service.totp_disable(&actor(), PASSWORD, GOOD_CODE)).unwrap_err();

    assert!(
        matches!(err, ServiceError::Conflict(Conflict::TwoFactorNotEnabled)),
        "{err:?}"
    );
    assert_eq!(uow.outcomes(), [Outcome::RolledBack]);
    assert!(written(&log).is_empty());
}

#[test]
fn disable_with_a_wrong_password_opens_no_transaction() {
    let mut ports = Accounts::default();
    ports.user_read(&with_totp(stored_user(), None));
    ports.totp = totp_never_checking();
    let (service, uow) = ports.build();

    let err = block_on(service.totp_disable(&actor(), "not my password", GOOD_CODE)).unwrap_err();

    assert!(
        matches!(err, ServiceError::Unauthorized(Unauthorized::WrongPassword)),
        "{err:?}"
    );
    assert!(uow.outcomes().is_empty());
}

#[test]
fn disable_with_a_wrong_or_replayed_code_rolls_back() {
    for (last_step, code) in [(None, "000000"), (Some(GOOD_STEP), GOOD_CODE)] {
        let mut ports = ports_of(&with_totp(stored_user(), last_step));
        ports.totp = totp_checking(SECRET, code);
        let log = ports.record_writes();
        let (service, uow) = ports.build();

        let err = block_on(service.totp_disable(&actor(), PASSWORD, code)).unwrap_err();

        assert!(is_invalid_code(&err), "{code}: {err:?}");
        assert_eq!(uow.outcomes(), [Outcome::RolledBack]);
        assert!(written(&log).is_empty());
    }
}

#[test]
fn disable_with_a_current_code_clears_the_settings_and_the_recovery_codes() {
    let user = with_totp(stored_user(), Some(GOOD_STEP - 1));
    let mut ports = ports_of(&user);
    ports.totp = totp_checking(SECRET, GOOD_CODE);
    let log = ports.record_writes();
    let (service, uow) = ports.build();

    block_on(service.totp_disable(&actor(), PASSWORD, GOOD_CODE)).unwrap();

    assert_eq!(uow.outcomes(), [Outcome::Committed]);
    let w = written(&log);
    assert_eq!(
        w.calls,
        ["update_user", "replace_recovery_codes", "append_events"]
    );
    assert_eq!(w.updated_users[0].totp, TotpSettings::default());
    assert_eq!(w.recovery_codes, [(user.id, Vec::new())]);
    assert_eq!(types(&w.events), ["user.totp_disabled"]);
    assert_user_event(&w.events[0], "user.totp_disabled", &user, Some(user.id));
    assert_eq!(w.events[0].severity, EventSeverity::Warning);
}

#[test]
fn disable_accepts_an_unused_recovery_code() {
    let user = with_totp(stored_user(), None);
    let mut ports = ports_of(&user);
    ports.totp = totp_never_checking();
    ports
        .tx
        .expect_use_recovery_code()
        .withf(|u, hash, at| {
            *u == stored_user().id && *hash == fake_hash("ABCD-EFGH") && *at == NOW
        })
        .times(1)
        .returning(|_, _, _| Ok(true));
    let log = ports.record_writes();
    let (service, uow) = ports.build();

    block_on(service.totp_disable(&actor(), PASSWORD, "abcd-efgh")).unwrap();

    assert_eq!(uow.outcomes(), [Outcome::Committed]);
    assert_eq!(written(&log).updated_users[0].totp, TotpSettings::default());
}
