//! `TaskService::claim`, `heartbeat` and `expire_leases` on the in-memory store.

use crate::common::world::World;

use futures_executor::block_on;
use muster_domain::model::{
    AgentMode, CapabilityName, Lease, Proficiency, TaskPriority, TaskStatus,
};
use muster_domain::service::{ClaimRequest, Conflict, ServiceError};
use serde_json::json;
use time::Duration;

fn lease(seconds: i64) -> Lease {
    Lease::seconds(Some(seconds)).unwrap()
}

fn claim(seconds: i64) -> ClaimRequest {
    ClaimRequest {
        capabilities: None,
        lease: lease(seconds),
        reserve_credits: 0,
        project_id: None,
    }
}

#[test]
fn a_claim_takes_the_most_urgent_then_the_oldest_task_and_starts_it() {
    let world = World::new();
    let (worker, actor) = world.worker("worker-1", 3, &[]);
    let old_normal = world.task_with("old normal", TaskPriority::Normal, json!({}));
    let high = world.task_with("high", TaskPriority::High, json!({}));
    let urgent_first = world.task_with("urgent 1", TaskPriority::Urgent, json!({}));
    world.clock.advance(Duration::seconds(1));
    let urgent_second = world.task_with("urgent 2", TaskPriority::Urgent, json!({}));

    let order: Vec<_> = (0..5)
        .map(|_| {
            block_on(world.tasks.claim(&actor, claim(60)))
                .unwrap()
                .map(|t| t.id)
        })
        .collect();
    assert_eq!(
        order,
        [
            Some(urgent_first.id),
            Some(urgent_second.id),
            Some(high.id),
            Some(old_normal.id),
            None
        ]
    );

    let claimed = world.reread(&urgent_first);
    assert_eq!(claimed.status, TaskStatus::InProgress);
    assert_eq!(claimed.assignee_id, Some(worker.id));
    assert_eq!(
        claimed.lease_expires_at,
        Some(world.clock_now() + Duration::seconds(60))
    );
    let claimed_events = world.events("task.claimed");
    assert_eq!(claimed_events.len(), 4);
    assert_eq!(claimed_events[0].entity_id, urgent_first.id.as_uuid());
    assert_eq!(claimed_events[0].payload["agentId"], json!(worker.id));
    assert_eq!(world.events("task.assigned").len(), 4);
}

#[test]
fn a_claim_needs_every_required_capability() {
    let world = World::new();
    let (_, novice) = world.worker("novice", 3, &[("rust", Proficiency::Basic)]);
    let (expert, expert_actor) = world.worker(
        "expert",
        3,
        &[
            ("rust", Proficiency::Expert),
            ("sql", Proficiency::Standard),
        ],
    );
    let task = world.task_with(
        "needs expert rust and sql",
        TaskPriority::Normal,
        json!({ "requiredCapabilities": [
            { "capability": "rust", "minProficiency": "expert" }, "sql"
        ]}),
    );

    assert_eq!(
        block_on(world.tasks.claim(&novice, claim(60))).unwrap(),
        None
    );
    // Offering only part of what it has is not enough either.
    let rust_only = ClaimRequest {
        capabilities: Some(vec![CapabilityName::new("rust").unwrap()]),
        lease: lease(60),
        reserve_credits: 0,
        project_id: None,
    };
    assert_eq!(
        block_on(world.tasks.claim(&expert_actor, rust_only)).unwrap(),
        None
    );
    let claimed = block_on(world.tasks.claim(&expert_actor, claim(60)))
        .unwrap()
        .unwrap();
    assert_eq!(
        (claimed.id, claimed.assignee_id),
        (task.id, Some(expert.id))
    );
}

#[test]
fn a_task_with_an_open_blocking_dependency_is_not_claimable() {
    let world = World::new();
    let (_, actor) = world.worker("worker-1", 3, &[]);
    let first = world.task("first");
    let second = world.task_with("second, urgent", TaskPriority::Urgent, json!({}));
    block_on(
        world
            .tasks
            .add_dependency(&world.admin, second.id, first.id, true),
    )
    .unwrap();

    let claimed = block_on(world.tasks.claim(&actor, claim(60)))
        .unwrap()
        .unwrap();
    assert_eq!(
        claimed.id, first.id,
        "the urgent task waits for its dependency"
    );
    assert_eq!(
        block_on(world.tasks.claim(&actor, claim(60))).unwrap(),
        None
    );
}

#[test]
fn only_agents_that_execute_claim() {
    let world = World::new();
    world.task("work");
    let (_, observer) = world.register("watcher", 3, AgentMode::Observer, &[]);
    for actor in [world.admin.clone(), observer] {
        let err = block_on(world.tasks.claim(&actor, claim(60))).unwrap_err();
        assert!(matches!(err, ServiceError::Forbidden(_)), "{err:?}");
    }
    assert!(world.events("task.claimed").is_empty());
}

#[test]
fn a_heartbeat_extends_the_holders_lease_from_now() {
    let world = World::new();
    let (_, holder) = world.worker("holder", 3, &[]);
    let (_, other) = world.worker("other", 3, &[]);
    let task = world.task("work");
    block_on(world.tasks.claim(&holder, claim(60))).unwrap();

    world.clock.advance(Duration::seconds(30));
    let beat = block_on(world.tasks.heartbeat(&holder, task.id, lease(600))).unwrap();
    assert_eq!(
        beat.lease_expires_at,
        Some(world.clock_now() + Duration::seconds(600))
    );
    assert_eq!(world.reread(&task).lease_expires_at, beat.lease_expires_at);

    let err = block_on(world.tasks.heartbeat(&other, task.id, lease(600))).unwrap_err();
    assert!(
        matches!(err, ServiceError::Conflict(Conflict::NotLeaseHolder)),
        "{err:?}"
    );
    world.clock.advance(Duration::seconds(600));
    let err = block_on(world.tasks.heartbeat(&holder, task.id, lease(600))).unwrap_err();
    assert!(
        matches!(err, ServiceError::Conflict(Conflict::LeaseExpired)),
        "at the instant it ends the lease is over: {err:?}"
    );
}

#[test]
fn a_heartbeat_on_an_unclaimed_task_is_refused() {
    let world = World::new();
    let (_, worker) = world.worker("worker-1", 3, &[]);
    let task = world.task("work");
    let err = block_on(world.tasks.heartbeat(&worker, task.id, lease(60))).unwrap_err();
    assert!(
        matches!(err, ServiceError::Conflict(Conflict::NotLeaseHolder)),
        "{err:?}"
    );
}

#[test]
fn an_expired_lease_hands_the_task_back_to_the_next_claimer() {
    let world = World::new();
    let (silent, silent_actor) = world.worker("silent", 3, &[]);
    let (next, next_actor) = world.worker("next", 3, &[]);
    let task = world.task("work");
    block_on(world.tasks.claim(&silent_actor, claim(60))).unwrap();

    world.clock.advance(Duration::seconds(59));
    assert_eq!(block_on(world.tasks.expire_leases(None, 10)).unwrap(), []);
    assert_eq!(
        block_on(world.tasks.claim(&next_actor, claim(60))).unwrap(),
        None
    );

    world.clock.advance(Duration::seconds(1));
    let taken = block_on(world.tasks.claim(&next_actor, claim(60)))
        .unwrap()
        .unwrap();
    assert_eq!((taken.id, taken.assignee_id), (task.id, Some(next.id)));
    let expired = world.events("task.lease_expired");
    assert_eq!(expired.len(), 1);
    assert_eq!(expired[0].payload["agentId"], json!(silent.id));
    assert_eq!(expired[0].actor_id, None, "the service hands it back");
}

#[test]
fn expire_leases_hands_back_only_lapsed_claims_up_to_the_limit() {
    let world = World::new();
    let (_, worker) = world.worker("worker-1", 3, &[]);
    let tasks: Vec<_> = (0..3).map(|i| world.task(&format!("task {i}"))).collect();
    for _ in &tasks {
        block_on(world.tasks.claim(&worker, claim(60))).unwrap();
    }
    world.clock.advance(Duration::seconds(60));
    let first = block_on(world.tasks.expire_leases(Some(world.org), 2)).unwrap();
    assert_eq!(first.len(), 2);
    let rest = block_on(world.tasks.expire_leases(None, 10)).unwrap();
    assert_eq!(rest.len(), 1);
    for task in &tasks {
        let back = world.reread(task);
        assert_eq!((back.status, back.assignee_id), (TaskStatus::Todo, None));
    }
}

/// With mocked ports: a candidate another claimer holds right now is passed over for
/// the next free one, without waiting for it.
#[test]
fn a_candidate_held_by_another_claimer_is_passed_over_for_a_free_one() {
    use crate::common::{self, agent_actor, org, sample_task, task_id};
    use muster_domain::ports::{MockTaskRepository, MockTransaction, MockUnitOfWork};
    use muster_domain::service::TaskService;
    use std::sync::{Arc, Mutex};

    let (held, free) = (task_id(1), task_id(2));
    let mut reads = MockTaskRepository::new();
    reads
        .expect_expired_leases()
        .returning(|_, _, _| Ok(Vec::new()));
    reads
        .expect_claimer_capabilities()
        .returning(|_, _| Ok(Vec::new()));
    let mut tx = MockTransaction::new();
    // The claimer is read for its budget (decision D-106); not stored here.
    tx.expect_agent().returning(|_, _, _| Ok(None));
    tx.expect_claim_candidates()
        .times(1)
        .returning(move |_, _, _, _| {
            Ok(vec![
                sample_task(held, TaskStatus::Todo),
                sample_task(free, TaskStatus::Todo),
            ])
        });
    // Asked once, for both in claim order: the first is held, the second is free.
    tx.expect_try_lock_first_claimable()
        .times(1)
        .returning(move |o, ids| {
            assert_eq!(ids, [held, free]);
            Ok((o == org()).then_some(free))
        });
    tx.expect_open_blocking_dependencies()
        .returning(|_, _| Ok(Vec::new()));
    let taken = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&taken);
    tx.expect_update_task().returning(move |task, _| {
        sink.lock().unwrap().push(task.id);
        Ok(true)
    });
    tx.expect_append_events().returning(|_| Ok(()));
    let uow = Arc::new(MockUnitOfWork::new(tx));
    let service = TaskService::new(Arc::new(reads), uow, common::clock(), common::ids());

    let claimed = block_on(service.claim(&agent_actor(AgentMode::Worker), claim(60)))
        .unwrap()
        .unwrap();
    assert_eq!(claimed.id, free);
    assert_eq!(
        *taken.lock().unwrap(),
        [free],
        "the held one was not touched"
    );
}

#[test]
fn a_claim_looks_past_a_first_page_of_candidates_it_cannot_take() {
    let world = World::new();
    let (_, actor) = world.worker("generalist", 3, &[]);
    // More urgent candidates than one page (25) that all need a skill it lacks ...
    for i in 0..30 {
        world.task_with(
            &format!("needs go {i}"),
            TaskPriority::Urgent,
            json!({ "requiredCapabilities": ["go"] }),
        );
    }
    // ... and, last in the order, one it can take.
    let open = world.task_with("anyone", TaskPriority::Low, json!({}));
    let claimed = block_on(world.tasks.claim(&actor, claim(60)))
        .unwrap()
        .unwrap();
    assert_eq!(claimed.id, open.id);
    assert_eq!(
        block_on(world.tasks.claim(&actor, claim(60))).unwrap(),
        None
    );
}

#[test]
fn the_claimed_event_names_when_the_lease_ends() {
    let world = World::new();
    let (_, actor) = world.worker("worker-1", 3, &[]);
    world.task("work");
    let claimed = block_on(world.tasks.claim(&actor, claim(90)))
        .unwrap()
        .unwrap();
    let event = world.events("task.claimed").remove(0);
    let until = claimed.lease_expires_at.unwrap();
    assert_eq!(
        event.payload["leaseExpiresAt"],
        json!(muster_domain::model::instant::format_millis(until).unwrap())
    );
}
