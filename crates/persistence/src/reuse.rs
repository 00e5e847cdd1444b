//! Keeping statements prepared that Diesel would prepare afresh on every run.
//!
//! Diesel prepares some statements afresh on every run, because their SQL text *may*
//! differ from one run to the next: every `UPDATE` (a changeset skips its `None`
//! fields), every PostgreSQL `INSERT` (a `None` column is written `DEFAULT`), every
//! upsert, every SQLite `IN (?, ?, ...)` list (`eq_any`) and everything holding a
//! `sql()` fragment. On PostgreSQL that costs each run a round trip of its own (`Parse`,
//! before the `Bind`/`Execute`) and a fresh parse and plan in the server: a transition
//! sent two such statements, so ten round trips where eight do. On SQLite it is a parse
//! and plan on the calling thread: the outbox's lookups ran them on the one writer
//! thread for every write.
//!
//! [`Reuse::reused`] marks a statement as safe to keep. Diesel's statement cache then
//! keys it by its SQL text (and bind types), not by its Rust type, so each text it
//! takes still gets a prepared statement of its own. Use it only on statements whose
//! text the program writes (no value spelled into a `sql()` fragment) and takes a few
//! fixed forms: a statement whose length grows with its input (a multi-row `VALUES`
//! list, an `IN` list) only up to a few values ([`Reuse::reused_if`] with
//! [`KEPT_LIST`]), or each length would stay prepared on every pooled connection.

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

impl<Q, C> diesel::RunQueryDsl<C> for Reused<Q> {}

/// The longest list of values (`IN (?, ...)`, as SQLite writes `eq_any`) whose statement
/// is kept prepared: each length is one more statement on every pooled connection.
pub(crate) const KEPT_LIST: usize = 4;

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use diesel::connection::{Instrumentation, InstrumentationEvent};
    use diesel::prelude::*;
    use diesel::sqlite::SqliteConnection;

    use super::*;

    diesel::table! {
        things (id) {
            id -> Integer,
        }
    }

    /// Counts the statements Diesel adds to its cache and the queries it starts.
    #[derive(Default, Clone)]
    struct Counts(Arc<Mutex<(usize, usize)>>);

    impl Instrumentation for Counts {
        fn on_connection_event(&mut self, event: InstrumentationEvent<'_>) {
            let mut counts = self.0.lock().unwrap();
            match event {
                InstrumentationEvent::CacheQuery { .. } => counts.0 += 1,
                InstrumentationEvent::StartQuery { .. } => counts.1 += 1,
                _ => {}
            }
        }
    }

    /// Runs `run` three times on a fresh connection: (statements cached, queries run).
    fn cached_of(run: impl Fn(&mut SqliteConnection) -> QueryResult<Vec<i32>>) -> (usize, usize) {
        let mut conn = SqliteConnection::establish(":memory:").unwrap();
        diesel::sql_query("CREATE TABLE things (id INTEGER PRIMARY KEY)")
            .execute(&mut conn)
            .unwrap();
        let counts = Counts::default();
        conn.set_instrumentation(counts.clone());
        for _ in 0..3 {
            run(&mut conn).unwrap();
        }
        *counts.0.lock().unwrap()
    }

    #[test]
    fn a_reused_list_is_prepared_once_where_diesel_prepares_it_every_time() {
        let ids = vec![1, 2];
        let plain = cached_of(|c| {
            things::table
                .filter(things::id.eq_any(&ids))
                .select(things::id)
                .load(c)
        });
        assert_eq!(plain, (0, 3), "Diesel keeps no `IN (?, ?)` statement");
        let held = cached_of(|c| {
            things::table
                .filter(things::id.eq_any(&ids))
                .select(things::id)
                .reused()
                .load(c)
        });
        assert_eq!(held, (1, 3));
        let declined = cached_of(|c| {
            things::table
                .filter(things::id.eq_any(&ids))
                .select(things::id)
                .reused_if(false)
                .load(c)
        });
        assert_eq!(declined, (0, 3));
    }

    #[test]
    fn each_length_of_a_reused_list_is_a_statement_of_its_own() {
        let cached = cached_of(|c| {
            let mut found = Vec::new();
            for ids in [vec![1], vec![1, 2], vec![3]] {
                let query = things::table
                    .filter(things::id.eq_any(ids))
                    .select(things::id);
                found.extend(query.reused().load::<i32>(c)?);
            }
            Ok(found)
        });
        // Three runs of three statements, two distinct texts.
        assert_eq!(cached, (2, 9));
    }
}
