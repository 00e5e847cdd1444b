//! `BootstrapService` against a mocked organization repository.

use crate::common;

use std::sync::{Arc, Mutex};

use common::{NOW, types};
use futures_executor::block_on;
use muster_domain::model::{
    AgentHandle, AgentMode, AgentRole, AgentSecret, AgentStatus, Email, EventSeverity, OrgName,
    Treasury, TreasuryKind, UserRole,
};
use muster_domain::ports::{
    Lock, MockSecretSealer, MockTransaction, MockUnitOfWork, Outcome, RepositoryError, SealError,
    UniqueKey,
};
use muster_domain::service::{
    BootstrapRequest, BootstrapService, Conflict, NewOrganization, ServiceError,
};

type Created = Arc<Mutex<Vec<NewOrganization>>>;

fn request(org_name: &str, hr_handle: Option<&str>) -> BootstrapRequest {
    BootstrapRequest {
        hr_handle: hr_handle.map(|h| AgentHandle::new(h).unwrap()),
        ..BootstrapRequest::new(
            OrgName::new(org_name).unwrap(),
            Email::new("Admin@Acme.example").unwrap(),
            "$argon2id$v=19$m=19456,t=2,p=1$c2FsdA$aGFzaA".into(),
            AgentSecret::new("s3cret".into()),
        )
    }
}

/// Expects one bootstrap's writes, in order, on `tx`: organization, admin, HR agent
/// (answering `agent_outcome`), treasury (and its grant), events. Records what was written into `created`.
fn expect_writes(
    tx: &mut MockTransaction,
    created: &Created,
    agent_outcome: impl Fn() -> Result<(), RepositoryError> + Send + 'static,
) {
    let mut seq = mockall::Sequence::new();
    let sink = Arc::clone(created);
    tx.expect_insert_organization()
        .times(1)
        .in_sequence(&mut seq)
        .returning(move |org| {
            let mut stored = sink.lock().unwrap();
            stored.push(NewOrganization {
                organization: org.clone(),
                admin: placeholder_admin(org.id),
                hr_agent: placeholder_agent(),
                treasury: Treasury::empty(org.id),
                treasury_grant: None,
                events: Vec::new(),
            });
            Ok(())
        });
    let sink = Arc::clone(created);
    tx.expect_insert_user()
        .times(1)
        .in_sequence(&mut seq)
        .returning(move |user| {
            sink.lock().unwrap().last_mut().unwrap().admin = user.clone();
            Ok(())
        });
    let sink = Arc::clone(created);
    tx.expect_insert_agent()
        .times(1)
        .in_sequence(&mut seq)
        .returning(move |agent| {
            sink.lock().unwrap().last_mut().unwrap().hr_agent = agent.clone();
            agent_outcome()
        });
    // The treasury row is made (locked) with the organization, then funded if granted.
    tx.expect_treasury()
        .withf(|_, lock| *lock == Lock::Update)
        .times(..=1)
        .in_sequence(&mut seq)
        .returning(|org, _| Ok(Treasury::empty(org)));
    let sink = Arc::clone(created);
    tx.expect_update_treasury()
        .times(..=1)
        .in_sequence(&mut seq)
        .returning(move |treasury| {
            sink.lock().unwrap().last_mut().unwrap().treasury = treasury.clone();
            Ok(())
        });
    let sink = Arc::clone(created);
    tx.expect_insert_treasury_entries()
        .times(..=1)
        .in_sequence(&mut seq)
        .returning(move |entries| {
            assert_eq!(entries.len(), 1);
            sink.lock().unwrap().last_mut().unwrap().treasury_grant = Some(entries[0].clone());
            Ok(())
        });
    let sink = Arc::clone(created);
    tx.expect_append_events()
        .times(..=1)
        .in_sequence(&mut seq)
        .returning(move |events| {
            sink.lock().unwrap().last_mut().unwrap().events = events.to_vec();
            Ok(())
        });
}

fn placeholder_admin(org_id: muster_domain::model::OrgId) -> muster_domain::model::User {
    muster_domain::model::User::new(
        muster_domain::model::UserId::from_uuid(uuid::Uuid::nil()),
        org_id,
        Email::new("placeholder@example.com").unwrap(),
        String::new(),
        UserRole::Viewer,
        String::new(),
        NOW,
    )
}

fn placeholder_agent() -> muster_domain::model::AgentCredentials {
    muster_domain::model::AgentCredentials {
        agent: common::sample_agent(
            muster_domain::model::AgentId::from_uuid(uuid::Uuid::nil()),
            AgentMode::Worker,
            AgentStatus::Pending,
        ),
        encrypted_secret: Vec::new(),
    }
}

/// A service over a store where organizations already exist when `others_exist`; the
/// HR agent's insert answers `outcome`, and everything written is recorded.
fn service(
    others_exist: bool,
    outcome: impl Fn() -> Result<(), RepositoryError> + Send + 'static,
) -> (BootstrapService, Created, Arc<MockUnitOfWork>) {
    let mut tx = MockTransaction::new();
    tx.expect_any_organization()
        .times(1)
        .returning(move || Ok(others_exist));
    let created: Created = Arc::default();
    expect_writes(&mut tx, &created, outcome);
    let uow = Arc::new(MockUnitOfWork::new(tx));
    (
        BootstrapService::new(
            uow.clone(),
            Arc::new(sealer()),
            common::clock(),
            common::ids(),
        ),
        created,
        uow,
    )
}

/// A sealer that "seals" a secret as the agent's UUID bytes followed by the secret, so
/// tests can see what was sealed for whom.
fn sealer() -> MockSecretSealer {
    let mut sealer = MockSecretSealer::new();
    sealer.expect_seal().returning(|agent, secret| {
        let mut output = agent.as_uuid().as_bytes().to_vec();
        output.extend_from_slice(secret.expose().as_bytes());
        Ok(output)
    });
    sealer
}

/// Bootstraps `req` as the first organization; returns the result and what was stored.
fn bootstrap(req: BootstrapRequest) -> (NewOrganization, NewOrganization) {
    let (service, created, uow) = service(false, || Ok(()));
    let result = block_on(service.bootstrap(req)).unwrap();
    assert_eq!(uow.outcomes(), [Outcome::Committed]);
    let stored = created.lock().unwrap().pop().unwrap();
    (result, stored)
}

#[test]
fn the_first_organization_becomes_the_default() {
    let (result, stored) = bootstrap(request("Acme Corp", None));

    assert!(result.organization.is_default);
    assert_eq!(result, stored, "the caller gets exactly what was stored");
    assert_eq!(result.organization.name.as_str(), "Acme Corp");
    assert_eq!(result.organization.created_at, NOW);
}

#[test]
fn later_organizations_are_not_the_default() {
    let (service, created, _) = service(true, || Ok(()));

    let result = block_on(service.bootstrap(request("Beta", None))).unwrap();

    assert!(!result.organization.is_default);
    assert!(!created.lock().unwrap()[0].organization.is_default);
}

#[test]
fn the_hr_handle_defaults_to_hr_and_the_org_slug() {
    for (name, handle) in [
        ("Acme Corp", "hr-acme-corp"),
        ("  Beta & Sons, Ltd. ", "hr-beta-sons-ltd"),
    ] {
        let (_, stored) = bootstrap(request(name, None));
        assert_eq!(stored.hr_agent.agent.handle.as_str(), handle, "{name}");
    }
}

#[test]
fn a_long_org_name_gives_the_longest_hr_handle_that_fits() {
    // 120 letters: the handle keeps "hr-" and the first 97 (100 characters in all).
    let name = "abcdefghij".repeat(12);
    let (_, stored) = bootstrap(request(&name, None));
    let handle = stored.hr_agent.agent.handle.as_str().to_owned();
    assert_eq!(handle.len(), AgentHandle::MAX_CHARS);
    assert_eq!(handle, format!("hr-{}", &name[..97]));
    // A cut that ends on a separator drops it: 96 letters, a space, more letters.
    let name = format!("{} rest", "a".repeat(96));
    let (_, stored) = bootstrap(request(&name, None));
    assert_eq!(
        stored.hr_agent.agent.handle.as_str(),
        format!("hr-{}", "a".repeat(96))
    );
}

#[test]
fn an_explicit_hr_handle_is_kept() {
    let (_, stored) = bootstrap(request("Acme Corp", Some("people-ops")));

    assert_eq!(stored.hr_agent.agent.handle.as_str(), "people-ops");
}

#[test]
fn the_hr_agent_is_an_active_level_10_hr_worker_of_the_new_org() {
    let (_, stored) = bootstrap(request("Acme Corp", None));

    let hr = &stored.hr_agent;
    let agent = &hr.agent;
    assert_eq!(agent.org_id, stored.organization.id);
    assert_eq!(agent.role, AgentRole::Hr);
    assert_eq!(agent.level.get(), 10);
    assert_eq!(agent.status, AgentStatus::Active);
    assert_eq!(agent.mode, AgentMode::Worker);
    assert_eq!(agent.parent_id, None);
    let mut expected = agent.id.as_uuid().as_bytes().to_vec();
    expected.extend_from_slice(b"s3cret");
    assert_eq!(
        hr.encrypted_secret, expected,
        "the secret is stored sealed, bound to the HR agent"
    );
}

#[test]
fn the_admin_user_is_an_admin_of_the_new_org() {
    let (_, stored) = bootstrap(request("Acme Corp", None));

    let admin = &stored.admin;
    assert_eq!(admin.org_id, stored.organization.id);
    assert_eq!(admin.role, UserRole::Admin);
    assert_eq!(admin.email.as_str(), "admin@acme.example");
    assert_eq!(
        admin.password_hash,
        "$argon2id$v=19$m=19456,t=2,p=1$c2FsdA$aGFzaA"
    );
    assert_eq!(admin.created_at, NOW);
}

#[test]
fn ids_are_distinct() {
    let (_, stored) = bootstrap(request("Acme Corp", None));

    let mut ids = vec![
        stored.organization.id.as_uuid(),
        stored.admin.id.as_uuid(),
        stored.hr_agent.agent.id.as_uuid(),
    ];
    ids.extend(stored.events.iter().map(|e| e.id.as_uuid()));
    let count = ids.len();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), count);
}

#[test]
fn user_created_and_agent_registered_are_written_with_the_organization() {
    let (_, stored) = bootstrap(request("Acme Corp", None));

    let mut kinds = types(&stored.events);
    kinds.sort_unstable();
    assert_eq!(kinds, ["agent.registered", "user.created"]);
    for event in &stored.events {
        assert_eq!(event.org_id, stored.organization.id);
        assert_eq!(event.severity, EventSeverity::Info);
        assert_eq!(event.created_at, NOW);
        let (entity_type, entity_id) = match event.event_type.as_str() {
            "user.created" => ("user", stored.admin.id.as_uuid()),
            _ => ("agent", stored.hr_agent.agent.id.as_uuid()),
        };
        assert_eq!(event.entity_type, entity_type);
        assert_eq!(event.entity_id, entity_id);
    }
    let registered = stored
        .events
        .iter()
        .find(|e| e.event_type == "agent.registered")
        .unwrap();
    assert_eq!(registered.payload["agentId"], "hr-acme-corp");
    assert_eq!(registered.payload["role"], "hr");
}

#[test]
fn a_taken_handle_is_a_conflict_naming_it() {
    let (service, _, uow) = service(false, || {
        Err(RepositoryError::Duplicate(UniqueKey::AgentHandle))
    });

    let err = block_on(service.bootstrap(request("Acme Corp", None))).unwrap_err();

    assert!(
        matches!(&err, ServiceError::Conflict(Conflict::HandleTaken { handle }) if handle == "hr-acme-corp"),
        "{err:?}"
    );
    assert_eq!(err.to_string(), "agentId hr-acme-corp is taken");
    assert_eq!(uow.outcomes(), [Outcome::RolledBack]);
}

#[test]
fn another_conflict_is_not_reported_as_a_taken_handle() {
    let mut tx = MockTransaction::new();
    tx.expect_any_organization().returning(|| Ok(false));
    tx.expect_insert_organization().returning(|_| Ok(()));
    tx.expect_insert_user()
        .times(1)
        .returning(|_| Err(RepositoryError::Duplicate(UniqueKey::UserEmail)));
    tx.expect_insert_agent().never();
    let uow = Arc::new(MockUnitOfWork::new(tx));
    let service = BootstrapService::new(
        uow.clone(),
        Arc::new(sealer()),
        common::clock(),
        common::ids(),
    );

    let err = block_on(service.bootstrap(request("Acme Corp", None))).unwrap_err();

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
fn losing_the_race_for_the_default_retries_as_a_regular_organization() {
    // Two bootstraps of an empty deployment ran side by side; the other one committed
    // its default organization first. Ours is retried once, and is then not the default.
    let mut tx = MockTransaction::new();
    let mut seq = mockall::Sequence::new();
    tx.expect_any_organization()
        .times(1)
        .in_sequence(&mut seq)
        .returning(|| Ok(false));
    tx.expect_insert_organization()
        .times(1)
        .in_sequence(&mut seq)
        .returning(|org| {
            assert!(org.is_default);
            Err(RepositoryError::Duplicate(UniqueKey::DefaultOrganization))
        });
    tx.expect_any_organization()
        .times(1)
        .in_sequence(&mut seq)
        .returning(|| Ok(true));
    let created: Created = Arc::default();
    expect_writes(&mut tx, &created, || Ok(()));
    let uow = Arc::new(MockUnitOfWork::new(tx));
    let service = BootstrapService::new(
        uow.clone(),
        Arc::new(sealer()),
        common::clock(),
        common::ids(),
    );

    let result = block_on(service.bootstrap(request("Acme Corp", None))).unwrap();

    assert!(!result.organization.is_default);
    assert_eq!(uow.outcomes(), [Outcome::RolledBack, Outcome::Committed]);
    let stored = created.lock().unwrap().pop().unwrap();
    assert_eq!(stored, result);
}

#[test]
fn storage_failures_are_reported() {
    let (service, _, uow) = service(false, || Err(RepositoryError::internal("disk full")));

    let err = block_on(service.bootstrap(request("Acme Corp", None))).unwrap_err();

    assert!(matches!(err, ServiceError::Internal(_)), "{err:?}");
    assert_eq!(uow.outcomes(), [Outcome::RolledBack]);
}

#[test]
fn a_sealing_failure_stores_nothing() {
    let mut sealer = MockSecretSealer::new();
    sealer
        .expect_seal()
        .returning(|_, _| Err(SealError("no randomness".into())));
    let uow = Arc::new(MockUnitOfWork::new(MockTransaction::new()));
    let service = BootstrapService::new(
        uow.clone(),
        Arc::new(sealer),
        common::clock(),
        common::ids(),
    );

    let err = block_on(service.bootstrap(request("Acme Corp", None))).unwrap_err();

    assert!(matches!(err, ServiceError::Internal(_)), "{err:?}");
    assert!(uow.outcomes().is_empty(), "no transaction was opened");
}

#[test]
fn no_treasury_is_granted_by_default() {
    let (result, stored) = bootstrap(request("Acme Corp", None));

    assert_eq!(result.treasury, Treasury::empty(result.organization.id));
    assert_eq!(result.treasury_grant, None);
    assert_eq!(stored.treasury_grant, None);
    assert!(
        !types(&stored.events).contains(&"treasury.granted"),
        "{:?}",
        types(&stored.events)
    );
}

#[test]
fn a_treasury_asked_for_is_granted_in_the_same_transaction() {
    let (result, stored) = bootstrap(BootstrapRequest {
        treasury: 500,
        ..request("Acme Corp", None)
    });

    assert_eq!(result, stored, "the caller gets exactly what was stored");
    let org = stored.organization.id;
    assert_eq!(
        (stored.treasury.org_id, stored.treasury.balance),
        (org, 500)
    );
    assert_eq!(stored.treasury.updated_at, Some(NOW));
    let grant = stored.treasury_grant.unwrap();
    assert_eq!(grant.org_id, org);
    assert_eq!(grant.kind, TreasuryKind::Granted);
    assert_eq!((grant.amount, grant.balance_after), (500, 500));
    assert_eq!(grant.reason.as_deref(), Some("bootstrap"));
    assert_eq!((grant.task_id, grant.actor_id), (None, None));
    let granted = stored
        .events
        .iter()
        .find(|e| e.event_type == "treasury.granted")
        .unwrap();
    assert_eq!(granted.entity_type, "organization");
    assert_eq!(granted.entity_id, org.as_uuid());
    assert_eq!(granted.actor_id, None, "the operator, not a user");
    assert_eq!(
        granted.payload,
        serde_json::json!({"amount": 500, "reason": "bootstrap", "balanceAfter": 500})
    );
}

#[test]
fn a_treasury_out_of_range_is_refused_before_anything_is_written() {
    for treasury in [-1, 1_000_000_001] {
        let uow = Arc::new(MockUnitOfWork::new(MockTransaction::new()));
        let service = BootstrapService::new(
            uow.clone(),
            Arc::new(sealer()),
            common::clock(),
            common::ids(),
        );

        let err = block_on(service.bootstrap(BootstrapRequest {
            treasury,
            ..request("Acme Corp", None)
        }))
        .unwrap_err();

        assert!(
            matches!(err, ServiceError::Invalid(_)),
            "{treasury}: {err:?}"
        );
        assert_eq!(err.to_string(), "treasury must be between 0 and 1000000000");
        assert!(uow.outcomes().is_empty(), "no transaction was opened");
    }
}
