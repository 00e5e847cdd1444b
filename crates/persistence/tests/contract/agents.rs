//! `AgentRepository`: get scoped by organization; `find_credentials` by handle across
//! organizations.

use crate::support::Store;
use muster_domain::model::{AgentHandle, AgentId};
use muster_domain::ports::AgentRepository;

use crate::support::{new_id, seed_org, unique_handle};

contract_tests!(
    get_is_scoped_by_organization,
    get_unknown_is_none,
    find_credentials_by_handle_across_organizations,
    find_credentials_of_unknown_handle_is_none,
);

async fn get_is_scoped_by_organization(db: &impl Store) {
    let first = seed_org(db).await;
    let second = seed_org(db).await;
    let found = AgentRepository::get(db, first.org, first.hr).await.unwrap();
    assert_eq!(found.as_ref(), Some(&first.new.hr_agent.agent));
    // The same agent id asked for in another organization does not exist there.
    assert_eq!(
        AgentRepository::get(db, second.org, first.hr)
            .await
            .unwrap(),
        None
    );
    assert_eq!(
        AgentRepository::get(db, first.org, second.hr)
            .await
            .unwrap(),
        None
    );
}

async fn get_unknown_is_none(db: &impl Store) {
    let seed = seed_org(db).await;
    let unknown = AgentId::from_uuid(new_id());
    assert_eq!(
        AgentRepository::get(db, seed.org, unknown).await.unwrap(),
        None
    );
}

async fn find_credentials_by_handle_across_organizations(db: &impl Store) {
    let first = seed_org(db).await;
    let second = seed_org(db).await;
    for seed in [&first, &second] {
        let creds = db
            .find_credentials(&seed.handle)
            .await
            .unwrap()
            .expect("credentials");
        assert_eq!(creds, seed.new.hr_agent);
        assert_eq!(
            creds.agent.org_id, seed.org,
            "the handle leads to its organization"
        );
    }
}

async fn find_credentials_of_unknown_handle_is_none(db: &impl Store) {
    let seed = seed_org(db).await;
    assert_eq!(
        db.find_credentials(&unique_handle("nobody")).await.unwrap(),
        None
    );
    // A prefix of a real handle is not a match.
    let prefix = AgentHandle::new(&seed.handle.as_str()[..4]).unwrap();
    assert_eq!(db.find_credentials(&prefix).await.unwrap(), None);
}
