//! Muster's domain: the rules of task and agent coordination, free of any I/O.
//!
//! Muster is a service through which AI agents and people create, route, approve and
//! finish work together. This crate is all of its decisions, and nothing else: the
//! service's HTTP API, its databases and its webhooks are adapters around it (in other
//! crates), and a team can embed it in its own Rust service in the same way.
//!
//! # The model
//!
//! Everything belongs to an [`Organization`](model::Organization). Its members are
//! [`User`](model::User)s (people, with a role: viewer, operator, admin) and
//! [`Agent`](model::Agent)s (software, with a role, a mode, a level in a hierarchy, a
//! credit balance, a budget and a reputation). Work is a [`Task`](model::Task) that
//! moves through the statuses of [`rules::transition`], can depend on other tasks, be
//! assigned, claimed, commented, escalated and approved; finishing it pays its
//! assignee. Every change is recorded as an audit [`Event`](model::Event). Values
//! with rules are newtypes that cannot hold an invalid value
//! ([`Title`](model::Title), [`Level`](model::Level), [`Email`](model::Email), ...):
//! once you hold one, it is valid.
//!
//! # How a use case runs
//!
//! - [`service`]: one use case per method (`TaskService::transition`,
//!   `AgentService::register`, ...). It is called with an [`Actor`](model::Actor) —
//!   who is asking, in which organization — and plain validated values.
//! - [`policy`] decides first whether that actor may do it; [`rules`] decide what the
//!   change is (pure functions: the transition table, budgets, fees, ranking, ...).
//! - [`ports`] are the traits through which a use case reaches the outside world.
//!   Reads go through repositories ([`ports::TaskRepository`], ...). A change goes
//!   through the [`UnitOfWork`](ports::UnitOfWork): the use case's reads that a rule
//!   depends on, all its writes and its audit events run in ONE transaction
//!   ([`ports::Transaction`]), committed together when it returns `Ok` and rolled back
//!   when it returns an error. Every read is scoped to the actor's organization: a row
//!   of another organization is a missing row.
//! - Errors are [`ServiceError`](service::ServiceError)s that say what went wrong in
//!   terms a caller can act on (validation, not found, forbidden, conflict, ...).
//!
//! # Wiring it
//!
//! Adapters implement the ports: `muster-persistence` (SQLite and PostgreSQL),
//! `muster-auth` (hashing, tokens, signing, sealing), `muster-outbound` (webhook calls,
//! the address guard). This crate holds no adapter. For tests and prototypes:
//!
//! - the crate `muster-memory`: `MemoryStore` implements every storage port and the
//!   unit of work in memory, honouring the same contract as the databases (the
//!   persistence contract suite runs against all three); its `fakes` stand in for the
//!   cryptographic ports. Its `examples/embedded.rs` runs a whole scenario on it.
//! - feature `mocks`: a `mockall` mock of every port (`MockTaskRepository`, ...), and
//!   `MockUnitOfWork` running a use case against a `MockTransaction` whose expectations
//!   state the reads and writes it must make. `examples/mocked_rule.rs` tests a rule
//!   that way.
//!
//! # What is stable
//!
//! The crate follows semantic versioning; `CHANGELOG.md` records every change to its
//! public API, and CI compares the API with the last tagged release. Stable: the
//! model's types and their constructors, the port traits, the services' methods and
//! their request and error types, and the pure functions of [`rules`] and [`policy`].
//! Not stable: the `mocks` (their shape follows `mockall`'s).
//!
//! This crate depends on no runtime, web framework or database driver; a test in
//! `tests/no_io_dependencies.rs` keeps it that way.

#![deny(missing_docs)]

pub mod model;
pub mod policy;
pub mod ports;
pub mod rules;
pub mod service;

mod validation;

pub use validation::ValidationError;
