//! SQLite's checkpoints run on a thread of their own (`src/checkpointer.rs`): what the
//! writer commits reaches the database file long before the write-ahead log is large
//! enough for the writer to checkpoint it itself. Without that thread the file would
//! not change here at all: in WAL mode only a checkpoint writes to it.

use std::time::{Duration, Instant};

use futures_util::future::join_all;
use muster_domain::ports::{NonceOutcome, NonceStore};
use muster_persistence::testing::TestDatabase;
use muster_persistence::{DatabaseUrl, Engine, NonceBatcher};

use crate::support::{new_id, now_ms, seed_org};

fn size(path: &std::path::Path) -> u64 {
    std::fs::metadata(path).map_or(0, |m| m.len())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn committed_pages_reach_the_database_file_before_the_writer_checkpoints() {
    let test = TestDatabase::new(Engine::Sqlite).await.unwrap();
    let DatabaseUrl::Sqlite(path) = test.url.clone() else {
        panic!("an SQLite test database has a file");
    };
    let mut wal = path.clone().into_os_string();
    wal.push("-wal");
    let wal = std::path::PathBuf::from(wal);
    let seed = seed_org(&test.db).await;
    let before = size(&path);
    let batcher = NonceBatcher::spawn(test.db.clone());
    let now = now_ms();
    // About 400 KiB of nonce records, in batches: far below the writer's own threshold
    // (4,000 pages, 16 MiB of log).
    for _ in 0..20 {
        let writes = (0..100).map(|_| {
            let batcher = batcher.clone();
            let nonce = format!("nonce-{}", new_id().simple());
            async move {
                batcher
                    .remember(seed.hr, &nonce, now, now + time::Duration::minutes(10))
                    .await
            }
        });
        for outcome in join_all(writes).await {
            assert_eq!(outcome.unwrap(), NonceOutcome::Fresh);
        }
    }
    let logged = size(&wal);
    assert!(logged > 0, "the writes went to the log ({logged} bytes)");
    assert!(
        logged < 4000 * 4096,
        "the log stayed below the writer's checkpoint threshold ({logged} bytes)"
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    while size(&path) < before + 200 * 1024 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(
        size(&path) >= before + 200 * 1024,
        "the database file grew from {before} to {} bytes",
        size(&path)
    );
}
