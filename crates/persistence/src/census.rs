//! How many tasks and agents each organization has, by status: what the metrics gauges
//! show. One grouped count per table, by organization name (names, not ids, label
//! metrics).

use diesel::QueryableByName;
use diesel::sql_types::{BigInt, Text};
use diesel_async::RunQueryDsl;
use muster_domain::ports::RepositoryError;

use crate::Database;
use crate::conn::on_conn;
use crate::error::from_diesel;

/// One count of the census.
#[derive(Debug, Clone, PartialEq, Eq, QueryableByName)]
pub struct CensusRow {
    /// The organization's name.
    #[diesel(sql_type = Text)]
    pub org: String,
    /// The task or agent status.
    #[diesel(sql_type = Text)]
    pub status: String,
    /// How many.
    #[diesel(sql_type = BigInt)]
    pub count: i64,
}

/// Tasks and agents counted by organization and status.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Census {
    /// Tasks.
    pub tasks: Vec<CensusRow>,
    /// Agents.
    pub agents: Vec<CensusRow>,
}

const COUNT: &str = "SELECT o.name AS org, x.status AS status, COUNT(*) AS count \
    FROM TABLE x JOIN organizations o ON o.id = x.org_id \
    GROUP BY o.name, x.status ORDER BY o.name, x.status";

impl Database {
    /// Counts every organization's tasks and agents by status.
    ///
    /// # Errors
    /// When the database cannot answer.
    pub async fn census(&self) -> Result<Census, RepositoryError> {
        let mut pooled = self.pooled().await?;
        let mut census = Census::default();
        for (table, into) in [("tasks", &mut census.tasks), ("agents", &mut census.agents)] {
            let sql = COUNT.replace("TABLE", table);
            *into = on_conn!(pooled.conn(), c => diesel::sql_query(&sql).load(c).await)
                .map_err(from_diesel)?;
        }
        Ok(census)
    }
}
