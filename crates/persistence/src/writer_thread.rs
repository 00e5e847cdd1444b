//! SQLite's writing tasks on a thread of their own.
//!
//! SQLite's calls run inline on the thread that awaits them (see [`crate::conn::Inline`]),
//! so the group committer and the nonce batcher, which hold the one writer connection
//! most of the time under write load, keep whatever thread runs them busy. On a runtime
//! shared with other tasks (the server's main thread also runs the webhook delivery
//! worker and the periodic jobs) each of those waited for a whole SQLite call, or a whole
//! group, at every step. Here they get a current-thread runtime on a thread of their own,
//! which the operating system schedules against the others.
//!
//! The thread lives as long as the database: when the last clone of the
//! [`Database`](crate::Database) (and so of its [`WriterThread`]) is dropped, its runtime
//! stops, dropping the tasks and with them the writer connection, and the drop waits for
//! that, so that the file is closed properly before the process exits.

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::thread::JoinHandle;

use futures_util::FutureExt;
use tokio::runtime::{Builder, Handle};
use tokio::sync::oneshot;

/// A runtime on a thread of its own, for the tasks that write to SQLite.
#[derive(Debug)]
pub(crate) struct WriterThread {
    handle: Handle,
    /// Dropped with the last database clone: the thread's runtime then stops.
    stop: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl WriterThread {
    /// Starts the thread and its runtime (timers for the pool's timeouts and the group
    /// window).
    pub(crate) fn start() -> std::io::Result<Self> {
        let (stop, stopped) = oneshot::channel::<()>();
        let (started, handle) = std::sync::mpsc::sync_channel(1);
        // The runtime is built on its own thread: one built here and dropped here (when
        // the thread cannot start) would panic inside the caller's runtime.
        let thread = std::thread::Builder::new()
            .name("sqlite-writer".into())
            .spawn(move || {
                let runtime = match Builder::new_current_thread().enable_all().build() {
                    Ok(runtime) => runtime,
                    Err(err) => {
                        let _ = started.send(Err(err));
                        return;
                    }
                };
                if started.send(Ok(runtime.handle().clone())).is_ok() {
                    // Either way (sent or dropped) the database is gone.
                    let _ = runtime.block_on(stopped);
                }
            })?;
        let handle = handle
            .recv()
            .map_err(|_| std::io::Error::other("the writer thread ended at start"))??;
        Ok(Self {
            handle,
            stop: Some(stop),
            thread: Some(thread),
        })
    }

    /// Runs `task` on the writer thread. A panic there is logged: the writes that task
    /// served then fail (their queue is closed) instead of hanging.
    pub(crate) fn spawn<F>(&self, task: F)
    where
        F: Future<Output = ()> + Send + 'static,
    {
        drop(self.handle.spawn(async move {
            if AssertUnwindSafe(task).catch_unwind().await.is_err() {
                tracing::error!("a task of the SQLite writer thread panicked");
            }
        }));
    }
}

impl Drop for WriterThread {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(thread) = self.thread.take() {
            // The last clone may be dropped by a task of the thread itself, which must
            // not wait for itself; it is finishing anyway.
            if thread.thread().id() != std::thread::current().id() {
                let _ = thread.join();
            }
        }
    }
}
