//! Editing tasks, integration moves (`TaskService::advance`) and what finishing a task
//! pays, on the in-memory store.

use crate::common::new_task;
use crate::common::world::World;

use std::sync::Arc;

use futures_executor::block_on;
use muster_domain::model::{
    AgentMode, Description, FeePct, Metadata, Reason, Tags, Task, TaskPriority, TaskStatus,
};
use muster_domain::service::{AgentPatch, NewTask, TaskPatch, TaskService};
use serde_json::json;

#[test]
fn an_edit_names_each_task_field_it_changed_and_only_those() {
    let world = World::new();
    let task = world.task("editable");
    let due = world.clock_now() + time::Duration::days(3);
    let edits = [
        (
            "description",
            TaskPatch {
                description: Some(Some(Description::new("what to do".into()).unwrap())),
                ..TaskPatch::default()
            },
        ),
        (
            "priority",
            TaskPatch {
                priority: Some(TaskPriority::Urgent),
                ..TaskPatch::default()
            },
        ),
        (
            "dueAt",
            TaskPatch {
                due_at: Some(Some(due)),
                ..TaskPatch::default()
            },
        ),
        (
            "tags",
            TaskPatch {
                tags: Some(Tags::new(vec!["infra".into()]).unwrap()),
                ..TaskPatch::default()
            },
        ),
        (
            "metadata",
            TaskPatch {
                metadata: Some(Metadata::new(json!({"ticket": 7})).unwrap()),
                ..TaskPatch::default()
            },
        ),
    ];
    for (field, patch) in edits.iter().cloned() {
        block_on(world.tasks.update(&world.admin, task.id, patch)).unwrap();
        let last = world.events("task.updated").pop().unwrap();
        assert_eq!(last.payload["fields"], json!([field]), "editing {field}");
    }
    let edited = world.reread(&task);
    assert_eq!(edited.priority, TaskPriority::Urgent);
    assert_eq!(edited.due_at, Some(due));
    assert_eq!(edited.tags, Tags::new(vec!["infra".into()]).unwrap());
    assert_eq!(edited.version, task.version + 5);

    for (field, patch) in edits {
        let again = block_on(world.tasks.update(&world.admin, task.id, patch)).unwrap();
        assert_eq!(again, edited, "repeating the {field} edit changes nothing");
    }
    assert_eq!(world.events("task.updated").len(), 5);
}

/// A task assigned to `assignee`, needing approval or not.
fn assigned(world: &World, tasks: &TaskService, assignee: &str, approval: bool) -> Task {
    let (worker, _) = world.worker(assignee, 3, &[]);
    let new = NewTask {
        assignee_id: Some(worker.id),
        approval_required: approval,
        ..new_task("integration work")
    };
    block_on(tasks.create(&world.admin, new)).unwrap()
}

fn merged() -> Reason {
    Reason::new("pull request merged".into()).unwrap()
}

#[test]
fn an_integration_move_toward_done_stops_at_review_when_approval_is_needed() {
    let world = World::new();
    let gated = assigned(&world, &world.tasks, "careful", true);
    let moved = block_on(
        world
            .tasks
            .advance(&world.admin, gated.id, TaskStatus::Done, merged()),
    )
    .unwrap();
    assert_eq!(moved.task.status, TaskStatus::Review);
    assert_eq!(moved.steps, [TaskStatus::InProgress, TaskStatus::Review]);
    assert_eq!(moved.held, Some("the task needs approval to be done"));
    let again = block_on(
        world
            .tasks
            .advance(&world.admin, gated.id, TaskStatus::Done, merged()),
    )
    .unwrap();
    assert!(again.steps.is_empty(), "already as far as it may go");
    assert_eq!(again.held, Some("the task needs approval to be done"));

    let free = assigned(&world, &world.tasks, "trusted", false);
    let moved = block_on(
        world
            .tasks
            .advance(&world.admin, free.id, TaskStatus::Done, merged()),
    )
    .unwrap();
    assert_eq!(moved.task.status, TaskStatus::Done);
    assert_eq!(moved.steps, [TaskStatus::InProgress, TaskStatus::Done]);
    assert_eq!(moved.held, None);

    let halfway = assigned(&world, &world.tasks, "reviewed", true);
    let moved = block_on(world.tasks.advance(
        &world.admin,
        halfway.id,
        TaskStatus::Review,
        merged(),
    ))
    .unwrap();
    assert_eq!(moved.task.status, TaskStatus::Review);
    assert_eq!(moved.held, None, "review was the target: nothing held it");
    assert_eq!(
        world.events("task.transitioned").len(),
        2 + 2 + 2,
        "one transition per step"
    );
}

/// The `credits.earned` events, as (amount, source).
fn earned(world: &World) -> Vec<(serde_json::Value, serde_json::Value)> {
    world
        .events("credits.earned")
        .into_iter()
        .map(|e| (e.payload["amount"].clone(), e.payload["source"].clone()))
        .collect()
}

#[test]
fn finishing_a_task_pays_nothing_when_the_reward_is_zero() {
    // The treasury could fund a reward, but the default is 0: nothing is escrowed.
    let world = World::with_treasury(100);
    let unpaid = TaskService::new(
        Arc::new(world.store.clone()),
        Arc::new(world.store.clone()),
        world.clock.clone(),
        world.ids.clone(),
    )
    .with_reward(0);
    let task = assigned(&world, &unpaid, "volunteer", false);
    let done = block_on(unpaid.advance(&world.admin, task.id, TaskStatus::Done, merged())).unwrap();
    assert_eq!(done.task.status, TaskStatus::Done);
    assert!(earned(&world).is_empty(), "{:?}", earned(&world));
    let assignee = done.task.assignee_id.unwrap();
    let view = block_on(world.agents.get(&world.admin, assignee)).unwrap();
    assert_eq!(view.agent.current_balance, 0);
    assert_eq!((task.reward, done.task.reward), (0, 0));
    assert_eq!(
        block_on(world.treasury.get(&world.admin)).unwrap().balance,
        100
    );
    assert!(world.events("credits.escrowed").is_empty());
}

#[test]
fn a_parent_whose_fee_comes_to_nothing_gets_no_fee_entry() {
    // The treasury pays the admin's tasks' rewards.
    let world = World::with_treasury(100);
    let (parent, parent_actor) = world.register("manager", 6, AgentMode::Orchestrator, &[]);
    let child = World::new_child("report", None);
    let child = block_on(world.agents.spawn(&parent_actor, child))
        .unwrap()
        .view
        .agent;
    block_on(world.agents.activate(&parent_actor, child.id)).unwrap();
    let finish = |title: &str| {
        let new = NewTask {
            assignee_id: Some(child.id),
            ..new_task(title)
        };
        let task = block_on(world.tasks.create(&world.admin, new)).unwrap();
        block_on(
            world
                .tasks
                .advance(&world.admin, task.id, TaskStatus::Done, merged()),
        )
        .unwrap();
    };
    // No fee at all (the default), then a fee that rounds down to 0 credits.
    finish("first");
    let tiny = AgentPatch {
        management_fee_pct: Some(FeePct::new(1).unwrap()),
        ..AgentPatch::default()
    };
    block_on(world.agents.update(&world.admin, parent.id, tiny)).unwrap();
    finish("second");
    assert!(
        earned(&world).iter().all(|(_, source)| source == "reward"),
        "{:?}",
        earned(&world)
    );
    assert_eq!(earned(&world).len(), 2);
    let parent_now = block_on(world.agents.get(&world.admin, parent.id)).unwrap();
    assert_eq!(parent_now.agent.current_balance, 0);
}
