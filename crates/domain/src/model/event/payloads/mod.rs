//! The payload of each audit event type, serialized with camelCase keys. Ids of the
//! entity an event is about are not repeated here: they are the event's `entityId`.

mod agents;
mod hooks;
mod people;
mod projects;
mod routines;
mod runs;
mod tasks;

pub use agents::*;
pub use hooks::*;
pub use people::*;
pub use projects::*;
pub use routines::*;
pub use runs::*;
pub use tasks::*;
