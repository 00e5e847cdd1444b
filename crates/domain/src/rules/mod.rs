//! Pure business rules, exhaustively unit-tested.

pub mod transition;
