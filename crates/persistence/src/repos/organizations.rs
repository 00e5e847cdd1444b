use async_trait::async_trait;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use muster_domain::model::{OrgId, Organization};
use muster_domain::ports::{NewOrganization, OrganizationRepository, RepositoryError};

use crate::Database;
use crate::db::detached;
use crate::error::from_diesel;
use crate::macros::{transaction, with_conn};
use crate::rows::{AgentRow, EventRow, OrganizationRow, UserRow, db_uuid};
use crate::schema::{agents, events, organizations, users};

#[async_trait]
impl OrganizationRepository for Database {
    async fn create(&self, new: &NewOrganization) -> Result<(), RepositoryError> {
        let db = self.clone();
        let org = OrganizationRow::from(&new.organization);
        let admin = UserRow::from(&new.admin);
        let agent = AgentRow::from(&new.hr_agent);
        let event_rows: Vec<EventRow> = new.events.iter().map(EventRow::from).collect();
        detached(async move {
            transaction!(db, conn => {
                diesel::insert_into(organizations::table).values(&org).execute(conn).await?;
                diesel::insert_into(users::table).values(&admin).execute(conn).await?;
                diesel::insert_into(agents::table).values(&agent).execute(conn).await?;
                for event in &event_rows {
                    diesel::insert_into(events::table).values(event).execute(conn).await?;
                }
                Ok(())
            })
        })
        .await
    }

    async fn get(&self, id: OrgId) -> Result<Option<Organization>, RepositoryError> {
        let row: Option<OrganizationRow> = with_conn!(self, conn, _Db => {
            organizations::table
                .filter(organizations::id.eq(db_uuid(id.as_uuid())))
                .select(OrganizationRow::as_select())
                .first(conn)
                .await
                .optional()
                .map_err(from_diesel)?
        });
        row.map(Organization::try_from).transpose()
    }

    async fn any_exists(&self) -> Result<bool, RepositoryError> {
        let found: Option<crate::types::DbUuid> = with_conn!(self, conn, _Db => {
            organizations::table
                .select(organizations::id)
                .first(conn)
                .await
                .optional()
                .map_err(from_diesel)?
        });
        Ok(found.is_some())
    }
}
