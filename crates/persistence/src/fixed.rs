//! SQL text written in the code, kept prepared.
//!
//! Some predicates must reach the planner as literals, not bound parameters, so that
//! it sees a partial index applies (`status = 'todo'` matches an index `WHERE status =
//! 'todo'`; `status = $1` does not, for a plan made before the value is known). Diesel's
//! `sql()` writes such text, but marks the whole statement as one never to keep
//! prepared, since it cannot know the text is the same each time: every run was parsed
//! again. [`Fixed`] holds a `&'static str`, so the text is part of the program, and the
//! statement is cached by its SQL like any other.

use std::marker::PhantomData;

use diesel::backend::Backend;
use diesel::expression::{
    AppearsOnTable, Expression, SelectableExpression, TypedExpressionType, ValidGrouping,
    is_aggregate,
};
use diesel::query_builder::{AstPass, QueryFragment, QueryId};
use diesel::result::QueryResult;

/// A fixed piece of SQL of type `ST` (see the module documentation). Never build one
/// from input: the text goes into the statement as it is.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Fixed<ST> {
    sql: &'static str,
    sql_type: PhantomData<ST>,
}

/// The fixed SQL `sql`, of type `ST`.
pub(crate) const fn fixed<ST>(sql: &'static str) -> Fixed<ST> {
    Fixed {
        sql,
        sql_type: PhantomData,
    }
}

impl<ST: TypedExpressionType> Expression for Fixed<ST> {
    type SqlType = ST;
}

impl<ST, DB: Backend> QueryFragment<DB> for Fixed<ST> {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, DB>) -> QueryResult<()> {
        out.push_sql(self.sql);
        Ok(())
    }
}

/// No static id: two `Fixed` of one type may hold different text, so statements are
/// cached by their SQL.
impl<ST> QueryId for Fixed<ST> {
    type QueryId = ();
    const HAS_STATIC_QUERY_ID: bool = false;
}

impl<ST, QS> SelectableExpression<QS> for Fixed<ST> where Self: Expression {}

impl<ST, QS> AppearsOnTable<QS> for Fixed<ST> where Self: Expression {}

impl<ST, GB> ValidGrouping<GB> for Fixed<ST> {
    type IsAggregate = is_aggregate::Never;
}
