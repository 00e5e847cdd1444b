//! Pure business rules, exhaustively unit-tested.

pub mod login;
pub mod transition;
