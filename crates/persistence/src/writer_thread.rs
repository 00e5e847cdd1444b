//! SQLite's writing tasks on a thread of their own.
//!
//! SQLite's calls run inline on the thread that awaits them (see [`crate::db::Inline`]),
//! so the group committer and the nonce batcher, which hold the one writer connection
//! most of the time under write load, keep whatever thread runs them busy. On a runtime
//! shared with other tasks (the server's main thread also runs the webhook delivery
//! worker and the periodic jobs) each of those waited for a whole SQLite call, or a whole
//! group, at every step. Here they get a current-thread runtime on a thread of their own,
//! which the operating system schedules against the others.
//!
//! The thread lives as long as the database: it stops when the last clone of the
//! [`Database`](crate::Database) (and so of its [`WriterThread`]) is dropped.

use std::future::Future;

use tokio::runtime::{Builder, Handle};
use tokio::sync::oneshot;

/// A runtime on a thread of its own, for the tasks that write to SQLite.
#[derive(Debug)]
pub(crate) struct WriterThread {
    handle: Handle,
    /// Dropped with the last database clone: the thread's runtime then stops.
    _stop: oneshot::Sender<()>,
}

impl WriterThread {
    /// Starts the thread and its runtime (timers for the pool's timeouts and the group
    /// window, I/O for the pre-hooks a unit of work may call).
    pub(crate) fn start() -> std::io::Result<Self> {
        let runtime = Builder::new_current_thread().enable_all().build()?;
        let handle = runtime.handle().clone();
        let (stop, stopped) = oneshot::channel::<()>();
        std::thread::Builder::new()
            .name("sqlite-writer".into())
            .spawn(move || {
                // Either way (sent or dropped) the database is gone.
                let _ = runtime.block_on(stopped);
            })?;
        Ok(Self {
            handle,
            _stop: stop,
        })
    }

    /// Runs `task` on the writer thread.
    pub(crate) fn spawn<F>(&self, task: F)
    where
        F: Future<Output = ()> + Send + 'static,
    {
        drop(self.handle.spawn(task));
    }
}
