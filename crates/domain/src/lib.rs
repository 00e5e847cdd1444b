//! Muster's domain: the rules of task and agent coordination, free of any I/O.
//!
//! - [`model`]: entities and value objects. Constrained values are newtypes that
//!   cannot hold an invalid value ([`model::Title`], [`model::Level`], ...).
//! - [`rules`]: pure functions, such as the task transition table.
//! - [`policy`]: who may do what.
//! - [`ports`]: async traits for everything outside (storage, clock, ids). With the
//!   `mocks` feature every port has a `mockall` mock (`MockTaskRepository`, ...).
//! - [`service`]: one use case per method; each commits one change through one port call.
//!
//! This crate depends on no runtime, web framework or database driver; a test in
//! `tests/no_io_dependencies.rs` keeps it that way.

#![deny(missing_docs)]

#[cfg(feature = "memory")]
pub mod memory;
pub mod model;
pub mod policy;
pub mod ports;
pub mod rules;
pub mod service;

mod validation;

pub use validation::ValidationError;
