//! SQLite's checkpoints on a thread of their own.
//!
//! A commit in WAL mode appends the pages it changed to the write-ahead log; a
//! checkpoint copies them into the database file and `fsync`s it. SQLite runs one on
//! the committing connection once the log holds [`WRITER_CHECKPOINT_PAGES`] pages (its
//! "auto-checkpoint"), so left alone the one writer connection, which every write and
//! every signed request's nonce waits for, spent a fifth of its time copying pages
//! and syncing the file (a profile under mixed load).
//!
//! Here a thread with a connection of its own copies them instead, a few milliseconds
//! after each commit (the group committer wakes it after each group, and every other
//! writer when it gives the writer connection back: see [`crate::db::PooledWrite`]),
//! while the writer goes on (a `PASSIVE` checkpoint takes no lock
//! that writers or readers wait for). The writer still checkpoints itself when the log
//! reaches [`WRITER_CHECKPOINT_PAGES`]: by then this thread has copied nearly all of
//! it, and only a checkpoint that finishes while nothing else is written, which the
//! writer's own does, lets the next write start the log over from its beginning.
//! So the log stays bounded as before, at a larger size (its file peaked at 17-38 MB
//! under the benchmark's write load, against about 5 MB with SQLite's default of
//! 1,000 pages), and if this thread cannot open its connection the writer simply does
//! all the copying, as SQLite does by default.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, TrySendError, sync_channel};
use std::thread::JoinHandle;
use std::time::Duration;

use diesel::connection::SimpleConnection;
use diesel::result::QueryResult;
use diesel::{Connection, QueryableByName, RunQueryDsl, SqliteConnection};

/// The log size (in pages) at which the writer checkpoints itself, four times SQLite's
/// default: time enough for this thread to have copied most of it.
pub(crate) const WRITER_CHECKPOINT_PAGES: u32 = 4000;

/// How long the thread lets commits gather after being woken, so that under load it
/// copies once per pause rather than once per commit.
const GATHER: Duration = Duration::from_millis(5);

/// The thread that copies the write-ahead log into the database file. Dropping it
/// stops the thread and waits for it.
#[derive(Debug)]
pub(crate) struct Checkpointer {
    nudge: Nudge,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

/// Tells the checkpointer that something was committed; cheap, never blocks.
#[derive(Debug, Clone)]
pub(crate) struct Nudge(SyncSender<()>);

impl Nudge {
    pub(crate) fn committed(&self) {
        // Full: a wake-up is pending already. Disconnected: the thread has stopped.
        match self.0.try_send(()) {
            Ok(()) | Err(TrySendError::Full(()) | TrySendError::Disconnected(())) => {}
        }
    }
}

impl Checkpointer {
    /// Starts the thread for the SQLite file at `path`. It opens its connection when
    /// first woken, once the file is set up.
    pub(crate) fn start(path: &Path) -> std::io::Result<Self> {
        let file = path.to_string_lossy().into_owned();
        let (wake, woken) = sync_channel(1);
        let stop = Arc::new(AtomicBool::new(false));
        let stopping = Arc::clone(&stop);
        let thread = std::thread::Builder::new()
            .name("sqlite-checkpointer".into())
            .spawn(move || run(&file, &woken, &stopping))?;
        Ok(Self {
            nudge: Nudge(wake),
            stop,
            thread: Some(thread),
        })
    }

    /// A handle for a writer to wake the thread with.
    pub(crate) fn nudge(&self) -> Nudge {
        self.nudge.clone()
    }

    /// Tells the thread that something was committed; cheap, never blocks.
    pub(crate) fn committed(&self) {
        self.nudge.committed();
    }
}

impl Drop for Checkpointer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        // Woken, the thread sees `stop` and ends.
        self.nudge.committed();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The checkpointer's connection: it waits for locks as the others do, and syncs the
/// file as the writer would (`synchronous` as on every connection).
const PRAGMAS: &str = "PRAGMA busy_timeout = 5000; PRAGMA synchronous = NORMAL;";

/// From this log size (in pages) on, the writer's own checkpoint is near, and the thread
/// keeps out of its way for [`HAND_OVER`]: two checkpoints cannot run at once, and one
/// the writer finds busy is skipped (it tries again after its next commit). Without
/// this pause the writer's checkpoint kept meeting this thread's under load, and the
/// log grew to eight times that size (129 MB) before it started over.
const NEAR_WRITERS: u32 = WRITER_CHECKPOINT_PAGES * 3 / 4;
const HAND_OVER: Duration = Duration::from_millis(20);

/// What `PRAGMA wal_checkpoint` answers.
#[derive(QueryableByName)]
struct Checkpointed {
    /// Pages in the log (-1 when the database is not in WAL mode).
    #[diesel(sql_type = diesel::sql_types::Integer)]
    log: i32,
}

fn run(file: &str, woken: &Receiver<()>, stop: &AtomicBool) {
    let mut conn: Option<SqliteConnection> = None;
    let mut failing = false;
    let mut rest = GATHER;
    while woken.recv().is_ok() && !stop.load(Ordering::Acquire) {
        std::thread::sleep(rest);
        while woken.try_recv().is_ok() {}
        if stop.load(Ordering::Acquire) {
            return;
        }
        if conn.is_none() {
            conn = open(file);
        }
        let Some(open) = conn.as_mut() else {
            return;
        };
        // Copies what no reader still needs from the log; never waits for a lock.
        let outcome: QueryResult<Vec<Checkpointed>> =
            diesel::sql_query("PRAGMA wal_checkpoint(PASSIVE)").load(open);
        match outcome {
            Ok(rows) => {
                failing = false;
                let log = rows.first().map_or(0, |row| row.log);
                rest = if u32::try_from(log).is_ok_and(|log| log >= NEAR_WRITERS) {
                    HAND_OVER
                } else {
                    GATHER
                };
            }
            Err(err) if !failing => {
                failing = true;
                tracing::warn!(error = %err, "an SQLite checkpoint failed; the writer's own checkpoints go on");
            }
            Err(_) => {}
        }
    }
}

fn open(file: &str) -> Option<SqliteConnection> {
    let opened = SqliteConnection::establish(file).and_then(|mut conn| {
        conn.batch_execute(PRAGMAS)
            .map_err(diesel::ConnectionError::CouldntSetupConfiguration)?;
        Ok(conn)
    });
    opened
        .inspect_err(|err| {
            tracing::warn!(error = %err, "the SQLite checkpointer cannot open the database; the writer checkpoints alone");
        })
        .ok()
}
