//! The closed credit economy's storage (decision D-101) on both engines: an
//! organization's treasury (created at 0 by its first locker, kept per organization),
//! its ledger paged newest first, the escrow kinds of the agents' ledger, a task's
//! reward and payer, and the migration of databases from before it.

use crate::support::Store;
use muster_domain::model::{
    CreditKind, LedgerEntry, LedgerEntryId, OrgId, RewardPayer, Task, TaskId, TaskStatus, Treasury,
    TreasuryEntry, TreasuryEntryId, TreasuryKind,
};
use muster_domain::ports::{
    AgentRepository, Lock, TaskFilter, TaskRepository, TreasuryRepository, transact,
};
use muster_domain::service::ServiceError;
use muster_persistence::{Database, Engine};

use crate::support::{Seed, new_id, now_ms, seed_org, task};
use crate::writes::Writes;

contract_tests!(
    a_treasury_reads_zero_until_it_moves,
    locking_creates_the_row_and_keeps_updates,
    parallel_first_lockers_lose_no_update,
    treasury_history_pages_newest_first,
    treasuries_are_per_organization,
    task_reward_and_payer_round_trip,
    escrow_kinds_are_ledger_kinds,
);

engine_contract_tests!(the_database_refuses_a_negative_treasury_or_reward);

/// The treasury of `org` read inside a unit of work with `lock`.
async fn read_in_tx(db: &impl Store, org: OrgId, lock: Lock) -> Treasury {
    transact(db, move |tx| {
        Box::pin(async move { Ok(tx.treasury(org, lock).await?) })
    })
    .await
    .unwrap()
}

/// Adds `amount` to the treasury of `org` in one unit of work (locking it first, as the
/// service does), with one entry of `kind`; the entry.
async fn move_treasury(
    db: &impl Store,
    org: OrgId,
    kind: TreasuryKind,
    amount: i64,
    task: Option<TaskId>,
) -> TreasuryEntry {
    transact(db, move |tx| {
        Box::pin(async move {
            let mut treasury = tx.treasury(org, Lock::Update).await?;
            let now = now_ms();
            treasury.balance += amount;
            treasury.updated_at = Some(now);
            let entry = TreasuryEntry {
                id: TreasuryEntryId::from_uuid(new_id()),
                org_id: org,
                kind,
                amount,
                balance_after: treasury.balance,
                reason: (kind == TreasuryKind::Granted).then(|| "funding".to_owned()),
                task_id: task,
                actor_id: (kind == TreasuryKind::Granted).then(new_id),
                created_at: now,
            };
            tx.update_treasury(&treasury).await?;
            tx.insert_treasury_entries(std::slice::from_ref(&entry))
                .await?;
            Ok(entry)
        })
    })
    .await
    .unwrap()
}

async fn a_treasury_reads_zero_until_it_moves(db: &impl Store) {
    let seed = seed_org(db).await;
    let empty = Treasury::empty(seed.org);
    assert_eq!(
        TreasuryRepository::treasury(db, seed.org).await.unwrap(),
        empty
    );
    for lock in [Lock::Nothing, Lock::Share] {
        assert_eq!(read_in_tx(db, seed.org, lock).await, empty, "{lock:?}");
    }
    assert!(db.history(seed.org, None, 10).await.unwrap().is_empty());
    // Locking creates the row at 0, never moved: it still reads as the empty treasury.
    assert_eq!(read_in_tx(db, seed.org, Lock::Update).await, empty);
    assert_eq!(
        TreasuryRepository::treasury(db, seed.org).await.unwrap(),
        empty
    );
    assert_eq!(read_in_tx(db, seed.org, Lock::Share).await, empty);
}

async fn locking_creates_the_row_and_keeps_updates(db: &impl Store) {
    let seed = seed_org(db).await;
    let granted = move_treasury(db, seed.org, TreasuryKind::Granted, 100, None).await;
    let stored = TreasuryRepository::treasury(db, seed.org).await.unwrap();
    assert_eq!(
        stored,
        Treasury {
            org_id: seed.org,
            balance: 100,
            updated_at: Some(granted.created_at),
        }
    );
    // The next locker reads the stored row, and its update replaces it.
    let t = task(seed.org);
    db.insert(&t, &[]).await.unwrap();
    let escrowed = move_treasury(db, seed.org, TreasuryKind::Escrowed, -30, Some(t.id)).await;
    assert_eq!(escrowed.balance_after, 70);
    for lock in [Lock::Nothing, Lock::Share, Lock::Update] {
        let read = read_in_tx(db, seed.org, lock).await;
        assert_eq!(
            (read.balance, read.updated_at),
            (70, Some(escrowed.created_at))
        );
    }
    assert_eq!(
        db.history(seed.org, None, 10).await.unwrap(),
        [escrowed, granted]
    );
}

/// Units of work locking a treasury that has no row yet, all at once: each insert of the
/// empty row but the first does nothing, and every unit's increment is kept.
async fn parallel_first_lockers_lose_no_update(db: &impl Store) {
    const PARALLEL: i64 = 8;
    let seed = seed_org(db).await;
    let runs: Vec<_> = (0..PARALLEL)
        .map(|_| {
            let (db, org) = (db.clone(), seed.org);
            tokio::spawn(async move {
                move_treasury(&db, org, TreasuryKind::Granted, 1, None).await;
            })
        })
        .collect();
    for run in runs {
        run.await.unwrap();
    }
    let stored = TreasuryRepository::treasury(db, seed.org).await.unwrap();
    assert_eq!(stored.balance, PARALLEL);
    let history = db.history(seed.org, None, 100).await.unwrap();
    let mut after: Vec<i64> = history.iter().map(|e| e.balance_after).collect();
    after.sort_unstable();
    assert_eq!(after, (1..=PARALLEL).collect::<Vec<_>>(), "serialized");
}

async fn treasury_history_pages_newest_first(db: &impl Store) {
    let seed = seed_org(db).await;
    let t = task(seed.org);
    db.insert(&t, &[]).await.unwrap();
    let rows = [
        move_treasury(db, seed.org, TreasuryKind::Granted, 50, None).await,
        move_treasury(db, seed.org, TreasuryKind::Escrowed, -20, Some(t.id)).await,
        move_treasury(db, seed.org, TreasuryKind::Refunded, 20, Some(t.id)).await,
    ];
    // Every field comes back: reasons and actors on grants, tasks on escrow rows.
    assert!(rows[0].reason.is_some() && rows[0].actor_id.is_some());
    assert!(rows[1].reason.is_none() && rows[1].actor_id.is_none());
    let page = db.history(seed.org, None, 2).await.unwrap();
    assert_eq!(page, [rows[2].clone(), rows[1].clone()]);
    let rest = db.history(seed.org, Some(rows[1].id), 2).await.unwrap();
    assert_eq!(rest, [rows[0].clone()]);
    assert!(
        db.history(seed.org, Some(rows[0].id), 2)
            .await
            .unwrap()
            .is_empty()
    );
    assert!(db.history(seed.org, None, 0).await.unwrap().is_empty());
}

async fn treasuries_are_per_organization(db: &impl Store) {
    let (first, second): (Seed, Seed) = (seed_org(db).await, seed_org(db).await);
    move_treasury(db, first.org, TreasuryKind::Granted, 40, None).await;
    // The second organization's treasury is untouched, and has its own row and ledger.
    assert_eq!(
        TreasuryRepository::treasury(db, second.org).await.unwrap(),
        Treasury::empty(second.org)
    );
    assert!(db.history(second.org, None, 10).await.unwrap().is_empty());
    move_treasury(db, second.org, TreasuryKind::Granted, 7, None).await;
    let balances = (
        TreasuryRepository::treasury(db, first.org)
            .await
            .unwrap()
            .balance,
        TreasuryRepository::treasury(db, second.org)
            .await
            .unwrap()
            .balance,
    );
    assert_eq!(balances, (40, 7));
    for seed in [&first, &second] {
        let history = db.history(seed.org, None, 10).await.unwrap();
        assert_eq!(history.len(), 1);
        assert!(history.iter().all(|e| e.org_id == seed.org));
    }
}

async fn task_reward_and_payer_round_trip(db: &impl Store) {
    let seed = seed_org(db).await;
    let by_agent = Task {
        reward: 25,
        reward_payer: RewardPayer::Agent(seed.hr),
        ..task(seed.org)
    };
    let by_treasury = Task {
        reward: 1_000_000_000,
        reward_payer: RewardPayer::Treasury,
        ..task(seed.org)
    };
    for t in [&by_agent, &by_treasury] {
        db.insert(t, &[]).await.unwrap();
        let stored = TaskRepository::get(db, seed.org, t.id).await.unwrap();
        assert_eq!(stored.as_ref(), Some(t));
        let (org, id) = (seed.org, t.id);
        let locked = transact(db, move |tx| {
            Box::pin(async move { Ok(tx.task(org, id, Lock::Update).await?) })
        })
        .await
        .unwrap();
        assert_eq!(locked.as_ref(), Some(t));
    }
    let listed = TaskRepository::list(db, seed.org, &TaskFilter::default(), None, 10)
        .await
        .unwrap();
    assert_eq!(listed, [by_treasury.clone(), by_agent.clone()]);
    // An update writes both: lowered to 0 and done, paid by the treasury.
    let changed = Task {
        reward: 0,
        reward_payer: RewardPayer::Treasury,
        status: TaskStatus::Done,
        version: by_agent.version + 1,
        ..by_agent.clone()
    };
    assert!(db.update(&changed, by_agent.version, &[]).await.unwrap());
    let stored = TaskRepository::get(db, seed.org, by_agent.id)
        .await
        .unwrap();
    assert_eq!(stored, Some(changed));
}

async fn escrow_kinds_are_ledger_kinds(db: &impl Store) {
    let seed = seed_org(db).await;
    let t = task(seed.org);
    db.insert(&t, &[]).await.unwrap();
    let entry = |kind, amount, after| LedgerEntry {
        id: LedgerEntryId::from_uuid(new_id()),
        org_id: seed.org,
        agent_id: seed.hr,
        kind,
        amount,
        balance_after: after,
        reason: (kind == CreditKind::Refunded).then(|| "cancelled".to_owned()),
        task_id: Some(t.id),
        counterparty_id: None,
        created_at: now_ms(),
    };
    let rows = vec![
        entry(CreditKind::Escrowed, -10, 90),
        entry(CreditKind::Refunded, 10, 100),
    ];
    let stored = rows.clone();
    transact(db, move |tx| {
        Box::pin(async move {
            tx.insert_ledger_entries(&stored).await?;
            Ok(())
        })
    })
    .await
    .unwrap();
    let ledger = AgentRepository::ledger(db, seed.org, seed.hr, None, 10)
        .await
        .unwrap();
    assert_eq!(ledger, [rows[1].clone(), rows[0].clone()]);
}

async fn the_database_refuses_a_negative_treasury_or_reward(db: &Database) {
    let seed = seed_org(db).await;
    move_treasury(db, seed.org, TreasuryKind::Granted, 5, None).await;
    let org = seed.org;
    let result = transact(db, move |tx| {
        Box::pin(async move {
            let mut treasury = tx.treasury(org, Lock::Update).await?;
            treasury.balance = -1;
            tx.update_treasury(&treasury).await?;
            Ok(())
        })
    })
    .await;
    assert!(
        matches!(result, Err(ServiceError::Internal(_))),
        "{result:?}"
    );
    assert_eq!(
        TreasuryRepository::treasury(db, org).await.unwrap().balance,
        5
    );
    let negative = Task {
        reward: -1,
        ..task(seed.org)
    };
    let result = db.insert(&negative, &[]).await;
    assert!(
        matches!(result, Err(ServiceError::Internal(_))),
        "{result:?}"
    );
    assert_eq!(
        TaskRepository::get(db, org, negative.id).await.unwrap(),
        None
    );
}

/// A database from before the closed economy: open tasks (one created by an agent, one
/// by nobody) and two organizations. Migrating gives every task reward 0, paid by its
/// creator agent if any, and every organization a treasury at 0; nothing is minted.
async fn migrating_mints_nothing(engine: Engine) {
    let Some(test_db) = muster_persistence::testing::TestDatabase::new(engine).await else {
        return;
    };
    let db = &test_db.db;
    let (first, second) = (seed_org(db).await, seed_org(db).await);
    test_db.execute(&migration(engine, "down.sql")).await;
    let (by_agent, by_nobody) = (new_id(), new_id());
    test_db
        .execute(&format!(
            "INSERT INTO tasks (id, org_id, title, status, priority, creator_id, created_at, \
             updated_at) VALUES \
             ('{by_agent}', '{org}', 'Old', 'in_progress', 'normal', '{hr}', '{at}', '{at}'), \
             ('{by_nobody}', '{org}', 'Older', 'todo', 'normal', NULL, '{at}', '{at}')",
            org = first.org,
            hr = first.hr,
            at = "2026-03-01T12:00:00.123Z",
        ))
        .await;
    test_db.execute(&migration(engine, "up.sql")).await;

    let read = |id| TaskRepository::get(db, first.org, TaskId::from_uuid(id));
    let old = read(by_agent).await.unwrap().unwrap();
    assert_eq!(
        (old.reward, old.reward_payer),
        (0, RewardPayer::Agent(first.hr))
    );
    let older = read(by_nobody).await.unwrap().unwrap();
    assert_eq!(
        (older.reward, older.reward_payer),
        (0, RewardPayer::Treasury)
    );
    for seed in [&first, &second] {
        assert_eq!(
            TreasuryRepository::treasury(db, seed.org).await.unwrap(),
            Treasury::empty(seed.org)
        );
    }
    // Each organization got its row: a locker finds it (no insert needed).
    let rows = test_db
        .db
        .text_of("SELECT CAST(COUNT(*) AS TEXT) AS v FROM treasuries")
        .await;
    assert_eq!(rows, "2");
    let hr = AgentRepository::get(db, first.org, first.hr)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(hr.current_balance, first.new.hr_agent.agent.current_balance);
}

/// This migration's `file` for `engine`.
fn migration(engine: Engine, file: &str) -> String {
    let engine = match engine {
        Engine::Postgres => "postgres",
        Engine::Sqlite => "sqlite",
    };
    let path = format!(
        "{}/../../migrations/{engine}/2026-12-06-000062_closed_economy/{file}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

mod migration {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn sqlite_migrating_mints_nothing() {
        super::migrating_mints_nothing(muster_persistence::Engine::Sqlite).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn postgres_migrating_mints_nothing() {
        super::migrating_mints_nothing(muster_persistence::Engine::Postgres).await;
    }
}
