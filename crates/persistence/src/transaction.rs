//! One open transaction of a unit of work. Each aggregate's `tx.rs` implements its part of
//! the domain's [`Transaction`](muster_domain::ports::Transaction) port on it, one query
//! piece per method.

use muster_domain::model::Event;

use crate::conn::Conn;

/// One open transaction: each method is one query piece on its connection.
pub(crate) struct DbTransaction<'c> {
    /// The connection the transaction (or its savepoint) runs on.
    pub(crate) conn: Conn<'c>,
    /// The events appended so far, for the pre-hooks asked about them.
    pub(crate) written: Vec<Event>,
}

impl<'c> DbTransaction<'c> {
    /// A transaction (or a savepoint in one) already begun on `conn`.
    pub(crate) fn new(conn: Conn<'c>) -> Self {
        Self {
            conn,
            written: Vec::new(),
        }
    }
}
