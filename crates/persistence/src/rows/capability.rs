use diesel::prelude::*;
use muster_domain::model::{AgentId, Capability, CapabilityId, CapabilityName, OrgId, Proficiency};
use muster_domain::ports::RepositoryError;

use crate::error::corrupt;
use crate::schema::agent_capabilities;
use crate::types::{DbTime, DbUuid};

#[derive(Debug, Clone, Queryable, Selectable, Insertable)]
#[diesel(table_name = agent_capabilities, check_for_backend(diesel::pg::Pg, diesel::sqlite::Sqlite))]
pub(crate) struct CapabilityRow {
    pub id: DbUuid,
    pub org_id: DbUuid,
    pub agent_id: DbUuid,
    pub capability: String,
    pub proficiency: String,
    pub created_at: DbTime,
}

impl From<&Capability> for CapabilityRow {
    fn from(c: &Capability) -> Self {
        Self {
            id: DbUuid(c.id.as_uuid()),
            org_id: DbUuid(c.org_id.as_uuid()),
            agent_id: DbUuid(c.agent_id.as_uuid()),
            capability: c.name.as_str().to_owned(),
            proficiency: c.proficiency.as_str().to_owned(),
            created_at: DbTime(c.created_at),
        }
    }
}

impl TryFrom<CapabilityRow> for Capability {
    type Error = RepositoryError;

    fn try_from(row: CapabilityRow) -> Result<Self, Self::Error> {
        Ok(Self {
            id: CapabilityId::from_uuid(row.id.0),
            org_id: OrgId::from_uuid(row.org_id.0),
            agent_id: AgentId::from_uuid(row.agent_id.0),
            name: CapabilityName::new(&row.capability).map_err(|e| corrupt("capability", e))?,
            proficiency: Proficiency::parse(&row.proficiency)
                .ok_or_else(|| corrupt("capability proficiency", &row.proficiency))?,
            created_at: row.created_at.0,
        })
    }
}
