//! `UnitOfWork`: one use case, one transaction, on both engines. A failure after
//! successful writes leaves nothing behind (events included), and read-check-write use
//! cases running in parallel neither exceed a limit nor lose an update.

use crate::support::Store;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use muster_domain::model::{AgentId, OrgId, Task};
use muster_domain::ports::{
    AgentRepository, EventFilter, EventLog, Lock, TaskRepository, UniqueKey, transact,
};
use muster_domain::service::{Conflict, Entity, ServiceError};

use crate::support::{OpenWrite, event, now_ms, seed_org, task};
use crate::writes::Writes;

contract_tests!(
    a_failed_last_write_leaves_nothing_behind,
    a_refusal_after_writes_leaves_nothing_behind,
    parallel_read_check_writes_respect_the_limit_and_lose_no_update,
    parallel_units_stand_or_fall_alone,
);

/// Events of `org` about `task`.
async fn events_of(db: &impl Store, org: OrgId, task: &Task) -> u64 {
    let filter = EventFilter {
        entity_id: Some(task.id.as_uuid()),
        ..EventFilter::default()
    };
    EventLog::list(db, org, &filter, 0, 200)
        .await
        .unwrap()
        .total
}

/// Two writes succeed (a task, its event, a second task), then the third write breaks
/// the primary key: the store refuses it and the whole unit rolls back.
async fn a_failed_last_write_leaves_nothing_behind(db: &impl Store) {
    let seed = seed_org(db).await;
    let (first, second) = (task(seed.org), task(seed.org));
    let clash = Task {
        id: first.id,
        ..task(seed.org)
    };
    let created = event(seed.org, "task.created", now_ms());
    let created = muster_domain::model::Event {
        entity_id: first.id.as_uuid(),
        ..created
    };
    let writes = (first.clone(), second.clone(), clash, created);

    let err = transact(db, move |tx| {
        Box::pin(async move {
            let (first, second, clash, created) = writes;
            tx.insert_task(&first).await?;
            tx.append_events(&[created]).await?;
            tx.insert_task(&second).await?;
            tx.insert_task(&clash).await?;
            Ok(())
        })
    })
    .await
    .expect_err("the duplicate id must be refused");

    assert!(
        matches!(
            err,
            ServiceError::Conflict(Conflict::Duplicate(UniqueKey::Other(_)))
        ),
        "got {err:?}"
    );
    for task in [&first, &second] {
        assert_eq!(
            TaskRepository::get(db, seed.org, task.id).await.unwrap(),
            None
        );
    }
    assert_eq!(
        events_of(db, seed.org, &first).await,
        0,
        "the event went too"
    );
}

/// The store accepted every write, but the use case then refused (a rule failed): the
/// writes are rolled back all the same.
async fn a_refusal_after_writes_leaves_nothing_behind(db: &impl Store) {
    let seed = seed_org(db).await;
    let written = task(seed.org);
    let created = muster_domain::model::Event {
        entity_id: written.id.as_uuid(),
        ..event(seed.org, "task.created", now_ms())
    };
    let moved = written.clone();

    let err = transact(db, move |tx| {
        Box::pin(async move {
            tx.insert_task(&moved).await?;
            tx.append_events(&[created]).await?;
            Err::<(), _>(ServiceError::from(Conflict::ChangedConcurrently {
                entity: Entity::Task,
            }))
        })
    })
    .await
    .expect_err("the work refused");

    assert!(matches!(err, ServiceError::Conflict(_)), "got {err:?}");
    assert_eq!(
        TaskRepository::get(db, seed.org, written.id).await.unwrap(),
        None
    );
    assert_eq!(events_of(db, seed.org, &written).await, 0);
}

/// How many parallel use cases, and how many of them the limit lets through.
const PARALLEL: usize = 32;
const LIMIT: u16 = 20;

/// Raises the agent's balance by one if it is below `ceiling`: a read (locked), a check,
/// a write and its event, as one use case.
async fn raise_below(
    db: &impl Store,
    org: OrgId,
    agent: AgentId,
    ceiling: i64,
) -> Result<(), ServiceError> {
    transact(db, move |tx| {
        Box::pin(async move {
            let mut stored = tx
                .agent(org, agent, Lock::Update)
                .await?
                .ok_or_else(|| ServiceError::internal("the agent vanished"))?;
            if stored.current_balance >= ceiling {
                return Err(ServiceError::internal("limit reached"));
            }
            // Give the other use cases every chance to interleave between read and write.
            tokio::task::yield_now().await;
            stored.current_balance += 1;
            let at = now_ms();
            assert!(tx.update_agent(&stored, at).await?);
            let raised = muster_domain::model::Event {
                entity_type: "agent".into(),
                entity_id: agent.as_uuid(),
                ..event(org, "credits.granted", at)
            };
            tx.append_events(&[raised]).await?;
            Ok(())
        })
    })
    .await
}

/// 32 use cases read the same row, check it against a limit and write it back, all at
/// once: exactly `LIMIT` get through, the balance ends exactly `LIMIT` higher (no update
/// lost, the limit never exceeded), and each success left exactly one event.
async fn parallel_read_check_writes_respect_the_limit_and_lose_no_update(db: &impl Store) {
    let seed = seed_org(db).await;
    let start = AgentRepository::get(db, seed.org, seed.hr)
        .await
        .unwrap()
        .unwrap()
        .current_balance;
    let ceiling = start + i64::from(LIMIT);
    let passed = Arc::new(AtomicUsize::new(0));

    let runs: Vec<_> = (0..PARALLEL)
        .map(|_| {
            let (db, passed) = (db.clone(), Arc::clone(&passed));
            let (org, agent) = (seed.org, seed.hr);
            tokio::spawn(async move {
                match raise_below(&db, org, agent, ceiling).await {
                    Ok(()) => {
                        passed.fetch_add(1, Ordering::SeqCst);
                    }
                    Err(ServiceError::Internal(cause)) if cause.to_string() == "limit reached" => {}
                    Err(other) => panic!("unexpected failure: {other:?}"),
                }
            })
        })
        .collect();
    for run in runs {
        run.await.unwrap();
    }

    let end = AgentRepository::get(db, seed.org, seed.hr)
        .await
        .unwrap()
        .unwrap()
        .current_balance;
    assert_eq!(passed.load(Ordering::SeqCst), usize::from(LIMIT));
    assert_eq!(end, ceiling, "no update lost, limit not exceeded");
    let filter = EventFilter {
        event_type: Some("credits.granted".into()),
        entity_id: Some(seed.hr.as_uuid()),
        ..EventFilter::default()
    };
    let events = EventLog::list(db, seed.org, &filter, 0, 200).await.unwrap();
    assert_eq!(
        events.total,
        u64::from(LIMIT),
        "one event per success, none for refusals"
    );
}

/// What a unit does to the others running beside it (SQLite commits them in groups,
/// each in a savepoint of one transaction).
#[derive(Clone, Copy, Debug)]
enum Fate {
    Succeeds,
    Refuses,
    BreaksAKey,
    Panics,
}

/// Units of work started at once, each writing a task and its event, then succeeding,
/// refusing, breaking a unique key or panicking: exactly the succeeding ones stand, with
/// their events; nothing of the others does; and the store still works afterwards.
async fn parallel_units_stand_or_fall_alone(db: &impl Store) {
    let seed = seed_org(db).await;
    let taken = task(seed.org);
    db.insert(&taken, &[]).await.unwrap();
    let fates = [
        Fate::Succeeds,
        Fate::Refuses,
        Fate::BreaksAKey,
        Fate::Succeeds,
        Fate::Panics,
    ];
    let units: Vec<(Fate, Task)> = (0..40)
        .map(|i| (fates[i % fates.len()], task(seed.org)))
        .collect();
    let runs: Vec<_> = units
        .iter()
        .cloned()
        .map(|(fate, written)| {
            let (db, taken) = (db.clone(), taken.clone());
            tokio::spawn(async move {
                let created = muster_domain::model::Event {
                    entity_id: written.id.as_uuid(),
                    ..event(written.org_id, "task.created", now_ms())
                };
                transact(&db, move |tx| {
                    Box::pin(async move {
                        tx.insert_task(&written).await?;
                        tx.append_events(&[created]).await?;
                        match fate {
                            Fate::Succeeds => Ok(()),
                            Fate::Refuses => {
                                Err(ServiceError::from(Conflict::ChangedConcurrently {
                                    entity: Entity::Task,
                                }))
                            }
                            Fate::BreaksAKey => Ok(tx.insert_task(&taken).await?),
                            Fate::Panics => panic!("a unit of work that panics"),
                        }
                    })
                })
                .await
            })
        })
        .collect();
    for ((fate, _), run) in units.iter().zip(runs) {
        match (fate, run.await) {
            (Fate::Succeeds, Ok(answer)) => assert!(answer.is_ok(), "{answer:?}"),
            // The database answers a panic as an internal error; the in-memory store
            // lets it reach the caller's task.
            (Fate::Panics, Ok(answer)) => assert!(
                matches!(answer, Err(ServiceError::Internal(_))),
                "{answer:?}"
            ),
            (Fate::Panics, Err(joined)) => assert!(joined.is_panic()),
            (fate, answer) => assert!(matches!(answer, Ok(Err(_))), "{fate:?}: {answer:?}"),
        }
    }
    for (fate, written) in &units {
        let stored = TaskRepository::get(db, seed.org, written.id).await.unwrap();
        let stands = matches!(fate, Fate::Succeeds);
        assert_eq!(stored.is_some(), stands, "{fate:?}");
        assert_eq!(
            events_of(db, seed.org, written).await,
            u64::from(stands),
            "{fate:?}"
        );
    }
    let after = task(seed.org);
    db.insert(&after, &[]).await.unwrap();
    assert!(
        TaskRepository::get(db, seed.org, after.id)
            .await
            .unwrap()
            .is_some()
    );
}

/// SQLite: a unit of work that the writer cannot take within the pool's timeout (busy
/// with a unit that does not finish until this one is answered) is refused as
/// unavailable, and never runs afterwards; the busy unit then commits as usual.
#[tokio::test]
async fn sqlite_gives_up_a_unit_that_waits_too_long_for_the_writer() {
    use muster_persistence::testing::TestDatabase;
    use muster_persistence::{Engine, PoolOptions};
    use std::time::Duration;

    let Some(test) = TestDatabase::new(Engine::Sqlite).await else {
        return;
    };
    let options = PoolOptions {
        timeout: Duration::from_millis(300),
        ..PoolOptions::default()
    };
    let db = TestDatabase::adopt(test.url.clone(), options).await;
    let seed = seed_org(&db.db).await;
    let late = task(seed.org);
    let held = event(seed.org, "task.created", now_ms());
    let busy = OpenWrite::start(&db.db, vec![held.clone()]).await;
    let err = db
        .db
        .insert(&late, &[])
        .await
        .expect_err("the writer is busy");
    assert!(matches!(err, ServiceError::Unavailable(_)), "{err:?}");
    busy.release().await;
    let filter = EventFilter {
        entity_id: Some(held.entity_id),
        ..EventFilter::default()
    };
    let stored = EventLog::list(&db.db, seed.org, &filter, 0, 10)
        .await
        .unwrap();
    assert_eq!(stored.total, 1, "the busy unit committed");
    assert_eq!(
        TaskRepository::get(&db.db, seed.org, late.id)
            .await
            .unwrap(),
        None,
        "the unit given up never ran"
    );
}

/// SQLite: the writer's tasks (the group committer and the nonce batches) run on the
/// database's own thread, not on the runtime that opened it: units of work run there,
/// and a database opened on a runtime that has since stopped still commits units and
/// records nonces.
#[test]
fn sqlite_writes_on_its_own_thread_after_the_opening_runtime_stopped() {
    use muster_domain::ports::{NonceOutcome, NonceStore};
    use muster_persistence::testing::TestDatabase;
    use muster_persistence::{Engine, NonceBatcher};

    let runtime = || {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
    };
    let opener = runtime();
    let (test, seed, batcher) = opener.block_on(async {
        let test = TestDatabase::new(Engine::Sqlite).await.unwrap();
        let seed = seed_org(&test.db).await;
        let batcher = NonceBatcher::spawn(test.db.clone());
        (test, seed, batcher)
    });
    drop(opener);

    runtime().block_on(async {
        let caller = std::thread::current().id();
        let (elsewhere, name) = transact(&test.db, move |_tx| {
            Box::pin(async move {
                let here = std::thread::current();
                Ok((here.id() != caller, here.name().map(str::to_owned)))
            })
        })
        .await
        .unwrap();
        assert!(elsewhere, "the unit ran on the caller's thread");
        assert_eq!(name.as_deref(), Some("sqlite-writer"));

        let written = task(seed.org);
        test.db.insert(&written, &[]).await.unwrap();
        assert!(
            TaskRepository::get(&test.db, seed.org, written.id)
                .await
                .unwrap()
                .is_some()
        );
        let now = now_ms();
        let later = now + time::Duration::minutes(10);
        let outcome = batcher
            .remember(seed.hr, "after-the-opener", now, later)
            .await
            .unwrap();
        assert_eq!(outcome, NonceOutcome::Fresh);
    });
}
