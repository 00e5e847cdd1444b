//! Projects (`projects`, issue 66): the row, its queries (the progress counts in
//! `tally`), and the domain's `ProjectRepository` and `ProjectsTx` on them.

mod queries;
mod repo;
mod rows;
mod tally;
mod tx;
