//! A typed async client for Muster's HTTP API.
//!
//! Every route of the API is a method of [`Client`], taking and answering the very
//! request and response types the server uses (re-exported as [`types`]). The client
//! signs agent requests, renews a user's tokens, sends API keys, puts an
//! `Idempotency-Key` on every POST that can change something (all but MCP messages
//! other than `tools/call`) so that a retry after a broken connection takes effect
//! once, and reads the live event stream, resuming where it left off.
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
//! An answer the server refuses is [`Error::Api`] with its status and its sentence
//! (`title must be at most 255 characters`), exactly as the HTTP API words it.

mod client;
mod credentials;
mod error;
mod routes;
mod stream;

pub use client::{Client, login_body};
pub use credentials::{Credentials, UserSession};
pub use error::Error;
/// The request and response types of the API, shared with the server.
pub use muster_wire as types;
pub use routes::{Lifecycle, ScoreDirection, Status};
pub use stream::EventStream;
