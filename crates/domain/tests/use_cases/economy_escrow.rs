//! A task's reward in escrow (decision D-101), on the in-memory store: taken from its
//! payer (the creating agent, within its balance and period limit, or the treasury) when
//! the task is made, refused (409) or made 0 when the payer cannot fund it, and moved by
//! PATCH only by its payer. Every test ends with the conservation equation.

use crate::common::books::Books;
use crate::common::economy::{
    checked, create, credits, finish, grant, key_user, payload, refused_unchanged, set_reward,
    task_events,
};
use crate::common::world::World;

use futures_executor::block_on;
use muster_domain::model::{
    Actor, ActorKind, ApiKeyScope, CreditKind, RewardPayer, TaskStatus, Title, TreasuryKind,
    UserRole,
};
use muster_domain::policy::Forbidden;
use muster_domain::service::{Conflict, ServiceError, TaskPatch};
use serde_json::json;

// ---- escrow on create ----------------------------------------------------------------

#[test]
fn an_agents_task_escrows_its_reward_from_the_agent() {
    let world = World::new();
    let (payer, payer_actor) = world.worker("payer", 3, &[]);
    grant(&world, payer.id, 50);

    let task = create(&world, &payer_actor, Some(20), None).unwrap();

    assert_eq!(task.reward, 20);
    assert_eq!(task.reward_payer, RewardPayer::Agent(payer.id));
    assert_eq!(world.reread(&task), task);
    let books = checked(&world);
    assert_eq!(books.balance(payer.id), 30);
    assert_eq!(
        books.agent(payer.id).budget_period_spent,
        20,
        "escrow counts as spending"
    );
    assert_eq!((books.treasury.balance, books.escrow()), (0, 20));
    let row = &books
        .ledger
        .iter()
        .find(|e| e.agent_id == payer.id)
        .unwrap();
    assert_eq!(row.kind, CreditKind::Escrowed);
    assert_eq!((row.amount, row.balance_after), (-20, 30));
    assert_eq!(row.task_id, Some(task.id));
    let escrowed = task_events(&world, "credits.escrowed", task.id);
    assert_eq!(escrowed.len(), 1);
    assert_eq!(escrowed[0].entity_type, "task");
    assert_eq!(escrowed[0].actor_id, Some(payer.id.as_uuid()));
    assert_eq!(
        escrowed[0].payload,
        json!({"amount": 20, "payer": {"kind": "agent", "id": payer.id}, "balanceAfter": 30})
    );
    let created = payload(&world, "task.created", task.id);
    assert_eq!(created["reward"], 20);
    assert!(created["rewardUnfunded"].is_null(), "{created}");

    // No reward named: the default (10) is escrowed the same way.
    let default = create(&world, &payer_actor, None, None).unwrap();
    assert_eq!(default.reward, 10);
    let books = checked(&world);
    assert_eq!(books.balance(payer.id), 20);
    assert_eq!(books.agent(payer.id).budget_period_spent, 30);
    assert_eq!(payload(&world, "task.created", default.id)["reward"], 10);
}

#[test]
fn a_task_of_a_user_a_key_or_the_service_escrows_from_the_treasury() {
    let world = World::with_treasury(100);
    let ActorKind::User { id: admin_id, .. } = world.admin.kind else {
        unreachable!()
    };

    let task = create(&world, &world.admin, Some(30), None).unwrap();

    assert_eq!(
        (task.reward, task.reward_payer),
        (30, RewardPayer::Treasury)
    );
    let books = checked(&world);
    assert_eq!((books.treasury.balance, books.escrow()), (70, 30));
    let row = &books.treasury_entries[0];
    assert_eq!(row.kind, TreasuryKind::Escrowed);
    assert_eq!((row.amount, row.balance_after), (-30, 70));
    assert_eq!(row.task_id, Some(task.id));
    assert_eq!(row.actor_id, Some(admin_id.as_uuid()));
    assert_eq!(
        payload(&world, "credits.escrowed", task.id),
        json!({"amount": 30, "payer": {"kind": "treasury", "id": world.org}, "balanceAfter": 70})
    );

    // The default reward, from an operator's write key and from the service itself.
    let keyed = create(
        &world,
        &key_user(&world, UserRole::Operator, ApiKeyScope::Write),
        None,
        None,
    )
    .unwrap();
    let system = Actor {
        org_id: world.org,
        kind: ActorKind::System,
    };
    let swept = create(&world, &system, None, None).unwrap();
    for task in [&keyed, &swept] {
        assert_eq!(
            (task.reward, task.reward_payer),
            (10, RewardPayer::Treasury)
        );
    }
    let books = checked(&world);
    assert_eq!((books.treasury.balance, books.escrow()), (50, 50));
    assert_eq!(
        books.treasury_entries[0].actor_id, None,
        "the service's own escrow"
    );
    assert!(books.ledger.iter().all(|e| e.kind != CreditKind::Escrowed));
}

#[test]
fn an_explicit_reward_its_payer_cannot_fund_is_refused_and_changes_nothing() {
    let world = World::with_treasury(5);
    let (poor, poor_actor) = world.worker("poor", 3, &[]);
    grant(&world, poor.id, 5);

    let err = refused_unchanged(
        &world,
        || create(&world, &poor_actor, Some(6), None),
        |e| {
            matches!(
                e,
                ServiceError::Conflict(Conflict::InsufficientBalance {
                    balance: 5,
                    amount: 6
                })
            )
        },
    );
    assert_eq!(
        err.to_string(),
        "Insufficient balance: 5 credits available, 6 needed"
    );

    let err = refused_unchanged(
        &world,
        || create(&world, &world.admin, Some(6), None),
        |e| {
            matches!(
                e,
                ServiceError::Conflict(Conflict::TreasuryInsufficient {
                    balance: 5,
                    amount: 6
                })
            )
        },
    );
    assert_eq!(
        err.to_string(),
        "Insufficient treasury: 5 credits available, 6 needed"
    );

    // Within the balance but over the period limit.
    let (limited, limited_actor) = world.worker("limited", 3, &[]);
    grant(&world, limited.id, 50);
    block_on(world.agents.set_budget(&world.admin, limited.id, 8, false)).unwrap();
    refused_unchanged(
        &world,
        || create(&world, &limited_actor, Some(9), None),
        |e| {
            matches!(
                e,
                ServiceError::Conflict(Conflict::BudgetExceeded { remaining: 8 })
            )
        },
    );

    // An explicit 0 needs nothing, and says nothing was unfunded.
    let free = create(&world, &poor_actor, Some(0), None).unwrap();
    assert_eq!(free.reward, 0);
    assert!(payload(&world, "task.created", free.id)["rewardUnfunded"].is_null());
    assert!(task_events(&world, "credits.escrowed", free.id).is_empty());
    let books = checked(&world);
    assert_eq!((books.balance(poor.id), books.treasury.balance), (5, 5));
}

#[test]
fn a_default_reward_its_payer_cannot_fund_makes_the_task_with_reward_0() {
    let world = World::with_treasury(9);
    let (poor, poor_actor) = world.worker("poor", 3, &[]);
    grant(&world, poor.id, 3);
    let (limited, limited_actor) = world.worker("limited", 3, &[]);
    grant(&world, limited.id, 50);
    block_on(world.agents.set_budget(&world.admin, limited.id, 5, false)).unwrap();

    let by_agent = create(&world, &poor_actor, None, None).unwrap();
    let by_user = create(&world, &world.admin, None, None).unwrap();
    let over_limit = create(&world, &limited_actor, None, None).unwrap();

    for task in [&by_agent, &by_user, &over_limit] {
        assert_eq!(task.reward, 0);
        let created = payload(&world, "task.created", task.id);
        assert_eq!(created["reward"], 0, "{created}");
        assert_eq!(created["rewardUnfunded"], 10, "{created}");
        assert!(task_events(&world, "credits.escrowed", task.id).is_empty());
    }
    assert_eq!(by_agent.reward_payer, RewardPayer::Agent(poor.id));
    assert_eq!(by_user.reward_payer, RewardPayer::Treasury);
    let books = checked(&world);
    assert_eq!(books.balance(poor.id), 3);
    assert_eq!(books.balance(limited.id), 50);
    assert_eq!(books.agent(limited.id).budget_period_spent, 0);
    assert_eq!(books.treasury.balance, 9);
    assert_eq!(books.treasury_entries.len(), 1, "the bootstrap grant only");
    assert!(books.ledger.iter().all(|e| e.kind == CreditKind::Granted));
}

#[test]
fn the_budget_period_limit_counts_escrowed_rewards() {
    let world = World::new();
    let (payer, payer_actor) = world.worker("payer", 3, &[]);
    grant(&world, payer.id, 100);
    block_on(world.agents.set_budget(&world.admin, payer.id, 25, false)).unwrap();

    create(&world, &payer_actor, Some(10), None).unwrap();
    create(&world, &payer_actor, Some(10), None).unwrap();
    assert_eq!(checked(&world).agent(payer.id).budget_period_spent, 20);
    refused_unchanged(
        &world,
        || block_on(world.agents.spend(&payer_actor, credits(6), None)),
        |e| {
            matches!(
                e,
                ServiceError::Conflict(Conflict::BudgetExceeded { remaining: 5 })
            )
        },
    );
    block_on(world.agents.spend(&payer_actor, credits(5), None)).unwrap();
    refused_unchanged(
        &world,
        || create(&world, &payer_actor, Some(1), None),
        |e| {
            matches!(
                e,
                ServiceError::Conflict(Conflict::BudgetExceeded { remaining: 0 })
            )
        },
    );
    let status = block_on(world.agents.budget(&world.admin, payer.id)).unwrap();
    assert_eq!(status.budget_period_spent, 25);
    assert_eq!(status.current_balance, 75);
    checked(&world);
}

// ---- PATCH reward --------------------------------------------------------------------

#[test]
fn the_paying_agent_raises_and_lowers_its_reward() {
    let world = World::new();
    let (payer, payer_actor) = world.worker("payer", 3, &[]);
    grant(&world, payer.id, 50);
    let task = create(&world, &payer_actor, Some(10), None).unwrap();

    let raised = set_reward(&world, &payer_actor, task.id, 25).unwrap();
    assert_eq!(raised.reward, 25);
    assert_eq!(raised.version, task.version + 1);
    let books = checked(&world);
    assert_eq!(books.balance(payer.id), 25);
    assert_eq!(books.agent(payer.id).budget_period_spent, 25);
    let escrowed = task_events(&world, "credits.escrowed", task.id);
    assert_eq!(escrowed.len(), 2);
    assert_eq!(escrowed[1].payload["amount"], 15);
    assert_eq!(escrowed[1].payload["balanceAfter"], 25);
    let updated = task_events(&world, "task.updated", task.id);
    assert_eq!(
        updated.last().unwrap().payload,
        json!({"fields": ["reward"]})
    );

    let lowered = set_reward(&world, &payer_actor, task.id, 5).unwrap();
    assert_eq!(lowered.reward, 5);
    let books = checked(&world);
    assert_eq!((books.balance(payer.id), books.escrow()), (45, 5));
    let row = books
        .ledger
        .iter()
        .find(|e| e.agent_id == payer.id)
        .unwrap();
    assert_eq!(row.kind, CreditKind::Refunded);
    assert_eq!((row.amount, row.balance_after), (20, 45));
    assert_eq!(row.task_id, Some(task.id));
    assert_eq!(
        payload(&world, "credits.refunded", task.id),
        json!({"amount": 20, "payer": {"kind": "agent", "id": payer.id},
            "balanceAfter": 45, "reason": "lowered"})
    );

    // The same reward again changes nothing.
    let before = checked(&world);
    let same = set_reward(&world, &payer_actor, task.id, 5).unwrap();
    assert_eq!(same, lowered);
    assert_eq!(Books::of(&world), before);

    // A raise it cannot fund: 409, nothing changes.
    refused_unchanged(
        &world,
        || set_reward(&world, &payer_actor, task.id, 51),
        |e| {
            matches!(
                e,
                ServiceError::Conflict(Conflict::InsufficientBalance {
                    balance: 45,
                    amount: 46
                })
            )
        },
    );
    // Lowered to 0: the whole escrow comes back.
    set_reward(&world, &payer_actor, task.id, 0).unwrap();
    let books = checked(&world);
    assert_eq!((books.balance(payer.id), books.escrow()), (50, 0));
}

#[test]
fn a_user_moves_the_treasurys_reward_within_what_it_holds() {
    let world = World::with_treasury(40);
    let task = create(&world, &world.admin, Some(10), None).unwrap();
    let operator = world.user(UserRole::Operator);

    set_reward(&world, &operator, task.id, 30).unwrap();
    assert_eq!(checked(&world).treasury.balance, 10);
    refused_unchanged(
        &world,
        || set_reward(&world, &world.admin, task.id, 41),
        |e| {
            matches!(
                e,
                ServiceError::Conflict(Conflict::TreasuryInsufficient {
                    balance: 10,
                    amount: 11
                })
            )
        },
    );
    let keyed = key_user(&world, UserRole::Operator, ApiKeyScope::Write);
    set_reward(&world, &keyed, task.id, 12).unwrap();
    let books = checked(&world);
    assert_eq!((books.treasury.balance, books.escrow()), (28, 12));
    let row = &books.treasury_entries[0];
    assert_eq!(row.kind, TreasuryKind::Refunded);
    assert_eq!((row.amount, row.balance_after), (18, 28));
    let refunded = task_events(&world, "credits.refunded", task.id);
    assert_eq!(refunded[0].payload["reason"], "lowered");
    assert_eq!(refunded[0].payload["payer"]["kind"], "treasury");
}

#[test]
fn only_the_payer_may_change_a_reward() {
    let world = World::with_treasury(100);
    let (payer, payer_actor) = world.worker("payer", 3, &[]);
    let (_, other) = world.worker("other", 3, &[]);
    grant(&world, payer.id, 50);
    let agents_task = create(&world, &payer_actor, Some(10), None).unwrap();
    let treasury_task = create(&world, &world.admin, Some(10), None).unwrap();

    let forbidden =
        |e: &ServiceError| matches!(e, ServiceError::Forbidden(Forbidden::RewardPayerRequired));
    // Another agent, HR (level 10) and the admin may not touch an agent's reward.
    for actor in [&other, &world.hr, &world.admin] {
        let err = refused_unchanged(
            &world,
            || set_reward(&world, actor, agents_task.id, 20),
            forbidden,
        );
        assert_eq!(
            err.to_string(),
            Forbidden::RewardPayerRequired.to_string(),
            "{actor:?}"
        );
    }
    // No agent may touch the treasury's, not even the one that pays another task.
    for actor in [&other, &payer_actor, &world.hr] {
        refused_unchanged(
            &world,
            || set_reward(&world, actor, treasury_task.id, 20),
            forbidden,
        );
    }
    // A viewer writes nothing at all.
    refused_unchanged(
        &world,
        || set_reward(&world, &world.user(UserRole::Viewer), treasury_task.id, 20),
        |e| matches!(e, ServiceError::Forbidden(_)),
    );
    // A refused reward takes the rest of the patch down with it.
    let patch = TaskPatch {
        title: Some(Title::new("renamed").unwrap()),
        reward: Some(20),
        ..TaskPatch::default()
    };
    refused_unchanged(
        &world,
        || block_on(world.tasks.update(&other, agents_task.id, patch)),
        forbidden,
    );
    // Another field alone is anyone's to edit, as before.
    let patch = TaskPatch {
        title: Some(Title::new("renamed").unwrap()),
        reward: Some(agents_task.reward),
        ..TaskPatch::default()
    };
    let renamed = block_on(world.tasks.update(&other, agents_task.id, patch)).unwrap();
    assert_eq!((renamed.title.as_str(), renamed.reward), ("renamed", 10));
    checked(&world);
}

#[test]
fn a_closed_tasks_reward_cannot_change() {
    let world = World::with_treasury(100);
    let (worker, _) = world.worker("worker", 3, &[]);
    let task = create(&world, &world.admin, Some(10), Some(worker.id)).unwrap();
    finish(&world, &world.admin, task.id);
    refused_unchanged(
        &world,
        || set_reward(&world, &world.admin, task.id, 20),
        |e| {
            matches!(
                e,
                ServiceError::Conflict(Conflict::TaskClosed {
                    status: TaskStatus::Done
                })
            )
        },
    );
}
