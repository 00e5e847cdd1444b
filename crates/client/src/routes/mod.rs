//! One method per route, grouped by family. Answers wrapped in `{data}` are unwrapped;
//! paged lists keep their `meta`, and answers with a sentence keep their `message`.

mod agent_money;
mod agent_skills;
mod agents;
mod auth;
mod events;
mod integrations;
mod mcp;
mod projects;
mod routines;
mod runs;
mod service;
mod task_links;
mod tasks;
mod treasury;

pub use agent_skills::ScoreDirection;
pub use agents::Lifecycle;
pub use service::Status;

/// The payload of a `{data}` answer.
pub(crate) fn data<T>(
    answer: Result<muster_wire::Data<T>, crate::Error>,
) -> Result<T, crate::Error> {
    answer.map(|d| d.data)
}
