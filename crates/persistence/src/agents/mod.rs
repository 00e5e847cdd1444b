//! Agents (`agents`) and their capabilities (`agent_capabilities`): the rows, their queries,
//! the roster, and the domain's `AgentRepository` and `AgentsTx` on them.

pub(crate) mod capabilities;
mod queries;
mod repo;
pub(crate) mod roster;
mod rows;
mod tx;
