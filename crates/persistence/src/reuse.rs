//! Keeping write statements prepared.
//!
//! Diesel prepares some statements afresh on every run, because their SQL text *may*
//! differ from one run to the next: every `UPDATE` (a changeset skips its `None`
//! fields), every PostgreSQL `INSERT` (a `None` column is written `DEFAULT`) and every
//! upsert. On PostgreSQL that costs each run a round trip of its own (`Parse`, before
//! the `Bind`/`Execute`) and a fresh parse and plan in the server: a transition sent
//! two such statements, so ten round trips where eight do.
//!
//! [`Reuse::reused`] marks a statement as safe to keep. Diesel's statement cache then
//! keys it by its SQL text (and bind types), not by its Rust type, so each text it
//! takes still gets a prepared statement of its own. Use it only on statements whose
//! text takes a few fixed forms: not on one whose length grows with its input (a
//! multi-row `VALUES` list of any length, a SQLite `IN (?, ?, ...)` list), or each
//! length would stay prepared on every pooled connection.

use diesel::backend::Backend;
use diesel::query_builder::{AstPass, Query, QueryFragment, QueryId};
use diesel::result::QueryResult;

/// A statement kept prepared under its SQL text when `keep` holds (otherwise left to
/// Diesel's own judgement); see the module documentation.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Reused<Q> {
    query: Q,
    keep: bool,
}

/// Marks a statement as kept prepared (see [`Reused`]).
pub(crate) trait Reuse: Sized {
    /// This statement, kept prepared under its SQL text.
    fn reused(self) -> Reused<Self> {
        self.reused_if(true)
    }

    /// This statement, kept prepared under its SQL text only when `keep` holds (its
    /// text is one of a few forms this time: a short row list, say).
    fn reused_if(self, keep: bool) -> Reused<Self> {
        Reused { query: self, keep }
    }
}

impl<Q: QueryId> Reuse for Q {}

impl<Q, DB> QueryFragment<DB> for Reused<Q>
where
    DB: Backend,
    Q: QueryFragment<DB>,
{
    fn walk_ast<'b>(&'b self, pass: AstPass<'_, 'b, DB>) -> QueryResult<()> {
        self.query.walk_ast(pass)
    }

    fn is_safe_to_cache_prepared(&self, backend: &DB) -> QueryResult<bool> {
        if self.keep {
            Ok(true)
        } else {
            self.query.is_safe_to_cache_prepared(backend)
        }
    }
}

/// No static id: the cache keys the statement by its text, so two texts of one Rust
/// type never share a prepared statement.
impl<Q> QueryId for Reused<Q> {
    type QueryId = ();
    const HAS_STATIC_QUERY_ID: bool = false;
}

impl<Q: Query> Query for Reused<Q> {
    type SqlType = Q::SqlType;
}
