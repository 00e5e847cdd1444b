//! PostgreSQL: the statements of a write stay prepared on their connection. Diesel
//! would prepare each `INSERT` and `UPDATE` afresh on every run (a `Parse` round trip
//! and a new plan each time); kept, a second write of the same shape reuses the first
//! one's statements; the nonce batch is one statement whatever the batch's size; and
//! so do the reads every agent sends (a task, a page of tasks or of events, a stream's
//! next events), which are built at run time and so not kept unless marked to be.

use muster_domain::model::{Event, EventId, EventPosition, Task, TaskStatus};
use muster_domain::ports::{
    EventFilter, EventLog, NonceOutcome, NonceStore, TaskFilter, TaskRepository, transact,
};
use muster_persistence::testing::TestDatabase;
use muster_persistence::{Database, Engine, NonceBatcher, PoolOptions};
use time::Duration;

use crate::support::{event, new_id, now_ms, seed_org, task};

/// Creates a task with its event, then moves it, in one unit of work; the event's id.
async fn create_and_move(db: &Database, created: Task) -> EventId {
    let event = Event {
        entity_id: created.id.as_uuid(),
        ..event(created.org_id, "task.created", now_ms())
    };
    let id = event.id;
    let moved = Task {
        status: TaskStatus::InProgress,
        version: created.version + 1,
        ..created.clone()
    };
    transact(db, move |tx| {
        Box::pin(async move {
            tx.insert_task(&created).await?;
            tx.append_events(&[event]).await?;
            assert!(tx.update_task(&moved, created.version).await?);
            Ok(())
        })
    })
    .await
    .unwrap();
    id
}

/// A PostgreSQL test database, and a second handle on it with a pool of ONE connection,
/// so that the writes and the look at its statements share it (`None` where PostgreSQL
/// may be absent and is).
async fn on_one_connection() -> Option<(TestDatabase, TestDatabase)> {
    let test = TestDatabase::new(Engine::Postgres).await?;
    let options = PoolOptions {
        max_size: 1,
        ..PoolOptions::default()
    };
    let db = TestDatabase::adopt(test.url.clone(), options).await;
    Some((test, db))
}

#[tokio::test]
async fn postgres_keeps_the_statements_of_a_write_prepared() {
    let Some((_test, db)) = on_one_connection().await else {
        return;
    };
    let seed = seed_org(&db.db).await;
    for _ in 0..3 {
        create_and_move(&db.db, task(seed.org)).await;
    }
    // The first three words of each kept write statement on tasks and events, with how
    // many of the kept statements have that text (a re-prepared one would be there twice).
    let kept = db
        .db
        .text_of(
            "SELECT coalesce(string_agg(head || ' x' || copies, '; ' ORDER BY head), '') AS v \
             FROM (SELECT DISTINCT split_part(statement, ' ', 1) || ' ' \
             || split_part(statement, ' ', 2) || ' ' || split_part(statement, ' ', 3) AS head, \
             count(*) OVER (PARTITION BY statement) AS copies FROM pg_prepared_statements \
             WHERE statement ~ '^(INSERT INTO|UPDATE) \"(tasks|events)\"') AS kept",
        )
        .await;
    assert_eq!(
        kept, r#"INSERT INTO "events" x1; INSERT INTO "tasks" x1; UPDATE "tasks" SET x1"#,
        "each write statement prepared once and kept"
    );
}

#[tokio::test]
async fn postgres_keeps_the_nonce_batch_prepared_whatever_its_size() {
    let Some((_test, db)) = on_one_connection().await else {
        return;
    };
    let seed = seed_org(&db.db).await;
    let batcher = NonceBatcher::spawn(db.db.clone());
    // Rounds of 1, 7 and 3 concurrent nonces: batches of several sizes, as the writer
    // takes them: a statement not kept leaves none, one whose text varies several.
    for round in [1, 7, 3] {
        let now = now_ms();
        let records = (0..round).map(|_| {
            let (batcher, nonce) = (batcher.clone(), new_id().simple().to_string());
            async move {
                batcher
                    .remember(seed.hr, &nonce, now, now + Duration::minutes(10))
                    .await
            }
        });
        for outcome in futures_util::future::join_all(records).await {
            assert_eq!(outcome.unwrap(), NonceOutcome::Fresh);
        }
    }
    let kept = db
        .db
        .text_of(
            "SELECT count(*)::text AS v FROM pg_prepared_statements \
             WHERE statement LIKE 'INSERT INTO nonces%'",
        )
        .await;
    assert_eq!(kept, "1", "one kept statement serves every batch size");
}

/// How many statements the connection keeps prepared.
async fn kept(db: &Database) -> u32 {
    db.text_of("SELECT count(*)::text AS v FROM pg_prepared_statements")
        .await
        .parse()
        .unwrap()
}

/// The reads every agent sends, one per statement shape.
#[derive(Debug, Clone, Copy)]
enum Read {
    Task,
    Tasks,
    Events,
    Stream,
    StreamStart,
    StreamHead,
    EventPosition,
}

#[tokio::test]
async fn postgres_keeps_the_hot_reads_prepared() {
    let Some((_test, db)) = on_one_connection().await else {
        return;
    };
    let seed = seed_org(&db.db).await;
    let first = task(seed.org);
    let event_id = create_and_move(&db.db, first.clone()).await;
    let todo = TaskFilter {
        status: Some(TaskStatus::Todo),
        ..TaskFilter::default()
    };
    let all = EventFilter::default();
    let db = &db.db;
    // Each read, with how many statements its first run leaves kept: none of them may
    // leave none (prepared afresh on every run) nor add any the second time.
    let reads = [
        (Read::Task, 1),
        (Read::Tasks, 1),
        (Read::Events, 2),
        (Read::Stream, 1),
        (Read::StreamStart, 1),
        (Read::StreamHead, 1),
        (Read::EventPosition, 1),
    ];
    for (read, statements) in reads {
        let run = || async {
            match read {
                Read::Task => drop(TaskRepository::get(db, seed.org, first.id).await.unwrap()),
                Read::Tasks => drop(
                    TaskRepository::list(db, seed.org, &todo, None, 50)
                        .await
                        .unwrap(),
                ),
                Read::Events => drop(EventLog::list(db, seed.org, &all, 0, 50).await.unwrap()),
                Read::Stream => drop(
                    db.after(seed.org, &all, EventPosition::new(0, 0), 50)
                        .await
                        .unwrap(),
                ),
                Read::StreamStart => drop(db.start(seed.org).await.unwrap()),
                Read::StreamHead => drop(db.head().await.unwrap()),
                Read::EventPosition => drop(db.position(seed.org, event_id).await.unwrap()),
            }
        };
        let before = kept(db).await;
        run().await;
        let after_first = kept(db).await;
        run().await;
        assert_eq!(
            (after_first - before, kept(db).await - after_first),
            (statements, 0),
            "{read:?}: statements kept by its first run, then by its second"
        );
    }
}
