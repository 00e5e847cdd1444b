//! `AgentService` credits against mocked ports: grants, spends and transfers — who may,
//! the locks they take (ascending id, whatever the direction), the balance and period
//! checks on the locked rows, the budget period rolled over before the check, and
//! refusals that roll back with nothing written.

use crate::common;

use common::agents::{
    Record, agent, agent_caller, agent_id, as_agent, child_of, current, key_user, read_only,
    recorded, service_on, stale, store, today, writes,
};
use common::{NOW, types, user_actor};
use futures_executor::block_on;
use muster_domain::model::{
    Actor, Agent, AgentId, AgentMode, AgentRole, AgentStatus, ApiKeyScope, CreditKind, Reason,
    UserRole,
};
use muster_domain::policy::Forbidden;
use muster_domain::ports::{Lock, MockTransaction, Outcome};
use muster_domain::rules::budget::BudgetPeriod;
use muster_domain::service::{Conflict, CreditAmount, Entity, NotFound, ServiceError};
use time::macros::datetime;

fn credits(amount: i64) -> CreditAmount {
    CreditAmount::new(amount).unwrap()
}

fn reason() -> Reason {
    Reason::new("compute".into()).unwrap()
}

/// Agent `n` (level 4, child of agent 9) holding `balance`, in the current period.
fn funded(n: u128, balance: i64) -> Agent {
    let mut agent = current(child_of(n, 4, 9));
    agent.current_balance = balance;
    agent
}

/// [`funded`] with a period limit of which `spent` is used.
fn limited(n: u128, balance: i64, limit: i64, spent: i64) -> Agent {
    let mut agent = funded(n, balance);
    agent.budget_period_limit = Some(limit);
    agent.budget_period_spent = spent;
    agent
}

/// Asserts the run rolled back with nothing written.
#[track_caller]
fn rolled_back_clean(uow: &muster_domain::ports::MockUnitOfWork, record: &Record) {
    assert_eq!(uow.outcomes(), [Outcome::RolledBack]);
    assert!(!recorded(record).wrote(), "{:?}", recorded(record).calls);
}

// ---------------------------------------------------------------------------------------
// grant

#[test]
fn a_grant_adds_to_the_balance_with_a_ledger_row_and_an_event() {
    let (tx, record) = store(vec![funded(1, 10)]);
    let (service, uow) = service_on(tx);

    let entry = block_on(service.grant(
        &user_actor(UserRole::Admin),
        agent_id(1),
        credits(40),
        Some(reason()),
    ))
    .unwrap();

    assert_eq!(uow.outcomes(), [Outcome::Committed]);
    assert_eq!(
        (entry.kind, entry.amount, entry.balance_after),
        (CreditKind::Granted, 40, 50)
    );
    assert_eq!(entry.reason.as_deref(), Some("compute"));
    assert_eq!(entry.created_at, NOW);
    let r = recorded(&record);
    assert_eq!(r.locks, [(agent_id(1), Lock::Update)]);
    assert_eq!(r.updated[0].0.current_balance, 50);
    assert_eq!(
        r.updated[0].0.budget_period_spent, 0,
        "a grant is not spending"
    );
    assert_eq!(r.ledger, [entry]);
    assert_eq!(types(&r.events), ["credits.granted"]);
    assert_eq!(r.events[0].payload["balanceAfter"], 50);
}

#[test]
fn who_may_grant() {
    let allowed = [
        user_actor(UserRole::Admin),
        key_user(UserRole::Admin, ApiKeyScope::Admin),
        agent_caller(3, 1, AgentRole::Founder),
        agent_caller(3, 5, AgentRole::Admin),
    ];
    for actor in allowed {
        let (tx, _) = store(vec![funded(1, 0)]);
        let (service, uow) = service_on(tx);
        block_on(service.grant(&actor, agent_id(1), credits(5), None)).unwrap();
        assert_eq!(uow.outcomes(), [Outcome::Committed], "{actor:?}");
    }
    let refused = [
        (
            agent_caller(3, 10, AgentRole::Hr),
            Forbidden::GranterRequired,
        ),
        (
            agent_caller(3, 10, AgentRole::Worker),
            Forbidden::GranterRequired,
        ),
        (user_actor(UserRole::Operator), Forbidden::GranterRequired),
        (
            key_user(UserRole::Admin, ApiKeyScope::Write),
            Forbidden::MissingScope(ApiKeyScope::Admin),
        ),
        (user_actor(UserRole::Viewer), Forbidden::ViewerIsReadOnly),
    ];
    for (actor, expected) in refused {
        let (tx, _) = read_only(vec![funded(1, 0)]);
        let (service, uow) = service_on(tx);
        let err = block_on(service.grant(&actor, agent_id(1), credits(5), None)).unwrap_err();
        assert!(
            matches!(&err, ServiceError::Forbidden(f) if *f == expected),
            "{actor:?}: {err:?}"
        );
        assert!(uow.outcomes().is_empty(), "refused before any transaction");
    }
}

#[test]
fn credits_are_granted_to_active_agents_only() {
    for status in [
        AgentStatus::Pending,
        AgentStatus::Suspended,
        AgentStatus::Revoked,
    ] {
        let mut target = funded(1, 0);
        target.status = status;
        let (tx, record) = read_only(vec![target]);
        let (service, uow) = service_on(tx);
        let err =
            block_on(service.grant(&user_actor(UserRole::Admin), agent_id(1), credits(5), None))
                .unwrap_err();
        assert!(
            matches!(err, ServiceError::Conflict(Conflict::AgentNotActive { agent }) if agent == agent_id(1)),
            "{status:?}: {err:?}"
        );
        rolled_back_clean(&uow, &record);
    }
}

// ---------------------------------------------------------------------------------------
// spend

#[test]
fn a_spend_takes_from_the_balance_and_counts_into_the_period() {
    let spender = limited(1, 100, 50, 10);
    let caller = as_agent(&spender);
    let (tx, record) = store(vec![spender]);
    let (service, uow) = service_on(tx);

    let entry = block_on(service.spend(&caller, credits(30), Some(reason()))).unwrap();

    assert_eq!(uow.outcomes(), [Outcome::Committed]);
    assert_eq!(
        (entry.kind, entry.amount, entry.balance_after),
        (CreditKind::Spent, -30, 70)
    );
    let r = recorded(&record);
    assert_eq!(r.locks, [(agent_id(1), Lock::Update)]);
    let (written, at) = &r.updated[0];
    assert_eq!(
        (written.current_balance, written.budget_period_spent),
        (70, 40)
    );
    assert_eq!(*at, NOW);
    assert_eq!(r.ledger, [entry]);
    assert_eq!(types(&r.events), ["credits.spent"]);
}

#[test]
fn a_spend_beyond_the_balance_or_the_limit_rolls_back_untouched() {
    let cases = [
        (
            funded(1, 20),
            30,
            Conflict::InsufficientBalance {
                balance: 20,
                amount: 30,
            },
            "Insufficient balance: 20 credits available, 30 needed",
        ),
        (
            limited(1, 100, 50, 40),
            20,
            Conflict::BudgetExceeded { remaining: 10 },
            "Budget period limit exceeded: 10 credits remain in this period",
        ),
        (
            limited(1, 100, 0, 0),
            1,
            Conflict::BudgetExceeded { remaining: 0 },
            "Budget period limit exceeded: 0 credits remain in this period",
        ),
        // The balance is checked first.
        (
            limited(1, 5, 50, 50),
            10,
            Conflict::InsufficientBalance {
                balance: 5,
                amount: 10,
            },
            "Insufficient balance: 5 credits available, 10 needed",
        ),
    ];
    for (spender, amount, expected, message) in cases {
        let caller = as_agent(&spender);
        let (tx, record) = read_only(vec![spender]);
        let (service, uow) = service_on(tx);
        let err = block_on(service.spend(&caller, credits(amount), None)).unwrap_err();
        assert!(
            matches!(&err, ServiceError::Conflict(c) if *c == expected),
            "{err:?}"
        );
        assert_eq!(err.to_string(), message);
        rolled_back_clean(&uow, &record);
    }
}

#[test]
fn only_agents_that_may_write_spend() {
    let observer = {
        let mut stored = funded(1, 100);
        stored.mode = AgentMode::Observer;
        as_agent(&stored)
    };
    for (actor, expected) in [
        (user_actor(UserRole::Admin), Forbidden::AgentRequired),
        (
            key_user(UserRole::Admin, ApiKeyScope::Admin),
            Forbidden::AgentRequired,
        ),
        (observer, Forbidden::ObserverIsReadOnly),
    ] {
        let (service, uow) = service_on(MockTransaction::new());
        let err = block_on(service.spend(&actor, credits(1), None)).unwrap_err();
        assert!(
            matches!(&err, ServiceError::Forbidden(f) if *f == expected),
            "{actor:?}: {err:?}"
        );
        assert!(uow.outcomes().is_empty());
    }
}

#[test]
fn a_stale_period_is_rolled_over_before_the_limit_is_checked() {
    // Spent up to the limit, but in a period that has ended: the spend is allowed and
    // starts the new period.
    let spender = stale(limited(1, 100, 50, 50));
    let caller = as_agent(&spender);
    let (tx, record) = store(vec![spender.clone()]);
    let (service, _) = service_on(tx);
    block_on(service.spend(&caller, credits(20), None)).unwrap();
    let r = recorded(&record);
    let (written, _) = &r.updated[0];
    assert_eq!(written.budget_period_start, today());
    assert_eq!(written.budget_period_spent, 20);
    assert_eq!(written.current_balance, 80);
    drop(r);

    // The same agent in the current period is refused.
    let (tx, record) = read_only(vec![current(spender)]);
    let (service, uow) = service_on(tx);
    let err = block_on(service.spend(&caller, credits(20), None)).unwrap_err();
    assert!(matches!(
        err,
        ServiceError::Conflict(Conflict::BudgetExceeded { remaining: 0 })
    ));
    rolled_back_clean(&uow, &record);
}

#[test]
fn the_configured_period_length_decides_what_is_stale() {
    // Spent to the limit since 2025-03-01: the month (from 2025-03-01) is still running
    // on 2025-03-04, the day is not.
    let mut spender = limited(1, 100, 50, 50);
    spender.budget_period_start = datetime!(2025-03-01 0:00 UTC);
    let caller = as_agent(&spender);

    let (tx, record) = read_only(vec![spender.clone()]);
    let (service, uow) = service_on(tx);
    let service = service.with_period(BudgetPeriod::Month);
    let err = block_on(service.spend(&caller, credits(1), None)).unwrap_err();
    assert!(matches!(
        err,
        ServiceError::Conflict(Conflict::BudgetExceeded { remaining: 0 })
    ));
    rolled_back_clean(&uow, &record);

    let (tx, record) = store(vec![spender]);
    let (service, _) = service_on(tx);
    let service = service.with_period(BudgetPeriod::Day);
    block_on(service.spend(&caller, credits(1), None)).unwrap();
    assert_eq!(recorded(&record).updated[0].0.budget_period_start, today());
}

// ---------------------------------------------------------------------------------------
// transfer

/// A transaction holding `agents` that must be asked for the agents `order`, each once,
/// for update, in exactly that order; writes are recorded.
fn locking_in_order(agents: &[Agent], order: &[AgentId]) -> (MockTransaction, Record) {
    let mut tx = MockTransaction::new();
    let record: Record = std::sync::Arc::default();
    let mut seq = mockall::Sequence::new();
    for id in order {
        let id = *id;
        let row = agents.iter().find(|a| a.id == id).cloned();
        let sink = record.clone();
        tx.expect_agent()
            .withf(move |o, asked, lock| {
                *o == common::org() && *asked == id && *lock == Lock::Update
            })
            .times(1)
            .in_sequence(&mut seq)
            .returning(move |_, asked, lock| {
                let mut r = sink.lock().unwrap();
                r.calls.push("agent");
                r.locks.push((asked, lock));
                Ok(row.clone())
            });
    }
    writes(&mut tx, &record);
    (tx, record)
}

#[test]
fn a_transfer_locks_both_agents_in_ascending_id_order_whatever_the_direction() {
    let low = funded(1, 100);
    let high = funded(2, 100);
    for (from, to) in [(&low, &high), (&high, &low)] {
        let (tx, record) = locking_in_order(&[low.clone(), high.clone()], &[low.id, high.id]);
        let (service, uow) = service_on(tx);
        let transfer =
            block_on(service.transfer(&as_agent(from), to.id, credits(30), None)).unwrap();
        assert_eq!(uow.outcomes(), [Outcome::Committed]);
        assert_eq!(
            (transfer.from_agent_id, transfer.to_agent_id),
            (from.id, to.id)
        );
        assert_eq!((transfer.from_balance, transfer.to_balance), (70, 130));
        assert_eq!(recorded(&record).locks.len(), 2);
    }
}

#[test]
fn a_transfer_moves_credits_with_two_ledger_rows_in_one_run() {
    let receiver = funded(1, 5);
    let sender = limited(2, 100, 60, 20);
    let caller = as_agent(&sender);
    let (tx, record) = store(vec![receiver, sender]);
    let (service, uow) = service_on(tx);

    let transfer =
        block_on(service.transfer(&caller, agent_id(1), credits(30), Some(reason()))).unwrap();

    assert_eq!(uow.outcomes(), [Outcome::Committed]);
    let r = recorded(&record);
    let balances: Vec<(AgentId, i64, i64)> = r
        .updated
        .iter()
        .map(|(a, _)| (a.id, a.current_balance, a.budget_period_spent))
        .collect();
    assert_eq!(
        balances,
        [(agent_id(2), 70, 50), (agent_id(1), 35, 0)],
        "the sender's transfer counts as spending, the receiver's does not"
    );
    let rows: Vec<(AgentId, CreditKind, i64, i64, Option<AgentId>)> = r
        .ledger
        .iter()
        .map(|e| {
            (
                e.agent_id,
                e.kind,
                e.amount,
                e.balance_after,
                e.counterparty_id,
            )
        })
        .collect();
    assert_eq!(
        rows,
        [
            (
                agent_id(2),
                CreditKind::TransferOut,
                -30,
                70,
                Some(agent_id(1))
            ),
            (
                agent_id(1),
                CreditKind::TransferIn,
                30,
                35,
                Some(agent_id(2))
            ),
        ]
    );
    assert!(
        r.ledger
            .iter()
            .all(|e| e.reason.as_deref() == Some("compute"))
    );
    assert_eq!(transfer.transfer_id, r.ledger[0].id.as_uuid());
    assert_eq!((transfer.amount, transfer.created_at), (30, NOW));
    assert_eq!(
        r.calls,
        [
            "agent",
            "agent",
            "update_agent",
            "update_agent",
            "insert_ledger_entries",
            "append_events"
        ]
    );
    assert_eq!(types(&r.events), ["credits.transferred"]);
    assert_eq!(
        r.events[0].entity_id,
        agent_id(2).as_uuid(),
        "on the sender"
    );
    assert_eq!(
        r.events[0].payload["transferId"],
        transfer.transfer_id.to_string()
    );
}

#[test]
fn a_refused_transfer_rolls_back_with_nothing_written() {
    let receiver = funded(1, 0);
    let cases = [
        (
            funded(2, 10),
            30,
            Conflict::InsufficientBalance {
                balance: 10,
                amount: 30,
            },
        ),
        (
            limited(2, 100, 60, 50),
            30,
            Conflict::BudgetExceeded { remaining: 10 },
        ),
    ];
    for (sender, amount, expected) in cases {
        let caller = as_agent(&sender);
        let (tx, record) = read_only(vec![receiver.clone(), sender]);
        let (service, uow) = service_on(tx);
        let err =
            block_on(service.transfer(&caller, agent_id(1), credits(amount), None)).unwrap_err();
        assert!(
            matches!(&err, ServiceError::Conflict(c) if *c == expected),
            "{err:?}"
        );
        rolled_back_clean(&uow, &record);
    }
}

#[test]
fn a_transfer_needs_an_active_existing_receiver() {
    let sender = funded(2, 100);
    let caller = as_agent(&sender);
    let mut suspended = funded(1, 0);
    suspended.status = AgentStatus::Suspended;
    let (tx, record) = read_only(vec![suspended, sender.clone()]);
    let (service, uow) = service_on(tx);
    let err = block_on(service.transfer(&caller, agent_id(1), credits(1), None)).unwrap_err();
    assert!(
        matches!(err, ServiceError::Conflict(Conflict::AgentNotActive { agent }) if agent == agent_id(1)),
        "{err:?}"
    );
    rolled_back_clean(&uow, &record);

    let (tx, record) = read_only(vec![sender]);
    let (service, uow) = service_on(tx);
    let err = block_on(service.transfer(&caller, agent_id(1), credits(1), None)).unwrap_err();
    assert!(
        matches!(
            err,
            ServiceError::NotFound(NotFound {
                entity: Entity::Agent,
                id
            }) if id == agent_id(1).as_uuid()
        ),
        "{err:?}"
    );
    rolled_back_clean(&uow, &record);
}

#[test]
fn transfers_go_to_parents_children_and_siblings_unless_the_sender_is_at_level_10() {
    let mut parent = current(agent(9, 6));
    parent.current_balance = 100;
    let child = funded(1, 100);
    let sibling = funded(2, 100);
    let mut cousin = current(child_of(3, 4, 8));
    cousin.current_balance = 100;
    let mut top = current(agent(4, 10));
    top.current_balance = 100;
    let everyone = vec![
        parent.clone(),
        child.clone(),
        sibling.clone(),
        cousin.clone(),
        top.clone(),
    ];
    let allowed = [
        (&parent, &child),
        (&child, &parent),
        (&child, &sibling),
        (&sibling, &child),
        (&top, &cousin),
    ];
    for (from, to) in allowed {
        let (tx, _) = store(everyone.clone());
        let (service, uow) = service_on(tx);
        block_on(service.transfer(&as_agent(from), to.id, credits(1), None)).unwrap();
        assert_eq!(
            uow.outcomes(),
            [Outcome::Committed],
            "{} -> {}",
            from.id,
            to.id
        );
    }
    let refused = [
        (&child, &cousin),
        (&cousin, &child),
        (&parent, &cousin),
        (&cousin, &top),
    ];
    for (from, to) in refused {
        let (tx, record) = read_only(everyone.clone());
        let (service, uow) = service_on(tx);
        let err = block_on(service.transfer(&as_agent(from), to.id, credits(1), None)).unwrap_err();
        assert!(
            matches!(err, ServiceError::Forbidden(Forbidden::TransferRelation)),
            "{} -> {}: {err:?}",
            from.id,
            to.id
        );
        assert_eq!(
            err.to_string(),
            "credits can only be transferred to your parent, children or siblings"
        );
        rolled_back_clean(&uow, &record);
    }
}

#[test]
fn a_transfer_to_oneself_is_invalid_before_any_transaction() {
    let me = funded(1, 100);
    // No expectations: any read or write panics.
    let (service, uow) = service_on(MockTransaction::new());
    let err = block_on(service.transfer(&as_agent(&me), me.id, credits(1), None)).unwrap_err();
    assert!(matches!(err, ServiceError::Invalid(_)), "{err:?}");
    assert_eq!(err.to_string(), "cannot transfer credits to yourself");
    assert!(uow.outcomes().is_empty());
}

#[test]
fn only_agents_that_may_write_transfer() {
    let observer = {
        let mut stored = funded(2, 100);
        stored.mode = AgentMode::Observer;
        as_agent(&stored)
    };
    let cases: Vec<(Actor, Forbidden)> = vec![
        (user_actor(UserRole::Admin), Forbidden::AgentRequired),
        (user_actor(UserRole::Operator), Forbidden::AgentRequired),
        (observer, Forbidden::ObserverIsReadOnly),
    ];
    for (actor, expected) in cases {
        let (service, uow) = service_on(MockTransaction::new());
        let err = block_on(service.transfer(&actor, agent_id(1), credits(1), None)).unwrap_err();
        assert!(
            matches!(&err, ServiceError::Forbidden(f) if *f == expected),
            "{actor:?}: {err:?}"
        );
        assert!(uow.outcomes().is_empty());
    }
}

#[test]
fn a_transfer_rolls_the_senders_stale_period_over_before_the_check() {
    let receiver = funded(1, 0);
    let sender = stale(limited(2, 100, 50, 50));
    let caller = as_agent(&sender);
    let (tx, record) = store(vec![receiver, sender]);
    let (service, _) = service_on(tx);

    block_on(service.transfer(&caller, agent_id(1), credits(20), None)).unwrap();

    let r = recorded(&record);
    let (written, _) = &r.updated[0];
    assert_eq!(written.id, agent_id(2));
    assert_eq!(written.budget_period_start, today());
    assert_eq!(written.budget_period_spent, 20);
}
