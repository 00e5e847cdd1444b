//! `OrganizationRepository`: create (atomic, with admin, HR agent and events), get,
//! `any_exists`.

use crate::support::Store;
use crate::writes::Writes;
use muster_domain::model::{AgentHandle, OrgId};
use muster_domain::ports::{
    AgentRepository, EventFilter, EventLog, OrganizationRepository, UniqueKey, UserRepository,
};
use muster_domain::service::{Conflict, ServiceError};

use crate::support::{new_id, new_organization, seed_org, unique_handle};

contract_tests!(
    create_then_get,
    any_exists_is_false_then_true,
    create_writes_admin_agent_and_events,
    taken_hr_handle_conflicts_and_persists_nothing,
    a_handle_taken_in_another_case_conflicts,
    second_default_organization_is_rejected,
    get_unknown_is_none,
);

async fn create_then_get(db: &impl Store) {
    let new = new_organization(unique_handle("hr"), true, None);
    db.create(&new).await.unwrap();
    let stored = OrganizationRepository::get(db, new.organization.id)
        .await
        .unwrap();
    assert_eq!(stored, Some(new.organization));
}

async fn any_exists_is_false_then_true(db: &impl Store) {
    assert!(!db.any_exists().await.unwrap());
    seed_org(db).await;
    assert!(db.any_exists().await.unwrap());
}

async fn create_writes_admin_agent_and_events(db: &impl Store) {
    let seed = seed_org(db).await;
    let admin = &seed.new.admin;
    assert_eq!(
        UserRepository::user(db, seed.org, admin.id)
            .await
            .unwrap()
            .as_ref(),
        Some(admin)
    );
    let agent = AgentRepository::get(db, seed.org, seed.hr).await.unwrap();
    assert_eq!(agent.as_ref(), Some(&seed.new.hr_agent.agent));
    let page = EventLog::list(db, seed.org, &EventFilter::default(), 0, 100)
        .await
        .unwrap();
    assert_eq!(page.total, 2);
    let mut ids: Vec<_> = page.events.iter().map(|e| e.id).collect();
    let mut expected: Vec<_> = seed.new.events.iter().map(|e| e.id).collect();
    ids.sort();
    expected.sort();
    assert_eq!(ids, expected);
}

/// Handles are unique across the deployment: a second organization whose HR agent takes
/// a used handle is refused as a whole, not half-written.
async fn taken_hr_handle_conflicts_and_persists_nothing(db: &impl Store) {
    let first = seed_org(db).await;
    let second = new_organization(first.handle.clone(), false, None);

    let err = db
        .create(&second)
        .await
        .expect_err("duplicate agentId must be refused");
    assert!(
        matches!(
            err,
            ServiceError::Conflict(Conflict::Duplicate(UniqueKey::AgentHandle))
        ),
        "got {err:?}"
    );

    let org = second.organization.id;
    assert_eq!(OrganizationRepository::get(db, org).await.unwrap(), None);
    assert_eq!(
        UserRepository::user(db, org, second.admin.id)
            .await
            .unwrap(),
        None,
        "the admin user must be rolled back"
    );
    assert_eq!(
        AgentRepository::get(db, org, second.hr_agent.agent.id)
            .await
            .unwrap(),
        None
    );
    for event in &second.events {
        assert_eq!(EventLog::get(db, org, event.id).await.unwrap(), None);
    }
    assert_eq!(
        EventLog::list(db, org, &EventFilter::default(), 0, 10)
            .await
            .unwrap()
            .total,
        0
    );
    // The first organization's agent is untouched.
    let creds = db
        .find_credentials(&first.handle)
        .await
        .unwrap()
        .expect("first HR agent");
    assert_eq!(creds, first.new.hr_agent);

    // Nothing of the refused attempt blocks retrying it under a free handle.
    let mut retry = second.clone();
    retry.hr_agent.agent.handle = unique_handle("hr-retry");
    db.create(&retry).await.unwrap();
    assert_eq!(
        OrganizationRepository::get(db, org).await.unwrap(),
        Some(retry.organization)
    );
}

/// At most one default organization: a second `is_default` one is a conflict, and
/// nothing of it is stored.
async fn second_default_organization_is_rejected(db: &impl Store) {
    let first = seed_org(db).await;
    assert!(first.new.organization.is_default);
    let second = new_organization(unique_handle("hr"), true, None);
    let err = db
        .create(&second)
        .await
        .expect_err("a second default must be refused");
    assert!(
        matches!(
            err,
            ServiceError::Conflict(Conflict::Duplicate(UniqueKey::DefaultOrganization))
        ),
        "got {err:?}"
    );
    assert_eq!(
        OrganizationRepository::get(db, second.organization.id)
            .await
            .unwrap(),
        None
    );
    assert_eq!(
        db.find_credentials(&second.hr_agent.agent.handle)
            .await
            .unwrap(),
        None
    );
}

async fn get_unknown_is_none(db: &impl Store) {
    assert_eq!(
        OrganizationRepository::get(db, OrgId::from_uuid(new_id()))
            .await
            .unwrap(),
        None
    );
    seed_org(db).await;
    assert_eq!(
        OrganizationRepository::get(db, OrgId::from_uuid(new_id()))
            .await
            .unwrap(),
        None
    );
}

/// Handles are unique regardless of case: `HR-…` beside `hr-…` is the same handle. The
/// handle is still stored and found exactly as given.
async fn a_handle_taken_in_another_case_conflicts(db: &impl Store) {
    let first = seed_org(db).await;
    let upper = AgentHandle::new(&first.handle.as_str().to_ascii_uppercase()).unwrap();
    assert_ne!(upper, first.handle);
    let second = new_organization(upper.clone(), false, None);
    let err = db
        .create(&second)
        .await
        .expect_err("a handle differing only by case must be refused");
    assert!(
        matches!(
            err,
            ServiceError::Conflict(Conflict::Duplicate(UniqueKey::AgentHandle))
        ),
        "got {err:?}"
    );
    assert_eq!(db.find_credentials(&upper).await.unwrap(), None);
    assert_eq!(
        OrganizationRepository::get(db, second.organization.id)
            .await
            .unwrap(),
        None
    );
    // A mixed-case handle of its own is fine, and kept as given.
    let mixed = AgentHandle::new(&format!("Mixed-{}", new_id().simple())).unwrap();
    let third = new_organization(mixed.clone(), false, None);
    db.create(&third).await.unwrap();
    let creds = db.find_credentials(&mixed).await.unwrap().expect("stored");
    assert_eq!(creds.agent.handle.as_str(), mixed.as_str());
}
