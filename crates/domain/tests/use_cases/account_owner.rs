//! The synthetic owner of auth modes `none` and `local`: `AccountService::ensure_owner`
//! and `login_local`, against mocked ports.

use crate::common;

use std::sync::{Arc, Mutex};

use common::accounts::{
    Accounts, access_for, assert_user_event, from, organization, signed_in, streak_of, user_streak,
};
use common::writes::written;
use common::{NOW, org, types};
use futures_executor::block_on;
use muster_domain::model::{Email, LoginThrottle, OrgId, User, UserId, UserRole};
use muster_domain::ports::{Lock, MockPasswordHasher, Outcome, RepositoryError, UniqueKey};
use muster_domain::service::accounts::OWNER_EMAIL;
use muster_domain::service::{ServiceError, Unauthorized};
use serde_json::json;
use time::Duration;
use uuid::Uuid;

/// The synthetic owner, as stored.
fn owner() -> User {
    User::new(
        UserId::from_uuid(Uuid::from_u128(0xb0)),
        org(),
        Email::new(OWNER_EMAIL).unwrap(),
        "Owner".into(),
        UserRole::Admin,
        "!".into(),
        common::EARLIER,
    )
}

/// `tx.default_organization` answers `common::org` when `exists`, else nothing.
fn default_org(ports: &mut Accounts, exists: bool) {
    ports
        .tx
        .expect_default_organization()
        .returning(move || Ok(exists.then(|| organization(org()))));
}

/// `tx.user_by_email` is asked once for the owner's e-mail (shared lock), answers
/// `found` and records the organization it was asked about.
fn owner_lookup(ports: &mut Accounts, found: Option<User>) -> Arc<Mutex<Vec<OrgId>>> {
    let asked: Arc<Mutex<Vec<OrgId>>> = Arc::default();
    let sink = Arc::clone(&asked);
    ports
        .tx
        .expect_user_by_email()
        .withf(|_, email, lock| email.as_str() == OWNER_EMAIL && *lock == Lock::Share)
        .times(1)
        .returning(move |org, _, _| {
            sink.lock().unwrap().push(org);
            Ok(found.clone())
        });
    asked
}

#[test]
fn without_any_organization_it_creates_the_default_one_and_its_owner() {
    let mut ports = Accounts::default();
    default_org(&mut ports, false);
    let asked = owner_lookup(&mut ports, None);
    let log = ports.record_writes();
    let (service, uow) = ports.build();

    let created = block_on(service.ensure_owner()).unwrap();

    assert_eq!(uow.outcomes(), [Outcome::Committed]);
    let w = written(&log);
    assert_eq!(
        w.calls,
        ["insert_organization", "insert_user", "append_events"]
    );
    let new_org = &w.organizations[0];
    assert_eq!(new_org.name.as_str(), "Default");
    assert!(new_org.is_default);
    assert_eq!(new_org.created_at, NOW);
    assert_eq!(
        *asked.lock().unwrap(),
        [new_org.id],
        "looked up in the new org"
    );

    assert_eq!(w.inserted_users, std::slice::from_ref(&created));
    assert_eq!(created.org_id, new_org.id);
    assert_eq!(created.email.as_str(), "owner@muster.local");
    assert_eq!(created.name, "Owner");
    assert_eq!(created.role, UserRole::Admin);
    assert_eq!(created.password_hash, "!", "no password can match");
    assert_eq!(created.created_at, NOW);
    assert_ne!(created.id.as_uuid(), new_org.id.as_uuid());

    assert_eq!(types(&w.events), ["user.created"]);
    assert_user_event(&w.events[0], "user.created", &created, None);
    assert_eq!(
        w.events[0].payload,
        json!({"email": "owner@muster.local", "role": "admin"})
    );
}

#[test]
fn an_existing_owner_is_found_and_nothing_is_written() {
    let mut ports = Accounts::default();
    default_org(&mut ports, true);
    let asked = owner_lookup(&mut ports, Some(owner()));
    let log = ports.record_writes();
    let (service, uow) = ports.build();

    let found = block_on(service.ensure_owner()).unwrap();

    assert_eq!(found, owner());
    assert_eq!(*asked.lock().unwrap(), [org()]);
    assert!(written(&log).is_empty(), "no insert");
    assert_eq!(uow.outcomes(), [Outcome::Committed]);
}

#[test]
fn a_configured_default_organization_is_where_the_owner_lives() {
    let configured = OrgId::from_uuid(Uuid::from_u128(0xc0));
    let mut ports = Accounts {
        default_org: Some(configured),
        ..Accounts::default()
    };
    ports
        .orgs
        .expect_get()
        .withf(move |id| *id == configured)
        .returning(|id| Ok(Some(organization(id))));
    // The first bootstrapped organization is not consulted.
    ports.tx.expect_default_organization().never();
    let asked = owner_lookup(&mut ports, None);
    let log = ports.record_writes();
    let (service, _) = ports.build();

    let created = block_on(service.ensure_owner()).unwrap();

    assert_eq!(created.org_id, configured);
    assert_eq!(written(&log).calls, ["insert_user", "append_events"]);
    assert_eq!(*asked.lock().unwrap(), [configured]);
}

#[test]
fn a_configured_default_organization_must_exist() {
    let missing = OrgId::from_uuid(Uuid::from_u128(0xc1));
    let mut ports = Accounts {
        default_org: Some(missing),
        ..Accounts::default()
    };
    ports.orgs.expect_get().returning(|_| Ok(None));
    let (service, uow) = ports.build();

    let err = block_on(service.ensure_owner()).unwrap_err();

    assert!(matches!(err, ServiceError::NotFound(_)), "{err:?}");
    assert!(uow.outcomes().is_empty(), "nothing was started");
}

#[test]
fn an_existing_default_organization_gets_the_missing_owner() {
    let mut ports = Accounts::default();
    default_org(&mut ports, true);
    owner_lookup(&mut ports, None);
    let log = ports.record_writes();
    let (service, _) = ports.build();

    let created = block_on(service.ensure_owner()).unwrap();

    assert_eq!(created.org_id, org());
    let w = written(&log);
    assert_eq!(w.calls, ["insert_user", "append_events"]);
    assert!(w.organizations.is_empty());
}

#[test]
fn losing_the_race_to_another_instance_finds_the_winners_owner() {
    let mut ports = Accounts::default();
    default_org(&mut ports, true);
    let mut seq = mockall::Sequence::new();
    ports
        .tx
        .expect_user_by_email()
        .times(1)
        .in_sequence(&mut seq)
        .returning(|_, _, _| Ok(None));
    ports
        .tx
        .expect_insert_user()
        .times(1)
        .in_sequence(&mut seq)
        .returning(|_| Err(RepositoryError::Duplicate(UniqueKey::UserEmail)));
    ports
        .tx
        .expect_user_by_email()
        .times(1)
        .in_sequence(&mut seq)
        .returning(|_, _, _| Ok(Some(owner())));
    ports.tx.expect_append_events().never();
    let (service, uow) = ports.build();

    let found = block_on(service.ensure_owner()).unwrap();

    assert_eq!(found, owner());
    assert_eq!(uow.outcomes(), [Outcome::RolledBack, Outcome::Committed]);
}

#[test]
fn other_storage_failures_are_not_retried() {
    let mut ports = Accounts::default();
    default_org(&mut ports, true);
    owner_lookup(&mut ports, None);
    ports
        .tx
        .expect_insert_user()
        .times(1)
        .returning(|_| Err(RepositoryError::internal("disk full")));
    let (service, uow) = ports.build();

    let err = block_on(service.ensure_owner()).unwrap_err();

    assert!(matches!(err, ServiceError::Internal(_)), "{err:?}");
    assert_eq!(uow.outcomes(), [Outcome::RolledBack]);
}

/// The configured password's hash (`MUSTER_LOCAL_PASSWORD_HASH`).
const CONFIGURED: &str = "$argon2id$configured";

/// A hasher that must be asked exactly once, with `password` against the configured
/// hash, and answers `matches`.
fn hasher_expecting(password: &'static str, matches: bool) -> MockPasswordHasher {
    let mut hasher = MockPasswordHasher::new();
    hasher
        .expect_verify()
        .withf(move |p, phc| p == password && phc.as_deref() == Some(CONFIGURED))
        .times(1)
        .returning(move |_, _| Ok(matches));
    hasher
}

#[test]
fn local_login_checks_the_configured_password_and_signs_the_owner_in() {
    let owner = owner();
    let key = user_streak(owner.id, from());
    let mut ports = Accounts::default();
    ports.streak(key, streak_of(2, NOW - Duration::minutes(3)));
    ports.hasher = hasher_expecting("the local one", true);
    ports.user_row(&owner, Lock::Update);
    let log = ports.record_writes();
    let (service, uow) = ports.build();

    let outcome =
        block_on(service.login_local(&owner, CONFIGURED, "the local one", from())).unwrap();

    let (tokens, signed) = signed_in(outcome);
    assert_eq!(uow.outcomes(), [Outcome::Committed, Outcome::Committed]);
    assert_eq!(signed.last_login_at, Some(NOW));
    assert_eq!(tokens.access, access_for(&owner));
    let w = written(&log);
    assert_eq!(w.streaks, [(key, streak_of(3, NOW))]);
    assert_eq!(w.cleared_streaks, [key], "the success ends the streak");
    assert_eq!(w.refresh_tokens.len(), 1);
    assert_user_event(&w.events[0], "user.login", &owner, Some(owner.id));
    assert_eq!(
        w.events[0].payload,
        json!({"method": "local", "twoFactor": false})
    );
}

#[test]
fn a_wrong_local_password_is_counted_against_the_owner_from_that_address() {
    let owner = owner();
    let key = user_streak(owner.id, from());
    let mut ports = Accounts::default();
    ports.streak(key, LoginThrottle::default());
    ports.hasher = hasher_expecting("guess", false);
    let log = ports.record_writes();
    let (service, uow) = ports.build();

    let err = block_on(service.login_local(&owner, CONFIGURED, "guess", from())).unwrap_err();

    assert!(
        matches!(
            err,
            ServiceError::Unauthorized(Unauthorized::InvalidCredentials)
        ),
        "{err:?}"
    );
    assert_eq!(uow.outcomes(), [Outcome::Committed, Outcome::Committed]);
    let w = written(&log);
    assert_eq!(w.calls, ["save_login_throttle", "append_events"]);
    assert_eq!(w.streaks, [(key, streak_of(1, NOW))]);
    assert_eq!(types(&w.events), ["user.login_failed"]);
    assert_user_event(&w.events[0], "user.login_failed", &owner, None);
    assert!(w.refresh_tokens.is_empty());
}

#[test]
fn a_locked_owner_streak_is_throttled_before_the_local_password_is_checked() {
    let owner = owner();
    let mut hasher = MockPasswordHasher::new();
    hasher.expect_verify().never();
    let mut ports = Accounts {
        hasher,
        ..Accounts::default()
    };
    // The 12th failure locks for an hour; it was 57 minutes ago.
    ports.streak(
        user_streak(owner.id, from()),
        streak_of(12, NOW - Duration::minutes(57)),
    );
    let log = ports.record_writes();
    let (service, uow) = ports.build();

    let err =
        block_on(service.login_local(&owner, CONFIGURED, "the local one", from())).unwrap_err();

    assert!(
        matches!(
            err,
            ServiceError::Throttled {
                retry_after_secs: 180
            }
        ),
        "{err:?}"
    );
    assert_eq!(uow.outcomes(), [Outcome::RolledBack]);
    assert!(written(&log).is_empty());
}
