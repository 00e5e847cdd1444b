//! SQLite's units of work, committed in groups.
//!
//! SQLite writes one transaction at a time, and most of a small write transaction's
//! cost is its commit: every page it dirtied is appended to the WAL (a `pwrite` per
//! page), and checkpoints `fsync` the files. Profiled under `POST /tasks`, those writes
//! took 43 % of the server's CPU, all of it while holding the one writer. So the units
//! of work that queue up while one runs are run after it, one by one, in the SAME
//! transaction, each inside its own savepoint, and committed together: a page that
//! several of them dirty is written once.
//!
//! A unit still runs alone on the writer connection; its refusal (or panic) rolls back
//! its own savepoint only; its caller hears of its success only once the commit that
//! made it durable has returned; if that commit fails, every unit of the group is
//! answered the failure and none of them is applied. A unit sees what the units before
//! it in its group wrote, as it would have after their commits. What it costs: the
//! answers of a group's units wait for its last unit; groups take in more units for at
//! most 50 ms. (No unit waits on a network call inside: pre-hooks are asked between
//! runs of a unit, with no transaction open.)

use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use diesel::connection::AnsiTransactionManager;
use diesel_async::TransactionManager;
use diesel_async::pooled_connection::deadpool::Pool as DeadPool;
use diesel_async::sync_connection_wrapper::SyncTransactionManagerWrapper;
use futures_util::FutureExt;
use muster_domain::ports::{RepositoryError, Work, WorkOutput};
use muster_domain::service::ServiceError;
use tokio::sync::{mpsc, oneshot};
use tracing::Instrument;

use crate::checkpointer::{Checkpointer, Nudge};
use crate::conn::{Conn, SqliteConn};
use crate::error::{from_diesel, from_pool};
use crate::transaction::DbTransaction;
use crate::writer_thread::WriterThread;

type Manager = SyncTransactionManagerWrapper<AnsiTransactionManager>;
type Answer = Result<WorkOutput, ServiceError>;

/// Most units of work in one group, and longest a group takes in more units: bounds on
/// how long the first of them waits for the commit.
const MAX_GROUP: usize = 64;
const MAX_GROUP_TIME: Duration = Duration::from_millis(50);

/// Where a job is: waiting, taken by the committer (it will run and be answered), or
/// given up by its caller (it will not run).
const QUEUED: u8 = 0;
const TAKEN: u8 = 1;
const ABANDONED: u8 = 2;

/// One unit of work waiting for the writer.
struct Job {
    work: Work,
    state: Arc<AtomicU8>,
    reply: oneshot::Sender<Answer>,
    /// The caller's span, so that the unit's statements nest under its request.
    span: tracing::Span,
}

/// The queue of units of work to the task that runs and commits them, on the writer
/// thread.
pub(crate) struct GroupCommit {
    queue: mpsc::UnboundedSender<Job>,
    /// The database's count of requests that gave up waiting for a connection.
    timeouts: Arc<AtomicU64>,
    /// How long a unit may wait for the writer (the pool's timeout) before it is
    /// refused as unavailable rather than queued on.
    patience: Duration,
    /// Runs the committer and the database's other writing tasks; stops with the last
    /// clone of the database.
    thread: WriterThread,
    /// Copies what the writer commits into the database file; stopped after the
    /// writer thread (fields drop in order).
    checkpointer: Checkpointer,
}

impl GroupCommit {
    /// Starts the committer on a writer thread of its own.
    pub(crate) fn start(
        writer: DeadPool<SqliteConn>,
        checkpointer: Checkpointer,
        timeouts: Arc<AtomicU64>,
        patience: Duration,
    ) -> std::io::Result<Self> {
        let thread = WriterThread::start()?;
        let (queue, jobs) = mpsc::unbounded_channel();
        let committer = Committer {
            writer,
            timeouts: Arc::clone(&timeouts),
            nudge: checkpointer.nudge(),
        };
        thread.spawn(committer.run(jobs));
        Ok(Self {
            queue,
            timeouts,
            patience,
            thread,
            checkpointer,
        })
    }

    /// The thread the committer runs on, for the database's other writing tasks.
    pub(crate) fn thread(&self) -> &WriterThread {
        &self.thread
    }

    /// For the other writers on the writer connection: tells the checkpointer they
    /// committed.
    pub(crate) fn committed(&self) {
        self.checkpointer.committed();
    }

    /// Runs `work` in the next group and answers once that group's commit has. A unit
    /// the writer has not taken within the pool's timeout is given up and refused as
    /// unavailable (503), as a wait for the pool's connection is; once taken, it runs
    /// and its caller waits for the outcome.
    pub(crate) async fn run(&self, work: Work) -> Answer {
        let (reply, mut answer) = oneshot::channel();
        let state = Arc::new(AtomicU8::new(QUEUED));
        let job = Job {
            work,
            state: Arc::clone(&state),
            reply,
            span: tracing::Span::current(),
        };
        let stopped = || Err(ServiceError::internal("the SQLite writer stopped"));
        if self.queue.send(job).is_err() {
            return stopped();
        }
        match tokio::time::timeout(self.patience, &mut answer).await {
            Ok(answered) => answered.unwrap_or_else(|_| stopped()),
            Err(_) if leave_queue(&state, ABANDONED) => {
                self.timeouts.fetch_add(1, Ordering::Relaxed);
                Err(RepositoryError::unavailable("timed out waiting for the SQLite writer").into())
            }
            Err(_) => answer.await.unwrap_or_else(|_| stopped()),
        }
    }
}

/// The task that owns the writer while a group runs, on the writer thread. It stops when
/// its queue's sender is dropped with the database.
struct Committer {
    writer: DeadPool<SqliteConn>,
    timeouts: Arc<AtomicU64>,
    nudge: Nudge,
}

/// Moves a queued job to `to` (taken by the committer, or given up by its caller);
/// whether this side won: exactly one of the two ever does.
fn leave_queue(state: &AtomicU8, to: u8) -> bool {
    state
        .compare_exchange(QUEUED, to, Ordering::AcqRel, Ordering::Acquire)
        .is_ok()
}

impl Committer {
    async fn run(self, mut jobs: mpsc::UnboundedReceiver<Job>) {
        while let Some(first) = jobs.recv().await {
            let mut conn = match self.writer.get().await {
                Ok(conn) => conn,
                Err(err) => {
                    if matches!(err, deadpool::managed::PoolError::Timeout(_)) {
                        self.timeouts.fetch_add(1, Ordering::Relaxed);
                    }
                    let _ = first.reply.send(Err(from_pool(err).into()));
                    continue;
                }
            };
            self.group(&mut conn, first, &mut jobs).await;
        }
    }

    /// `BEGIN IMMEDIATE`, `first` and every unit queued behind it (up to [`MAX_GROUP`]
    /// units, or [`MAX_GROUP_TIME`]), each in a savepoint, then one commit.
    async fn group(
        &self,
        conn: &mut SqliteConn,
        first: Job,
        jobs: &mut mpsc::UnboundedReceiver<Job>,
    ) {
        let begun = conn
            .spawn_blocking(|sync| {
                AnsiTransactionManager::begin_transaction_sql(sync, "BEGIN IMMEDIATE")
            })
            .await;
        if let Err(err) = begun {
            let _ = first.reply.send(Err(store(err)));
            return;
        }
        let opened = Instant::now();
        let mut applied: Vec<(oneshot::Sender<Answer>, WorkOutput)> = Vec::new();
        let mut next = Some(first);
        let mut taken = 0;
        while let Some(job) = next.take() {
            taken += 1;
            if let Err(broken) = self.one(conn, job, &mut applied).await {
                // The transaction is in an unknown state: nothing of it may stand.
                let _ = Manager::rollback_transaction(conn).await;
                answer_all(applied, &broken);
                return;
            }
            if taken < MAX_GROUP && opened.elapsed() < MAX_GROUP_TIME {
                next = jobs.try_recv().ok();
            }
        }
        match Manager::commit_transaction(conn).await {
            Ok(()) => {
                self.nudge.committed();
                for (reply, output) in applied {
                    let _ = reply.send(Ok(output));
                }
            }
            Err(err) => {
                let _ = Manager::rollback_transaction(conn).await;
                answer_all(applied, &err.to_string());
            }
        }
    }

    /// Runs one unit in its savepoint. A refusal or a panic rolls the savepoint back and
    /// is answered at once; a success waits in `applied` for the commit. `Err` when the
    /// savepoint itself failed: the whole group is then lost.
    async fn one(
        &self,
        conn: &mut SqliteConn,
        job: Job,
        applied: &mut Vec<(oneshot::Sender<Answer>, WorkOutput)>,
    ) -> Result<(), String> {
        if !leave_queue(&job.state, TAKEN) {
            // Its caller gave up waiting and was answered 503: it must not run.
            return Ok(());
        }
        if let Err(err) = Manager::begin_transaction(conn).await {
            let why = err.to_string();
            let _ = job.reply.send(Err(store(err)));
            return Err(why);
        }
        let outcome = {
            let mut tx = DbTransaction::new(Conn::Sqlite(&mut *conn));
            let work = job.work;
            // The call itself inside the caught future: a closure that panics before it
            // returns its future is caught too.
            AssertUnwindSafe(async move { work(&mut tx).await })
                .catch_unwind()
                .instrument(job.span)
                .await
        };
        match outcome {
            Ok(Ok(output)) => match Manager::commit_transaction(conn).await {
                Ok(()) => {
                    applied.push((job.reply, output));
                    Ok(())
                }
                Err(err) => {
                    let why = err.to_string();
                    let _ = job.reply.send(Err(store(err)));
                    Err(why)
                }
            },
            Ok(Err(refusal)) => {
                let rolled_back = Manager::rollback_transaction(conn).await;
                let _ = job.reply.send(Err(refusal));
                rolled_back.map_err(|err| err.to_string())
            }
            Err(_panic) => {
                let rolled_back = Manager::rollback_transaction(conn).await;
                let _ = job
                    .reply
                    .send(Err(ServiceError::internal("a unit of work panicked")));
                rolled_back.map_err(|err| err.to_string())
            }
        }
    }
}

fn store(err: diesel::result::Error) -> ServiceError {
    ServiceError::from(from_diesel(err))
}

/// Answers every unit that waited for a commit that did not happen: none of them is
/// applied.
fn answer_all(applied: Vec<(oneshot::Sender<Answer>, WorkOutput)>, why: &str) {
    tracing::error!(
        units = applied.len(),
        error = why,
        "a group of SQLite writes was not committed"
    );
    for (reply, _) in applied {
        let lost = RepositoryError::unavailable(format!("the write was not committed: {why}"));
        let _ = reply.send(Err(lost.into()));
    }
}
