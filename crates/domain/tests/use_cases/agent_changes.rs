//! Who hears that an agent changed (`AgentService::with_changes`), on the in-memory
//! store: every committed change of what signing as the agent rests on (status, role,
//! mode, level) and every removal, once it is committed; not a refused change, and not
//! a change of its money.

use std::sync::Arc;

use crate::common::agents::Heard;
use crate::common::world::World;

use futures_executor::block_on;
use muster_domain::model::{AgentMode, Level, Reason};
use muster_domain::service::{AgentPatch, AgentService, CreditAmount, ServiceError};

/// A world, and its agent service telling a [`Heard`] of every change.
fn listened() -> (World, Arc<Heard>, AgentService) {
    let world = World::new();
    let heard = Arc::new(Heard::default());
    let agents = world.agents.clone().with_changes(heard.clone());
    (world, heard, agents)
}

#[test]
fn each_committed_status_level_or_mode_change_is_told_once_and_nothing_else() {
    let (world, heard, agents) = listened();
    let (worker, _) = world.worker("listened-to", 5, &[]);
    let id = worker.id;

    block_on(agents.suspend(&world.hr, id)).unwrap();
    assert_eq!(heard.take(), [id], "suspended");
    let refused = block_on(agents.suspend(&world.hr, id)).unwrap_err();
    assert!(matches!(refused, ServiceError::Conflict(_)), "{refused:?}");
    assert_eq!(heard.take(), [], "a refused change tells nobody");
    block_on(agents.unsuspend(&world.hr, id)).unwrap();
    assert_eq!(heard.take(), [id], "unsuspended");

    let patch = AgentPatch {
        level: Some(Level::new(6).unwrap()),
        mode: Some(AgentMode::Orchestrator),
        ..AgentPatch::default()
    };
    block_on(agents.update(&world.admin, id, patch)).unwrap();
    assert_eq!(heard.take(), [id], "level and mode");
    block_on(agents.demote(&world.admin, id, None)).unwrap();
    assert_eq!(heard.take(), [id], "demoted");

    let amount = CreditAmount::new(10).unwrap();
    block_on(agents.grant(&world.admin, id, amount, None)).unwrap();
    assert_eq!(heard.take(), [], "money is not what signing rests on");

    block_on(agents.revoke(&world.hr, id)).unwrap();
    assert_eq!(heard.take(), [id], "revoked");
}

#[test]
fn activating_or_rejecting_a_spawned_child_is_told() {
    let (world, heard, agents) = listened();
    let (_, parent) = world.worker("parent", 5, &[]);
    let mut children = Vec::new();
    for handle in ["kept", "dropped"] {
        let child = World::new_child(handle, None);
        children.push(
            block_on(agents.spawn(&parent, child))
                .unwrap()
                .view
                .agent
                .id,
        );
    }
    assert_eq!(heard.take(), [], "a new agent has nothing cached to forget");
    block_on(agents.activate(&parent, children[0])).unwrap();
    assert_eq!(heard.take(), [children[0]]);
    let reason = Reason::new("not needed".into()).unwrap();
    block_on(agents.reject(&parent, children[1], Some(reason))).unwrap();
    assert_eq!(
        heard.take(),
        [children[1]],
        "removed: its handle may be taken again"
    );
}
