//! Routines (`routines`) and the due times they fired for (`routine_firings`), decision
//! D-108: the rows, their queries, and the domain's `RoutineRepository` and `RoutinesTx`
//! on them.

mod queries;
mod repo;
mod rows;
mod tx;
