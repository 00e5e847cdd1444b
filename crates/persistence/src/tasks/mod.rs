//! Tasks (`tasks`) with their claims, dependencies, comments, escalations and templates:
//! the rows, their queries (the claim queries in `claims`), and the domain's
//! `TaskRepository` and `TasksTx` on them.

mod claims;
mod comments;
mod dependencies;
mod escalations;
mod queries;
mod repo;
mod rows;
mod templates;
mod tx;
