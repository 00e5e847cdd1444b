//! `AccountService::me`, `update_profile`, `change_password` and `register` against
//! mocked ports.

use crate::common;

use common::accounts::{
    Accounts, PASSWORD, assert_user_event, from, invalid_message, key_actor, phc, stored_user,
    streak_of, user_streak,
};
use common::writes::written;
use common::{NOW, actor_user_id, agent_actor, org, types, user_actor};
use futures_executor::block_on;
use muster_domain::model::{AgentMode, ApiKeyScope, Email, LoginThrottle, OrgId, User, UserRole};
use muster_domain::policy::Forbidden;
use muster_domain::ports::{Lock, MockPasswordHasher, Outcome, RepositoryError, UniqueKey};
use muster_domain::service::accounts::NewUser;
use muster_domain::service::{Conflict, Entity, NotFound, ServiceError, Unauthorized};
use serde_json::json;
use uuid::Uuid;

fn is_user_required(err: &ServiceError) -> bool {
    matches!(err, ServiceError::Forbidden(Forbidden::UserRequired))
}

#[test]
fn me_is_the_signed_in_user_as_stored() {
    let mut ports = Accounts::default();
    ports.user_read(&stored_user());
    let (service, _) = ports.build();

    let me = block_on(service.me(&user_actor(UserRole::Operator))).unwrap();

    assert_eq!(me, stored_user());
}

#[test]
fn me_of_a_deleted_user_is_not_found_and_agents_have_no_me() {
    let mut ports = Accounts::default();
    ports
        .users
        .expect_user()
        .times(1)
        .returning(|_, _| Ok(None));
    let (service, _) = ports.build();

    let err = block_on(service.me(&user_actor(UserRole::Operator))).unwrap_err();
    assert!(
        matches!(&err, ServiceError::NotFound(nf) if *nf == NotFound::new(Entity::User, actor_user_id())),
        "{err:?}"
    );

    let err = block_on(service.me(&agent_actor(AgentMode::Worker))).unwrap_err();
    assert!(is_user_required(&err), "{err:?}");
}

#[test]
fn update_profile_stores_the_trimmed_name_and_normalized_email() {
    // A new address is no longer verified.
    let user = User {
        email_verified: true,
        ..stored_user()
    };
    let mut ports = Accounts::default();
    ports.user_row(&user, Lock::Update);
    let log = ports.record_writes();
    let (service, uow) = ports.build();

    let updated = block_on(service.update_profile(
        &user_actor(UserRole::Operator),
        Some("  Ada L.  ".into()),
        Some("Ada.L@Example.com".into()),
    ))
    .unwrap();

    assert_eq!(uow.outcomes(), [Outcome::Committed]);
    let expected = User {
        name: "Ada L.".into(),
        email: Email::new("ada.l@example.com").unwrap(),
        email_verified: false,
        ..user
    };
    assert_eq!(updated, expected);
    let w = written(&log);
    assert_eq!(w.updated_users, [expected]);
    assert_eq!(w.stamps, [NOW]);
}

#[test]
fn the_same_address_typed_again_stays_verified() {
    let user = User {
        email_verified: true,
        ..stored_user()
    };
    let mut ports = Accounts::default();
    ports.user_row(&user, Lock::Update);
    let log = ports.record_writes();
    let (service, _) = ports.build();
    let again = user.email.as_str().to_uppercase();

    let updated =
        block_on(service.update_profile(&user_actor(UserRole::Viewer), None, Some(again))).unwrap();

    assert!(updated.email_verified);
    assert!(written(&log).updated_users[0].email_verified);
}

#[test]
fn update_profile_without_changes_keeps_the_stored_values() {
    let mut ports = Accounts::default();
    ports.user_row(&stored_user(), Lock::Update);
    let log = ports.record_writes();
    let (service, _) = ports.build();

    let updated =
        block_on(service.update_profile(&user_actor(UserRole::Viewer), None, None)).unwrap();

    assert_eq!(updated, stored_user());
    assert_eq!(written(&log).updated_users, [stored_user()]);
}

#[test]
fn a_taken_email_is_a_400_and_rolls_back() {
    let mut ports = Accounts::default();
    ports.user_row(&stored_user(), Lock::Update);
    ports
        .tx
        .expect_update_user()
        .times(1)
        .returning(|_, _| Err(RepositoryError::Duplicate(UniqueKey::UserEmail)));
    let (service, uow) = ports.build();

    let err = block_on(service.update_profile(
        &user_actor(UserRole::Operator),
        None,
        Some("grace@example.com".into()),
    ))
    .unwrap_err();

    assert_eq!(
        invalid_message(&err),
        "email is already in use in this organization"
    );
    assert_eq!(uow.outcomes(), [Outcome::RolledBack]);
}

#[test]
fn update_profile_refuses_bad_values_and_non_users_before_any_transaction() {
    // The expected validation message, or `None` for `Forbidden::UserRequired`.
    let cases = [
        (
            user_actor(UserRole::Operator),
            Some("   "),
            None,
            Some("name must not be empty"),
        ),
        (
            user_actor(UserRole::Operator),
            None,
            Some("nope"),
            Some("email must be a valid e-mail address"),
        ),
        (agent_actor(AgentMode::Worker), Some("Ada"), None, None),
        (
            key_actor(UserRole::Operator, ApiKeyScope::Admin),
            Some("Ada"),
            None,
            None,
        ),
    ];
    for (actor, name, email, expected) in cases {
        let (service, uow) = Accounts::default().build();

        let err =
            block_on(service.update_profile(&actor, name.map(Into::into), email.map(Into::into)))
                .unwrap_err();

        match expected {
            Some(message) => assert_eq!(invalid_message(&err), message),
            None => assert!(is_user_required(&err), "{actor:?}: {err:?}"),
        }
        assert!(uow.outcomes().is_empty());
    }
}

#[test]
fn a_wrong_current_password_changes_nothing_but_is_counted() {
    let key = user_streak(stored_user().id, from());
    let mut ports = Accounts::default();
    ports.user_read(&stored_user());
    ports.streak(key, streak_of(2, NOW));
    ports.hasher = MockPasswordHasher::new();
    ports
        .hasher
        .expect_verify()
        .withf(|p, stored| p == "not my password" && *stored == Some(phc(PASSWORD)))
        .times(1)
        .returning(|_, _| Ok(false));
    ports.hasher.expect_hash().never();
    let log = ports.record_writes();
    let (service, uow) = ports.build();

    let err = block_on(service.change_password(
        &user_actor(UserRole::Operator),
        from(),
        "not my password",
        "a new password",
    ))
    .unwrap_err();

    assert!(
        matches!(
            err,
            ServiceError::Unauthorized(Unauthorized::InvalidPasswordOrCode)
        ),
        "{err:?}"
    );
    assert_eq!(err.to_string(), "Invalid password or code");
    assert_eq!(
        uow.outcomes(),
        [Outcome::Committed],
        "only the attempt is kept"
    );
    let w = written(&log);
    assert_eq!(w.calls, ["save_login_throttle"]);
    assert_eq!(w.streaks, [(key, streak_of(3, NOW))]);
}

#[test]
fn a_locked_streak_refuses_a_password_change_without_checking_the_password() {
    let mut ports = Accounts::default();
    ports.user_read(&stored_user());
    // The 10th failure, 20 seconds ago, locks for 40 more.
    ports.streak(
        user_streak(stored_user().id, from()),
        streak_of(10, NOW - time::Duration::seconds(860)),
    );
    ports.hasher = MockPasswordHasher::new();
    ports.hasher.expect_verify().never();
    let log = ports.record_writes();
    let (service, uow) = ports.build();

    let err = block_on(service.change_password(
        &user_actor(UserRole::Operator),
        from(),
        PASSWORD,
        "a new password",
    ))
    .unwrap_err();

    assert!(
        matches!(
            err,
            ServiceError::Throttled {
                retry_after_secs: 40
            }
        ),
        "{err:?}"
    );
    assert_eq!(uow.outcomes(), [Outcome::RolledBack]);
    assert!(written(&log).is_empty());
}

#[test]
fn a_too_short_new_password_is_refused_before_checking_the_current_one() {
    let mut ports = Accounts::default();
    ports.user_read(&stored_user());
    ports.hasher = MockPasswordHasher::new();
    ports.hasher.expect_verify().never();
    let (service, uow) = ports.build();

    let err = block_on(service.change_password(
        &user_actor(UserRole::Operator),
        from(),
        PASSWORD,
        "short",
    ))
    .unwrap_err();

    assert_eq!(
        invalid_message(&err),
        "newPassword must be 8 to 128 characters"
    );
    assert!(uow.outcomes().is_empty());
}

#[test]
fn a_password_change_stores_the_new_hash_and_ends_every_login() {
    let user = stored_user();
    let mut ports = Accounts::default();
    ports.user_read(&user);
    ports.user_row(&user, Lock::Update);
    let key = user_streak(user.id, from());
    ports.streak(key, LoginThrottle::default());
    let log = ports.record_writes();
    let (service, uow) = ports.build();

    block_on(service.change_password(
        &user_actor(UserRole::Operator),
        from(),
        PASSWORD,
        "a new password",
    ))
    .unwrap();

    assert_eq!(uow.outcomes(), [Outcome::Committed, Outcome::Committed]);
    let w = written(&log);
    assert_eq!(
        w.calls,
        [
            "save_login_throttle",
            "update_user",
            "clear_login_throttle",
            "revoke_user_refresh_tokens",
            "append_events"
        ]
    );
    assert_eq!(
        w.cleared_streaks,
        [key],
        "the right password ends the streak"
    );
    assert_eq!(
        w.updated_users,
        [User {
            password_hash: phc("a new password"),
            ..user.clone()
        }]
    );
    assert_eq!(w.revoked_users, [user.id]);
    assert_eq!(w.stamps, [NOW, NOW]);
    assert_eq!(types(&w.events), ["user.password_changed"]);
    assert_user_event(&w.events[0], "user.password_changed", &user, Some(user.id));
    assert_eq!(w.events[0].payload, json!({}));
}

/// A hasher that must not hash anything.
fn never_hashing() -> MockPasswordHasher {
    let mut hasher = MockPasswordHasher::new();
    hasher.expect_hash().never();
    hasher
}

fn new_user(role: Option<UserRole>) -> NewUser {
    NewUser {
        email: " Grace@Example.com ".into(),
        password: "grace's password".into(),
        name: " Grace ".into(),
        org_id: org(),
        role,
    }
}

#[test]
fn only_signed_in_admins_and_admin_keys_may_register() {
    for actor in [
        user_actor(UserRole::Operator),
        user_actor(UserRole::Viewer),
        key_actor(UserRole::Admin, ApiKeyScope::Write),
        key_actor(UserRole::Operator, ApiKeyScope::Admin),
        agent_actor(AgentMode::Worker),
    ] {
        let (service, uow) = Accounts {
            hasher: never_hashing(),
            ..Accounts::default()
        }
        .build();

        let err = block_on(service.register(&actor, new_user(None))).unwrap_err();

        assert!(
            matches!(err, ServiceError::Unauthorized(Unauthorized::AdminRequired)),
            "{actor:?}: {err:?}"
        );
        assert!(uow.outcomes().is_empty());
    }
}

#[test]
fn users_are_registered_in_the_admins_own_organization_only() {
    let (service, uow) = Accounts::default().build();
    let elsewhere = NewUser {
        org_id: OrgId::from_uuid(Uuid::from_u128(0x0b)),
        ..new_user(None)
    };

    let err = block_on(service.register(&user_actor(UserRole::Admin), elsewhere)).unwrap_err();

    assert!(
        matches!(err, ServiceError::Forbidden(Forbidden::OtherOrganization)),
        "{err:?}"
    );
    assert!(uow.outcomes().is_empty());
}

#[test]
fn a_registered_user_is_an_operator_by_default_with_a_created_event() {
    let mut ports = Accounts::default();
    let log = ports.record_writes();
    let (service, uow) = ports.build();

    let user = block_on(service.register(&user_actor(UserRole::Admin), new_user(None))).unwrap();

    assert_eq!(uow.outcomes(), [Outcome::Committed]);
    assert_eq!(user.role, UserRole::Operator);
    assert_eq!(user.email.as_str(), "grace@example.com");
    assert_eq!(user.name, "Grace");
    assert_eq!(user.password_hash, phc("grace's password"));
    assert_eq!((user.org_id, user.created_at), (org(), NOW));
    assert_ne!(user.id, actor_user_id());
    assert!(!user.totp.enabled);
    let w = written(&log);
    assert_eq!(w.calls, ["insert_user", "append_events"]);
    assert_eq!(w.inserted_users, std::slice::from_ref(&user));
    assert_eq!(types(&w.events), ["user.created"]);
    // The admin is the actor; the new user is the entity.
    assert_user_event(&w.events[0], "user.created", &user, Some(actor_user_id()));
    assert_eq!(
        w.events[0].payload,
        json!({"email": "grace@example.com", "role": "operator"})
    );
}

#[test]
fn a_registered_role_is_kept_and_an_admin_key_may_register() {
    let mut ports = Accounts::default();
    let log = ports.record_writes();
    let (service, _) = ports.build();
    let actor = key_actor(UserRole::Admin, ApiKeyScope::Admin);

    let user = block_on(service.register(&actor, new_user(Some(UserRole::Viewer)))).unwrap();

    assert_eq!(user.role, UserRole::Viewer);
    assert_eq!(written(&log).events[0].payload["role"], "viewer");
}

#[test]
fn registering_a_taken_email_is_a_conflict_and_rolls_back() {
    let mut ports = Accounts::default();
    ports
        .tx
        .expect_insert_user()
        .times(1)
        .returning(|_| Err(RepositoryError::Duplicate(UniqueKey::UserEmail)));
    ports.tx.expect_append_events().never();
    let (service, uow) = ports.build();

    let err = block_on(service.register(&user_actor(UserRole::Admin), new_user(None))).unwrap_err();

    assert!(
        matches!(
            err,
            ServiceError::Conflict(Conflict::Duplicate(UniqueKey::UserEmail))
        ),
        "{err:?}"
    );
    assert_eq!(uow.outcomes(), [Outcome::RolledBack]);
}

#[test]
fn register_refuses_bad_values_before_hashing() {
    for (email, password, name) in [
        ("bad", "long enough", "A"),
        ("a@example.com", "short", "A"),
        ("a@example.com", "long enough", "  "),
    ] {
        let (service, uow) = Accounts {
            hasher: never_hashing(),
            ..Accounts::default()
        }
        .build();
        let new = NewUser {
            email: email.into(),
            password: password.into(),
            name: name.into(),
            org_id: org(),
            role: None,
        };

        let err = block_on(service.register(&user_actor(UserRole::Admin), new)).unwrap_err();

        assert!(matches!(err, ServiceError::Invalid(_)), "{email}: {err:?}");
        assert!(uow.outcomes().is_empty());
    }
}
