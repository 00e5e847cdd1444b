//! `BootstrapService` against a mocked organization repository.
// Helpers outside `#[test]` functions are not covered by clippy.toml's allow-*-in-tests.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::{Arc, Mutex};

use common::{NOW, types};
use futures_executor::block_on;
use muster_domain::model::{
    AgentHandle, AgentMode, AgentRole, AgentSecret, AgentStatus, Email, EventSeverity, OrgName,
    UserRole,
};
use muster_domain::ports::{
    MockOrganizationRepository, MockSecretSealer, NewOrganization, RepositoryError, SealError,
};
use muster_domain::service::{BootstrapRequest, BootstrapService, ServiceError};

type Created = Arc<Mutex<Vec<NewOrganization>>>;

fn request(org_name: &str, hr_handle: Option<&str>) -> BootstrapRequest {
    BootstrapRequest {
        org_name: OrgName::new(org_name).unwrap(),
        admin_email: Email::new("Admin@Acme.example").unwrap(),
        admin_password_hash: "$argon2id$v=19$m=19456,t=2,p=1$c2FsdA$aGFzaA".into(),
        hr_handle: hr_handle.map(|h| AgentHandle::new(h).unwrap()),
        hr_secret: AgentSecret::new("s3cret".into()),
    }
}

/// A service over a repository where organizations already exist when `others_exist`;
/// `create` answers `outcome` and records what it was given.
fn service(
    others_exist: bool,
    outcome: impl Fn() -> Result<(), RepositoryError> + Send + 'static,
) -> (BootstrapService, Created) {
    let mut orgs = MockOrganizationRepository::new();
    orgs.expect_any_exists().returning(move || Ok(others_exist));
    let created: Created = Arc::default();
    let sink = Arc::clone(&created);
    orgs.expect_create().times(1).returning(move |new| {
        sink.lock().unwrap().push(new.clone());
        outcome()
    });
    (
        BootstrapService::new(
            Arc::new(orgs),
            Arc::new(sealer()),
            common::clock(),
            common::ids(),
        ),
        created,
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
    let (service, created) = service(false, || Ok(()));
    let result = block_on(service.bootstrap(req)).unwrap();
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
    let (service, created) = service(true, || Ok(()));

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
fn a_taken_handle_is_a_conflict() {
    let (service, _) = service(false, || {
        Err(RepositoryError::Conflict(
            "agentId hr-acme-corp is taken".into(),
        ))
    });

    let err = block_on(service.bootstrap(request("Acme Corp", None))).unwrap_err();

    assert!(
        matches!(&err, ServiceError::Conflict(m) if m == "agentId hr-acme-corp is taken"),
        "{err:?}"
    );
}

#[test]
fn storage_failures_are_reported() {
    let (service, _) = service(false, || Err(RepositoryError::Internal("disk full".into())));

    let err = block_on(service.bootstrap(request("Acme Corp", None))).unwrap_err();

    assert!(matches!(err, ServiceError::Internal(_)), "{err:?}");
}

#[test]
fn a_sealing_failure_stores_nothing() {
    let mut orgs = MockOrganizationRepository::new();
    orgs.expect_any_exists().returning(|| Ok(false));
    orgs.expect_create().never();
    let mut sealer = MockSecretSealer::new();
    sealer
        .expect_seal()
        .returning(|_, _| Err(SealError("no randomness".into())));
    let service = BootstrapService::new(
        Arc::new(orgs),
        Arc::new(sealer),
        common::clock(),
        common::ids(),
    );

    let err = block_on(service.bootstrap(request("Acme Corp", None))).unwrap_err();

    assert!(matches!(err, ServiceError::Internal(_)), "{err:?}");
}
