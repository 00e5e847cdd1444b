//! Replay protection (`nonces`): the queries, the domain's `NonceStore` on the database,
//! and [`NonceBatcher`], which writes concurrent nonces together.

mod batch;
mod queries;
mod repo;

pub use batch::NonceBatcher;
