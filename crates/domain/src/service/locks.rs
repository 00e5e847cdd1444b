//! The one order in which use cases lock agent rows: ascending id, after any task rows.
//! Two transactions that lock the same agents then queue instead of deadlocking, whatever
//! the use case (a transfer between two agents, a reward paid to a child and its parent).

use crate::model::{Agent, AgentId, OrgId};
use crate::ports::{Lock, Transaction};
use crate::service::{Entity, NotFound, ServiceError};

/// Locks the agents `ids` of `org` for update in ascending id order and answers them in
/// the order asked. A missing agent is [`NotFound`]; a repeated id is locked once.
pub(crate) async fn lock_agents(
    tx: &mut dyn Transaction,
    org: OrgId,
    ids: &[AgentId],
) -> Result<Vec<Agent>, ServiceError> {
    let mut order: Vec<AgentId> = ids.to_vec();
    order.sort_unstable();
    order.dedup();
    let mut locked = Vec::with_capacity(order.len());
    for id in order {
        let agent = tx
            .agent(org, id, Lock::Update)
            .await?
            .ok_or(NotFound::new(Entity::Agent, id))?;
        locked.push(agent);
    }
    ids.iter()
        .map(|id| {
            locked
                .iter()
                .find(|a| a.id == *id)
                .cloned()
                .ok_or_else(|| NotFound::new(Entity::Agent, *id).into())
        })
        .collect()
}
