//! Agents making agents (decisions D-51, D-52, D-53, D-56).

api_tests!(placeholder);

async fn placeholder(_app: &crate::helpers::TestApp) {}
