//! `AccountService::totp_setup`, `totp_verify` and `totp_disable` against mocked ports:
//! each password or code they check is an attempt of the user's throttle streak, and
//! any wrong one is the same 401.

use crate::common;

use common::accounts::{
    Accounts, GOOD_CODE, GOOD_STEP, PASSWORD, PENDING, QR_CODE, SECRET, assert_user_event,
    fake_hash, from, recovery_codes, stored_user, streak_of, totp_never_checking, user_email,
    user_streak, with_totp,
};
use common::writes::written;
use common::{NOW, agent_actor, types, user_actor};
use futures_executor::block_on;
use muster_domain::model::{
    AgentMode, EventSeverity, LoginThrottle, ThrottleKey, TotpSettings, User, UserRole,
};
use muster_domain::policy::Forbidden;
use muster_domain::ports::{Lock, MockPasswordHasher, MockTotpAuthority, Outcome};
use muster_domain::service::{Conflict, ServiceError, Unauthorized};
use serde_json::json;
use time::Duration;

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

/// The signed-in user's streak from [`from`].
fn key() -> ThrottleKey {
    user_streak(stored_user().id, from())
}

/// A streak that refuses its next attempt for 4 more minutes.
fn locked() -> LoginThrottle {
    streak_of(13, NOW - Duration::minutes(116))
}

/// Ports where `user` is the signed-in user, read both outside the transaction and
/// locked inside it, with an empty streak from [`from`].
fn ports_of(user: &User) -> Accounts {
    ports_streak(user, LoginThrottle::default())
}

/// [`ports_of`] with the streak `streak`.
fn ports_streak(user: &User, streak: LoginThrottle) -> Accounts {
    let mut ports = Accounts::default();
    ports.user_read(user);
    ports.user_row(user, Lock::Update);
    ports.streak(key(), streak);
    ports
}

/// A hasher that must not be asked.
fn hasher_never() -> MockPasswordHasher {
    let mut hasher = MockPasswordHasher::new();
    hasher.expect_verify().never();
    hasher
}

fn is_throttled(err: &ServiceError) -> bool {
    matches!(
        err,
        ServiceError::Throttled {
            retry_after_secs: 240
        }
    )
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

/// The one answer to any wrong password or code.
fn is_the_one_refusal(err: &ServiceError) -> bool {
    matches!(
        err,
        ServiceError::Unauthorized(Unauthorized::InvalidPasswordOrCode)
    ) && err.to_string() == "Invalid password or code"
}

#[test]
fn setup_with_a_wrong_password_is_counted_and_mints_nothing() {
    let mut ports = ports_streak(&stored_user(), streak_of(4, NOW));
    ports.totp = MockTotpAuthority::new();
    ports.totp.expect_new_secret().never();
    let log = ports.record_writes();
    let (service, uow) = ports.build();

    let err = block_on(service.totp_setup(&actor(), from(), "not my password")).unwrap_err();

    assert!(is_the_one_refusal(&err), "{err:?}");
    assert_eq!(uow.outcomes(), [Outcome::Committed], "the attempt is kept");
    let w = written(&log);
    assert_eq!(w.calls, ["save_login_throttle"]);
    assert_eq!(w.streaks, [(key(), streak_of(5, NOW))]);
}

#[test]
fn setup_on_a_locked_streak_is_throttled_without_checking_the_password() {
    let mut ports = ports_streak(&stored_user(), locked());
    ports.hasher = hasher_never();
    let log = ports.record_writes();
    let (service, uow) = ports.build();

    let err = block_on(service.totp_setup(&actor(), from(), PASSWORD)).unwrap_err();

    assert!(is_throttled(&err), "{err:?}");
    assert_eq!(uow.outcomes(), [Outcome::RolledBack]);
    assert!(written(&log).is_empty());
}

#[test]
fn setup_while_enabled_is_a_conflict() {
    let mut ports = Accounts::default();
    ports.user_read(&with_totp(stored_user(), None));
    ports.totp = MockTotpAuthority::new();
    ports.totp.expect_new_secret().never();
    let (service, uow) = ports.build();

    let err = block_on(service.totp_setup(&actor(), from(), PASSWORD)).unwrap_err();

    assert!(
        matches!(err, ServiceError::Conflict(Conflict::TwoFactorEnabled)),
        "{err:?}"
    );
    assert!(uow.outcomes().is_empty(), "no attempt: nothing was checked");
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

    let setup = block_on(service.totp_setup(&actor(), from(), PASSWORD)).unwrap();

    assert_eq!(uow.outcomes(), [Outcome::Committed, Outcome::Committed]);
    assert_eq!(setup.qr_code, QR_CODE);
    assert_eq!(setup.recovery_codes, recovery_codes());
    let w = written(&log);
    assert_eq!(
        w.calls,
        [
            "save_login_throttle",
            "update_user",
            "replace_recovery_codes",
            "clear_login_throttle"
        ]
    );
    assert_eq!(
        w.cleared_streaks,
        [key()],
        "the right password ends the streak"
    );
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
    ports.streak(key(), LoginThrottle::default());
    let log = ports.record_writes();
    let (service, uow) = ports.build();

    let err = block_on(service.totp_setup(&actor(), from(), PASSWORD)).unwrap_err();

    assert!(
        matches!(err, ServiceError::Conflict(Conflict::TwoFactorEnabled)),
        "{err:?}"
    );
    assert_eq!(uow.outcomes(), [Outcome::Committed, Outcome::RolledBack]);
    assert_eq!(written(&log).calls, ["save_login_throttle"]);
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

        let err = block_on(service.totp_verify(&actor(), from(), GOOD_CODE)).unwrap_err();

        assert!(
            matches!(&err, ServiceError::Conflict(c) if *c == expected),
            "{err:?}"
        );
        assert!(uow.outcomes().is_empty(), "no attempt: nothing was checked");
        assert!(written(&log).is_empty());
    }
}

#[test]
fn verify_with_a_wrong_code_is_counted_and_keeps_the_setup_pending() {
    let mut ports = ports_of(&pending_user());
    ports.totp = totp_checking(PENDING, "000000");
    let log = ports.record_writes();
    let (service, uow) = ports.build();

    let err = block_on(service.totp_verify(&actor(), from(), "000000")).unwrap_err();

    assert!(is_the_one_refusal(&err), "{err:?}");
    assert_eq!(uow.outcomes(), [Outcome::Committed, Outcome::RolledBack]);
    let w = written(&log);
    assert_eq!(w.calls, ["save_login_throttle"]);
    assert_eq!(w.streaks, [(key(), streak_of(1, NOW))]);
}

#[test]
fn verify_on_a_locked_streak_is_throttled_without_checking_the_code() {
    let mut ports = ports_streak(&pending_user(), locked());
    ports.totp = totp_never_checking();
    let log = ports.record_writes();
    let (service, uow) = ports.build();

    let err = block_on(service.totp_verify(&actor(), from(), GOOD_CODE)).unwrap_err();

    assert!(is_throttled(&err), "{err:?}");
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

    block_on(service.totp_verify(&actor(), from(), " 123456 ")).unwrap();

    assert_eq!(uow.outcomes(), [Outcome::Committed, Outcome::Committed]);
    let w = written(&log);
    assert_eq!(
        w.calls,
        [
            "save_login_throttle",
            "update_user",
            "clear_login_throttle",
            "append_events"
        ]
    );
    assert_eq!(w.cleared_streaks, [key()]);
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

    let err = block_on(service.totp_verify(&agent_actor(AgentMode::Worker), from(), GOOD_CODE))
        .unwrap_err();

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

    let err = block_on(service.totp_disable(&actor(), from(), PASSWORD, GOOD_CODE)).unwrap_err();

    assert!(
        matches!(err, ServiceError::Conflict(Conflict::TwoFactorNotEnabled)),
        "{err:?}"
    );
    assert!(uow.outcomes().is_empty(), "no attempt: nothing was checked");
    assert!(written(&log).is_empty());
}

#[test]
fn disable_answers_a_wrong_password_and_a_wrong_code_alike_after_checking_both() {
    for (password, code) in [("not my password", GOOD_CODE), (PASSWORD, "000000")] {
        let mut ports = ports_of(&with_totp(stored_user(), None));
        // The code is checked whichever is wrong.
        ports.totp = totp_checking(SECRET, code);
        let log = ports.record_writes();
        let (service, uow) = ports.build();

        let err = block_on(service.totp_disable(&actor(), from(), password, code)).unwrap_err();

        assert!(is_the_one_refusal(&err), "{password}, {code}: {err:?}");
        assert_eq!(uow.outcomes(), [Outcome::Committed, Outcome::RolledBack]);
        let w = written(&log);
        assert_eq!(w.calls, ["save_login_throttle"], "one attempt, counted");
        assert_eq!(w.streaks, [(key(), streak_of(1, NOW))]);
    }
}

#[test]
fn disable_with_a_wrong_password_rolls_back_a_recovery_codes_use() {
    let mut ports = ports_of(&with_totp(stored_user(), None));
    ports.totp = totp_never_checking();
    ports
        .tx
        .expect_use_recovery_code()
        .times(1)
        .returning(|_, _, _| Ok(true));
    let log = ports.record_writes();
    let (service, uow) = ports.build();

    let err = block_on(service.totp_disable(&actor(), from(), "not my password", "abcd-efgh"))
        .unwrap_err();

    assert!(is_the_one_refusal(&err), "{err:?}");
    assert_eq!(
        uow.outcomes(),
        [Outcome::Committed, Outcome::RolledBack],
        "the code's use is not kept"
    );
    assert_eq!(written(&log).calls, ["save_login_throttle"]);
}

#[test]
fn disable_with_a_replayed_code_is_refused() {
    let mut ports = ports_of(&with_totp(stored_user(), Some(GOOD_STEP)));
    ports.totp = totp_checking(SECRET, GOOD_CODE);
    let log = ports.record_writes();
    let (service, uow) = ports.build();

    let err = block_on(service.totp_disable(&actor(), from(), PASSWORD, GOOD_CODE)).unwrap_err();

    assert!(is_the_one_refusal(&err), "{err:?}");
    assert_eq!(uow.outcomes(), [Outcome::Committed, Outcome::RolledBack]);
    assert_eq!(written(&log).calls, ["save_login_throttle"]);
}

#[test]
fn disable_on_a_locked_streak_is_throttled_without_any_check() {
    let mut ports = ports_streak(&with_totp(stored_user(), None), locked());
    ports.hasher = hasher_never();
    ports.totp = totp_never_checking();
    let log = ports.record_writes();
    let (service, uow) = ports.build();

    let err = block_on(service.totp_disable(&actor(), from(), PASSWORD, GOOD_CODE)).unwrap_err();

    assert!(is_throttled(&err), "{err:?}");
    assert_eq!(uow.outcomes(), [Outcome::RolledBack]);
    assert!(written(&log).is_empty());
}

#[test]
fn disable_with_a_current_code_clears_the_settings_and_the_recovery_codes() {
    let user = with_totp(stored_user(), Some(GOOD_STEP - 1));
    let mut ports = ports_of(&user);
    ports.totp = totp_checking(SECRET, GOOD_CODE);
    let log = ports.record_writes();
    let (service, uow) = ports.build();

    block_on(service.totp_disable(&actor(), from(), PASSWORD, GOOD_CODE)).unwrap();

    assert_eq!(uow.outcomes(), [Outcome::Committed, Outcome::Committed]);
    let w = written(&log);
    assert_eq!(
        w.calls,
        [
            "save_login_throttle",
            "update_user",
            "replace_recovery_codes",
            "clear_login_throttle",
            "append_events"
        ]
    );
    assert_eq!(w.cleared_streaks, [key()]);
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

    block_on(service.totp_disable(&actor(), from(), PASSWORD, "abcd-efgh")).unwrap();

    assert_eq!(uow.outcomes(), [Outcome::Committed, Outcome::Committed]);
    assert_eq!(written(&log).updated_users[0].totp, TotpSettings::default());
}
