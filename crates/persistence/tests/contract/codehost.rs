//! Code-host connections, links and remembered deliveries (decision D-87): one
//! connection per installation in an organization, a delivery claimed by exactly one transaction even when
//! many race, an item linked to one task at a time, and nothing left behind when the
//! connection goes.

use crate::support::Store;
use std::time::Duration;

use muster_domain::model::{
    CodeHostConnection, CodeHostConnectionId, CodeHostLink, HookName, InstallationId,
    IntegrationAction, IntegrationAnswer, ItemRef, LinkKind, OrgId, RepositoryName, TaskId,
};
use muster_domain::ports::{CodeHostRepository, Lock, UniqueKey, transact};
use muster_domain::service::{Conflict, ServiceError};

use crate::support::{new_id, now_ms, seed_org, task};
use crate::writes::Writes;

contract_tests!(
    connections_round_trip_and_are_unique_per_installation_in_an_organization,
    a_delivery_is_claimed_by_one_transaction,
    concurrent_claims_have_one_winner,
    an_item_links_to_one_task_and_goes_with_its_connection,
);

fn connection(org: OrgId, installation: i64) -> CodeHostConnection {
    let now = now_ms();
    CodeHostConnection {
        id: CodeHostConnectionId::from_uuid(new_id()),
        org_id: org,
        installation_id: InstallationId::new(installation).unwrap(),
        name: HookName::new("acme").unwrap(),
        repository: Some(RepositoryName::new("acme/widgets").unwrap()),
        sealed_secret: vec![0, 1, 2, 255],
        enabled: true,
        created_at: now,
        updated_at: now,
    }
}

async fn insert(db: &impl Store, stored: &CodeHostConnection) -> Result<(), ServiceError> {
    let stored = stored.clone();
    transact(db, move |tx| {
        Box::pin(async move { Ok(tx.insert_codehost_connection(&stored).await?) })
    })
    .await
}

/// One transaction claiming `delivery`, holding its claim for `hold` before it ends
/// (rolling back when `roll_back`): whether it won the claim.
async fn claim(
    db: &impl Store,
    connection: CodeHostConnectionId,
    delivery: &str,
    hold: Duration,
    roll_back: bool,
) -> Result<bool, ServiceError> {
    let delivery = delivery.to_owned();
    transact(db, move |tx| {
        Box::pin(async move {
            let won = tx
                .claim_codehost_delivery(connection, &delivery, now_ms())
                .await?;
            if won {
                tokio::time::sleep(hold).await;
                let answer = IntegrationAnswer::ignored("held", None);
                tx.record_codehost_answer(connection, &delivery, &answer)
                    .await?;
            }
            if roll_back {
                return Err(ServiceError::internal("rolled back on purpose"));
            }
            Ok(won)
        })
    })
    .await
}

async fn connections_round_trip_and_are_unique_per_installation_in_an_organization(
    db: &impl Store,
) {
    let seed = seed_org(db).await;
    let mut stored = connection(seed.org, 4242);
    insert(db, &stored).await.unwrap();
    let installation = stored.installation_id;
    assert_eq!(
        CodeHostRepository::get(db, seed.org, stored.id)
            .await
            .unwrap(),
        Some(stored.clone())
    );
    assert_eq!(
        db.by_installation(installation).await.unwrap(),
        [stored.clone()]
    );
    let other_org = seed_org(db).await;
    assert_eq!(
        CodeHostRepository::get(db, other_org.org, stored.id)
            .await
            .unwrap(),
        None
    );
    // Another organization may connect the same installation; the same one may not.
    let theirs = connection(other_org.org, 4242);
    insert(db, &theirs).await.unwrap();
    let twin = connection(seed.org, 4242);
    match insert(db, &twin).await {
        Err(ServiceError::Conflict(Conflict::Duplicate(UniqueKey::Installation))) => {}
        other => panic!("expected the installation to be taken, got {other:?}"),
    }
    assert_eq!(
        db.by_installation(installation).await.unwrap(),
        [stored.clone(), theirs],
        "every organization's, oldest first"
    );
    stored.enabled = false;
    stored.repository = None;
    let changed = stored.clone();
    let updated = transact(db, move |tx| {
        Box::pin(async move { Ok(tx.update_codehost_connection(&changed).await?) })
    })
    .await
    .unwrap();
    assert!(updated);
    let newer = connection(seed.org, 4343);
    insert(db, &newer).await.unwrap();
    let listed = CodeHostRepository::list(db, seed.org).await.unwrap();
    assert_eq!(listed, [newer, stored], "newest first");
}

async fn a_delivery_is_claimed_by_one_transaction(db: &impl Store) {
    let seed = seed_org(db).await;
    let stored = connection(seed.org, 77);
    insert(db, &stored).await.unwrap();
    let id = stored.id;
    let none = Duration::ZERO;
    assert!(!claim(db, id, "d-1", none, true).await.is_ok_and(|won| won));
    assert!(
        claim(db, id, "d-1", none, false).await.unwrap(),
        "a rolled-back claim is free"
    );
    assert!(!claim(db, id, "d-1", none, false).await.unwrap());
    assert!(
        claim(db, id, "d-2", none, false).await.unwrap(),
        "ids are distinct"
    );
    let answer = IntegrationAnswer::done(IntegrationAction::Created, TaskId::from_uuid(new_id()));
    let recorded = answer.clone();
    let read = transact(db, move |tx| {
        Box::pin(async move {
            assert!(tx.claim_codehost_delivery(id, "d-3", now_ms()).await?);
            assert_eq!(
                tx.codehost_answer(id, "d-3").await?,
                None,
                "claimed, not answered"
            );
            tx.record_codehost_answer(id, "d-3", &recorded).await?;
            Ok(tx.codehost_answer(id, "d-3").await?)
        })
    })
    .await
    .unwrap();
    assert_eq!(read, Some(answer));
}

async fn concurrent_claims_have_one_winner(db: &impl Store) {
    let seed = seed_org(db).await;
    let stored = connection(seed.org, 88);
    insert(db, &stored).await.unwrap();
    let racers: Vec<_> = (0..8)
        .map(|_| {
            let db = db.clone();
            tokio::spawn(async move {
                claim(&db, stored.id, "race", Duration::from_millis(50), false).await
            })
        })
        .collect();
    let mut winners = 0;
    for racer in racers {
        if racer.await.unwrap().unwrap() {
            winners += 1;
        }
    }
    assert_eq!(winners, 1, "one claim wins; the others wait and lose");
}

async fn an_item_links_to_one_task_and_goes_with_its_connection(db: &impl Store) {
    let seed = seed_org(db).await;
    let stored = connection(seed.org, 99);
    insert(db, &stored).await.unwrap();
    let (first, second) = (task(seed.org), task(seed.org));
    db.insert(&first, &[]).await.unwrap();
    db.insert(&second, &[]).await.unwrap();
    let item = ItemRef {
        repository: "acme/widgets".into(),
        kind: LinkKind::Issue,
        number: 12,
    };
    let pull = ItemRef {
        kind: LinkKind::PullRequest,
        ..item.clone()
    };
    let (id, org) = (stored.id, seed.org);
    let (first_id, second_id) = (first.id, second.id);
    let (linked, relinked, pull_link) = transact(db, move |tx| {
        Box::pin(async move {
            let link = |task_id| CodeHostLink {
                connection_id: id,
                item: item.clone(),
                task_id,
            };
            assert_eq!(tx.codehost_link(id, &item).await?, None);
            tx.link_codehost_item(&link(first_id), now_ms()).await?;
            let linked = tx.codehost_link(id, &item).await?;
            tx.link_codehost_item(&link(second_id), now_ms()).await?;
            let relinked = tx.codehost_link(id, &item).await?;
            let pull_link = tx.codehost_link(id, &pull).await?;
            assert!(tx.claim_codehost_delivery(id, "kept", now_ms()).await?);
            Ok((linked, relinked, pull_link))
        })
    })
    .await
    .unwrap();
    assert_eq!(linked.map(|l| l.task_id), Some(first_id));
    assert_eq!(relinked.map(|l| l.task_id), Some(second_id), "replaced");
    assert_eq!(
        pull_link, None,
        "an issue and a pull request are different items"
    );

    let deleted = transact(db, move |tx| {
        Box::pin(async move {
            assert!(
                tx.codehost_connection(org, id, Lock::Update)
                    .await?
                    .is_some()
            );
            Ok(tx.delete_codehost_connection(org, id).await?)
        })
    })
    .await
    .unwrap();
    assert!(deleted);
    // The same id and installation again: no link or delivery survived the delete.
    insert(db, &stored).await.unwrap();
    let item = ItemRef {
        repository: "acme/widgets".into(),
        kind: LinkKind::Issue,
        number: 12,
    };
    let (link, fresh) = transact(db, move |tx| {
        Box::pin(async move {
            let link = tx.codehost_link(id, &item).await?;
            let fresh = tx.claim_codehost_delivery(id, "kept", now_ms()).await?;
            Ok((link, fresh))
        })
    })
    .await
    .unwrap();
    assert_eq!(link, None);
    assert!(fresh);
}
