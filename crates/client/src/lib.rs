//! A typed async client for Muster's HTTP API.
//!
//! Every route of the API is a method of [`Client`], taking and answering the very
//! request and response types the server uses (re-exported as [`types`]). The client
//! signs agent requests, renews a user's tokens, sends API keys, puts an
//! `Idempotency-Key` on every POST that can change something (all but MCP messages
//! other than `tools/call`) so that a retry after a broken connection takes effect
//! once, and reads the live event stream and a run's live log, resuming where they
//! left off.
//!
//! # As an agent
//!
//! ```no_run
//! use muster_client::Client;
//! use muster_client::types::tasks::CreateTaskRequest;
//!
//! # async fn run() -> Result<(), muster_client::Error> {
//! let client = Client::agent("http://127.0.0.1:8080", "builder-1", "<64-hex secret>")?;
//! let task = client
//!     .create_task(&CreateTaskRequest {
//!         title: "Write the release notes".to_owned(),
//!         ..Default::default()
//!     })
//!     .await?;
//! println!("created {} ({:?})", task.id, task.status);
//! # Ok(())
//! # }
//! ```
//!
//! # As a user
//!
//! ```no_run
//! use muster_client::{Client, login_body};
//!
//! # async fn run() -> Result<(), muster_client::Error> {
//! let client = Client::login("http://127.0.0.1:8080", &login_body("ada@example.com", "…")).await?;
//! let me = client.me().await?;
//! println!("signed in as {}", me.email);
//! # Ok(())
//! # }
//! ```
//!
//! # With an API key
//!
//! ```no_run
//! use muster_client::Client;
//! use muster_client::types::tasks::ListTasksQuery;
//!
//! # async fn run() -> Result<(), muster_client::Error> {
//! let client = Client::api_key("http://127.0.0.1:8080", "msk_…")?;
//! let page = client.list_tasks(&ListTasksQuery::default()).await?;
//! for task in page.data {
//!     println!("{} {}", task.id, task.title);
//! }
//! # Ok(())
//! # }
//! ```
//!
//! # Failures
//!
//! An answer the server refuses is [`Error::Api`], an [`ApiError`] with its status,
//! its stable code (`insufficient_balance`, `stale_timestamp`: the server's docs/api.md
//! lists them) and its sentence (`title must be at most 255 characters`), exactly as
//! the HTTP API words it. Branch on the code, never on the sentence.
//! [`Error::is_retryable`] says whether the same call may succeed later (the service was
//! busy or another request got in the way; see [`RETRYABLE_CODES`]).
//!
//! ```no_run
//! # async fn run(client: muster_client::Client, id: uuid::Uuid) -> Result<(), muster_client::Error> {
//! match client.get_task(id).await {
//!     Ok(task) => println!("{}", task.title),
//!     Err(err) if err.code() == Some("task_not_found") => println!("no such task"),
//!     Err(err) if err.is_retryable() => println!("busy; try again later: {err}"),
//!     Err(err) => return Err(err),
//! }
//! # Ok(())
//! # }
//! ```

mod client;
mod credentials;
mod error;
mod routes;
mod stream;

pub use client::{Client, TraceSource, login_body};
pub use credentials::{Credentials, UserSession};
pub use error::{ApiError, Error, RETRYABLE_CODES};
/// The request and response types of the API, shared with the server.
pub use muster_wire as types;
pub use routes::{Lifecycle, ScoreDirection, Status};
pub use stream::{EventStream, RunLogStream};
