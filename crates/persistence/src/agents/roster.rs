//! The roster of an organization: its agents with their capabilities and how many open
//! tasks each holds, read for assignment and the claim rules.

use std::collections::HashMap;

use diesel::prelude::*;
use diesel::result::QueryResult;
use diesel::sql_types::Bool;
use diesel_async::RunQueryDsl;
use muster_domain::model::{Capability, OrgId};
use muster_domain::ports::RepositoryError;
use muster_domain::rules::candidates::RosterEntry;

use crate::conn::{Conn, on_conn};
use crate::error::from_diesel;
use crate::fixed::fixed;
use crate::schema::tasks;
use crate::types::{DbUuid, db_uuid};

use super::rows::agents_of;
use super::{capabilities, queries as agents};

/// The agents of `org` (only the active ones when `active_only`) with their
/// capabilities and open-task counts: three queries, joined here.
pub(crate) async fn roster_of(
    conn: &mut Conn<'_>,
    org: OrgId,
    active_only: bool,
) -> Result<Vec<RosterEntry>, RepositoryError> {
    let agents = agents::of_org(conn, org, active_only)
        .await
        .map_err(from_diesel)?;
    let mut skills: HashMap<uuid::Uuid, Vec<_>> = HashMap::new();
    for row in capabilities::of_org(conn, org).await.map_err(from_diesel)? {
        let capability = Capability::try_from(row)?;
        skills
            .entry(capability.agent_id.as_uuid())
            .or_default()
            .push((capability.name, capability.proficiency));
    }
    let open: HashMap<uuid::Uuid, i64> = open_counts(conn, org)
        .await
        .map_err(from_diesel)?
        .into_iter()
        .filter_map(|(agent, count)| agent.map(|a| (a.0, count)))
        .collect();
    agents_of(agents)?
        .into_iter()
        .map(|agent| {
            let id = agent.id.as_uuid();
            Ok(RosterEntry {
                capabilities: skills.remove(&id).unwrap_or_default(),
                open_tasks: open
                    .get(&id)
                    .map_or(0, |n| u32::try_from(*n).unwrap_or(u32::MAX)),
                agent,
            })
        })
        .collect()
}

/// Assigned and open: the predicate of the `tasks_open_assignments` index, word for
/// word, with literals so that both engines' planners see the index applies.
const OPEN_ASSIGNMENTS: &str = "assignee_id IS NOT NULL AND status NOT IN ('done', 'cancelled')";

/// How many open (not done or cancelled) tasks each agent of `org` holds.
async fn open_counts(conn: &mut Conn<'_>, org: OrgId) -> QueryResult<Vec<(Option<DbUuid>, i64)>> {
    on_conn!(conn, c => {
        tasks::table
            .filter(tasks::org_id.eq(db_uuid(org)))
            .filter(fixed::<Bool>(OPEN_ASSIGNMENTS))
            .group_by(tasks::assignee_id)
            .select((tasks::assignee_id, diesel::dsl::count_star()))
            .load(c)
            .await
    })
}
