//! Organizations (`organizations`) and their users (`users`): the rows, their queries, and
//! the domain's `OrganizationRepository` and `OrganizationsTx` on them. (Users are read
//! through `UserRepository`, in [`crate::sessions`].)

mod queries;
mod repo;
mod rows;
mod tx;
pub(crate) mod users;
