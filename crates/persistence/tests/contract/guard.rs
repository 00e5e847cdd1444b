//! The runaway guard's one statement (`Transaction::tally_agent`, `reset_tally`) counts
//! exactly as the domain's reference `rules::guard::count` says, windows ending included,
//! on both engines; an id that is no agent of the organization counts nothing.

use crate::support::Store;
use muster_domain::model::{OrgId, Tally, TallyAdd};
use muster_domain::ports::transact;
use muster_domain::rules::guard::{addition, count};
use time::Duration;
use uuid::Uuid;

use crate::support::{at_minute, seed_org};

contract_tests!(
    the_tally_follows_the_reference_count_across_windows,
    an_id_that_is_no_agent_of_the_organization_counts_nothing,
);

async fn tally(db: &impl Store, org: OrgId, actor: Uuid, add: TallyAdd) -> Option<Tally> {
    transact(db, move |tx| {
        Box::pin(async move { Ok(tx.tally_agent(org, actor, &add).await?) })
    })
    .await
    .unwrap()
}

async fn the_tally_follows_the_reference_count_across_windows(db: &impl Store) {
    let seed = seed_org(db).await;
    let agent = seed.hr.as_uuid();
    let start = at_minute(0);
    // (seconds after the start, credits): writes within a minute, a spend window
    // opening late, the write window ending and restarting, the spend window ending.
    let steps = [
        (0, 0),
        (20, 0),
        (59, 40),
        (60, 0),
        (61, 2),
        (125, 0),
        (59 * 60 + 58, 5),
        (59 * 60 + 59, 1),
        (3 * 3_600, 7),
    ];
    let mut expected = Tally {
        actions: 0,
        actions_since: None,
        credits: 0,
        credits_since: None,
    };
    for (seconds, credits) in steps {
        let add = addition(start + Duration::seconds(seconds), credits);
        expected = count(expected, add);
        let stored = tally(db, seed.org, agent, add).await;
        assert_eq!(stored, Some(expected), "after {seconds} s");
    }

    let org = seed.org;
    let id = seed.hr;
    transact(db, move |tx| {
        Box::pin(async move { Ok(tx.reset_tally(org, id).await?) })
    })
    .await
    .unwrap();
    let after = tally(db, seed.org, agent, addition(start + Duration::hours(3), 0)).await;
    assert_eq!(
        after.map(|t| (t.actions, t.credits, t.credits_since)),
        Some((1, 0, None)),
        "an emptied window starts over"
    );
}

async fn an_id_that_is_no_agent_of_the_organization_counts_nothing(db: &impl Store) {
    let first = seed_org(db).await;
    let second = seed_org(db).await;
    let add = addition(at_minute(0), 10);
    assert_eq!(
        tally(db, first.org, Uuid::now_v7(), add).await,
        None,
        "no such agent"
    );
    assert_eq!(
        tally(db, second.org, first.hr.as_uuid(), add).await,
        None,
        "another organization's agent"
    );
    let own = tally(db, first.org, first.hr.as_uuid(), add).await;
    assert_eq!(own.map(|t| (t.actions, t.credits)), Some((1, 10)));
}
