//! Code-host integrations: connections (`codehost_connections`), the deliveries they
//! received (`codehost_deliveries`) and the items they link (`codehost_links`); the rows,
//! their queries, and the domain's `CodeHostRepository` and `IntegrationsTx` on them.

mod queries;
mod repo;
mod rows;
mod tx;
