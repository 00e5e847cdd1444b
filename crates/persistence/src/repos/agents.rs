use async_trait::async_trait;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use muster_domain::model::{Agent, AgentCredentials, AgentHandle, AgentId, OrgId};
use muster_domain::ports::{AgentRepository, RepositoryError};

use crate::Database;
use crate::error::from_diesel;
use crate::macros::with_conn;
use crate::rows::{AgentRow, db_uuid};
use crate::schema::agents;

#[async_trait]
impl AgentRepository for Database {
    async fn get(&self, org: OrgId, id: AgentId) -> Result<Option<Agent>, RepositoryError> {
        let row: Option<AgentRow> = with_conn!(self, conn, _Db => {
            agents::table
                .filter(agents::org_id.eq(db_uuid(org.as_uuid())))
                .filter(agents::id.eq(db_uuid(id.as_uuid())))
                .select(AgentRow::as_select())
                .first(conn)
                .await
                .optional()
                .map_err(from_diesel)?
        });
        row.map(|r| AgentCredentials::try_from(r).map(|c| c.agent))
            .transpose()
    }

    async fn find_credentials(
        &self,
        handle: &AgentHandle,
    ) -> Result<Option<AgentCredentials>, RepositoryError> {
        let row: Option<AgentRow> = with_conn!(self, conn, _Db => {
            agents::table
                .filter(agents::agent_id.eq(handle.as_str()))
                .select(AgentRow::as_select())
                .first(conn)
                .await
                .optional()
                .map_err(from_diesel)?
        });
        row.map(AgentCredentials::try_from).transpose()
    }
}
