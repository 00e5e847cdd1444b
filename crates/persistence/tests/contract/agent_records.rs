//! The agent ports of the agents API on both engines: listing with filters and pages,
//! live children, deleting a pending agent, capability rows, budget roll-over, the
//! ledger page, the reputation history with its total, and the leaderboard.

use crate::support::Store;
use muster_domain::model::{
    Agent, AgentCredentials, AgentHandle, AgentId, AgentMode, AgentStatus, Capability,
    CapabilityId, CapabilityName, CreditKind, LedgerEntry, LedgerEntryId, Level, OrgId,
    Proficiency, ReputationEvent, ReputationEventId, ReputationKind,
};
use muster_domain::ports::{AgentFilter, AgentRepository, Lock, UniqueKey, transact};
use muster_domain::service::{Conflict, ServiceError};
use time::Duration;

use crate::support::{Seed, new_id, now_ms, seed_org, unique_handle};

contract_tests!(
    list_filters_and_pages_newest_first,
    live_children_count_active_and_pending,
    deleting_an_agent_removes_its_capabilities,
    capabilities_round_trip_with_unique_names,
    budget_periods_roll_over_once,
    ledger_pages_newest_first,
    reputation_history_pages_with_total,
    leaderboard_orders_active_agents_with_completions,
    the_database_refuses_negative_money,
);

/// A new agent of `seed`'s organization, stored.
async fn store_agent(db: &impl Store, seed: &Seed, change: impl FnOnce(&mut Agent)) -> Agent {
    let now = now_ms();
    let mut agent = Agent::new(
        AgentId::from_uuid(new_id()),
        seed.org,
        unique_handle("a"),
        "Agent".into(),
        now,
        now,
    );
    change(&mut agent);
    let credentials = AgentCredentials {
        agent: agent.clone(),
        encrypted_secret: vec![1, 2, 3],
    };
    transact(db, move |tx| {
        Box::pin(async move {
            tx.insert_agent(&credentials).await?;
            Ok(())
        })
    })
    .await
    .unwrap();
    agent
}

fn capability(agent: &Agent, name: &str, proficiency: Proficiency) -> Capability {
    Capability {
        id: CapabilityId::from_uuid(new_id()),
        org_id: agent.org_id,
        agent_id: agent.id,
        name: CapabilityName::new(name).unwrap(),
        proficiency,
        created_at: now_ms(),
    }
}

async fn add_capabilities(db: &impl Store, rows: Vec<Capability>) -> Result<(), ServiceError> {
    transact(db, move |tx| {
        Box::pin(async move {
            tx.insert_capabilities(&rows).await?;
            Ok(())
        })
    })
    .await
}

async fn list_filters_and_pages_newest_first(db: &impl Store) {
    let seed = seed_org(db).await;
    let other = seed_org(db).await;
    let a = store_agent(db, &seed, |a| a.mode = AgentMode::Observer).await;
    let b = store_agent(db, &seed, |a| a.parent_id = Some(seed.hr)).await;
    let c = store_agent(db, &seed, |a| a.status = AgentStatus::Suspended).await;
    let all = AgentRepository::list(db, seed.org, &AgentFilter::default(), None, 10)
        .await
        .unwrap();
    let ids: Vec<AgentId> = all.iter().map(|x| x.id).collect();
    assert_eq!(
        ids,
        [c.id, b.id, a.id, seed.hr],
        "newest first, this org only"
    );
    let page = AgentRepository::list(db, seed.org, &AgentFilter::default(), Some(b.id), 1)
        .await
        .unwrap();
    assert_eq!(page[0].id, a.id, "the cursor is exclusive");
    let filtered = |filter: AgentFilter| async move {
        AgentRepository::list(db, seed.org, &filter, None, 10)
            .await
            .unwrap()
            .into_iter()
            .map(|x| x.id)
            .collect::<Vec<_>>()
    };
    assert_eq!(
        filtered(AgentFilter {
            mode: Some(AgentMode::Observer),
            ..AgentFilter::default()
        })
        .await,
        [a.id]
    );
    assert_eq!(
        filtered(AgentFilter {
            parent_id: Some(seed.hr),
            ..AgentFilter::default()
        })
        .await,
        [b.id]
    );
    assert_eq!(
        filtered(AgentFilter {
            status: Some(AgentStatus::Suspended),
            ..AgentFilter::default()
        })
        .await,
        [c.id]
    );
    let theirs = AgentRepository::list(db, other.org, &AgentFilter::default(), None, 10)
        .await
        .unwrap();
    assert_eq!(theirs.len(), 1);
}

async fn live_children_count_active_and_pending(db: &impl Store) {
    let seed = seed_org(db).await;
    for status in AgentStatus::ALL {
        store_agent(db, &seed, |a| {
            a.parent_id = Some(seed.hr);
            a.status = *status;
        })
        .await;
    }
    let (org, hr) = (seed.org, seed.hr);
    let live = transact(db, move |tx| {
        Box::pin(async move { Ok(tx.live_children(org, hr).await?) })
    })
    .await
    .unwrap();
    assert_eq!(
        live, 2,
        "active and pending count; suspended and revoked do not"
    );
    let children = db.children(seed.org, &[seed.hr]).await.unwrap();
    assert_eq!(children.len(), 4);
    let pending = db.pending(seed.org, Some(seed.hr)).await.unwrap();
    assert_eq!(pending.len(), 1);
    assert_eq!(pending[0].status, AgentStatus::Pending);
    assert!(
        db.pending(seed.org, Some(pending[0].id))
            .await
            .unwrap()
            .is_empty()
    );
    // Newest first (decision D-7), a pending agent of another parent included when
    // none is named.
    let newer = store_agent(db, &seed, |a| a.status = AgentStatus::Pending).await;
    let ids: Vec<_> = db
        .pending(seed.org, None)
        .await
        .unwrap()
        .into_iter()
        .map(|a| a.id)
        .collect();
    assert_eq!(ids, [newer.id, pending[0].id]);
}

async fn deleting_an_agent_removes_its_capabilities(db: &impl Store) {
    let seed = seed_org(db).await;
    let agent = store_agent(db, &seed, |a| a.status = AgentStatus::Pending).await;
    add_capabilities(db, vec![capability(&agent, "rust", Proficiency::Basic)])
        .await
        .unwrap();
    let (org, id) = (seed.org, agent.id);
    let deleted = transact(db, move |tx| {
        Box::pin(async move {
            Ok((
                tx.delete_agent(org, id).await?,
                tx.delete_agent(org, id).await?,
            ))
        })
    })
    .await
    .unwrap();
    assert_eq!(deleted, (true, false));
    assert_eq!(
        AgentRepository::get(db, seed.org, agent.id).await.unwrap(),
        None
    );
    assert!(db.capability_names(seed.org).await.unwrap().is_empty());
    // The handle is free again.
    let again = store_agent(db, &seed, |a| a.handle = agent.handle.clone()).await;
    assert_eq!(again.handle, agent.handle);
}

async fn capabilities_round_trip_with_unique_names(db: &impl Store) {
    let seed = seed_org(db).await;
    let other = seed_org(db).await;
    let agent = store_agent(db, &seed, |_| {}).await;
    let sql = capability(&agent, "sql", Proficiency::Basic);
    add_capabilities(
        db,
        vec![capability(&agent, "rust", Proficiency::Expert), sql.clone()],
    )
    .await
    .unwrap();
    let duplicate =
        add_capabilities(db, vec![capability(&agent, "rust", Proficiency::Basic)]).await;
    assert!(
        matches!(
            duplicate,
            Err(ServiceError::Conflict(Conflict::Duplicate(
                UniqueKey::Capability
            )))
        ),
        "{duplicate:?}"
    );
    let names: Vec<String> = db
        .capability_names(seed.org)
        .await
        .unwrap()
        .iter()
        .map(|n| n.as_str().to_owned())
        .collect();
    assert_eq!(names, ["rust", "sql"]);
    let (org, id) = (seed.org, sql.id);
    let mut changed = sql.clone();
    changed.proficiency = Proficiency::Expert;
    let found = transact(db, move |tx| {
        Box::pin(async move {
            let found = tx.capability(org, id, Lock::Update).await?;
            tx.update_capability(&changed).await?;
            Ok(found)
        })
    })
    .await
    .unwrap();
    assert_eq!(found, Some(sql.clone()));
    let listed = db.capabilities(seed.org, agent.id).await.unwrap();
    assert_eq!(
        listed[1].proficiency,
        Proficiency::Expert,
        "by name: rust, sql"
    );
    // Another organization sees nothing, and cannot delete it.
    let other_org: OrgId = other.org;
    let gone = transact(db, move |tx| {
        Box::pin(async move {
            let theirs = tx.capability(other_org, id, Lock::Nothing).await?;
            let not_deleted = tx.delete_capability(other_org, id).await?;
            let deleted = tx.delete_capability(org, id).await?;
            Ok((theirs, not_deleted, deleted))
        })
    })
    .await
    .unwrap();
    assert_eq!(gone, (None, false, true));
    assert_eq!(db.capabilities(seed.org, agent.id).await.unwrap().len(), 1);
}

async fn budget_periods_roll_over_once(db: &impl Store) {
    let seed = seed_org(db).await;
    let start = now_ms();
    let stale = store_agent(db, &seed, |a| {
        a.budget_period_start = start - Duration::days(1);
        a.budget_period_spent = 40;
    })
    .await;
    let fresh = store_agent(db, &seed, |a| {
        a.budget_period_start = start;
        a.budget_period_spent = 7;
    })
    .await;
    let roll = || {
        transact(db, move |tx| {
            Box::pin(async move { Ok(tx.roll_budget_periods(start).await?) })
        })
    };
    assert!(roll().await.unwrap() >= 1);
    assert_eq!(roll().await.unwrap(), 0, "a second run changes nothing");
    let stale = AgentRepository::get(db, seed.org, stale.id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (stale.budget_period_spent, stale.budget_period_start),
        (0, start)
    );
    let fresh = AgentRepository::get(db, seed.org, fresh.id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(fresh.budget_period_spent, 7);
}

fn entry(agent: &Agent, amount: i64, balance_after: i64) -> LedgerEntry {
    LedgerEntry {
        id: LedgerEntryId::from_uuid(new_id()),
        org_id: agent.org_id,
        agent_id: agent.id,
        kind: CreditKind::Granted,
        amount,
        balance_after,
        reason: Some("grant".into()),
        task_id: None,
        counterparty_id: None,
        created_at: now_ms(),
    }
}

async fn ledger_pages_newest_first(db: &impl Store) {
    let seed = seed_org(db).await;
    let agent = store_agent(db, &seed, |_| {}).await;
    let rows: Vec<LedgerEntry> = (1..=3).map(|n| entry(&agent, n, n * 10)).collect();
    let stored = rows.clone();
    transact(db, move |tx| {
        Box::pin(async move {
            tx.insert_ledger_entries(&stored).await?;
            Ok(())
        })
    })
    .await
    .unwrap();
    let page = db.ledger(seed.org, agent.id, None, 2).await.unwrap();
    assert_eq!(page, [rows[2].clone(), rows[1].clone()]);
    let rest = db
        .ledger(seed.org, agent.id, Some(rows[1].id), 2)
        .await
        .unwrap();
    assert_eq!(rest, [rows[0].clone()]);
    let other = seed_org(db).await;
    assert!(
        db.ledger(other.org, agent.id, None, 2)
            .await
            .unwrap()
            .is_empty()
    );
}

fn reputation(agent: &Agent, kind: ReputationKind, amount: i32) -> ReputationEvent {
    ReputationEvent {
        id: ReputationEventId::from_uuid(new_id()),
        org_id: agent.org_id,
        agent_id: agent.id,
        kind,
        amount,
        reason: "because".into(),
        task_id: None,
        created_at: now_ms(),
    }
}

async fn store_reputation(db: &impl Store, rows: Vec<ReputationEvent>) {
    transact(db, move |tx| {
        Box::pin(async move {
            tx.insert_reputation_events(&rows).await?;
            Ok(())
        })
    })
    .await
    .unwrap();
}

async fn reputation_history_pages_with_total(db: &impl Store) {
    let seed = seed_org(db).await;
    let agent = store_agent(db, &seed, |_| {}).await;
    let rows: Vec<ReputationEvent> = (1..=5)
        .map(|n| reputation(&agent, ReputationKind::QualityBonus, n))
        .collect();
    store_reputation(db, rows.clone()).await;
    let (page, total) = db
        .reputation_history(seed.org, agent.id, 2, 1)
        .await
        .unwrap();
    assert_eq!(total, 5);
    assert_eq!(
        page,
        [rows[3].clone(), rows[2].clone()],
        "newest first, one skipped"
    );
    let (none, total) = db
        .reputation_history(seed.org, agent.id, 0, 0)
        .await
        .unwrap();
    assert!(none.is_empty());
    assert_eq!(total, 5);
    let (beyond, _) = db
        .reputation_history(seed.org, agent.id, 10, 5)
        .await
        .unwrap();
    assert!(beyond.is_empty());
}

async fn leaderboard_orders_active_agents_with_completions(db: &impl Store) {
    let seed = seed_org(db).await;
    let handle = |h: &str| AgentHandle::new(&format!("{h}-{}", new_id().simple())).unwrap();
    let top = store_agent(db, &seed, |a| a.reputation_score = 95).await;
    let (b_handle, a_handle) = (handle("b"), handle("a"));
    let tie_b = store_agent(db, &seed, |a| {
        a.reputation_score = 80;
        a.handle = b_handle.clone();
    })
    .await;
    let tie_a = store_agent(db, &seed, |a| {
        a.reputation_score = 80;
        a.handle = a_handle.clone();
        a.level = Level::new(2).unwrap();
    })
    .await;
    store_agent(db, &seed, |a| {
        a.reputation_score = 99;
        a.status = AgentStatus::Suspended;
    })
    .await;
    store_reputation(
        db,
        vec![
            reputation(&top, ReputationKind::TaskCompleted, 5),
            reputation(&top, ReputationKind::TaskCompleted, 5),
            reputation(&top, ReputationKind::OnTimeDelivery, 2),
            reputation(&tie_b, ReputationKind::TaskCompleted, 5),
        ],
    )
    .await;
    // The seeded HR agent (73) comes fourth, and the suspended agent (99) never.
    let board = db.leaderboard(seed.org, 3).await.unwrap();
    let rows: Vec<(AgentId, u64)> = board.iter().map(|(a, n)| (a.id, *n)).collect();
    assert_eq!(rows, [(top.id, 2), (tie_a.id, 0), (tie_b.id, 1)]);
}

async fn the_database_refuses_negative_money(db: &impl Store) {
    let seed = seed_org(db).await;
    let agent = store_agent(db, &seed, |a| a.current_balance = 5).await;
    for change in [
        (|a: &mut Agent| a.current_balance = -1) as fn(&mut Agent),
        |a: &mut Agent| a.budget_period_spent = -1,
    ] {
        let mut broken = agent.clone();
        change(&mut broken);
        let result = transact(db, move |tx| {
            Box::pin(async move {
                tx.update_agent(&broken, now_ms()).await?;
                Ok(())
            })
        })
        .await;
        assert!(
            matches!(result, Err(ServiceError::Internal(_))),
            "{result:?}"
        );
    }
    let stored = AgentRepository::get(db, seed.org, agent.id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!((stored.current_balance, stored.budget_period_spent), (5, 0));
}
