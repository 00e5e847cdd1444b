//! The organization's treasury (decision D-101), on the in-memory store: funded at
//! bootstrap and by admins' grants, read by admins only, paged newest first, and drawn on
//! by inbound tasks while it lasts.

use crate::common::economy::{
    checked, create, credits, key_user, payload, refused_unchanged, task_events,
};
use crate::common::world::World;

use std::sync::Arc;

use futures_executor::block_on;
use muster_domain::model::{
    ActorKind, ApiKeyScope, HookName, Reason, RewardPayer, Title, TreasuryKind, UserRole,
};
use muster_domain::policy::Forbidden;
use muster_domain::service::{
    InboundPorts, InboundService, InboundTask, NewInboundKey, PageRequest, ServiceError,
};
use serde_json::json;

// ---- inbound tasks, bootstrap, the treasury service ----------------------------------

fn inbound(world: &World) -> InboundService {
    InboundService::new(InboundPorts {
        keys: Arc::new(world.store.clone()),
        uow: Arc::new(world.store.clone()),
        vault: world.vault.clone(),
        signer: world.signer.clone(),
        clock: world.clock.clone(),
        ids: world.ids.clone(),
    })
}

fn alert(title: &str) -> InboundTask {
    InboundTask::new(Title::new(title).unwrap())
}

#[test]
fn an_inbound_batch_is_funded_in_order_while_the_treasury_lasts() {
    let world = World::with_treasury(25);
    let service = inbound(&world);
    let new_key = NewInboundKey {
        name: HookName::new("alerts").unwrap(),
        default_agent_id: None,
        default_priority: None,
        default_tags: None,
    };
    let key = block_on(service.create(&world.admin, new_key)).unwrap().key;

    let items = ["one", "two", "three", "four"].map(alert).to_vec();
    let tasks = block_on(service.ingest(&key, items, true)).unwrap();

    let rewards: Vec<i64> = tasks.iter().map(|t| t.reward).collect();
    assert_eq!(rewards, [10, 10, 0, 0]);
    assert!(
        tasks
            .iter()
            .all(|t| t.reward_payer == RewardPayer::Treasury)
    );
    for task in &tasks {
        assert_eq!(world.reread(task), *task);
        let created = payload(&world, "task.created", task.id);
        assert_eq!(created["reward"], task.reward);
        if task.reward == 0 {
            assert_eq!(created["rewardUnfunded"], 10, "{created}");
        } else {
            assert!(created["rewardUnfunded"].is_null(), "{created}");
            let escrowed = task_events(&world, "credits.escrowed", task.id);
            assert_eq!(escrowed[0].actor_id, None, "the service's own");
        }
    }
    let books = checked(&world);
    assert_eq!((books.treasury.balance, books.escrow()), (5, 20));
    let escrow_rows: Vec<(i64, i64)> = books
        .treasury_entries
        .iter()
        .filter(|e| e.kind == TreasuryKind::Escrowed)
        .map(|e| (e.amount, e.balance_after))
        .collect();
    assert_eq!(escrow_rows, [(-10, 5), (-10, 15)], "newest first");

    // Nothing left to fund: every task of the next batch gets 0.
    let tasks = block_on(service.ingest(&key, vec![alert("five")], true)).unwrap();
    assert_eq!(tasks[0].reward, 0);
    // A service with no default reward escrows nothing and says nothing is unfunded.
    block_on(world.treasury.grant(&world.admin, credits(100), None)).unwrap();
    let unpaid = inbound(&world).with_reward(0);
    let tasks = block_on(unpaid.ingest(&key, vec![alert("six")], true)).unwrap();
    assert_eq!(tasks[0].reward, 0);
    assert!(payload(&world, "task.created", tasks[0].id)["rewardUnfunded"].is_null());
    assert_eq!(checked(&world).treasury.balance, 105);
}

#[test]
fn bootstrap_grants_the_treasury_its_starting_credits() {
    let world = World::with_treasury(500);
    let books = checked(&world);
    assert_eq!(books.treasury.balance, 500);
    assert_eq!(books.treasury.org_id, world.org);
    assert_eq!(books.treasury_entries.len(), 1);
    let grant = &books.treasury_entries[0];
    assert_eq!(grant.kind, TreasuryKind::Granted);
    assert_eq!((grant.amount, grant.balance_after), (500, 500));
    assert_eq!(grant.reason.as_deref(), Some("bootstrap"));
    assert_eq!((grant.task_id, grant.actor_id), (None, None));
    let granted = world.events("treasury.granted");
    assert_eq!(granted.len(), 1);
    assert_eq!(granted[0].entity_type, "organization");
    assert_eq!(granted[0].entity_id, world.org.as_uuid());
    assert_eq!(granted[0].payload["balanceAfter"], 500);

    // None asked: an empty treasury, no grant.
    let bare = World::new();
    let books = checked(&bare);
    assert_eq!(books.treasury.balance, 0);
    assert!(books.treasury_entries.is_empty());
    assert!(bare.events("treasury.granted").is_empty());
}

#[test]
fn admins_grant_the_treasury_and_read_its_history_newest_first() {
    let world = World::new();
    let ActorKind::User { id: admin_id, .. } = world.admin.kind else {
        unreachable!()
    };
    let reason = Reason::new("quarterly budget".into()).unwrap();

    let first = block_on(
        world
            .treasury
            .grant(&world.admin, credits(100), Some(reason)),
    )
    .unwrap();
    assert_eq!(first.kind, TreasuryKind::Granted);
    assert_eq!((first.amount, first.balance_after), (100, 100));
    assert_eq!(first.reason.as_deref(), Some("quarterly budget"));
    assert_eq!(first.actor_id, Some(admin_id.as_uuid()));
    let granted = world.events("treasury.granted");
    assert_eq!(granted[0].actor_id, Some(admin_id.as_uuid()));
    assert_eq!(
        granted[0].payload,
        json!({"amount": 100, "reason": "quarterly budget", "balanceAfter": 100})
    );
    let admin_key = key_user(&world, UserRole::Admin, ApiKeyScope::Admin);
    block_on(world.treasury.grant(&admin_key, credits(20), None)).unwrap();
    create(&world, &world.admin, Some(30), None).unwrap();

    let treasury = block_on(world.treasury.get(&world.admin)).unwrap();
    assert_eq!(treasury.balance, 90);
    assert_eq!(treasury.updated_at, Some(world.clock_now()));
    let page = block_on(world.treasury.history(
        &world.admin,
        PageRequest {
            cursor: None,
            limit: 2,
        },
    ))
    .unwrap();
    let amounts: Vec<i64> = page.items.iter().map(|e| e.amount).collect();
    assert_eq!(amounts, [-30, 20]);
    let rest = block_on(world.treasury.history(
        &world.admin,
        PageRequest {
            cursor: page.next_cursor,
            limit: 2,
        },
    ))
    .unwrap();
    assert_eq!(rest.items, [first]);
    assert_eq!(rest.next_cursor, None);
    let err = block_on(world.treasury.history(
        &world.admin,
        PageRequest {
            cursor: None,
            limit: 0,
        },
    ))
    .unwrap_err();
    assert!(matches!(err, ServiceError::Invalid(_)), "{err:?}");
    checked(&world);
}

#[test]
fn only_admins_see_or_fund_the_treasury() {
    let world = World::with_treasury(10);
    let (_, worker) = world.worker("worker", 3, &[]);
    let refused = [
        world.user(UserRole::Operator),
        world.user(UserRole::Viewer),
        worker,
        world.hr.clone(),
    ];
    for actor in &refused {
        for err in [
            block_on(world.treasury.get(actor)).map(|_| ()).unwrap_err(),
            block_on(world.treasury.history(actor, PageRequest::first()))
                .map(|_| ())
                .unwrap_err(),
            refused_unchanged(
                &world,
                || block_on(world.treasury.grant(actor, credits(5), None)),
                |_| true,
            ),
        ] {
            assert!(
                matches!(
                    err,
                    ServiceError::Forbidden(
                        Forbidden::TreasuryAdminRequired | Forbidden::ViewerIsReadOnly
                    )
                ),
                "{actor:?}: {err:?}"
            );
        }
    }
    let err = refused_unchanged(
        &world,
        || {
            block_on(
                world
                    .treasury
                    .grant(&world.user(UserRole::Operator), credits(5), None),
            )
        },
        |_| true,
    );
    assert_eq!(
        err.to_string(),
        Forbidden::TreasuryAdminRequired.to_string()
    );
    // An admin's key needs the admin scope.
    let write_key = key_user(&world, UserRole::Admin, ApiKeyScope::Write);
    refused_unchanged(
        &world,
        || block_on(world.treasury.grant(&write_key, credits(5), None)),
        |e| matches!(e, ServiceError::Forbidden(_)),
    );
    assert_eq!(checked(&world).treasury.balance, 10);
}
