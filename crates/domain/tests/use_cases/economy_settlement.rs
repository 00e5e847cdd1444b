//! What closing a task does with its escrow (decision D-101), on the in-memory store:
//! done pays the assignee with its parent's fee, or gives it back to a payer that did the
//! work itself or when nobody did; cancelled gives it back; reassignment and an expired
//! lease keep it. And reputation is earned only from others' work orders.

use crate::common::books::Books;
use crate::common::economy::{
    agent, checked, child, create, finish, grant, manager, move_to, payload, task_events,
};
use crate::common::new_task;
use crate::common::world::World;

use futures_executor::block_on;
use muster_domain::model::{Actor, Agent, CreditKind, Lease, TaskStatus, TreasuryKind};
use muster_domain::service::{ClaimRequest, NewTask};
use serde_json::{Value, json};
use time::Duration;

// ---- settling the escrow -------------------------------------------------------------

#[test]
fn done_pays_the_escrow_to_the_assignee_with_its_parents_fee() {
    let world = World::with_treasury(100);
    let (parent, parent_actor) = manager(&world, "lead", 6, 20);
    let (worker, _) = child(&world, &parent_actor, "report");
    let (sponsor, sponsor_actor) = world.worker("sponsor", 3, &[]);
    grant(&world, sponsor.id, 30);

    // Paid by the treasury.
    let task = create(&world, &world.admin, Some(10), Some(worker.id)).unwrap();
    let done = finish(&world, &world.admin, task.id);
    assert_eq!(done.reward, 10, "the row keeps what was paid");
    let books = checked(&world);
    assert_eq!((books.balance(worker.id), books.balance(parent.id)), (8, 2));
    assert_eq!((books.treasury.balance, books.escrow()), (90, 0));
    let earned: Vec<(Value, Value)> = world
        .events("credits.earned")
        .iter()
        .map(|e| (e.payload["amount"].clone(), e.payload["source"].clone()))
        .collect();
    assert_eq!(
        earned,
        [
            (json!(8), json!("reward")),
            (json!(2), json!("management_fee"))
        ]
    );
    assert!(task_events(&world, "credits.refunded", task.id).is_empty());

    // Paid by an unrelated agent: its balance paid for it at creation, not at the end.
    let task = create(&world, &sponsor_actor, Some(20), Some(worker.id)).unwrap();
    assert_eq!(checked(&world).balance(sponsor.id), 10);
    finish(&world, &world.admin, task.id);
    let books = checked(&world);
    assert_eq!(books.balance(sponsor.id), 10);
    assert_eq!(
        (books.balance(worker.id), books.balance(parent.id)),
        (24, 6)
    );
    let fee = books
        .ledger
        .iter()
        .find(|e| e.agent_id == parent.id)
        .unwrap();
    assert_eq!(fee.kind, CreditKind::Fee);
    assert_eq!((fee.amount, fee.counterparty_id), (4, Some(worker.id)));
}

#[test]
fn done_by_its_own_payer_refunds_the_escrow_in_full_without_a_fee() {
    let world = World::new();
    let (parent, parent_actor) = manager(&world, "lead", 6, 50);
    let (worker, worker_actor) = child(&world, &parent_actor, "self-dealer");
    grant(&world, worker.id, 20);

    let task = create(&world, &worker_actor, Some(10), Some(worker.id)).unwrap();
    assert_eq!(checked(&world).balance(worker.id), 10);
    finish(&world, &worker_actor, task.id);

    let books = checked(&world);
    assert_eq!(
        (books.balance(worker.id), books.balance(parent.id)),
        (20, 0)
    );
    assert!(world.events("credits.earned").is_empty());
    let row = books
        .ledger
        .iter()
        .find(|e| e.agent_id == worker.id)
        .unwrap();
    assert_eq!(row.kind, CreditKind::Refunded);
    assert_eq!((row.amount, row.balance_after), (10, 20));
    assert_eq!(
        payload(&world, "credits.refunded", task.id),
        json!({"amount": 10, "payer": {"kind": "agent", "id": worker.id},
            "balanceAfter": 20, "reason": "self"})
    );
    assert_eq!(
        books.agent(worker.id).reputation_score,
        50,
        "nor any reputation"
    );
}

#[test]
fn done_with_nobody_assigned_refunds_the_payer() {
    let world = World::with_treasury(50);
    let (payer, payer_actor) = world.worker("payer", 3, &[]);
    grant(&world, payer.id, 10);
    let of_treasury = create(&world, &world.admin, Some(10), None).unwrap();
    let of_agent = create(&world, &payer_actor, Some(10), None).unwrap();
    assert_eq!(checked(&world).escrow(), 20);

    finish(&world, &world.admin, of_treasury.id);
    finish(&world, &world.admin, of_agent.id);

    let books = checked(&world);
    assert_eq!((books.treasury.balance, books.balance(payer.id)), (50, 10));
    for task in [&of_treasury, &of_agent] {
        assert_eq!(
            payload(&world, "credits.refunded", task.id)["reason"],
            "unassigned"
        );
    }
    assert!(world.events("credits.earned").is_empty());
}

#[test]
fn cancelling_refunds_the_payer() {
    let world = World::with_treasury(50);
    let (payer, payer_actor) = world.worker("payer", 3, &[]);
    let (worker, _) = world.worker("worker", 3, &[]);
    grant(&world, payer.id, 30);
    let waiting = create(&world, &payer_actor, Some(10), Some(worker.id)).unwrap();
    let started = create(&world, &world.admin, Some(15), Some(worker.id)).unwrap();
    move_to(&world, &world.admin, started.id, TaskStatus::InProgress);
    assert_eq!(checked(&world).escrow(), 25);

    move_to(&world, &world.admin, waiting.id, TaskStatus::Cancelled);
    move_to(&world, &world.admin, started.id, TaskStatus::Cancelled);

    let books = checked(&world);
    assert_eq!(books.balance(payer.id), 30);
    assert_eq!(books.treasury.balance, 50);
    assert_eq!(books.balance(worker.id), 0, "the assignee gets nothing");
    assert_eq!(
        payload(&world, "credits.refunded", waiting.id),
        json!({"amount": 10, "payer": {"kind": "agent", "id": payer.id},
            "balanceAfter": 30, "reason": "cancelled"})
    );
    assert_eq!(
        payload(&world, "credits.refunded", started.id)["reason"],
        "cancelled"
    );
    let row = &books.treasury_entries[0];
    assert_eq!(row.kind, TreasuryKind::Refunded);
    assert_eq!(
        (row.amount, row.balance_after, row.task_id),
        (15, 50, Some(started.id))
    );
    // Closed: nothing more moves.
    let again = block_on(
        world
            .tasks
            .transition(&world.admin, started.id, TaskStatus::Done, None),
    );
    assert!(again.is_err());
    assert_eq!(Books::of(&world).treasury, books.treasury);
}

#[test]
fn reassignment_and_an_expired_lease_keep_the_escrow() {
    let world = World::with_treasury(100);
    let (first, _) = world.worker("first", 3, &[]);
    let (second, _) = world.worker("second", 3, &[]);
    let task = create(&world, &world.admin, Some(10), Some(first.id)).unwrap();
    let before = checked(&world);

    block_on(world.tasks.assign(&world.admin, task.id, second.id)).unwrap();
    let after = checked(&world);
    assert_eq!(
        (after.treasury.clone(), after.escrow()),
        (before.treasury, 10)
    );
    assert!(world.events("credits.refunded").is_empty());

    // A claim whose lease runs out hands the task back: the escrow stays.
    let (_, third) = world.worker("third", 3, &[]);
    let unassigned = create(&world, &world.admin, Some(10), None).unwrap();
    let claim = ClaimRequest {
        capabilities: None,
        lease: Lease::seconds(Some(60)).unwrap(),
        reserve_credits: 0,
        project_id: None,
    };
    let claimed = block_on(world.tasks.claim(&third, claim)).unwrap().unwrap();
    assert_eq!(claimed.id, unassigned.id);
    world.clock.advance(Duration::minutes(5));
    let expired = block_on(world.tasks.expire_leases(Some(world.org), 10)).unwrap();
    assert_eq!(expired, [unassigned.id]);
    let handed_back = world.reread(&unassigned);
    assert_eq!(
        (handed_back.status, handed_back.reward),
        (TaskStatus::Todo, 10)
    );
    let books = checked(&world);
    assert_eq!((books.treasury.balance, books.escrow()), (80, 20));
    assert!(world.events("credits.refunded").is_empty());

    // The one finishing it is paid.
    finish(&world, &world.admin, task.id);
    let books = checked(&world);
    assert_eq!((books.balance(first.id), books.balance(second.id)), (0, 10));
}

// ---- reputation ----------------------------------------------------------------------

/// The reputation `assignee` gets for finishing a task `creator` made for it.
fn reputation_for(world: &World, creator: &Actor, assignee: &(Agent, Actor)) -> i32 {
    let before = agent(world, assignee.0.id).reputation_score;
    let task = create(world, creator, None, Some(assignee.0.id)).unwrap();
    finish(world, &assignee.1, task.id);
    agent(world, assignee.0.id).reputation_score - before
}

#[test]
fn finishing_a_work_order_of_its_own_line_earns_no_reputation() {
    let world = World::with_treasury(1_000);
    let grand = manager(&world, "grand", 7, 0);
    let parent = child(&world, &grand.1, "parent");
    let me = child(&world, &parent.1, "me");
    let mine = child(&world, &me.1, "mine");
    let (_, sibling_actor) = child(&world, &parent.1, "sibling");
    let (_, stranger_actor) = world.worker("stranger", 3, &[]);

    assert_eq!(reputation_for(&world, &me.1, &me), 0, "its own");
    assert_eq!(reputation_for(&world, &parent.1, &me), 0, "its parent's");
    assert_eq!(
        reputation_for(&world, &grand.1, &me),
        0,
        "its grandparent's"
    );
    assert_eq!(reputation_for(&world, &mine.1, &me), 0, "its child's");
    assert_eq!(
        reputation_for(&world, &me.1, &mine),
        0,
        "its parent's, seen from below"
    );
    assert_eq!(reputation_for(&world, &grand.1, &mine), 0, "two levels up");
    assert!(
        world.events("reputation.changed").is_empty(),
        "{:?}",
        world.events("reputation.changed")
    );

    assert_eq!(reputation_for(&world, &world.admin, &me), 5, "a user's");
    assert_eq!(
        reputation_for(&world, &stranger_actor, &me),
        5,
        "an unrelated agent's"
    );
    assert_eq!(
        reputation_for(&world, &sibling_actor, &me),
        5,
        "a sibling is not the line"
    );
    checked(&world);
}

#[test]
fn in_its_own_line_no_on_time_bonus_but_the_penalties_stay() {
    let world = World::new();
    let (me, me_actor) = world.worker("me", 3, &[]);
    let due = |hours: i64| NewTask {
        assignee_id: Some(me.id),
        due_at: Some(world.clock_now() + Duration::hours(hours)),
        ..new_task("dated")
    };
    let score = || agent(&world, me.id).reputation_score;

    // On time, its own: neither completion nor on-time delivery.
    let on_time = block_on(world.tasks.create(&me_actor, due(2))).unwrap();
    finish(&world, &me_actor, on_time.id);
    assert_eq!(score(), 50);

    // Late, its own: the late delivery still costs.
    let late = block_on(world.tasks.create(&me_actor, due(1))).unwrap();
    world.clock.advance(Duration::hours(2));
    finish(&world, &me_actor, late.id);
    assert_eq!(score(), 45);

    // Sent back from review, its own: the rework still costs.
    let reworked = create(&world, &me_actor, None, Some(me.id)).unwrap();
    move_to(&world, &me_actor, reworked.id, TaskStatus::InProgress);
    move_to(&world, &me_actor, reworked.id, TaskStatus::Review);
    move_to(&world, &me_actor, reworked.id, TaskStatus::InProgress);
    assert_eq!(score(), 42);

    // A user's, on time: completion and on-time delivery.
    let theirs = block_on(world.tasks.create(&world.admin, due(2))).unwrap();
    finish(&world, &me_actor, theirs.id);
    assert_eq!(score(), 49);
}
