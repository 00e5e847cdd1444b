//! Runs (`runs`), their log lines (`run_log_lines`) and their usage reports
//! (`usage_reports`), decision D-106: the rows, their queries (the usage summary in
//! `summary`), and the domain's `RunRepository` and `RunsTx` on them; and the credits
//! a claim reserved for its task (`claim_reservations`, in `claim_holds`).

mod claim_holds;
mod queries;
mod repo;
mod rows;
mod summary;
mod tx;
