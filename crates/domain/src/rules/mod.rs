//! Pure business rules, exhaustively unit-tested.

pub mod budget;
pub mod candidates;
pub mod chat;
pub mod claimable;
pub mod codehost;
pub mod constant_time;
pub mod delivery;
pub mod escalation;
pub mod guard;
pub mod hearing;
pub mod integration_moves;
pub mod login;
pub mod numbers;
pub mod progress;
pub mod remote;
pub mod reputation;
pub mod reward;
pub mod routines;
pub mod runs;
pub mod schedule;
pub mod spawn;
pub mod transition;
pub mod usage;
