//! Statements kept prepared that Diesel would prepare again on every run.
//!
//! Diesel keeps a statement prepared only when it can tell its text is the same on every
//! run. It cannot for a list of values written as `IN (?, ?, ...)` (SQLite's `eq_any`,
//! whose text grows with the list) nor for any `sql()` fragment, so such a statement was
//! parsed and planned anew on every request: in the mixed load on SQLite, the outbox's
//! two lookups (one per write) and the event count of `GET /events`. [`Kept`] tells
//! Diesel that this statement may be kept: its cache then holds it under its text and
//! bind types, one entry for each distinct text.
//!
//! So wrap only a statement whose text is written by the program (no value spelled into
//! it) and takes few shapes: every shape is one more statement that each pooled
//! connection keeps. A list's length is a shape: keep those only up to a few values
//! ([`kept_if`]).

use diesel::backend::Backend;
use diesel::query_builder::{AstPass, Query, QueryFragment, QueryId};
use diesel::result::QueryResult;

/// Most values in a list (`IN (...)`) whose statement is kept prepared: every length up
/// to it is one statement per connection.
pub(crate) const MAX_KEPT_LIST: usize = 4;

/// `query`, kept prepared when `keep` is set (see the module documentation).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Kept<Q> {
    query: Q,
    keep: bool,
}

/// `query`, kept prepared.
pub(crate) fn kept<Q>(query: Q) -> Kept<Q> {
    Kept { query, keep: true }
}

/// `query`, kept prepared if `keep`, else as Diesel decides.
pub(crate) fn kept_if<Q>(query: Q, keep: bool) -> Kept<Q> {
    Kept { query, keep }
}

impl<Q: Query> Query for Kept<Q> {
    type SqlType = Q::SqlType;
}

/// No static id: the cache holds the statement under its text.
impl<Q> QueryId for Kept<Q> {
    type QueryId = ();
    const HAS_STATIC_QUERY_ID: bool = false;
}

impl<Q: QueryFragment<DB>, DB: Backend> QueryFragment<DB> for Kept<Q> {
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

impl<Q, C> diesel::RunQueryDsl<C> for Kept<Q> {}

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
    fn a_kept_list_is_prepared_once_where_diesel_prepares_it_every_time() {
        let ids = vec![1, 2];
        let plain = cached_of(|c| {
            things::table
                .filter(things::id.eq_any(&ids))
                .select(things::id)
                .load(c)
        });
        assert_eq!(plain, (0, 3), "Diesel keeps no `IN (?, ?)` statement");
        let held = cached_of(|c| {
            kept(
                things::table
                    .filter(things::id.eq_any(&ids))
                    .select(things::id),
            )
            .load(c)
        });
        assert_eq!(held, (1, 3));
        let declined = cached_of(|c| {
            kept_if(
                things::table
                    .filter(things::id.eq_any(&ids))
                    .select(things::id),
                false,
            )
            .load(c)
        });
        assert_eq!(declined, (0, 3));
    }

    #[test]
    fn each_length_of_a_kept_list_is_a_statement_of_its_own() {
        let cached = cached_of(|c| {
            let mut found = Vec::new();
            for ids in [vec![1], vec![1, 2], vec![3]] {
                let query = things::table
                    .filter(things::id.eq_any(ids))
                    .select(things::id);
                found.extend(kept(query).load::<i32>(c)?);
            }
            Ok(found)
        });
        // Three runs of three statements, two distinct texts.
        assert_eq!(cached, (2, 9));
    }
}
