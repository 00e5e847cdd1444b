//! The runaway guard: each agent's counting windows and each organization's thresholds
//! (columns of `agents` and `organizations`), and the domain's `GuardTx` on them.

mod queries;
mod tx;
