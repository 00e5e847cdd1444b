//! One change of an agent's reputation, as every use case that scores writes it: the
//! clamped score on the agent, the reputation event with the nominal amount, and the
//! `reputation.changed` audit payload (decision D-63).

use time::OffsetDateTime;

use crate::model::{
    Agent, AuditEvent, ReputationChanged, ReputationEvent, ReputationEventId, ReputationKind,
    TaskId,
};
use crate::rules::reputation;

/// What scoring `agent` answers: the row to store and the audit payload to record.
pub(crate) struct Rescored {
    /// The reputation event (nominal amount).
    pub(crate) event: ReputationEvent,
    /// The `reputation.changed` payload, with the score before and after.
    pub(crate) audit: AuditEvent,
}

/// Adds `amount` of `kind` to `agent`'s score (clamped to 0..=100) and answers the row
/// `id` and the audit payload, both saying `reason` (and `task`, when one caused it).
pub(crate) fn rescore(
    agent: &mut Agent,
    id: ReputationEventId,
    (kind, amount): (ReputationKind, i32),
    reason: String,
    task: Option<TaskId>,
    now: OffsetDateTime,
) -> Rescored {
    let score_before = agent.reputation_score;
    agent.reputation_score = reputation::apply(score_before, amount);
    let audit = AuditEvent::ReputationChanged(ReputationChanged {
        kind: kind.as_str().to_owned(),
        amount,
        score_before,
        score_after: agent.reputation_score,
        reason: Some(reason.clone()),
        task_id: task,
    });
    let event = ReputationEvent {
        id,
        org_id: agent.org_id,
        agent_id: agent.id,
        kind,
        amount,
        reason,
        task_id: task,
        created_at: now,
    };
    Rescored { event, audit }
}
