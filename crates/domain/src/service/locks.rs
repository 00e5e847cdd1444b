//! The one order in which use cases lock agent rows: ascending id, after any task rows.
//! Two transactions that lock the same agents then queue instead of deadlocking, whatever
//! the use case (a transfer between two agents, a reward paid to a child and its parent).

use crate::model::{Agent, AgentId, OrgId};
use crate::ports::{AgentsTx, Lock};
use crate::service::{Entity, NotFound, ServiceError};

/// Locks the agents `ids` of `org` for update in ascending id order and answers them in
/// the order asked. A missing agent is [`NotFound`]; a repeated id is locked once.
pub(crate) async fn lock_agents<T: AgentsTx + ?Sized>(
    tx: &mut T,
    org: OrgId,
    ids: &[AgentId],
) -> Result<Vec<Agent>, ServiceError> {
    let wanted: Vec<(AgentId, Lock)> = ids.iter().map(|id| (*id, Lock::Update)).collect();
    lock_agents_as(tx, org, &wanted).await
}

/// Locks the agents of `wanted` of `org` in ascending id order, each as asked (an agent
/// asked twice is locked once, for update if either asks it), and answers them in the
/// order asked. A missing agent is [`NotFound`]. Locking in the one order, a share lock
/// never waits for an update lock that waits for it.
pub(crate) async fn lock_agents_as<T: AgentsTx + ?Sized>(
    tx: &mut T,
    org: OrgId,
    wanted: &[(AgentId, Lock)],
) -> Result<Vec<Agent>, ServiceError> {
    let mut order: Vec<(AgentId, Lock)> = Vec::with_capacity(wanted.len());
    for (id, lock) in wanted {
        match order.iter_mut().find(|(seen, _)| seen == id) {
            Some((_, held)) if *lock == Lock::Update => *held = Lock::Update,
            Some(_) => {}
            None => order.push((*id, *lock)),
        }
    }
    order.sort_unstable_by_key(|(id, _)| *id);
    let mut locked = Vec::with_capacity(order.len());
    for (id, lock) in order {
        let agent = tx
            .agent(org, id, lock)
            .await?
            .ok_or(NotFound::new(Entity::Agent, id))?;
        locked.push(agent);
    }
    wanted
        .iter()
        .map(|(id, _)| {
            locked
                .iter()
                .find(|a| a.id == *id)
                .cloned()
                .ok_or_else(|| NotFound::new(Entity::Agent, *id).into())
        })
        .collect()
}
